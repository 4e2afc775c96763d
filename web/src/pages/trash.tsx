import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Page, Task } from "../api/types";
import { t } from "../i18n";
import { ErrorBox, formatInstant, toastError, useLoad, useTitle } from "../ui";

export function TrashPage() {
  useTitle(t.trash.title);
  const [extra, setExtra] = useState<Task[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const first = useLoad(() => api.get<Page<Task>>("/trash", { limit: 50 }), []);
  const items = [...(first.data?.items ?? []), ...extra];
  const next = cursor === undefined ? first.data?.next_cursor : cursor;
  const more = async () => {
    try {
      const p = await api.get<Page<Task>>("/trash", { limit: 50, cursor: next });
      setExtra((x) => [...x, ...p.items]);
      setCursor(p.next_cursor);
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
    setExtra([]);
    setCursor(undefined);
    first.reload();
  };
  return (
    <section class="narrow">
      <header class="page-header">
        <h1>{t.trash.title}</h1>
        <a href="/tasks">← {t.nav.tasks}</a>
      </header>
      {first.error !== undefined && <ErrorBox error={first.error} retry={first.reload} />}
      {first.loading && !first.data && <p class="muted">{t.loading}</p>}
      {first.data && items.length === 0 && <p class="empty">{t.trash.empty}</p>}
      <ul class="tasks">
        {items.map((task) => (
          <li class="task" key={task.id}>
            <div class="task-body">
              <span class="title" dir="auto">{task.title}</span>
              <span class="meta">{task.deleted_at && t.trash.deletedAt(formatInstant(task.deleted_at))}{task.subtasks.length > 0 && ` · ☑ ${task.subtasks.length}`}</span>
            </div>
            <span class="row-actions visible">
              <button onClick={() => act(() => api.post(`/tasks/${task.id}/restore`))}>{t.restore}</button>
              <button class="danger" onClick={() => confirm(t.confirmDelete) && act(() => api.del(`/trash/${task.id}`))}>{t.deleteForever}</button>
            </span>
          </li>
        ))}
      </ul>
      {next && <button class="link" onClick={more}>{t.more}</button>}
    </section>
  );
}
