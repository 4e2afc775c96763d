import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Folder, List, Page, Tag, Task, User } from "../api/types";
import { t } from "../i18n";
import { navigate } from "../router";
import { ErrorBox, formatDue, isDateOnly, toast, toastError, todayLocal, useLoad, useLongPress, useTitle } from "../ui";
import { finePointer, usePointerDrag } from "../pointer-drag";
import { DRAG_TASKS, Sidebar } from "./sidebar";
import { TaskDetail } from "./task-detail";
import type { TaskContext } from "./task-context";
import { completeTask, completeTasks, deleteTasks, undoBatch } from "./task-completion";
import { QuickAddBox } from "./quick-add";
import { CalendarContent, ViewPageContent, VIEWS, type ViewName } from "./planner";
import { isOwnEcho, onLive } from "../live";
import { canEditList, editableLists, isShared } from "./list-access";
import { LazyShareDialog } from "./sharing-lazy";

type Show = "open" | "done" | "all";

/** Press and hold (touch or mouse) this long to select a task: multi-select on a phone. */
const LONG_PRESS_MS = 500;

/** A YYYY-MM-DD date `n` days after another (calendar days, no zone involved). */
function addDays(date: string, n: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

export function TasksPage({ query, user }: { query: URLSearchParams; user: User }) {
  const listParam = query.get("list");
  const q = query.get("q") ?? "";
  const show = (query.get("show") as Show | null) ?? "open";
  const tagId = query.get("tag");
  const viewParam = query.get("view");
  const view = viewParam === "calendar" || (VIEWS as readonly string[]).includes(viewParam ?? "") ? viewParam : null;
  const [drawer, setDrawer] = useState(false);
  const side = useLoad(
    () => Promise.all([api.get<{ items: List[] }>("/lists"), api.get<{ items: Folder[] }>("/folders"), api.get<{ items: List[] }>("/lists", { archived: true }), api.get<{ items: Tag[] }>("/tags")]),
    [],
  );
  const [listsData, foldersData, archivedData, tagsData] = side.data ?? [];
  const lists = listsData?.items ?? [];
  const inbox = lists.find((l) => l.is_inbox);
  const listId = listParam ?? inbox?.id ?? null;
  const current = lists.find((l) => l.id === listId);
  const [dropped, setDropped] = useState(0);
  const [sharing, setSharing] = useState(false);
  // Another member's change to the lists (a rename, a role, a removal) re-reads the sidebar.
  useEffect(() => onLive((e) => e.type !== "task.changed" && e.type !== "task.deleted" && side.reload()), [side.reload]);
  // The list on screen is no longer shared with the user (removed, the owner archived it): back to the inbox.
  const shownList = useRef<List | null>(null);
  useEffect(() => {
    if (current) shownList.current = current;
    else if (listParam && side.data && !side.loading && !archivedData?.items.some((l) => l.id === listParam)) {
      const gone = shownList.current?.id === listParam ? shownList.current : null;
      shownList.current = null;
      setSharing(false);
      if (gone && gone.role !== "owner") toast(t.sharing.gone(gone.name));
      navigate("/tasks", { replace: true });
    }
  }, [current, listParam, side.data, side.loading]);
  const heading =
    view === "calendar" ? t.planner.calendar : view ? t.planner.views[view as ViewName] : q ? `“${q}”` : current ? (current.is_inbox ? t.tasks.inbox : current.name) : t.nav.tasks;
  useTitle(heading);

  const setQuery = (patch: Record<string, string | null>) => {
    const next = new URLSearchParams(query);
    for (const [k, v] of Object.entries(patch)) v ? next.set(k, v) : next.delete(k);
    const s = next.toString();
    navigate(`/tasks${s ? `?${s}` : ""}`, { replace: true });
  };

  const onDropTasks = async (target: string, ids: string[]) => {
    try {
      await api.post("/tasks/batch", { task_ids: ids, list_id: target });
      setDropped((n) => n + 1);
    } catch (e) {
      toastError(e);
    }
  };

  if (side.error) return <ErrorBox error={side.error} retry={side.reload} />;
  const ctx: TaskContext = { lists, tags: tagsData?.items ?? [], reloadTags: side.reload, userId: user.id };
  const showList = current && !q && !view ? current : null;
  return (
    <div class={`tasks-layout ${drawer ? "drawer-open" : ""}`}>
      <Sidebar
        lists={lists}
        folders={foldersData?.items ?? []}
        archived={archivedData?.items ?? []}
        current={listParam}
        view={view}
        reload={side.reload}
        onDropTasks={onDropTasks}
        onNavigate={() => setDrawer(false)}
      />
      <div class="drawer-scrim" onClick={() => setDrawer(false)} />
      <section class="tasks-main">
        <header class="page-header">
          <button class="icon menu-button" aria-label={t.nav.menu} onClick={() => setDrawer(!drawer)}>☰</button>
          <h1 dir="auto">{heading}</h1>
          <input
            type="search"
            class="search"
            placeholder={t.tasks.search}
            aria-label={t.tasks.search}
            data-shortcut="search"
            defaultValue={q}
            onKeyDown={(e) => e.key === "Enter" && setQuery({ q: (e.currentTarget as HTMLInputElement).value.trim() || null, view: null })}
            onSearch={(e: Event) => setQuery({ q: (e.currentTarget as HTMLInputElement).value.trim() || null, view: null })}
          />
          {showList && !showList.is_inbox && (
            <button class="share-button" onClick={() => setSharing(true)} aria-haspopup="dialog">
              {showList.role === "owner" ? t.sharing.share : t.sharing.members}
            </button>
          )}
          {showList && showList.role === "owner" && (
            <select
              class="sort-select"
              aria-label={t.planner.sort}
              value={showList.sort}
              onChange={async (e) => {
                try {
                  await api.patch(`/lists/${showList.id}`, { sort: (e.currentTarget as HTMLSelectElement).value });
                } catch (err) {
                  toastError(err);
                }
                side.reload();
              }}
            >
              {(["manual", "due_date", "priority", "title", "created"] as const).map((s) => <option key={s} value={s}>{t.planner.sorts[s]}</option>)}
            </select>
          )}
          {!view && (tagsData?.items.length ?? 0) > 0 && (
            <select aria-label={t.tasks.filterTag} value={tagId ?? ""} onChange={(e) => setQuery({ tag: (e.currentTarget as HTMLSelectElement).value || null })}>
              <option value="">{t.tasks.allTags}</option>
              {tagsData!.items.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
            </select>
          )}
          {!view && <div class="segmented" role="group">
            {(["open", "done", "all"] as Show[]).map((s) => (
              <button key={s} class={show === s ? "on" : ""} aria-pressed={show === s} onClick={() => setQuery({ show: s === "open" ? null : s })}>
                {s === "open" ? t.tasks.filterOpen : s === "done" ? t.tasks.filterDone : t.tasks.filterAll}
              </button>
            ))}
          </div>}
        </header>
        {showList && isShared(showList) && (
          <p class="list-sharing muted">
            {showList.role === "owner" ? t.sharing.sharedWith(showList.member_count) : `${t.sharing.sharedBy(showList.owner.display_name || showList.owner.username)} · ${t.sharing.roles[showList.role]}`}
            {showList.role === "viewer" && <> · {t.sharing.readOnly}</>}
          </p>
        )}
        {side.loading && !side.data ? (
          <p class="muted">{t.loading}</p>
        ) : view === "calendar" ? (
          <CalendarContent mode={query.get("mode") === "week" ? "week" : "month"} date={query.get("date")} canEdit={(id) => canEditList(lists.find((l) => l.id === id))} />
        ) : view ? (
          <ViewPageContent key={view} view={view as ViewName} ctx={ctx} />
        ) : (
          <TaskList key={`${listId}|${q}|${show}|${tagId}|${dropped}|${current?.sort}`} listId={q ? null : listId} q={q} show={show} tagId={tagId} ctx={ctx} sort={current?.sort ?? "created"} />
        )}
      </section>
      {sharing && showList && (
        <LazyShareDialog
          list={showList}
          me={user}
          onClose={() => setSharing(false)}
          onChanged={side.reload}
          onLeft={() => {
            setSharing(false);
            shownList.current = null;
            side.reload();
            navigate("/tasks", { replace: true });
          }}
        />
      )}
    </div>
  );
}

function TaskList({ listId, q, show, tagId, ctx, sort }: { listId: string | null; q: string; show: Show; tagId: string | null; ctx: TaskContext; sort: List["sort"] }) {
  // The list's own order (PATCH /lists/{id} sort) applies to a plain list page; a search or a tag filter stays newest first.
  const order = listId && !q && !tagId && sort !== "created" ? sort : null;
  const manual = order === "manual";
  const [items, setItems] = useState<Task[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [state, setState] = useState<{ loading: boolean; error?: unknown; done: boolean }>({ loading: true, done: false });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  // Selection mode without a selection yet (the phone's "Select" button).
  const [selectMode, setSelectMode] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const quick = useRef<HTMLInputElement>(null);
  const firstPage = useRef(true);

  const load = async (after: string | null) => {
    setState((s) => ({ ...s, loading: true }));
    try {
      const page = await api.get<Page<Task>>("/tasks", { list_id: listId, q: q || null, tag_id: tagId, completed: show === "all" ? null : show === "done", cursor: after, limit: 50, sort: order });
      if (firstPage.current) performance.mark("tasks:api");
      setItems((xs) => (after ? [...xs, ...page.items] : page.items));
      setCursor(page.next_cursor);
      setState({ loading: false, done: !page.next_cursor });
    } catch (error) {
      setState({ loading: false, error, done: true });
    }
  };
  useEffect(() => void load(null), []);
  // Marks the first page on screen (bench/web.ts measures tasks:api → tasks:rendered).
  useLayoutEffect(() => {
    if (firstPage.current && !state.loading && !state.error) {
      firstPage.current = false;
      performance.mark("tasks:rendered");
      requestAnimationFrame(() => {
        performance.mark("tasks:painted");
        document.body.dataset.tasksRendered = "1";
      });
    }
  }, [state.loading]);
  // Infinite scroll: the next cursor page when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || state.done || state.loading) return;
    const io = new IntersectionObserver((es) => es.some((e) => e.isIntersecting) && void load(cursor));
    io.observe(el);
    return () => io.disconnect();
  }, [cursor, state.done, state.loading]);

  const replace = (task: Task) => setItems((xs) => xs.map((x) => (x.id === task.id ? task : x)));
  const remove = (id: string) => setItems((xs) => xs.filter((x) => x.id !== id));
  const visible = (task: Task) => (!listId || task.list_id === listId) && (!tagId || task.tags.some((g) => g.id === tagId)) && (show === "all" || (show === "done") === task.completed);
  /** Replaces the task where it is shown, else adds it where this view's order puts it (last in manual order, else on top). */
  const upsert = (task: Task) => setItems((xs) => (xs.some((x) => x.id === task.id) ? xs.map((x) => (x.id === task.id ? task : x)) : manual ? [...xs, task] : [task, ...xs]));

  // Quick add (./quick-add.tsx): a new task goes where this view's order puts it (its echo on the event stream may have come first).
  const added = (task: Task) => {
    if (visible(task)) upsert(task);
  };

  // Live updates (../live.ts): another member's change to a task shown here, or a new task in this
  // list, is read and put in place; this tab's own changes come back with a version already shown.
  const shown = useRef(items);
  shown.current = items;
  useEffect(() => {
    const reread = async (id: string) => {
      try {
        const x = await api.get<Task>(`/tasks/${id}`);
        const parent = x.parent_id;
        if (parent) {
          if (shown.current.some((y) => y.id === parent)) await reread(parent);
        } else if (visible(x) && !x.deleted_at) upsert(x);
        else remove(x.id);
      } catch {
        remove(id); // gone, or no longer visible to this user
      }
    };
    return onLive((e) => {
      if (e.type === "resync") return void load(null);
      if ((e.type !== "task.changed" && e.type !== "task.deleted") || isOwnEcho(e)) return;
      const row = shown.current.find((x) => x.id === e.id);
      const parent = shown.current.find((x) => x.subtasks.some((sub) => sub.id === e.id));
      if (e.type === "task.deleted") {
        if (row) remove(e.id);
        else if (parent) void reread(parent.id);
        return;
      }
      if (row && e.version !== null && row.version >= e.version) return;
      if (parent) return void reread(parent.id);
      if (row) return void reread(e.id);
      if (listId === null || e.list_id !== listId) return;
      // New here: this tab's own quick add may still be on its way back; then it is shown already.
      setTimeout(() => {
        if (shown.current.some((x) => x.id === e.id)) return;
        // In a sorted list (other than newest first) the new task's place is the server's to say.
        if (order !== null && order !== "manual") void load(null);
        else void reread(e.id);
      }, 300);
    });
  }, []);

  const toggle = async (task: Task) => {
    try {
      if (task.completed) {
        const updated = await api.patch<Task>(`/tasks/${task.id}`, { completed: false, version: task.version });
        visible(updated) ? replace(updated) : remove(task.id);
        return;
      }
      const r = await completeTask(task);
      visible(r.updated) ? replace(r.updated) : remove(task.id);
      toast(r.message, { label: t.tasks.undo, run: () => undo(r.undo) });
    } catch (e) {
      toastError(e);
    }
  };
  /** Runs an undo, then shows the list as the server has it. */
  const undo = async (f: () => Promise<void>) => {
    try {
      await f();
      toast(t.tasks.undone);
    } catch (e) {
      toastError(e);
    }
    await load(null);
  };

  const rename = async (task: Task, title: string) => {
    try {
      replace(await api.patch<Task>(`/tasks/${task.id}`, { title, version: task.version }));
    } catch (e) {
      toastError(e); // a stale version: the row keeps the title it shows; the details dialog resolves conflicts
    }
  };
  const del = async (task: Task) => {
    try {
      await api.del(`/tasks/${task.id}`);
      remove(task.id);
      toast(t.tasks.deleted, {
        label: t.tasks.undo,
        run: async () => {
          try {
            const back = await api.post<Task>(`/tasks/${task.id}/restore`);
            setItems((xs) => [back, ...xs.filter((x) => x.id !== back.id)]);
          } catch (e) {
            toastError(e);
          }
        },
      });
    } catch (e) {
      toastError(e);
    }
  };

  /** Manual order: one place up (-1) or down (+1), by the neighbour on screen; the focus stays on the task. */
  const moveBy = async (task: Task, dir: -1 | 1) => {
    const i = items.findIndex((x) => x.id === task.id);
    const anchor = items[i + dir];
    if (!manual || !anchor) return;
    await placeBefore(task.id, dir < 0 ? { before_id: anchor.id } : { after_id: anchor.id }, anchor.id, dir);
  };
  const placeBefore = async (id: string, body: Record<string, string>, anchorId: string, dir: -1 | 1) => {
    try {
      const moved = await api.post<Task>(`/tasks/${id}/move`, body);
      setItems((xs) => {
        const rest = xs.filter((x) => x.id !== id);
        const k = rest.findIndex((x) => x.id === anchorId);
        rest.splice(dir < 0 ? k : k + 1, 0, moved);
        return rest;
      });
      requestAnimationFrame(() => document.querySelector<HTMLElement>(`li[data-task-id="${id}"]`)?.focus());
    } catch (e) {
      toastError(e);
    }
  };

  const endSelection = () => {
    setSelected(new Set());
    setSelectMode(false);
  };
  // Every batch change answers an undo token: the toast's Undo puts each task back exactly (./task-completion.ts).
  const batch = async (change: Record<string, unknown>) => {
    const ids = [...selected];
    try {
      const r = await api.post<{ updated: number; undo_token?: string | null }>("/tasks/batch", { task_ids: ids, ...change }, { undo: true });
      endSelection();
      await load(null);
      toast(t.tasks.batchChanged(r.updated), r.undo_token ? { label: t.tasks.undo, run: () => undo(() => undoBatch(r.undo_token).then(() => undefined)) } : undefined);
    } catch (e) {
      toastError(e);
    }
  };
  const pick = (f: (v: string) => void) => (e: Event) => {
    const el = e.currentTarget as HTMLSelectElement | HTMLInputElement;
    const v = el.value;
    el.value = "";
    if (v) f(v);
  };
  const batchComplete = async () => {
    try {
      const r = await completeTasks(items.filter((x) => selected.has(x.id)));
      endSelection();
      await load(null);
      toast(t.tasks.batchCompleted(r.count), { label: t.tasks.undo, run: () => undo(r.undo) });
    } catch (e) {
      toastError(e);
      await load(null); // part of it may have been done
    }
  };
  const batchDelete = async () => {
    try {
      const r = await deleteTasks([...selected]);
      endSelection();
      await load(null);
      toast(t.tasks.batchDeleted(r.count), { label: t.tasks.undo, run: () => undo(r.undo) });
    } catch (e) {
      toastError(e);
    }
  };

  const select = (id: string, on: boolean) =>
    setSelected((s) => {
      const n = new Set(s);
      on ? n.add(id) : n.delete(id);
      return n;
    });

  const today = todayLocal();
  const openTask = items.find((x) => x.id === open);
  const selecting = selected.size > 0 || selectMode;
  // Viewer mode (a shared list the user may only read): no add box, no selection, no edit controls.
  const listOf = (id: string) => ctx.lists.find((l) => l.id === id);
  const readOnly = listId !== null && !canEditList(listOf(listId));
  const writable = editableLists(ctx.lists);
  const addCtx: TaskContext = { ...ctx, lists: writable };
  /** "Added by" on a shared list's task someone else created. */
  const byOf = (task: Task) => {
    const l = listOf(task.list_id);
    return l && isShared(l) && task.created_by && task.created_by.id !== ctx.userId ? task.created_by.username : null;
  };
  return (
    <div class={`task-list ${selecting ? "selecting" : ""}`}>
      {!q && !readOnly && (
        <QuickAddBox listId={listId} ctx={addCtx} onAdded={added} inputRef={quick}>
          {!selecting && (
            <button class="select-mode" onClick={() => setSelectMode(true)}>
              {t.tasks.selectMode}
            </button>
          )}
        </QuickAddBox>
      )}
      {selecting && (
        <div class="batch-bar" role="toolbar" aria-label={t.tasks.selected(selected.size)}>
          <span>{t.tasks.selected(selected.size)}</span>
          <button onClick={batchComplete} disabled={!selected.size}>{t.tasks.batchComplete}</button>
          <select aria-label={t.tasks.batchMove} onChange={pick((v) => batch({ list_id: v }))}>
            <option value="">{t.tasks.moveTo}</option>
            {writable.map((l) => <option key={l.id} value={l.id}>{l.is_inbox ? t.tasks.inbox : l.name}</option>)}
          </select>
          <select aria-label={t.tasks.batchDue} onChange={pick((v) => batch({ due_at: v === "none" ? null : v }))}>
            <option value="">{t.tasks.batchDueMenu}</option>
            <option value={today}>{t.tasks.dueToday}</option>
            <option value={addDays(today, 1)}>{t.tasks.dueTomorrow}</option>
            <option value={addDays(today, 7)}>{t.tasks.dueNextWeek}</option>
            <option value="none">{t.tasks.noDate}</option>
          </select>
          <input type="date" class="batch-date" aria-label={t.tasks.batchDueOn} onChange={pick((v) => batch({ due_at: v }))} />
          <select aria-label={t.tasks.batchPriority} onChange={pick((v) => batch({ priority: Number(v) }))}>
            <option value="">{t.tasks.batchPriorityMenu}</option>
            {t.priorities.map((name, i) => <option key={i} value={String(i)}>{name}</option>).reverse()}
          </select>
          {/* Adding or removing one tag keeps each task's other tags; "Tags…" replaces them all. */}
          {ctx.tags.length > 0 && (
            <select aria-label={t.tasks.batchAddTag} onChange={pick((v) => batch({ add_tag_ids: [v] }))}>
              <option value="">{t.tasks.batchAddTagMenu}</option>
              {ctx.tags.map((g) => <option key={g.id} value={g.id}>{t.tasks.tagOption(g.name)}</option>)}
            </select>
          )}
          {ctx.tags.length > 0 && (
            <select aria-label={t.tasks.batchRemoveTag} onChange={pick((v) => batch({ remove_tag_ids: [v] }))}>
              <option value="">{t.tasks.batchRemoveTagMenu}</option>
              {ctx.tags.map((g) => <option key={g.id} value={g.id}>{t.tasks.tagOption(g.name)}</option>)}
            </select>
          )}
          <select aria-label={t.tasks.batchTags} onChange={pick((v) => batch({ tag_ids: v === "none" ? [] : [v] }))}>
            <option value="">{t.tasks.batchTagsMenu}</option>
            {ctx.tags.map((g) => <option key={g.id} value={g.id}>{t.tasks.onlyTag(g.name)}</option>)}
            <option value="none">{t.tasks.noTags}</option>
          </select>
          <button class="danger" onClick={batchDelete} disabled={!selected.size}>{t.tasks.batchDelete}</button>
          <button class="link" onClick={() => setSelected(new Set(items.filter((x) => canEditList(listOf(x.list_id))).map((x) => x.id)))}>{t.tasks.selectAll}</button>
          <button class="link" onClick={endSelection}>{t.tasks.clearSelection}</button>
        </div>
      )}
      {state.error !== undefined && <ErrorBox error={state.error} retry={() => load(null)} />}
      <ul class="tasks" aria-label={t.nav.tasks}>
        {items.map((task) => (
          <TaskRow
            key={task.id}
            task={task}
            editable={canEditList(listOf(task.list_id))}
            by={byOf(task)}
            today={today}
            listName={listId ? null : (ctx.lists.find((l) => l.id === task.list_id)?.name ?? null)}
            selected={selected.has(task.id)}
            selecting={selecting}
            onSelect={(on) => select(task.id, on)}
            onToggle={() => toggle(task)}
            onOpen={() => setOpen(task.id)}
            onDelete={() => del(task)}
            onRename={(title) => rename(task, title)}
            dragIds={() => (selected.has(task.id) ? [...selected] : [task.id])}
            onMove={manual ? (dir) => moveBy(task, dir) : undefined}
            onDropBefore={manual ? (id) => id !== task.id && placeBefore(id, { before_id: task.id }, task.id, -1) : undefined}
            onDragBefore={manual ? (target) => target !== task.id && placeBefore(task.id, { before_id: target }, target, -1) : undefined}
          />
        ))}
      </ul>
      {!state.loading && !state.error && items.length === 0 && <p class="empty">{q ? t.tasks.emptySearch : t.tasks.empty}</p>}
      <div ref={sentinel} class="sentinel" />
      {state.loading && <p class="muted">{t.loading}</p>}
      {!state.done && !state.loading && <button class="link" onClick={() => load(cursor)}>{t.more}</button>}
      {openTask && (
        <TaskDetail
          key={openTask.id}
          task={openTask}
          ctx={ctx}
          onChange={(x) => (visible(x) ? replace(x) : remove(x.id))}
          onDeleted={() => {
            void del(openTask);
            setOpen(null);
          }}
          onClose={() => setOpen(null)}
        />
      )}
    </div>
  );
}

function TaskRow(p: {
  task: Task;
  /** False on a viewer's shared list: the row only opens the task's details. */
  editable: boolean;
  /** Who added the task, on a shared list when it was someone else. */
  by: string | null;
  today: string;
  listName: string | null;
  selected: boolean;
  selecting: boolean;
  onSelect: (on: boolean) => void;
  onToggle: () => void;
  onOpen: () => void;
  onDelete: () => void;
  onRename: (title: string) => void;
  dragIds: () => string[];
  /** Manual order only: Alt+↑/↓, and a dragged row dropped on this one goes before it. */
  onMove?: (dir: -1 | 1) => void;
  onDropBefore?: (id: string) => void;
  /** Manual order by the row's handle (pointer events: touch, pen and mouse): goes before the row it is released on. */
  onDragBefore?: (targetId: string) => void;
}) {
  const { task, editable } = p;
  const [renaming, setRenaming] = useState(false);
  const finished = useRef(false); // Enter, then the blur of the removed input: rename once
  const startRename = () => {
    finished.current = false;
    setRenaming(true);
  };
  const finish = (input: HTMLInputElement, keep: boolean) => {
    if (finished.current) return;
    finished.current = true;
    const title = input.value.trim();
    setRenaming(false);
    if (keep && title && title !== task.title) p.onRename(title);
  };
  // Press and hold selects (touch has no Shift-click and no hover to reveal the checkbox).
  const hold = useLongPress(() => p.onSelect(!p.selected), { ms: LONG_PRESS_MS, skip: (e) => !editable || renaming || !!(e.target as HTMLElement).closest("input,button,a,label,.drag-handle") });
  // The handle (touch-action: none) drags at once, with any pointer; released on a row, the task goes before it.
  const handle = usePointerDrag({
    targetOf: (el, source) => {
      const row = el.closest<HTMLElement>("li[data-task-id]");
      return row && !row.contains(source) ? row : null;
    },
    draggingOf: (el) => el.closest("li"),
    onDrop: (_, target) => target.dataset.taskId && p.onDragBefore?.(target.dataset.taskId),
    draggingClass: "dragging",
    overClass: "drop-before",
  });
  const dueDate = task.due_at ? (isDateOnly(task.due_at) ? task.due_at : task.due_at.slice(0, 10)) : null;
  const overdue = !task.completed && dueDate !== null && dueDate < p.today;
  const doneSubs = task.subtasks.filter((s) => s.completed).length;
  return (
    <li
      class={`task ${task.completed ? "completed" : ""} ${p.selected ? "selected" : ""} prio-${task.priority}`}
      data-row
      data-task-id={task.id}
      tabIndex={0}
      draggable={finePointer && editable}
      onDragOver={(e) => {
        if (editable && p.onDropBefore && e.dataTransfer?.types.includes(DRAG_TASKS)) e.preventDefault();
      }}
      onDrop={(e) => {
        const ids = e.dataTransfer?.getData(DRAG_TASKS);
        if (!editable || !p.onDropBefore || !ids) return;
        e.preventDefault();
        const [first] = JSON.parse(ids) as string[];
        if (first) p.onDropBefore(first);
      }}
      {...hold.handlers}
      onDragStart={(e) => {
        hold.handlers.onDragStart();
        e.dataTransfer?.setData(DRAG_TASKS, JSON.stringify(p.dragIds()));
      }}
      onContextMenu={(e) => {
        if (hold.pressing()) e.preventDefault(); // Android's long-press menu
      }}
      onKeyDown={(e) => {
        if (e.target !== e.currentTarget) return;
        if (e.key === "Enter") p.onOpen();
        if (!editable) return;
        if (e.key === "Delete") p.onDelete();
        if (e.key === "F2") startRename();
        if (e.altKey && p.onMove && (e.key === "ArrowUp" || e.key === "ArrowDown")) {
          e.preventDefault();
          p.onMove(e.key === "ArrowUp" ? -1 : 1);
        }
      }}
      onClick={(e) => {
        if (hold.consumeClick()) return; // the click that ends a press-and-hold
        if ((e.target as HTMLElement).closest("input,button,a,label,.drag-handle")) return;
        if (editable && (e.shiftKey || e.ctrlKey || e.metaKey || p.selecting)) p.onSelect(!p.selected);
        else p.onOpen();
      }}
    >
      {/* Each checkbox sits in a 44×44 px label: the whole square is the touch target. */}
      {editable ? (
        <label class="hit select-hit">
          <input type="checkbox" class="select" aria-label={`${t.tasks.select}: ${task.title}`} checked={p.selected} onChange={(e) => p.onSelect((e.currentTarget as HTMLInputElement).checked)} />
        </label>
      ) : (
        <span class="hit select-hit" aria-hidden="true" />
      )}
      <label class="hit complete-hit">
        <input
          type="checkbox"
          class="complete"
          aria-label={`${task.completed ? t.tasks.markOpen : t.tasks.complete}: ${task.title}`}
          checked={task.completed}
          disabled={!editable}
          onChange={(e) => {
            (e.currentTarget as HTMLInputElement).checked = task.completed; // the server decides
            p.onToggle();
          }}
        />
      </label>
      <div class="task-body">
        {renaming ? (
          <input
            class="rename"
            aria-label={t.tasks.renameTask}
            defaultValue={task.title}
            dir="auto"
            maxLength={500}
            autoFocus
            onKeyDown={(e) => {
              if (e.key === "Enter") finish(e.currentTarget as HTMLInputElement, true);
              if (e.key === "Escape") finish(e.currentTarget as HTMLInputElement, false);
              e.stopPropagation();
            }}
            onBlur={(e) => finish(e.currentTarget as HTMLInputElement, true)}
          />
        ) : (
          <span class="title" dir="auto">{task.title}</span>
        )}
        <span class="meta">
          {task.due_at && <span class={`due ${overdue ? "overdue" : ""} ${dueDate === p.today ? "today" : ""}`}>{dueDate === p.today && isDateOnly(task.due_at) ? t.tasks.dueToday : formatDue(task.due_at)}</span>}
          {task.subtasks.length > 0 && <span class="subcount">☑ {doneSubs}/{task.subtasks.length}</span>}
          {p.listName && <span class="list-name" dir="auto">{p.listName}</span>}
          {p.by && <span class="by" dir="auto">{t.sharing.createdBy(p.by)}</span>}
          {task.tags.map((tag) => (
            <span key={tag.id} class="tag" dir="auto" style={{ borderColor: tag.color }}>
              <span class="tag-dot" style={{ background: tag.color }} aria-hidden="true" />
              {tag.name}
            </span>
          ))}
          {task.description && <span class="has-notes" aria-hidden="true">≡</span>}
        </span>
      </div>
      {editable && p.onDragBefore && (
        // Pointer drag for touch (HTML drag and drop is mouse-only here); the keyboard has Alt+↑/↓.
        <span class="drag-handle" aria-hidden="true" title={t.planner.reorderHint} {...handle.handlers}>
          ⠿
        </span>
      )}
      {!renaming && editable && (
        <span class="row-actions">
          <button class="icon small" aria-label={`${t.tasks.renameTask}: ${task.title}`} title={`${t.tasks.renameTask} (F2)`} onClick={startRename}>✎</button>
        </span>
      )}
    </li>
  );
}
