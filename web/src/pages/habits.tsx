import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { Habit, HabitLog, HabitPause, HabitStats, HabitWeek, NewHabit } from "../api/types";
import { t } from "../i18n";
import { ReminderList } from "./reminders";
import { addDays, ConfirmDialog, ErrorBox, formatDate, Modal, textOn, toastError, todayLocal, useLoad, useLongPress, useTitle } from "../ui";

type WeekRow = HabitWeek["items"][number];

/** A day's log would be before the habit's start: the question shown, and what to log once moved. */
interface BeforeStart {
  habit: Habit;
  date: string;
  value: number;
}

export function HabitsPage() {
  useTitle(t.habits.title);
  const [start, setStart] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const [showArchived, setShowArchived] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [amount, setAmount] = useState<{ habit: Habit; date: string; value: number } | null>(null);
  const [beforeStart, setBeforeStart] = useState<BeforeStart | null>(null);
  const week = useLoad(() => api.get<HabitWeek>("/habits/week", { start }), [start]);
  const archived = useLoad(() => (showArchived ? api.get<{ items: Habit[] }>("/habits", { archived: true }) : Promise.resolve({ items: [] as Habit[] })), [showArchived]);
  const today = todayLocal();

  /**
   * Logs `value` on `date` (0 removes the day's log). A day before the habit's start date is refused
   * by the API (422 on `start_date`): the user is offered to move the start back to that day first.
   */
  const logDay = async (habit: Habit, date: string, value: number) => {
    if (value > 0 && date < habit.start_date) return setBeforeStart({ habit, date, value });
    try {
      if (value > 0) await api.put(`/habits/${habit.id}/logs/${date}`, { value });
      else await api.del(`/habits/${habit.id}/logs/${date}`);
      week.reload();
    } catch (e) {
      if (e instanceof ApiError && e.code === "validation_failed" && e.errors.some((x) => x.path === "start_date")) setBeforeStart({ habit, date, value });
      else toastError(e);
    }
  };
  const moveStartAndLog = async ({ habit, date, value }: BeforeStart) => {
    setBeforeStart(null);
    try {
      await api.patch(`/habits/${habit.id}`, { start_date: date });
      await api.put(`/habits/${habit.id}/logs/${date}`, { value });
    } catch (e) {
      toastError(e);
    }
    week.reload();
  };
  // One tap: the full daily goal, or (already reached) clear the day. A partial amount: press and
  // hold the day (or right-click it), or "Log an amount" in the habit's panel.
  const tap = (row: WeekRow, day: WeekRow["days"][number]) => {
    if (day.status === "future" || day.status === "paused") return;
    void logDay(row.habit, day.date, day.value >= row.habit.goal ? 0 : row.habit.goal);
  };
  const act = async (f: () => Promise<unknown>) => {
    try {
      await f();
    } catch (e) {
      toastError(e);
    }
    week.reload();
    archived.reload();
  };

  const data = week.data;
  return (
    <section>
      <header class="page-header">
        <h1>{t.habits.title}</h1>
        <span class="spacer" />
        <button class="primary" onClick={() => setAdding(true)}>+ {t.habits.add}</button>
      </header>
      {week.error !== undefined && <ErrorBox error={week.error} retry={week.reload} />}
      {data && (
        <>
          <div class="week-nav">
            <button aria-label={t.habits.prevWeek} onClick={() => setStart(addDays(data.start, -7))}>‹</button>
            <button onClick={() => setStart(null)}>{t.habits.thisWeek}</button>
            <button aria-label={t.habits.nextWeek} onClick={() => setStart(addDays(data.start, 7))}>›</button>
            <span class="muted">{formatDate(data.start)} – {formatDate(addDays(data.start, 6))}</span>
          </div>
          {data.items.length === 0 && <p class="empty">{t.habits.empty}</p>}
          {data.items.length > 0 && (
            <table class="habit-grid">
              <caption class="sr-only">{t.habits.title}</caption>
              <thead>
                <tr>
                  <th scope="col" class="habit-name-col"><span class="sr-only">{t.habits.habit}</span></th>
                  {data.items[0]!.days.map((d) => (
                    <th scope="col" key={d.date} class={d.date === today ? "today" : ""}>
                      {t.habits.weekdays[(new Date(`${d.date}T12:00:00`).getDay() + 6) % 7]} <small>{d.date.slice(8)}</small>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.items.map((row) => (
                  <Fragment key={row.habit.id}>
                    <tr>
                      <th scope="row" class="habit-name-cell">
                        <button class="habit-name link" dir="auto" onClick={() => setOpen(open === row.habit.id ? null : row.habit.id)} aria-expanded={open === row.habit.id}>
                          {row.habit.icon ? `${row.habit.icon} ` : ""}{row.habit.name}
                        </button>
                      </th>
                      {row.days.map((d) => (
                        <td key={d.date}>
                          <DayCell row={row} day={d} today={today} onTap={() => tap(row, d)} onAmount={() => setAmount({ habit: row.habit, date: d.date, value: d.value })} />
                        </td>
                      ))}
                    </tr>
                    {open === row.habit.id && (
                      <tr class="panel-row">
                        <td colSpan={8}>
                          <HabitPanel habit={row.habit} onChanged={week.reload} act={act} onAmount={() => setAmount({ habit: row.habit, date: today, value: row.days.find((d) => d.date === today)?.value ?? 0 })} />
                        </td>
                      </tr>
                    )}
                  </Fragment>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
      <p>
        <button class="link" onClick={() => setShowArchived(!showArchived)}>{showArchived ? t.habits.hideArchived : t.habits.showArchived}</button>
      </p>
      {showArchived && (
        <ul class="plain">
          {(archived.data?.items ?? []).map((h) => (
            <li key={h.id}>
              <span class="muted" dir="auto">{h.name}</span>{" "}
              <button class="small" onClick={() => act(() => api.post(`/habits/${h.id}/restore`))}>{t.restore}</button>{" "}
              <button class="small danger" onClick={() => confirm(t.confirmDelete) && act(() => api.del(`/habits/${h.id}/purge`))}>{t.deleteForever}</button>
            </li>
          ))}
        </ul>
      )}
      {adding && <HabitForm onClose={() => setAdding(false)} onSaved={() => { setAdding(false); week.reload(); }} />}
      {amount && (
        <AmountDialog
          {...amount}
          onClose={() => setAmount(null)}
          onSave={(value) => {
            setAmount(null);
            void logDay(amount.habit, amount.date, value);
          }}
        />
      )}
      {beforeStart && (
        <ConfirmDialog
          title={t.habits.beforeStartTitle}
          text={<p>{t.habits.beforeStart(formatDate(beforeStart.date), formatDate(beforeStart.habit.start_date))}</p>}
          yes={t.habits.moveStart}
          no={t.cancel}
          onYes={() => void moveStartAndLog(beforeStart)}
          onNo={() => setBeforeStart(null)}
        />
      )}
    </section>
  );
}

/** One day of the grid: a tap logs the goal (or clears it); press and hold or right-click asks for an amount. */
function DayCell({ row, day, today, onTap, onAmount }: { row: WeekRow; day: WeekRow["days"][number]; today: string; onTap: () => void; onAmount: () => void }) {
  const hold = useLongPress(onAmount);
  const colored = row.habit.color && day.status === "done" ? { background: row.habit.color, color: textOn(row.habit.color), borderColor: row.habit.color } : undefined;
  const off = day.status === "future" || day.status === "paused";
  return (
    <button
      class={`cell ${day.status} ${day.date === today ? "today" : ""}`}
      style={colored}
      disabled={off}
      aria-label={`${row.habit.name} ${day.date}: ${t.habits.status[day.status]}${day.status === "partial" ? ` (${day.value}/${row.habit.goal})` : ""}`}
      aria-pressed={day.status === "done"}
      {...hold.handlers}
      onClick={() => !hold.consumeClick() && onTap()}
      onContextMenu={(e) => {
        e.preventDefault();
        // Right-click asks for an amount; on Android a long press fires this too, but the press already did.
        if (!off && !hold.pressing()) onAmount();
      }}
    >
      {day.status === "done" ? "✓" : day.status === "partial" ? "◐" : day.status === "paused" ? "⏸" : ""}
    </button>
  );
}

function AmountDialog(p: { habit: Habit; date: string; value: number; onClose: () => void; onSave: (value: number) => void }) {
  const [value, setValue] = useState(String(p.value || p.habit.goal));
  const n = Number(value);
  const valid = value.trim() !== "" && Number.isFinite(n) && n >= 0;
  return (
    <Modal title={t.habits.amountFor(p.habit.name, formatDate(p.date))} onClose={p.onClose}>
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
          if (valid) p.onSave(n);
        }}
      >
        <label>
          {t.habits.amount}
          {p.habit.unit ? ` (${p.habit.unit})` : ""}
          <input type="number" name="value" min={0} step="any" inputMode="decimal" required value={value} onInput={(e) => setValue((e.currentTarget as HTMLInputElement).value)} />
        </label>
        <p class="muted">{t.habits.goalIs(p.habit.goal, p.habit.unit)}</p>
        <div class="buttons">
          {p.value > 0 && <button type="button" class="danger" onClick={() => p.onSave(0)}>{t.habits.clear}</button>}
          <span class="spacer" />
          <button type="button" onClick={p.onClose}>{t.cancel}</button>
          <button class="primary" disabled={!valid}>{t.save}</button>
        </div>
      </form>
    </Modal>
  );
}

function HabitPanel({ habit, onChanged, act, onAmount }: { habit: Habit; onChanged: () => void; act: (f: () => Promise<unknown>) => Promise<void>; onAmount: () => void }) {
  const today = todayLocal();
  const from = addDays(today, -55);
  const info = useLoad(
    () => Promise.all([api.get<HabitStats>(`/habits/${habit.id}/stats`), api.get<{ items: HabitLog[] }>(`/habits/${habit.id}/logs`, { from, to: today }), api.get<{ items: HabitPause[] }>(`/habits/${habit.id}/pauses`)]),
    [habit.id, habit.updated_at],
  );
  const run = (f: () => Promise<unknown>) => act(f).then(info.reload);
  if (info.error) return <div class="habit-panel"><ErrorBox error={info.error} /></div>;
  if (!info.data) return <div class="habit-panel muted">{t.loading}</div>;
  const [stats, logs, pauses] = info.data;
  // Days done per week for the last 8 weeks (oldest first).
  const weeks = Array.from({ length: 8 }, (_, w) => {
    const s = addDays(from, w * 7);
    const e = addDays(s, 6);
    return logs.items.filter((l) => l.date >= s && l.date <= e && l.value >= habit.goal).length;
  });
  const activePause = pauses.items.find((p) => p.start_date <= today && (p.end_date === null || p.end_date >= today));
  const pct = (r: number | null) => (r === null ? "–" : `${Math.round(r * 100)}%`);
  return (
    <div class="habit-panel">
      <div class="stats">
        <div><strong>{stats.current_streak}</strong><span>{t.habits.streak(stats.current_streak)}</span></div>
        <div><strong>{stats.longest_streak}</strong><span>{t.habits.longest}</span></div>
        <div><strong>{stats.total_done}</strong><span>{t.habits.total}</span></div>
        <div><strong>{pct(stats.completion_rate_7d)}</strong><span>{t.habits.rate7}</span></div>
        <div><strong>{pct(stats.completion_rate_30d)}</strong><span>{t.habits.rate30}</span></div>
      </div>
      <figure class="chart" aria-label={t.habits.lastWeeks}>
        {weeks.map((n, i) => (
          <span key={i} class="bar" style={{ height: `${(n / 7) * 100}%` }} title={`${n}/7`} />
        ))}
        <figcaption class="muted">{t.habits.lastWeeks}</figcaption>
      </figure>
      <p class="muted small">{t.habits.startDate}: {formatDate(habit.start_date)}</p>
      <div class="buttons">
        <button onClick={onAmount}>{t.habits.logAmount}</button>
        {activePause ? (
          <button
            onClick={() =>
              // A pause that began today is simply removed; an older one ends yesterday, so today counts again.
              run(() =>
                activePause.start_date >= today
                  ? api.del(`/habits/${habit.id}/pauses/${activePause.id}`)
                  : api.patch(`/habits/${habit.id}/pauses/${activePause.id}`, { end_date: addDays(today, -1) }),
              ).then(onChanged)
            }
          >
            {t.habits.resume}
          </button>
        ) : (
          <button onClick={() => run(() => api.post(`/habits/${habit.id}/pauses`, { start_date: today }))}>{t.habits.pause}</button>
        )}
        <button onClick={() => act(() => api.del(`/habits/${habit.id}`))}>{t.archive}</button>
      </div>
      <ReminderList type="habit" id={habit.id} key={habit.updated_at} level={2} />
    </div>
  );
}

function HabitForm({ onClose, onSaved }: { onClose: () => void; onSaved: () => void }) {
  const [kind, setKind] = useState<"daily" | "weekdays" | "times_per_week">("daily");
  const [days, setDays] = useState<number[]>([1, 2, 3, 4, 5]);
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const frequency: NewHabit["frequency"] = kind === "daily" ? { type: "daily" } : kind === "weekdays" ? { type: "weekdays", days } : { type: "times_per_week", count: Number(f.get("count") || 3) };
    const icon = String(f.get("icon") ?? "").trim();
    const unit = String(f.get("unit") ?? "").trim();
    const startDate = String(f.get("start_date") ?? "");
    const body: NewHabit = {
      name: String(f.get("name")),
      frequency,
      goal: Number(f.get("goal") || 1),
      color: String(f.get("color")),
      ...(icon ? { icon } : {}),
      ...(unit ? { unit } : {}),
      ...(startDate ? { start_date: startDate } : {}),
    };
    try {
      await api.post("/habits", body);
      onSaved();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <Modal title={t.habits.add} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        <label>{t.fields.name}<input name="name" required maxLength={200} dir="auto" autoFocus /></label>
        <div class="row">
          <label>{t.fields.icon}<input name="icon" maxLength={8} placeholder="💧" /></label>
          <label>{t.fields.color}<input name="color" type="color" defaultValue="#3aa675" /></label>
        </div>
        <label>
          {t.fields.frequency}
          <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value as typeof kind)}>
            <option value="daily">{t.habits.daily}</option>
            <option value="weekdays">{t.habits.onDays}</option>
            <option value="times_per_week">{t.habits.timesPerWeek}</option>
          </select>
        </label>
        {kind === "weekdays" && (
          <div class="weekday-picker">
            {t.habits.weekdays.map((d, i) => (
              <button type="button" key={d} class={`chip ${days.includes(i + 1) ? "on" : ""}`} aria-pressed={days.includes(i + 1)} onClick={() => setDays(days.includes(i + 1) ? days.filter((x) => x !== i + 1) : [...days, i + 1])}>{d}</button>
            ))}
          </div>
        )}
        {kind === "times_per_week" && <label>{t.habits.timesPerWeek}<input name="count" type="number" min={1} max={7} defaultValue="3" /></label>}
        <div class="row">
          <label>{t.fields.goal}<input name="goal" type="number" min={0.01} step="any" defaultValue="1" /></label>
          <label>{t.fields.unit}<input name="unit" maxLength={32} /></label>
        </div>
        <label>{t.habits.startDate}<input name="start_date" type="date" required defaultValue={todayLocal()} /></label>
        <div class="buttons">
          <button type="button" onClick={onClose}>{t.cancel}</button>
          <button class="primary">{t.create}</button>
        </div>
      </form>
    </Modal>
  );
}
