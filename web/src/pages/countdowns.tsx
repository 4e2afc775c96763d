import { useEffect, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Countdown, NewCountdown } from "../api/types";
import { t } from "../i18n";
import { ReminderList } from "./reminders";
import { ErrorBox, formatDate, Modal, toastError, useLoad, useTitle } from "../ui";

export function CountdownsPage() {
  useTitle(t.countdowns.title);
  const [archived, setArchived] = useState(false);
  const [editing, setEditing] = useState<Countdown | "new" | null>(null);
  const list = useLoad(() => api.get<{ items: Countdown[] }>("/countdowns", { archived }), [archived]);
  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
    } catch (e) {
      toastError(e);
    }
    list.reload();
  };
  return (
    <section>
      <header class="page-header">
        <h1>{t.countdowns.title}</h1>
        <span class="spacer" />
        <button class="link" onClick={() => setArchived(!archived)}>{archived ? t.countdowns.hideArchived : t.countdowns.showArchived}</button>
        {!archived && <button class="primary" onClick={() => setEditing("new")}>+ {t.countdowns.add}</button>}
      </header>
      {list.error !== undefined && <ErrorBox error={list.error} retry={list.reload} />}
      {list.data && list.data.items.length === 0 && <p class="empty">{t.countdowns.empty}</p>}
      <div class="cards">
        {(list.data?.items ?? []).map((c) => (
          <article class={`card countdown ${c.pinned ? "pinned" : ""}`} key={c.id} data-countdown={c.name}>
            <header>
              <span class="icon-big" aria-hidden="true">{c.icon ?? (c.type === "birthday" ? "★" : c.type === "anniversary" ? "♥" : "◷")}</span>
              <h2 dir="auto">{c.name}</h2>
              {c.pinned && <span class="badge">{t.pinned}</span>}
            </header>
            <p class="days">
              {c.days_until === 0 ? t.countdowns.today : c.days_until > 0 ? t.countdowns.daysLeft(c.days_until) : t.countdowns.daysAgo(-c.days_until)}
            </p>
            <p class="muted">
              {c.next_date ? formatDate(c.next_date) : formatDate(c.date)}
              {c.count !== null && ` · ${c.type === "birthday" ? t.countdowns.age(c.count) : t.countdowns.years(c.count)}`}
            </p>
            {c.lunar && <p class="lunar">{t.countdowns.lunar(c.lunar.month, c.lunar.day, c.lunar.leap)}</p>}
            <p class="muted small">{t.countdowns.types[c.type]} · {t.countdowns.repeats[c.repeat]}</p>
            <div class="buttons">
              {archived ? (
                <>
                  <button onClick={() => act(() => api.post(`/countdowns/${c.id}/restore`))}>{t.restore}</button>
                  <button class="danger" onClick={() => confirm(t.confirmDelete) && act(() => api.del(`/countdowns/${c.id}/purge`))}>{t.deleteForever}</button>
                </>
              ) : (
                <>
                  <button onClick={() => act(() => (c.pinned ? api.del(`/countdowns/${c.id}/pin`) : api.post(`/countdowns/${c.id}/pin`)))}>{c.pinned ? t.unpin : t.pin}</button>
                  <button onClick={() => setEditing(c)}>{t.edit}</button>
                  <button onClick={() => act(() => api.del(`/countdowns/${c.id}`))}>{t.archive}</button>
                </>
              )}
            </div>
          </article>
        ))}
      </div>
      {editing && <CountdownForm item={editing === "new" ? null : editing} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); list.reload(); }} />}
    </section>
  );
}

type LunarModule = typeof import("../lunar");
let lunarModule: Promise<LunarModule> | null = null;
/** The lunar calendar code, fetched the first time a form needs it (not part of the first page). */
function loadLunar(): Promise<LunarModule> {
  lunarModule ??= import("../lunar").catch((e) => {
    lunarModule = null;
    throw e;
  });
  return lunarModule;
}

interface LunarFields {
  year: string;
  month: string;
  leap: boolean;
  day: string;
}

function CountdownForm({ item, onClose, onSaved }: { item: Countdown | null; onClose: () => void; onSaved: () => void }) {
  const [calendar, setCalendar] = useState<string>(item?.calendar ?? "gregorian");
  const [date, setDate] = useState(item?.date ?? "");
  const [lunar, setLunar] = useState<LunarFields | null>(null);
  const [lib, setLib] = useState<LunarModule | null>(null);
  const [libError, setLibError] = useState<unknown>(null);
  const isLunar = calendar === "lunar";
  useEffect(() => {
    if (!isLunar || lib) return;
    loadLunar().then(setLib, setLibError);
  }, [isLunar]);
  // The lunar fields start from the Gregorian date already entered (or stored).
  useEffect(() => {
    if (!lib || !isLunar || lunar) return;
    const l = date ? lib.lunarOf(date) : null;
    setLunar(l ? { year: String(l.year), month: String(l.month), leap: l.leap, day: String(l.day) } : { year: "", month: "1", leap: false, day: "1" });
  }, [lib, isLunar]);
  // What the lunar fields mean: a Gregorian date, or why there is none.
  const meaning = lib && lunar && lunar.year ? lib.gregorianOf({ year: Number(lunar.year), month: Number(lunar.month), leap: lunar.leap, day: Number(lunar.day) }) : null;
  const setLunarField = (patch: Partial<LunarFields>) => {
    const next = { ...lunar!, ...patch };
    setLunar(next);
    const g = lib!.gregorianOf({ year: Number(next.year), month: Number(next.month), leap: next.leap, day: Number(next.day) });
    if (g.ok) setDate(g.date);
  };
  const setGregorian = (value: string) => {
    setDate(value);
    const l = lib && isLunar && value ? lib.lunarOf(value) : null;
    if (l) setLunar({ year: String(l.year), month: String(l.month), leap: l.leap, day: String(l.day) });
  };
  const lunarProblem =
    meaning && !meaning.ok ? (meaning.reason === "range" ? t.countdowns.outOfRange : meaning.reason === "no_leap" ? t.countdowns.noLeap(Number(lunar!.year), Number(lunar!.month)) : t.countdowns.shortMonth(meaning.days)) : null;

  const submit = async (e: Event) => {
    e.preventDefault();
    if (isLunar && lunarProblem) return;
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const icon = String(f.get("icon") ?? "").trim();
    const body: NewCountdown = {
      name: String(f.get("name")),
      date,
      type: String(f.get("type")) as NewCountdown["type"],
      repeat: String(f.get("repeat")) as NewCountdown["repeat"],
      calendar: calendar as NewCountdown["calendar"],
      icon: icon || null,
    };
    try {
      if (item) await api.patch(`/countdowns/${item.id}`, body);
      else await api.post("/countdowns", body);
      onSaved();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <Modal title={item ? t.edit : t.countdowns.add} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label>{t.fields.name}<input name="name" required maxLength={200} dir="auto" defaultValue={item?.name ?? ""} autoFocus /></label>
        <label>
          {t.fields.calendar}
          <select name="calendar" value={calendar} onChange={(e) => setCalendar((e.currentTarget as HTMLSelectElement).value)}>
            {Object.entries(t.countdowns.calendars).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
          </select>
        </label>
        {isLunar && (
          <fieldset class="lunar-date">
            <legend>{t.countdowns.lunarHelp}</legend>
            {libError !== null ? (
              <ErrorBox error={libError} />
            ) : !lunar ? (
              <p class="muted">{t.countdowns.lunarLoading}</p>
            ) : (
              <>
                <div class="row">
                  <label>{t.countdowns.lunarYear}<input name="lunar_year" type="number" inputMode="numeric" min={1900} max={2100} required value={lunar.year} onInput={(e) => setLunarField({ year: (e.currentTarget as HTMLInputElement).value })} /></label>
                  <label>
                    {t.countdowns.lunarMonth}
                    <select name="lunar_month" value={lunar.month} onChange={(e) => setLunarField({ month: (e.currentTarget as HTMLSelectElement).value })}>
                      {Array.from({ length: 12 }, (_, i) => <option key={i} value={String(i + 1)}>{i + 1}</option>)}
                    </select>
                  </label>
                  <label>
                    {t.countdowns.lunarDay}
                    <select name="lunar_day" value={lunar.day} onChange={(e) => setLunarField({ day: (e.currentTarget as HTMLSelectElement).value })}>
                      {Array.from({ length: 30 }, (_, i) => <option key={i} value={String(i + 1)}>{i + 1}</option>)}
                    </select>
                  </label>
                  <label class="inline"><input type="checkbox" name="lunar_leap" checked={lunar.leap} onChange={(e) => setLunarField({ leap: (e.currentTarget as HTMLInputElement).checked })} /> {t.countdowns.leapMonth}</label>
                </div>
                <p class={lunarProblem ? "error" : "muted"} role="status" data-testid="lunar-meaning">
                  {lunarProblem ?? (meaning?.ok ? t.countdowns.means(formatDate(meaning.date)) : "")}
                </p>
              </>
            )}
          </fieldset>
        )}
        <label>{t.fields.date}<input name="date" type="date" required value={date} onInput={(e) => setGregorian((e.currentTarget as HTMLInputElement).value)} /></label>
        <div class="row">
          <label>{t.fields.type}<select name="type" defaultValue={item?.type ?? "countdown"}>{Object.entries(t.countdowns.types).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
          <label>{t.fields.repeat}<select name="repeat" defaultValue={item?.repeat ?? "none"}>{Object.entries(t.countdowns.repeats).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
          <label>{t.fields.icon}<input name="icon" maxLength={8} defaultValue={item?.icon ?? ""} /></label>
        </div>
        <div class="buttons">
          <button type="button" onClick={onClose}>{t.cancel}</button>
          <button class="primary" disabled={isLunar && (!lunar || lunarProblem !== null)}>{t.save}</button>
        </div>
      </form>
      {item && <ReminderList type="countdown" id={item.id} />}
    </Modal>
  );
}
