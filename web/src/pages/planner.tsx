// Planning (issue 14): the sidebar's smart lists with counts, the smart view pages (grouped by
// day; Today with overdue apart) and the calendar (month and week, keyboard-usable; drag a task to
// another day, or Alt+arrow on it, to reschedule keeping its time of day). The server answers every
// view (GET /views/…, GET /calendar), so other clients see the same.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Task } from "../api/types";
import { t } from "../i18n";
import { finePointer, usePointerDrag } from "../pointer-drag";
import { navigate } from "../router";
import { addDays, ErrorBox, formatDate, formatDue, isDateOnly, toastError, todayLocal, useLoad, useTitle } from "../ui";
import type { TaskContext } from "./task-context";
import { canEditList } from "./list-access";

/** Fired (on window) by the API client after every successful write: counts and views re-read. */
export const CHANGED_EVENT = "app:changed";

export const VIEWS = ["today", "tomorrow", "next_7_days", "upcoming", "no_date", "completed"] as const;
export type ViewName = (typeof VIEWS)[number];
type CountName = ViewName | "overdue";

interface ViewPage {
  view: string;
  today: string;
  groups: { day: string | null; tasks: Task[] }[];
  next_cursor: string | null;
}
interface Counts {
  today: string;
  cap: number;
  counts: Record<CountName, number>;
}

/** Re-runs `f` after every change the app makes. */
function useOnChange(f: () => void): void {
  const ref = useRef(f);
  ref.current = f;
  useEffect(() => {
    const h = () => ref.current();
    window.addEventListener(CHANGED_EVENT, h);
    return () => window.removeEventListener(CHANGED_EVENT, h);
  }, []);
}

const shown = (n: number, cap: number) => (n >= cap ? `${cap - 1}+` : String(n));

/** The smart lists at the top of the sidebar, each with its count, kept fresh after every change. */
export function SmartLists({ current, onNavigate }: { current: string | null; onNavigate?: () => void }) {
  const counts = useLoad(() => api.get<Counts>("/views/counts"), []);
  useOnChange(counts.reload);
  const c = counts.data;
  const go = (e: Event, href: string) => {
    e.preventDefault();
    navigate(href);
    onNavigate?.();
  };
  const link = (view: string, label: string, n: number | null, extra?: string) => (
    <li key={view}>
      <a href={`/tasks?view=${view}`} class={`smart ${current === view ? "active" : ""}`} aria-current={current === view ? "page" : undefined} onClick={(e) => go(e, `/tasks?view=${view}`)}>
        <span class="name">{label}</span>
        {extra}
        {n !== null && n > 0 && <span class="count" aria-label={t.planner.countLabel(n)}>{shown(n, c!.cap)}</span>}
      </a>
    </li>
  );
  return (
    <nav aria-label={t.planner.smartLists}>
      <ul class="smart-lists">
        {link("today", t.planner.views.today, c ? c.counts.today + c.counts.overdue : null)}
        {link("tomorrow", t.planner.views.tomorrow, c?.counts.tomorrow ?? null)}
        {link("next_7_days", t.planner.views.next_7_days, c?.counts.next_7_days ?? null)}
        {link("upcoming", t.planner.views.upcoming, c?.counts.upcoming ?? null)}
        {link("no_date", t.planner.views.no_date, c?.counts.no_date ?? null)}
        {link("completed", t.planner.views.completed, null)}
        {link("calendar", t.planner.calendar, null)}
      </ul>
    </nav>
  );
}

function dayLabel(day: string | null, today: string): string {
  if (day === null) return t.planner.noDate;
  if (day === today) return `${t.planner.views.today} · ${formatDate(day)}`;
  if (day === addDays(today, 1)) return `${t.planner.views.tomorrow} · ${formatDate(day)}`;
  return formatDate(day);
}

/** One view's groups, page after page. */
function useViewPages(view: string) {
  const [groups, setGroups] = useState<ViewPage["groups"]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [today, setToday] = useState(todayLocal());
  const [state, setState] = useState<{ loading: boolean; error?: unknown }>({ loading: true });
  const load = async (after: string | null) => {
    setState({ loading: true });
    try {
      const p = await api.get<ViewPage>(`/views/${view}`, { cursor: after, limit: 50 });
      setToday(p.today);
      setGroups((gs) => {
        if (!after) return p.groups;
        // A day can continue on the next page.
        const out = [...gs];
        for (const g of p.groups) {
          const last = out[out.length - 1];
          if (last && last.day === g.day) out[out.length - 1] = { day: g.day, tasks: [...last.tasks, ...g.tasks] };
          else out.push(g);
        }
        return out;
      });
      setCursor(p.next_cursor);
      setState({ loading: false });
    } catch (error) {
      setState({ loading: false, error });
    }
  };
  useEffect(() => void load(null), [view]);
  return { groups, cursor, today, state, load };
}

function ViewSection({ view, title, ctx, headingLevel }: { view: string; title: string; ctx: TaskContext; headingLevel: 2 | 3 }) {
  const v = useViewPages(view);
  useOnChange(() => void v.load(null));
  const H = headingLevel === 2 ? "h2" : "h3";
  const count = v.groups.reduce((n, g) => n + g.tasks.length, 0);
  if (view === "overdue" && count === 0 && !v.state.loading && !v.state.error) return null;
  return (
    <section class={`view-section view-${view}`} aria-label={title}>
      {view === "overdue" && <h2 class="overdue-heading">{title}</h2>}
      {v.state.error !== undefined && <ErrorBox error={v.state.error} retry={() => v.load(null)} />}
      {v.groups.map((g) => (
        <div key={g.day ?? "none"} class="day-group">
          {view !== "no_date" && <H class="day-heading">{dayLabel(g.day, v.today)}</H>}
          <ul class="tasks" aria-label={dayLabel(g.day, v.today)}>
            {g.tasks.map((task) => <ViewRow key={task.id} task={task} ctx={ctx} />)}
          </ul>
        </div>
      ))}
      {!v.state.loading && !v.state.error && count === 0 && <p class="empty">{t.planner.empty}</p>}
      {v.state.loading && <p class="muted">{t.loading}</p>}
      {v.cursor && !v.state.loading && <button class="link" onClick={() => v.load(v.cursor)}>{t.more}</button>}
    </section>
  );
}

function ViewRow({ task, ctx }: { task: Task; ctx: TaskContext }) {
  const list = ctx.lists.find((l) => l.id === task.list_id);
  const toggle = async () => {
    try {
      await api.patch<Task>(`/tasks/${task.id}`, { completed: !task.completed, version: task.version });
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <li class={`task ${task.completed ? "completed" : ""} prio-${task.priority}`} data-row tabIndex={0}>
      <label class="hit complete-hit">
        <input type="checkbox" class="complete" aria-label={`${task.completed ? t.tasks.markOpen : t.tasks.complete}: ${task.title}`} checked={task.completed} disabled={!canEditList(list)} onChange={toggle} />
      </label>
      <div class="task-body">
        <span class="title" dir="auto">{task.title}</span>
        <span class="meta">
          {task.due_at && !isDateOnly(task.due_at) && <span class="due">{formatDue(task.due_at)}</span>}
          {list && (
            <a class="list-name" dir="auto" href={`/tasks?list=${list.id}`}>
              {list.is_inbox ? t.tasks.inbox : list.name}
            </a>
          )}
        </span>
      </div>
    </li>
  );
}

/** A smart view page: Today shows the overdue tasks apart, above today's. */
export function ViewPageContent({ view, ctx }: { view: ViewName; ctx: TaskContext }) {
  if (view === "today") {
    return (
      <div class="view-page">
        <ViewSection view="overdue" title={t.planner.overdue} ctx={ctx} headingLevel={3} />
        <ViewSection view="today" title={t.planner.views.today} ctx={ctx} headingLevel={2} />
      </div>
    );
  }
  return (
    <div class="view-page">
      <ViewSection view={view} title={t.planner.views[view]} ctx={ctx} headingLevel={2} />
    </div>
  );
}

// ---- calendar ------------------------------------------------------------------------------

/** A calendar cell's task (the server's compact CalendarTask). */
interface CalTask {
  id: string;
  list_id: string;
  title: string;
  due_at: string;
  completed: boolean;
  priority: number;
  version: number;
  recurring: boolean;
}
interface CalDay {
  date: string;
  tasks: CalTask[];
  occurrences: { task_id: string; title: string; due_at: string }[];
  countdowns: { id: string; name: string; count: number | null }[];
  check_ins: { habit_id: string; name: string; value: number; goal: number }[];
}
interface CalRange {
  from: string;
  to: string;
  today: string;
  days: CalDay[];
  truncated: boolean;
}

/** Press and hold a task this long on a touch screen to pick it up (shorter than Android's long-press menu). */
const TOUCH_HOLD_MS = 350;

const weekday = (date: string) => (new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7; // Monday 0
const mondayOf = (date: string) => addDays(date, -weekday(date));
const monthOf = (date: string) => `${date.slice(0, 7)}-01`;
function addMonths(date: string, n: number): string {
  const [y, m] = date.split("-").map(Number) as [number, number];
  const d = new Date(Date.UTC(y, m - 1 + n, 1));
  return d.toISOString().slice(0, 10);
}

/** Month (six weeks from the Monday on or before the 1st) or week view of the calendar. */
export function CalendarContent({ mode, date, canEdit = () => true }: { mode: "month" | "week"; date: string | null; canEdit?: (listId: string) => boolean }) {
  const anchor = date ?? todayLocal();
  const from = mode === "month" ? mondayOf(monthOf(anchor)) : mondayOf(anchor);
  const to = addDays(from, mode === "month" ? 42 : 7);
  const cal = useLoad(() => api.get<CalRange>("/calendar", { from, to }), [from, to]);
  useOnChange(cal.reload);
  const [focus, setFocus] = useState(anchor);
  const grid = useRef<HTMLDivElement>(null);
  const title = mode === "month" ? new Date(`${monthOf(anchor)}T00:00:00`).toLocaleDateString(undefined, { month: "long", year: "numeric" }) : `${formatDate(from)} – ${formatDate(addDays(to, -1))}`;
  useTitle(t.planner.calendar);
  const go = (d: string, m = mode) => navigate(`/tasks?view=calendar&mode=${m}&date=${d}`, { replace: true });

  useEffect(() => {
    const cell = grid.current?.querySelector<HTMLElement>(`[data-date="${focus}"]`);
    if (cell && grid.current?.contains(document.activeElement) && document.activeElement?.classList.contains("cal-day")) cell.focus();
  }, [focus]);

  const reschedule = async (task: CalTask, day: string) => {
    if (!canEdit(task.list_id)) return; // a viewer's shared list (sharing.md): the server would refuse
    try {
      await api.post(`/tasks/${task.id}/reschedule`, { date: day, version: task.version });
    } catch (e) {
      toastError(e);
    }
  };
  // Touch and pen: press and hold a task, drag it to another day (the mouse has HTML5 drag and drop, below).
  const touchDrag = usePointerDrag({
    pointerTypes: ["touch", "pen"],
    holdMs: TOUCH_HOLD_MS,
    targetOf: (el, source) => {
      const cell = el.closest<HTMLElement>(".cal-day[data-date]");
      return cell && !cell.contains(source) ? cell : null;
    },
    onDrop: (source, target) => {
      const task = days.flatMap((x) => x.tasks).find((x) => x.id === source.dataset.taskId);
      if (task && target.dataset.date) void reschedule(task, target.dataset.date);
    },
    draggingClass: "dragging",
    overClass: "drop-target",
  });
  const moveFocus = (d: string) => {
    if (d < from || d >= to) go(d);
    setFocus(d);
  };
  const onDayKey = (e: KeyboardEvent, d: string) => {
    if (e.target !== e.currentTarget) return;
    const step: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };
    if (e.key in step) {
      e.preventDefault();
      moveFocus(addDays(d, step[e.key]!));
    } else if (e.key === "PageUp" || e.key === "PageDown") {
      e.preventDefault();
      moveFocus(mode === "month" ? addMonths(d, e.key === "PageUp" ? -1 : 1) : addDays(d, e.key === "PageUp" ? -7 : 7));
    } else if (e.key === "Home") {
      e.preventDefault();
      moveFocus(mondayOf(d));
    } else if (e.key === "End") {
      e.preventDefault();
      moveFocus(addDays(mondayOf(d), 6));
    }
  };
  const days = cal.data?.days ?? [];
  const weeks: CalDay[][] = [];
  for (let i = 0; i < days.length; i += 7) weeks.push(days.slice(i, i + 7));
  const names = Array.from({ length: 7 }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toLocaleDateString(undefined, { weekday: "short", timeZone: "UTC" }));
  const today = cal.data?.today ?? todayLocal();
  return (
    <div class={`calendar calendar-${mode}`}>
      <div class="cal-toolbar" role="toolbar" aria-label={t.planner.calendar}>
        <button onClick={() => go(mode === "month" ? addMonths(anchor, -1) : addDays(anchor, -7))}>{mode === "month" ? t.planner.prevMonth : t.planner.prevWeek}</button>
        <button onClick={() => go(todayLocal())}>{t.planner.views.today}</button>
        <button onClick={() => go(mode === "month" ? addMonths(anchor, 1) : addDays(anchor, 7))}>{mode === "month" ? t.planner.nextMonth : t.planner.nextWeek}</button>
        <h2 class="cal-title" aria-live="polite">{title}</h2>
        <div class="segmented" role="group" aria-label={t.planner.calendarMode}>
          <button class={mode === "month" ? "on" : ""} aria-pressed={mode === "month"} onClick={() => go(anchor, "month")}>{t.planner.month}</button>
          <button class={mode === "week" ? "on" : ""} aria-pressed={mode === "week"} onClick={() => go(anchor, "week")}>{t.planner.week}</button>
        </div>
      </div>
      <p class="muted cal-help">{t.planner.calendarHelp}</p>
      <span id="cal-move-hint" class="sr-only">{t.planner.moveHint}</span>
      {cal.error !== undefined && <ErrorBox error={cal.error} retry={cal.reload} />}
      {cal.data?.truncated && <p class="warning">{t.planner.truncated}</p>}
      <div class="cal-grid" role="grid" aria-label={title} ref={grid}>
        <div role="row" class="cal-row cal-head">
          {names.map((n) => (
            <div role="columnheader" key={n} class="cal-colhead">{n}</div>
          ))}
        </div>
        {weeks.map((w) => (
          <div role="row" class="cal-row" key={w[0]!.date}>
            {w.map((d) => (
              <div
                role="gridcell"
                key={d.date}
                data-date={d.date}
                class={`cal-day ${d.date === today ? "today" : ""} ${mode === "month" && d.date.slice(0, 7) !== anchor.slice(0, 7) ? "other-month" : ""}`}
                tabIndex={d.date === focus ? 0 : -1}
                aria-selected={d.date === focus}
                onFocus={(e) => e.target === e.currentTarget && setFocus(d.date)}
                onKeyDown={(e) => onDayKey(e, d.date)}
                onDragOver={(e) => {
                  if (e.dataTransfer?.types.includes("application/x-app-calendar-task")) e.preventDefault();
                }}
                onDrop={(e) => {
                  const id = e.dataTransfer?.getData("application/x-app-calendar-task");
                  const task = days.flatMap((x) => x.tasks).find((x) => x.id === id);
                  if (!task) return;
                  e.preventDefault();
                  void reschedule(task, d.date);
                }}
              >
                <span class="cal-date">
                  <span aria-hidden="true">{Number(d.date.slice(8))}</span>
                  <span class="sr-only">{`${formatDate(d.date)}, ${t.planner.dayItems(d.tasks.length + d.occurrences.length)}`}</span>
                </span>
                <ul class="cal-items">
                  {d.tasks.map((task) => (
                    <li key={task.id}>
                      <button
                        class={`cal-task ${task.completed ? "completed" : ""}`}
                        data-task-id={task.id}
                        draggable={finePointer && canEdit(task.list_id)}
                        aria-describedby={canEdit(task.list_id) ? "cal-move-hint" : undefined}
                        {...(canEdit(task.list_id) ? touchDrag.handlers : {})}
                        onDragStart={(e) => e.dataTransfer?.setData("application/x-app-calendar-task", task.id)}
                        onKeyDown={(e) => {
                          // Alt+arrows: the keyboard's drag (a day, or a week).
                          const step: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 };
                          if (e.altKey && e.key in step) {
                            e.preventDefault();
                            const target = addDays(d.date, step[e.key]!);
                            void reschedule(task, target).then(() => setFocus(target));
                          }
                        }}
                        onClick={() => touchDrag.consumeClick() || navigate(`/tasks?list=${task.list_id}`)}
                      >
                        {task.due_at && !isDateOnly(task.due_at) && <span class="cal-time">{new Date(task.due_at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" })} </span>}
                        <span dir="auto">{task.title}</span>
                      </button>
                    </li>
                  ))}
                  {d.occurrences.map((o) => (
                    <li key={`${o.task_id}-${o.due_at}`} class="cal-occurrence" title={t.planner.repeats}>
                      <span aria-hidden="true">↻ </span>
                      <span class="sr-only">{t.planner.repeats}: </span>
                      <span dir="auto">{o.title}</span>
                    </li>
                  ))}
                  {d.countdowns.map((c) => (
                    <li key={c.id} class="cal-countdown">
                      <span aria-hidden="true">◷ </span>
                      <span dir="auto">{c.name}</span>
                      {c.count !== null && ` (${c.count})`}
                    </li>
                  ))}
                  {d.check_ins.map((h) => (
                    <li key={h.habit_id} class="cal-checkin">
                      <span aria-hidden="true">◎ </span>
                      <span dir="auto">{h.name}</span> {h.value}/{h.goal}
                    </li>
                  ))}
                </ul>
              </div>
            ))}
          </div>
        ))}
      </div>
    </div>
  );
}
