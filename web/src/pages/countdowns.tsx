import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Countdown, NewCountdown } from "../api/types";
import { t } from "../i18n";
import { ErrorBox, formatDate, Modal, toastError, useLoad } from "../ui";

export function CountdownsPage() {
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
              <h2>{c.name}</h2>
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

function CountdownForm({ item, onClose, onSaved }: { item: Countdown | null; onClose: () => void; onSaved: () => void }) {
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const icon = String(f.get("icon") ?? "").trim();
    const body: NewCountdown = {
      name: String(f.get("name")),
      date: String(f.get("date")),
      type: String(f.get("type")) as NewCountdown["type"],
      repeat: String(f.get("repeat")) as NewCountdown["repeat"],
      calendar: String(f.get("calendar")) as NewCountdown["calendar"],
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
        <label>{t.fields.name}<input name="name" required maxLength={200} defaultValue={item?.name ?? ""} autoFocus /></label>
        <label>{t.fields.date}<input name="date" type="date" required defaultValue={item?.date ?? ""} /></label>
        <div class="row">
          <label>{t.fields.type}<select name="type" defaultValue={item?.type ?? "countdown"}>{Object.entries(t.countdowns.types).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
          <label>{t.fields.repeat}<select name="repeat" defaultValue={item?.repeat ?? "none"}>{Object.entries(t.countdowns.repeats).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
        </div>
        <div class="row">
          <label>{t.fields.calendar}<select name="calendar" defaultValue={item?.calendar ?? "gregorian"}>{Object.entries(t.countdowns.calendars).map(([k, v]) => <option key={k} value={k}>{v}</option>)}</select></label>
          <label>{t.fields.icon}<input name="icon" maxLength={8} defaultValue={item?.icon ?? ""} /></label>
        </div>
        <div class="buttons">
          <button type="button" onClick={onClose}>{t.cancel}</button>
          <button class="primary">{t.save}</button>
        </div>
      </form>
    </Modal>
  );
}
