import { useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { Memo, Page } from "../api/types";
import { t } from "../i18n";
import { Markdown } from "../markdown";
import { ErrorBox, formatInstant, Modal, toastError, useLoad, useTitle } from "../ui";

export function MemosPage() {
  const [deleted, setDeleted] = useState(false);
  useTitle(deleted ? t.memos.showDeleted : t.memos.title);
  const [extra, setExtra] = useState<Memo[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const first = useLoad(() => api.get<Page<Memo>>("/memos", { deleted: deleted || null, limit: 50 }), [deleted]);
  const items = [...(first.data?.items ?? []), ...extra];
  const next = cursor === undefined ? first.data?.next_cursor : cursor;
  const reload = () => {
    setExtra([]);
    setCursor(undefined);
    first.reload();
  };
  const more = async () => {
    try {
      const p = await api.get<Page<Memo>>("/memos", { deleted: deleted || null, limit: 50, cursor: next });
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
    reload();
  };
  return (
    <section class="narrow">
      <header class="page-header">
        <h1>{deleted ? t.memos.showDeleted : t.memos.title}</h1>
        <span class="spacer" />
        <button class="link" onClick={() => { setDeleted(!deleted); setExtra([]); setCursor(undefined); }}>{deleted ? t.memos.showActive : t.memos.showDeleted}</button>
      </header>
      {!deleted && <MemoEditor onSaved={reload} />}
      {first.error !== undefined && <ErrorBox error={first.error} retry={first.reload} />}
      {first.data && items.length === 0 && <p class="empty">{t.memos.empty}</p>}
      {items.map((m) => (
        <MemoCard key={m.id} memo={m} deleted={deleted} act={act} onSaved={reload} />
      ))}
      {next && <button class="link" onClick={more}>{t.more}</button>}
    </section>
  );
}

function MemoCard({ memo, deleted, act, onSaved }: { memo: Memo; deleted: boolean; act: (f: () => Promise<unknown>) => Promise<void>; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  if (editing) return <MemoEditor memo={memo} onSaved={() => { setEditing(false); onSaved(); }} onCancel={() => setEditing(false)} />;
  return (
    <article class={`card memo ${memo.pinned ? "pinned" : ""}`}>
      {/* Each memo is a section under the page's h1, so its own Markdown headings (h3…) follow in order. */}
      <h2 class="sr-only">{t.memos.heading(formatInstant(memo.updated_at))}</h2>
      <Markdown text={memo.content} />
      <footer>
        <span class="muted small">{formatInstant(memo.updated_at)}{memo.pinned && ` · ${t.pinned}`}</span>
        <span class="spacer" />
        {deleted ? (
          <>
            <button class="small" onClick={() => act(() => api.post(`/memos/${memo.id}/restore`))}>{t.restore}</button>
            <button class="small danger" onClick={() => confirm(t.confirmDelete) && act(() => api.del(`/memos/${memo.id}/purge`))}>{t.deleteForever}</button>
          </>
        ) : (
          <>
            <button class="small" onClick={() => act(() => api.patch(`/memos/${memo.id}`, { pinned: !memo.pinned, version: memo.version }))}>{memo.pinned ? t.unpin : t.pin}</button>
            <button class="small" onClick={() => setEditing(true)}>{t.edit}</button>
            <button class="small" onClick={() => act(() => api.del(`/memos/${memo.id}`))}>{t.delete}</button>
          </>
        )}
      </footer>
    </article>
  );
}

function MemoEditor({ memo, onSaved, onCancel }: { memo?: Memo; onSaved: () => void; onCancel?: () => void }) {
  const [text, setText] = useState(memo?.content ?? "");
  const [preview, setPreview] = useState(false);
  // The version this edit is based on; a conflict replaces it with the server's when the user keeps theirs.
  const [base, setBase] = useState(memo?.version ?? 0);
  const [conflict, setConflict] = useState<Memo | null>(null);
  const save = async (version = base) => {
    if (!text.trim()) return;
    try {
      if (memo) await api.patch(`/memos/${memo.id}`, { content: text, version });
      else await api.post("/memos", { content: text });
      setText("");
      setConflict(null);
      onSaved();
    } catch (e) {
      if (memo && e instanceof ApiError && e.code === "version_conflict") {
        try {
          setConflict(await api.get<Memo>(`/memos/${memo.id}`));
        } catch (e2) {
          toastError(e2);
        }
      } else toastError(e);
    }
  };
  return (
    <div class="card memo-editor">
      <div class="segmented" role="tablist">
        <button role="tab" aria-selected={!preview} class={!preview ? "on" : ""} onClick={() => setPreview(false)}>{t.memos.write}</button>
        <button role="tab" aria-selected={preview} class={preview ? "on" : ""} onClick={() => setPreview(true)}>{t.memos.preview}</button>
      </div>
      {preview ? (
        <Markdown text={text} />
      ) : (
        <textarea
          aria-label={t.memos.placeholder}
          placeholder={t.memos.placeholder}
          dir="auto"
          rows={memo ? 8 : 4}
          value={text}
          maxLength={100000}
          onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
          onKeyDown={(e) => (e.ctrlKey || e.metaKey) && e.key === "Enter" && void save()}
        />
      )}
      <div class="buttons">
        {onCancel && <button onClick={onCancel}>{t.cancel}</button>}
        <button class="primary" onClick={() => save()} disabled={!text.trim()}>{t.save}</button>
      </div>
      {conflict && (
        <Modal title={t.tasks.conflictTitle} onClose={() => setConflict(null)}>
          <p>{t.tasks.conflictText}</p>
          <div class="conflict-memos">
            <section><h3>{t.tasks.yours}</h3><Markdown text={text} /></section>
            <section><h3>{t.tasks.theirs}</h3><Markdown text={conflict.content} /></section>
          </div>
          <div class="buttons">
            <button onClick={() => { setText(conflict.content); setBase(conflict.version); setConflict(null); }}>{t.tasks.conflictTheirs}</button>
            <button class="primary" onClick={() => { setBase(conflict.version); void save(conflict.version); }}>{t.tasks.conflictMine}</button>
          </div>
        </Modal>
      )}
    </div>
  );
}
