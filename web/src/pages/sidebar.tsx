// The task sidebar: inbox first, lists grouped by folder, archived lists; drag a list to reorder it
// or onto a folder to move it; drop tasks on a list to move them there.
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Folder, List } from "../api/types";
import { t } from "../i18n";
import { navigate } from "../router";
import { Modal, toastError } from "../ui";
import { SmartLists } from "./planner";
import { canEditList, isShared } from "./list-access";
import { useInvitationCount } from "./sharing-lazy";

export interface SidebarProps {
  lists: List[];
  folders: Folder[];
  archived: List[];
  current: string | null;
  reload: () => void;
  onDropTasks: (listId: string, taskIds: string[]) => void;
  onNavigate?: () => void;
  /** The smart view or calendar on screen (then no list is current). */
  view?: string | null;
}

const DRAG_LIST = "application/x-app-list";
const DRAG_FOLDER = "application/x-app-folder";
export const DRAG_TASKS = "application/x-app-tasks";

export function Sidebar(p: SidebarProps) {
  const [editing, setEditing] = useState<{ kind: "list" | "folder"; item?: List | Folder } | null>(null);
  const [showArchived, setShowArchived] = useState(false);
  const invitations = useInvitationCount();
  const inbox = p.lists.find((l) => l.is_inbox);
  const others = p.lists.filter((l) => !l.is_inbox);
  const go = (id: string | null) => {
    navigate(id ? `/tasks?list=${id}` : "/tasks");
    p.onNavigate?.();
  };

  const reorder = async (dragged: string, before: string) => {
    const ids = others.map((l) => l.id).filter((id) => id !== dragged);
    const at = ids.indexOf(before);
    ids.splice(at < 0 ? ids.length : at, 0, dragged);
    try {
      await api.post("/lists/reorder", { ids });
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const reorderFolders = async (dragged: string, before: string) => {
    const ids = p.folders.map((f) => f.id).filter((id) => id !== dragged);
    const at = ids.indexOf(before);
    ids.splice(at < 0 ? ids.length : at, 0, dragged);
    try {
      await api.post("/folders/reorder", { ids });
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const moveToFolder = async (listId: string, folderId: string | null) => {
    try {
      await api.post(`/lists/${listId}/move`, { folder_id: folderId });
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const archive = async (l: List) => {
    try {
      await api.del(`/lists/${l.id}`);
      if (p.current === l.id) go(null);
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const restore = async (l: List) => {
    try {
      await api.post(`/lists/${l.id}/restore`);
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const purge = async (l: List) => {
    if (!confirm(t.confirmDelete)) return;
    try {
      await api.del(`/lists/${l.id}/purge`);
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };
  const deleteFolder = async (f: Folder) => {
    try {
      await api.del(`/folders/${f.id}`);
    } catch (e) {
      toastError(e);
    }
    p.reload();
  };

  const dropProps = (target: { listId?: string; folderId?: string | null }) => ({
    onDragOver: (e: DragEvent) => {
      const types = e.dataTransfer?.types ?? [];
      // A viewer's shared list takes no tasks (the server would refuse the move).
      const takesTasks = target.listId !== undefined && canEditList(p.lists.find((l) => l.id === target.listId));
      if (types.includes(DRAG_LIST) || (takesTasks && types.includes(DRAG_TASKS)) || (target.folderId && types.includes(DRAG_FOLDER))) {
        e.preventDefault();
        (e.currentTarget as HTMLElement).classList.add("drop");
      }
    },
    onDragLeave: (e: DragEvent) => (e.currentTarget as HTMLElement).classList.remove("drop"),
    onDrop: (e: DragEvent) => {
      (e.currentTarget as HTMLElement).classList.remove("drop");
      const dt = e.dataTransfer;
      if (!dt) return;
      e.preventDefault();
      const tasks = dt.getData(DRAG_TASKS);
      const list = dt.getData(DRAG_LIST);
      const folder = dt.getData(DRAG_FOLDER);
      if (folder && target.folderId && folder !== target.folderId) void reorderFolders(folder, target.folderId);
      else if (tasks && target.listId) p.onDropTasks(target.listId, JSON.parse(tasks) as string[]);
      else if (list && target.folderId !== undefined) void moveToFolder(list, target.folderId);
      else if (list && target.listId && list !== target.listId) void reorder(list, target.listId);
    },
  });

  const listItem = (l: List) => (
    <li key={l.id} class={p.current === l.id || (!p.current && !p.view && l.is_inbox) ? "current" : ""} {...dropProps({ listId: l.id })}>
      <a
        href={l.is_inbox ? "/tasks" : `/tasks?list=${l.id}`}
        draggable={!l.is_inbox}
        onDragStart={(e) => e.dataTransfer?.setData(DRAG_LIST, l.id)}
        onClick={() => p.onNavigate?.()}
        data-list={l.name}
        dir="auto"
      >
        <span class="dot" style={l.color ? { background: l.color } : undefined} />
        {l.is_inbox ? t.tasks.inbox : l.name}
        {isShared(l) && <SharedBadge list={l} />}
      </a>
      {!l.is_inbox && (
        <span class="row-actions">
          <button class="icon small" title={t.edit} aria-label={`${t.edit} ${l.name}`} onClick={() => setEditing({ kind: "list", item: l })}>✎</button>
          {l.role === "owner" && <button class="icon small" title={t.archive} aria-label={`${t.archive} ${l.name}`} onClick={() => archive(l)}>▣</button>}
        </span>
      )}
    </li>
  );

  const rootLists = others.filter((l) => !l.folder_id || !p.folders.some((f) => f.id === l.folder_id));
  return (
    <aside class="sidebar" aria-label={t.tasks.lists}>
      <SmartLists current={p.view ?? null} onNavigate={p.onNavigate} />
      <ul class="lists">{inbox && listItem(inbox)}</ul>
      <ul class="lists" {...dropProps({ folderId: null })}>{rootLists.map(listItem)}</ul>
      {p.folders.map((f) => (
        <div class="folder" key={f.id}>
          <div class="folder-name" {...dropProps({ folderId: f.id })}>
            <span draggable dir="auto" onDragStart={(e) => e.dataTransfer?.setData(DRAG_FOLDER, f.id)}>▾ {f.name}</span>
            <span class="row-actions">
              <button class="icon small" aria-label={`${t.rename} ${f.name}`} onClick={() => setEditing({ kind: "folder", item: f })}>✎</button>
              <button class="icon small" aria-label={`${t.delete} ${f.name}`} onClick={() => deleteFolder(f)}>✕</button>
            </span>
          </div>
          <ul class="lists">{others.filter((l) => l.folder_id === f.id).map(listItem)}</ul>
        </div>
      ))}
      <div class="sidebar-actions">
        <button class="link" onClick={() => setEditing({ kind: "list" })}>+ {t.tasks.newList}</button>
        <button class="link" onClick={() => setEditing({ kind: "folder" })}>+ {t.tasks.newFolder}</button>
      </div>
      <ul class="lists">
        <li class={location.pathname === "/trash" ? "current" : ""}>
          <a href="/trash" onClick={() => p.onNavigate?.()}>⌫ {t.nav.trash}</a>
        </li>
        {invitations > 0 && (
          <li>
            <a href="/invitations" class="invitations-link" onClick={() => p.onNavigate?.()}>
              ✉ {t.sharing.invitations}
              <span class="count" aria-label={t.sharing.invitationsCount(invitations)}>{invitations}</span>
            </a>
          </li>
        )}
      </ul>
      {p.archived.length > 0 && (
        <div class="archived">
          <button class="link" onClick={() => setShowArchived(!showArchived)} aria-expanded={showArchived}>
            {t.tasks.archivedLists} ({p.archived.length})
          </button>
          {showArchived && (
            <ul class="lists">
              {p.archived.map((l) => (
                <li key={l.id}>
                  <span class="muted" dir="auto">{l.name}</span>
                  <span class="row-actions visible">
                    <button class="small" onClick={() => restore(l)}>{t.restore}</button>
                    <button class="small danger" onClick={() => purge(l)}>{t.deleteForever}</button>
                  </span>
                </li>
              ))}
            </ul>
          )}
        </div>
      )}
      {editing && <EditDialog {...editing} folders={p.folders} lists={[...p.lists, ...p.archived]} onClose={() => setEditing(null)} onSaved={() => { setEditing(null); p.reload(); }} />}
    </aside>
  );
}

/** The sidebar's mark on a shared list: who owns it (a member's view) or how many share it (the owner's). */
export function SharedBadge({ list }: { list: List }) {
  const label = list.role === "owner" ? t.sharing.sharedWith(list.member_count) : t.sharing.sharedBy(list.owner.display_name || list.owner.username);
  return (
    <span class="shared-badge" title={label}>
      <svg viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
        <circle cx="5.5" cy="5" r="2.5" fill="currentColor" />
        <circle cx="11" cy="5.5" r="2" fill="currentColor" opacity="0.75" />
        <path d="M1 13c0-2.5 2-4 4.5-4s4.5 1.5 4.5 4z" fill="currentColor" />
        <path d="M10.5 13c0-1.4-.4-2.6-1.2-3.4.5-.2 1.1-.3 1.7-.3 2 0 3.5 1.2 3.5 3.7z" fill="currentColor" opacity="0.75" />
      </svg>
      <span class="sr-only">{label}</span>
    </span>
  );
}

/** How list names are compared for the duplicate warning: case and surrounding spaces do not count. */
const sameName = (a: string, b: string) => a.trim().toLocaleLowerCase() === b.trim().toLocaleLowerCase();

function EditDialog(p: { kind: "list" | "folder"; item?: List | Folder; folders: Folder[]; lists: List[]; onClose: () => void; onSaved: () => void }) {
  const isList = p.kind === "list";
  const list = isList ? (p.item as List | undefined) : undefined;
  // A member files a shared list in their own folder; its name is the owner's.
  const member = list !== undefined && list.role !== "owner";
  // The API allows two lists with the same name (they are told apart by id); say so before creating one.
  const [name, setName] = useState(p.item?.name ?? "");
  const duplicate = isList && name.trim() !== "" ? p.lists.find((l) => l.id !== list?.id && sameName(l.is_inbox ? t.tasks.inbox : l.name, name)) : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    const f = new FormData(e.currentTarget as HTMLFormElement);
    const name = String(f.get("name") ?? "").trim();
    try {
      if (isList) {
        const folder = String(f.get("folder") ?? "") || null;
        if (list && member) {
          if ((list.folder_id ?? null) !== folder) await api.post(`/lists/${list.id}/move`, { folder_id: folder });
        } else if (list) {
          await api.patch(`/lists/${list.id}`, { name });
          if ((list.folder_id ?? null) !== folder) await api.post(`/lists/${list.id}/move`, { folder_id: folder });
        } else {
          await api.post("/lists", folder ? { name, folder_id: folder } : { name });
        }
      } else if (p.item) await api.patch(`/folders/${p.item.id}`, { name });
      else await api.post("/folders", { name });
      p.onSaved();
    } catch (e) {
      toastError(e);
    }
  };
  const title = member ? t.fields.folder : p.item ? t.rename : isList ? t.tasks.newList : t.tasks.newFolder;
  return (
    <Modal title={title} onClose={p.onClose}>
      <form onSubmit={submit} class="stack">
        <label>
          {t.fields.name}
          <input name="name" required maxLength={200} value={name} dir="auto" autoFocus={!member} disabled={member} aria-describedby={duplicate ? "duplicate-name" : undefined} onInput={(e) => setName((e.currentTarget as HTMLInputElement).value)} />
        </label>
        {duplicate && <p class="warning" id="duplicate-name" role="status">{t.tasks.duplicateList(name.trim())}</p>}
        {isList && (
          <label>
            {t.fields.folder}
            <select name="folder" defaultValue={list?.folder_id ?? ""}>
              <option value="">{t.tasks.noFolder}</option>
              {p.folders.map((f) => <option key={f.id} value={f.id}>{f.name}</option>)}
            </select>
          </label>
        )}
        <div class="buttons">
          <button type="button" onClick={p.onClose}>{t.cancel}</button>
          <button class="primary">{duplicate ? t.tasks.saveAnyway : t.save}</button>
        </div>
      </form>
    </Modal>
  );
}

