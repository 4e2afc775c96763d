// Reminders on a task, a habit or a countdown: the list with each one's next time, and a small form
// for the kinds the target takes (the API's rules: reminders.md).
import { useState } from "preact/hooks";
import type { z } from "zod";
import { api } from "../api/client";
import type { Reminder } from "../../../src/features/reminders/reminders.schemas";
import { ErrorBox, formatInstant, toastError, useLoad } from "../ui";

type ReminderView = z.output<typeof Reminder>;
type TargetType = "task" | "habit" | "countdown";

const PATHS: Record<TargetType, string> = { task: "tasks", habit: "habits", countdown: "countdowns" };

/** Lead times offered for a task (minutes); anything else through "custom". */
const LEADS: [number, string][] = [
  [0, "At due time"],
  [5, "5 minutes before"],
  [15, "15 minutes before"],
  [30, "30 minutes before"],
  [60, "1 hour before"],
  [1440, "1 day before"],
];

export function describeReminder(r: ReminderView): string {
  switch (r.kind) {
    case "before_due": {
      const m = r.minutes_before ?? 0;
      const known = LEADS.find(([v]) => v === m);
      return known ? known[1] : m % 1440 === 0 ? `${m / 1440} days before` : m % 60 === 0 ? `${m / 60} hours before` : `${m} minutes before`;
    }
    case "at":
      return `At ${formatInstant(r.at!)}`;
    case "daily":
      return `Daily at ${r.time} on scheduled days`;
    case "days_before":
      return r.days_before === 0 ? `On the day at ${r.time}` : `${r.days_before} day${r.days_before === 1 ? "" : "s"} before, at ${r.time}`;
  }
}

/** `level`: the heading level that fits where the list is shown (a dialog's sections are h3; a page's panel h2). */
export function ReminderList({ type, id, hasDue = true, level = 3 }: { type: TargetType; id: string; hasDue?: boolean; level?: 2 | 3 }) {
  const Heading = level === 2 ? "h2" : "h3";
  const base = `/${PATHS[type]}/${id}/reminders`;
  const list = useLoad(() => api.get<{ items: ReminderView[] }>(base), [base]);
  const [busy, setBusy] = useState(false);
  const act = async (f: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await f();
      list.reload();
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(false);
    }
  };
  const add = (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const body: Record<string, unknown> = { kind: f.get("kind") };
    if (type === "task") {
      if (f.get("kind") === "at") {
        const local = String(f.get("at") ?? "");
        body.at = new Date(local).toISOString();
      } else {
        const lead = String(f.get("lead"));
        body.minutes_before = lead === "custom" ? Number(f.get("minutes")) : Number(lead);
      }
    } else if (type === "habit") body.time = f.get("time");
    else {
      body.time = f.get("time");
      body.days_before = Number(f.get("days_before"));
    }
    void act(() => api.post(base, body));
  };
  const [kind, setKind] = useState(type === "task" ? "before_due" : type === "habit" ? "daily" : "days_before");
  const [lead, setLead] = useState("0");
  return (
    <section class="reminders" aria-labelledby={`rem-${id}`}>
      <Heading id={`rem-${id}`}>Reminders</Heading>
      {list.error !== undefined && <ErrorBox error={list.error} retry={list.reload} />}
      <ul class="plain">
        {(list.data?.items ?? []).map((r) => (
          <li key={r.id} class="row">
            <span>
              {describeReminder(r)}
              <span class="muted small"> · {r.next_fire_at ? `next ${formatInstant(r.next_fire_at)}` : "nothing scheduled"}</span>
            </span>
            <span class="spacer" />
            <button class="small" disabled={busy} aria-label={`Remove reminder: ${describeReminder(r)}`} onClick={() => act(() => api.del(`/reminders/${r.id}`))}>
              Remove
            </button>
          </li>
        ))}
      </ul>
      {(list.data?.items.length ?? 0) < 10 && (
        <form class="row" onSubmit={add}>
          <input type="hidden" name="kind" value={kind} />
          {type === "task" && (
            <>
              <label>
                Remind
                <select value={kind} onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value)}>
                  <option value="before_due">before it is due</option>
                  <option value="at">at a time</option>
                </select>
              </label>
              {kind === "before_due" ? (
                <>
                  <label>
                    When
                    <select name="lead" value={lead} onChange={(e) => setLead((e.currentTarget as HTMLSelectElement).value)}>
                      {LEADS.map(([v, label]) => <option key={v} value={String(v)}>{label}</option>)}
                      <option value="custom">Custom…</option>
                    </select>
                  </label>
                  {lead === "custom" && <label>Minutes before<input name="minutes" type="number" min={0} max={5270400} required /></label>}
                  {!hasDue && <span class="muted small">Set a due date for this reminder to fire.</span>}
                </>
              ) : (
                <label>At<input name="at" type="datetime-local" required /></label>
              )}
            </>
          )}
          {type === "habit" && <label>Time<input name="time" type="time" required defaultValue="20:00" /></label>}
          {type === "countdown" && (
            <>
              <label>Days before<input name="days_before" type="number" min={0} max={366} required defaultValue="1" /></label>
              <label>Time<input name="time" type="time" required defaultValue="09:00" /></label>
            </>
          )}
          <button disabled={busy}>Add reminder</button>
        </form>
      )}
    </section>
  );
}
