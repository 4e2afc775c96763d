import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Habit, HabitLog, HabitPause, HabitStats, HabitWeek, NewHabit } from "../api/types";
import { t } from "../i18n";
import { addDays, ErrorBox, formatDate, Modal, toastError, todayLocal, useLoad } from "../ui";

type WeekRow = HabitWeek["items"][number];

export function HabitsPage() {
  const [start, setStart] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const [showArchived, setShowArchived] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const week = useLoad(() => api.get<HabitWeek>("/habits/week", { start }), [start]);
  const archived = useLoad(() => (showArchived ? api.get<{ items: Habit[] }>("/habits", { archived: true }) : Promise.resolve({ items: [] as Habit[] })), [showArchived]);
  const today = todayLocal();

  const tap = async (row: WeekRow, day: WeekRow["days"][number]) => {
    if (day.status === "future" || day.status === "paused") return;
    try {
      const goal = row.habit.goal;
      if (day.value >= goal) await api.del(`/habits/${row.habit.id}/logs/${day.date}`);
      else await api.put(`/habits/${row.habit.id}/logs/${day.date}`, { value: goal });
      week.reload();
    } catch (e) {
      toastError(e);
    }
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
          <div class="habit-grid" role="grid" aria-label={t.habits.title}>
            {data.items.length > 0 && (
              <div class="habit-row head" role="row">
                <span role="columnheader" />
                {data.items[0]!.days.map((d) => (
                  <span role="columnheader" key={d.date} class={d.date === today ? "today" : ""}>
                    {t.habits.weekdays[(new Date(`${d.date}T12:00:00`).getDay() + 6) % 7]} <small>{d.date.slice(8)}</small>
                  </span>
                ))}
              </div>
            )}
            {data.items.map((row) => (
              <div class="habit-row" role="row" key={row.habit.id}>
                <span role="rowheader" class="habit-name-cell">
                  <button class="habit-name link" onClick={() => setOpen(open === row.habit.id ? null : row.habit.id)} aria-expanded={open === row.habit.id}>
                    {row.habit.icon ? `${row.habit.icon} ` : ""}{row.habit.name}
                  </button>
                </span>
                {row.days.map((d) => (
                  <button
                    role="gridcell"
                    key={d.date}
                    class={`cell ${d.status} ${d.date === today ? "today" : ""}`}
                    style={row.habit.color && d.status === "done" ? { background: row.habit.color } : undefined}
                    disabled={d.status === "future" || d.status === "paused"}
                    aria-label={`${row.habit.name} ${d.date}: ${t.habits.status[d.status]}`}
                    aria-pressed={d.status === "done"}
                    onClick={() => tap(row, d)}
                  >
                    {d.status === "done" ? "✓" : d.status === "partial" ? "◐" : d.status === "paused" ? "⏸" : ""}
                  </button>
                ))}
                {open === row.habit.id && <HabitPanel habit={row.habit} onChanged={week.reload} act={act} />}
              </div>
            ))}
          </div>
        </>
      )}
      <p>
        <button class="link" onClick={() => setShowArchived(!showArchived)}>{showArchived ? t.habits.hideArchived : t.habits.showArchived}</button>
      </p>
      {showArchived && (
        <ul class="plain">
          {(archived.data?.items ?? []).map((h) => (
            <li key={h.id}>
              <span class="muted">{h.name}</span>{" "}
              <button class="small" onClick={() => act(() => api.post(`/habits/${h.id}/restore`))}>{t.restore}</button>{" "}
              <button class="small danger" onClick={() => confirm(t.confirmDelete) && act(() => api.del(`/habits/${h.id}/purge`))}>{t.deleteForever}</button>
            </li>
          ))}
        </ul>
      )}
      {adding && <HabitForm onClose={() => setAdding(false)} onSaved={() => { setAdding(false); week.reload(); }} />}
    </section>
  );
}

function HabitPanel({ habit, onChanged, act }: { habit: Habit; onChanged: () => void; act: (f: () => Promise<unknown>) => Promise<void> }) {
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
      <div class="buttons">
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
    const body: NewHabit = { name: String(f.get("name")), frequency, goal: Number(f.get("goal") || 1), color: String(f.get("color")), ...(icon ? { icon } : {}), ...(unit ? { unit } : {}) };
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
        <label>{t.fields.name}<input name="name" required maxLength={200} autoFocus /></label>
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
        <div class="buttons">
          <button type="button" onClick={onClose}>{t.cancel}</button>
          <button class="primary">{t.create}</button>
        </div>
      </form>
    </Modal>
  );
}
