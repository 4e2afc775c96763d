import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api, ApiError, upload } from "../api/client";
import type { Attachment, Recurrence, Tag, Task } from "../api/types";
import { t } from "../i18n";
import { ConfirmDialog, dueFromParts, dueParts, ErrorBox, errorText, formatDue, formatSize, Modal, NotAvailable, toast, toastError, useLoad } from "../ui";
import type { TaskContext } from "./task-context";
import { completeTask } from "./task-completion";
import { ReminderList } from "./reminders";
import { canEditList, editableLists, isShared } from "./list-access";

interface Draft {
  title: string;
  description: string;
  date: string;
  time: string;
  priority: number;
  tag_ids: string[];
  list_id: string;
}
const draftOf = (x: Task): Draft => ({ title: x.title, description: x.description, ...dueParts(x.due_at), priority: x.priority, tag_ids: x.tags.map((g) => g.id), list_id: x.list_id });

/** The fields of the draft that differ from the task, as a PATCH body. */
function changes(d: Draft, x: Task): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const base = draftOf(x);
  if (d.title !== base.title) out.title = d.title;
  if (d.description !== base.description) out.description = d.description;
  if (d.date !== base.date || d.time !== base.time) out.due_at = dueFromParts(d.date, d.time);
  if (d.priority !== base.priority) out.priority = d.priority;
  if ([...d.tag_ids].sort().join() !== [...base.tag_ids].sort().join()) out.tag_ids = d.tag_ids;
  if (d.list_id !== base.list_id) out.list_id = d.list_id;
  return out;
}

export function TaskDetail(p: { task: Task; ctx: TaskContext; onChange: (x: Task) => void; onDeleted: () => void; onClose: () => void }) {
  const [task, setTask] = useState(p.task);
  const [draft, setDraft] = useState<Draft>(() => draftOf(p.task));
  const [conflict, setConflict] = useState<Task | null>(null);
  // Closing with changes that cannot be saved: why, while the user chooses to discard or keep editing.
  const [unsaved, setUnsaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (patch: Partial<Draft>) => setDraft((d) => ({ ...d, ...patch }));
  const dirty = Object.keys(changes(draft, task)).length > 0;
  // A viewer of a shared list reads the task; only their own tags and reminders on it are theirs to set.
  const list = p.ctx.lists.find((l) => l.id === task.list_id);
  const readOnly = !canEditList(list);
  const shared = list !== undefined && isShared(list);
  const moveTargets = editableLists(p.ctx.lists);

  const commit = (x: Task) => {
    setTask(x);
    p.onChange(x);
  };
  // The save in flight: closing waits for it instead of sending a second PATCH on the old version.
  const inflight = useRef<Promise<boolean> | null>(null);
  const save = (base: Task = task, onRefused?: (why: string) => void): Promise<boolean> => {
    if (inflight.current) return inflight.current;
    const pending = saveNow(base, onRefused).finally(() => {
      inflight.current = null;
    });
    inflight.current = pending;
    return pending;
  };
  // A newer version of this task arrived while the dialog is open (another member, another tab: the
  // list re-read it on its event): shown at once when nothing here is being edited or saved. With
  // edits in progress it is left alone: saving them meets the version conflict and its choice.
  useEffect(() => {
    if (p.task.version > task.version && !dirty && inflight.current === null) {
      setTask(p.task);
      setDraft(draftOf(p.task));
    }
  }, [p.task]);
  // Closing saves what changed; when that cannot be saved (a blank title, a refused value, no
  // connection) the user is asked whether to discard it, so the dialog can always be closed.
  const close = async () => {
    if (unsaved !== null || conflict) return; // a question is open over the form
    const ok = inflight.current ? await inflight.current : dirty ? await save(task, (why) => setUnsaved(why)) : true;
    if (ok) p.onClose();
  };
  /**
   * PATCH with the version the draft is based on; true when saved. A refusal is shown as a toast,
   * or handed to `onRefused` (closing asks to discard instead).
   */
  const saveNow = async (base: Task, onRefused?: (why: string) => void): Promise<boolean> => {
    const body = changes(draft, base);
    if (!Object.keys(body).length) return true;
    const refuse = (why: string) => (onRefused ? onRefused(why) : toast(why));
    if (body.title !== undefined && !draft.title.trim()) {
      refuse(t.tasks.titleBlank);
      return false;
    }
    setBusy(true);
    try {
      const x = await api.patch<Task>(`/tasks/${task.id}`, { ...body, version: base.version });
      commit(x);
      setDraft(draftOf(x));
      setConflict(null);
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.code === "version_conflict") {
        try {
          setConflict(await api.get<Task>(`/tasks/${task.id}`));
        } catch (e2) {
          refuse(errorText(e2));
        }
      } else refuse(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  };

  const refresh = async () => {
    try {
      const x = await api.get<Task>(`/tasks/${task.id}`);
      commit(x);
    } catch (e) {
      toastError(e);
    }
  };

  const toggleTag = (id: string) => set({ tag_ids: draft.tag_ids.includes(id) ? draft.tag_ids.filter((x) => x !== id) : [...draft.tag_ids, id] });
  const newTag = async () => {
    const name = prompt(t.tasks.newTag)?.trim();
    if (!name) return;
    try {
      const tag = await api.post<Tag>("/tags", { name, color: "#4f7cff" });
      p.ctx.reloadTags();
      set({ tag_ids: [...draft.tag_ids, tag.id] });
    } catch (e) {
      toastError(e);
    }
  };

  return (
    <Modal title={t.tasks.details} onClose={() => void close()} focusDialog>
      <form
        class="stack task-form"
        aria-busy={busy}
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label>{t.fields.title}<input name="title" value={draft.title} maxLength={500} required dir="auto" readOnly={readOnly} onInput={(e) => set({ title: (e.currentTarget as HTMLInputElement).value })} /></label>
        <label>{t.fields.description}<textarea name="description" rows={4} value={draft.description} dir="auto" readOnly={readOnly} onInput={(e) => set({ description: (e.currentTarget as HTMLTextAreaElement).value })} /></label>
        <div class="row">
          <label>{t.fields.due}<input type="date" name="due_date" value={draft.date} disabled={readOnly} onInput={(e) => set({ date: (e.currentTarget as HTMLInputElement).value })} /></label>
          <label>{t.fields.dueTime}<input type="time" name="due_time" value={draft.time} disabled={readOnly || !draft.date} onInput={(e) => set({ time: (e.currentTarget as HTMLInputElement).value })} /></label>
          <label>
            {t.fields.priority}
            <select name="priority" value={String(draft.priority)} disabled={readOnly} onChange={(e) => set({ priority: Number((e.currentTarget as HTMLSelectElement).value) })}>
              {t.priorities.map((label, i) => <option key={i} value={String(i)}>{label}</option>)}
            </select>
          </label>
          {!task.parent_id && (
            <label>
              {t.fields.list}
              <select name="list" value={draft.list_id} disabled={readOnly} onChange={(e) => set({ list_id: (e.currentTarget as HTMLSelectElement).value })}>
                {(readOnly || !list ? p.ctx.lists : moveTargets).map((l) => <option key={l.id} value={l.id}>{l.is_inbox ? t.tasks.inbox : l.name}</option>)}
              </select>
            </label>
          )}
        </div>
        <fieldset class="tags">
          <legend>{t.fields.tags}</legend>
          {p.ctx.tags.map((tag) => (
            <button type="button" key={tag.id} class={`chip ${draft.tag_ids.includes(tag.id) ? "on" : ""}`} aria-pressed={draft.tag_ids.includes(tag.id)} style={{ borderColor: tag.color }} onClick={() => toggleTag(tag.id)}>
              {tag.name}
            </button>
          ))}
          <button type="button" class="chip" onClick={newTag}>+ {t.tasks.newTag}</button>
        </fieldset>
        {shared && (task.created_by || task.completed_by) && (
          <p class="muted task-people">
            {task.created_by && t.sharing.createdBy(task.created_by.username)}
            {task.created_by && task.completed_by && " · "}
            {task.completed_by && t.sharing.completedBy(task.completed_by.username)}
          </p>
        )}
        {readOnly && <p class="muted">{t.sharing.readOnly}</p>}
        <div class="buttons">
          {!readOnly && <button type="button" class="danger" onClick={p.onDeleted}>{t.tasks.deleteTask}</button>}
          <span class="spacer" />
          <button class="primary" disabled={!dirty || busy}>{t.save}</button>
        </div>
      </form>
      {!task.parent_id && <Subtasks task={task} onChange={refresh} readOnly={readOnly} />}
      {!task.parent_id && <RecurrenceEditor task={task} onTask={commit} readOnly={readOnly} />}
      <ReminderList type="task" id={task.id} hasDue={task.due_at !== null} key={`${task.id}:${task.due_at ?? ""}:${task.completed}`} />
      <Attachments taskId={task.id} readOnly={readOnly} />
      {unsaved !== null && (
        <ConfirmDialog
          title={t.tasks.discardTitle}
          text={<p>{t.tasks.discardText} {unsaved}</p>}
          yes={t.tasks.discard}
          no={t.tasks.keepEditing}
          danger
          onYes={() => {
            setUnsaved(null);
            p.onClose();
          }}
          onNo={() => setUnsaved(null)}
        />
      )}
      {conflict && (
        <ConflictDialog
          mine={draft}
          theirs={conflict}
          onMine={() => {
            setTask(conflict);
            void save(conflict);
          }}
          onTheirs={() => {
            commit(conflict);
            setDraft(draftOf(conflict));
            setConflict(null);
          }}
        />
      )}
    </Modal>
  );
}

function ConflictDialog(p: { mine: Draft; theirs: Task; onMine: () => void; onTheirs: () => void }) {
  const theirs = draftOf(p.theirs);
  const rows: [string, string, string][] = [
    [t.fields.title, p.mine.title, theirs.title],
    [t.fields.description, p.mine.description, theirs.description],
    [t.fields.due, `${p.mine.date} ${p.mine.time}`.trim(), `${theirs.date} ${theirs.time}`.trim()],
    [t.fields.priority, t.priorities[p.mine.priority] ?? "", t.priorities[theirs.priority] ?? ""],
  ];
  return (
    <Modal title={t.tasks.conflictTitle} onClose={p.onTheirs}>
      <p>{t.tasks.conflictText}</p>
      <table class="conflict">
        <thead><tr><th><span class="sr-only">{t.field}</span></th><th>{t.tasks.yours}</th><th>{t.tasks.theirs}</th></tr></thead>
        <tbody>
          {rows.map(([label, a, b]) => (
            <tr key={label} class={a !== b ? "differs" : ""}><th scope="row">{label}</th><td dir="auto">{a}</td><td dir="auto">{b}</td></tr>
          ))}
        </tbody>
      </table>
      <div class="buttons">
        <button onClick={p.onTheirs}>{t.tasks.conflictTheirs}</button>
        <button class="primary" onClick={p.onMine}>{t.tasks.conflictMine}</button>
      </div>
    </Modal>
  );
}

function Subtasks({ task, onChange, readOnly }: { task: Task; onChange: () => void; readOnly: boolean }) {
  const add = async (e: KeyboardEvent) => {
    if (e.key !== "Enter" || e.isComposing) return;
    e.preventDefault();
    const input = e.currentTarget as HTMLInputElement;
    const title = input.value.trim();
    if (!title) return;
    input.value = "";
    try {
      await api.post("/tasks", { title, parent_id: task.id });
      onChange();
    } catch (err) {
      toastError(err);
    }
  };
  const toggle = async (s: Task["subtasks"][number]) => {
    try {
      await api.patch(`/tasks/${s.id}`, { completed: !s.completed, version: s.version });
      onChange();
    } catch (e) {
      toastError(e);
    }
  };
  const del = async (id: string) => {
    try {
      await api.del(`/tasks/${id}`);
      onChange();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <section class="subtasks">
      <h3>{t.tasks.subtasks}</h3>
      <ul>
        {task.subtasks.map((s) => (
          <li key={s.id} class={s.completed ? "completed" : ""}>
            <label>
              <input type="checkbox" checked={s.completed} disabled={readOnly} onChange={() => toggle(s)} aria-label={`${t.tasks.complete}: ${s.title}`} />
              <span class="title" dir="auto">{s.title}</span>
            </label>
            {!readOnly && <button class="icon small" aria-label={`${t.delete} ${s.title}`} onClick={() => del(s.id)}>✕</button>}
          </li>
        ))}
      </ul>
      {!readOnly && <input class="add-subtask" placeholder={t.tasks.addSubtask} aria-label={t.tasks.addSubtask} maxLength={500} dir="auto" onKeyDown={add} />}
    </section>
  );
}

const BYDAY = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"];
type Preset = "none" | "daily" | "weekdays" | "weekly" | "monthly" | "yearly" | "after" | "custom";

function presetRule(preset: Preset, due: string): string | null {
  const d = new Date(`${due.slice(0, 10)}T12:00:00`);
  switch (preset) {
    case "daily": return "FREQ=DAILY";
    case "weekdays": return "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR";
    case "weekly": return `FREQ=WEEKLY;BYDAY=${BYDAY[d.getDay()]}`;
    case "monthly": return `FREQ=MONTHLY;BYMONTHDAY=${d.getDate()}`;
    case "yearly": return "FREQ=YEARLY";
    default: return null;
  }
}
function presetOf(r: Recurrence | null, due: string | null): Preset {
  if (!r) return "none";
  if (r.kind === "after_completion") return "after";
  for (const p of ["daily", "weekdays", "weekly", "monthly", "yearly"] as Preset[]) if (due && presetRule(p, due) === r.rrule) return p;
  return "custom";
}

function RecurrenceEditor({ task, onTask, readOnly }: { task: Task; onTask: (x: Task) => void; readOnly: boolean }) {
  // null: the task does not repeat (the API answers 200 null, so opening a task logs no error).
  const rec = useLoad(() => api.get<Recurrence | null>(`/tasks/${task.id}/recurrence`), [task.id]);
  const [preset, setPreset] = useState<Preset>("none");
  const [rrule, setRrule] = useState("");
  const [interval, setInterval] = useState(1);
  const [unit, setUnit] = useState("week");
  // A layout effect: the form shows the loaded schedule in the same frame as it appears, so a choice
  // made at once is never overwritten by a late reset.
  useLayoutEffect(() => {
    if (rec.data === undefined) return;
    setPreset(presetOf(rec.data, task.due_at));
    setRrule(rec.data?.rrule ?? "");
    setInterval(rec.data?.interval ?? 1);
    setUnit(rec.data?.unit ?? "week");
  }, [rec.data]);
  if (rec.error) return <section class="recurrence"><h3>{t.recurrence.title}</h3><ErrorBox error={rec.error} /></section>;
  if (rec.loading && rec.data === undefined) return null;
  const current = rec.data ?? null;

  const apply = async () => {
    try {
      if (preset === "none") {
        if (current) await api.del(`/recurrences/${current.id}`);
        rec.set(null);
        return;
      }
      const body =
        preset === "after"
          ? { kind: "after_completion", interval, unit, rrule: null }
          : { kind: "rrule", rrule: preset === "custom" ? rrule.trim() : presetRule(preset, task.due_at ?? ""), interval: null, unit: null };
      const r = current ? await api.patch<Recurrence>(`/recurrences/${current.id}`, body) : await api.post<Recurrence>("/recurrences", { task_id: task.id, ...body });
      rec.set(r);
      toast(t.settings.saved);
    } catch (e) {
      toastError(e);
    }
  };
  const completeNow = async () => {
    try {
      const r = await completeTask(task);
      onTask(r.updated);
      toast(r.message, {
        label: t.tasks.undo,
        run: async () => {
          try {
            await r.undo();
            onTask(await api.get<Task>(`/tasks/${task.id}`));
            rec.reload();
            toast(t.tasks.undone);
          } catch (e) {
            toastError(e);
          }
        },
      });
    } catch (e) {
      toastError(e);
    }
  };
  const needsDue = preset !== "none" && preset !== "after" && !task.due_at;
  if (readOnly) {
    if (!current) return null;
    return (
      <section class="recurrence">
        <h3>{t.recurrence.title}</h3>
        <p class="muted">{t.recurrence.repeats}: {current.kind === "rrule" ? current.rrule : `${t.recurrence.every} ${current.interval} ${t.recurrence.units[current.unit ?? "day"]}`}</p>
      </section>
    );
  }
  return (
    <section class="recurrence">
      <h3>{t.recurrence.title}</h3>
      <div class="row">
        <select aria-label={t.recurrence.title} value={preset} onChange={(e) => setPreset((e.currentTarget as HTMLSelectElement).value as Preset)}>
          <option value="none">{t.recurrence.none}</option>
          <option value="daily">{t.recurrence.daily}</option>
          <option value="weekdays">{t.recurrence.weekdays}</option>
          <option value="weekly">{t.recurrence.weekly}</option>
          <option value="monthly">{t.recurrence.monthly}</option>
          <option value="yearly">{t.recurrence.yearly}</option>
          <option value="after">{t.recurrence.afterCompletion}</option>
          <option value="custom">{t.recurrence.custom}</option>
        </select>
        {preset === "after" && (
          <>
            <label class="inline">{t.recurrence.every}<input type="number" min={1} max={1000} value={interval} onInput={(e) => setInterval(Number((e.currentTarget as HTMLInputElement).value))} /></label>
            <select aria-label={t.fields.unit} value={unit} onChange={(e) => setUnit((e.currentTarget as HTMLSelectElement).value)}>
              {Object.entries(t.recurrence.units).map(([k, v]) => <option key={k} value={k}>{v}</option>)}
            </select>
          </>
        )}
        {preset === "custom" && <input aria-label={t.recurrence.rrule} dir="ltr" placeholder="FREQ=WEEKLY;BYDAY=MO,WE" value={rrule} onInput={(e) => setRrule((e.currentTarget as HTMLInputElement).value)} />}
        <button onClick={apply} disabled={needsDue}>{t.save}</button>
      </div>
      {needsDue && <p class="muted">{t.recurrence.needsDue}</p>}
      {current && (
        <p class="muted">
          {t.recurrence.repeats}: {current.kind === "rrule" ? current.rrule : `${t.recurrence.every} ${current.interval} ${t.recurrence.units[current.unit ?? "day"]}`}
          {task.due_at && ` · ${formatDue(task.due_at)}`}{" "}
          {!task.completed && <button class="small" onClick={completeNow}>{t.tasks.complete}</button>}
        </p>
      )}
    </section>
  );
}

function Attachments({ taskId, readOnly }: { taskId: string; readOnly: boolean }) {
  const list = useLoad(() => api.get<{ items: Attachment[] }>(`/tasks/${taskId}/attachments`), [taskId]);
  const [progress, setProgress] = useState<{ name: string; fraction: number } | null>(null);
  const [over, setOver] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  if (list.error instanceof ApiError && list.error.missingEndpoint) {
    return <section class="attachments"><h3>{t.attachments.title}</h3><NotAvailable /></section>;
  }
  const send = async (files: FileList | File[]) => {
    for (const file of [...files]) {
      setProgress({ name: file.name, fraction: 0 });
      try {
        await upload<Attachment>(`/tasks/${taskId}/attachments`, file, (fraction) => setProgress({ name: file.name, fraction }));
      } catch (e) {
        if (e instanceof ApiError && e.code === "payload_too_large") toast(t.attachments.tooLarge);
        else if (e instanceof ApiError && e.code === "unsupported_media_type") toast(t.attachments.badType);
        else toastError(e);
      }
    }
    setProgress(null);
    list.reload();
  };
  const del = async (a: Attachment) => {
    try {
      await api.del(`/attachments/${a.id}`);
      list.reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <section
      class={`attachments ${over ? "drop" : ""}`}
      onDragOver={(e) => {
        if (!readOnly && e.dataTransfer?.types.includes("Files")) {
          e.preventDefault();
          setOver(true);
        }
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        setOver(false);
        if (e.dataTransfer?.files.length) {
          e.preventDefault();
          void send(e.dataTransfer.files);
        }
      }}
    >
      <h3>{t.attachments.title}</h3>
      {list.error !== undefined && <ErrorBox error={list.error} retry={list.reload} />}
      <ul>
        {(list.data?.items ?? []).map((a) => (
          <li key={a.id}>
            <a href={`/api/v1/attachments/${a.id}`} download={a.filename} dir="auto">{a.filename}</a>
            <span class="muted"> {formatSize(a.size)}</span>
            {!readOnly && <button class="icon small" aria-label={`${t.delete} ${a.filename}`} onClick={() => del(a)}>✕</button>}
          </li>
        ))}
      </ul>
      {progress && (
        <div class="progress">
          <span>{t.attachments.uploading(progress.name)}</span>
          <progress max={1} value={progress.fraction} />
        </div>
      )}
      {!readOnly && <><input ref={picker} type="file" multiple hidden aria-label={t.attachments.pick} onChange={(e) => { const f = (e.currentTarget as HTMLInputElement).files; if (f) void send(f); (e.currentTarget as HTMLInputElement).value = ""; }} />
      <button onClick={() => picker.current?.click()}>{t.attachments.pick}</button> <span class="muted">{t.attachments.drop}</span></>}
    </section>
  );
}
