// The quick-add box: a sentence ("Call Bob tomorrow at 3pm #work !high") read by the shared parser
// (src/core/quick-add, chrono-node inside, loaded on first use as its own chunk: the first page
// stays small). What was understood is highlighted in the box as you type and listed under it;
// Backspace right after a recognised piece, Escape (the last one), or its × button keeps it as
// plain text. Enter sends structured fields (title, due_at, priority, list_id, tag_ids, then the
// recurrence): the server checks them like any other request.
import type { ComponentChildren, Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api/client";
import type { Tag, Task, User } from "../api/types";
import { t } from "../i18n";
import { formatDue, toast, toastError } from "../ui";
import type { TaskContext } from "./task-context";

type Parser = typeof import("../../../src/core/quick-add");
type Parsed = ReturnType<Parser["parseQuickAdd"]>;
type Ignored = { kind: Parsed["tokens"][number]["kind"]; text: string };

/** The API's limits on a task's text, counted in characters (code points) as the server counts them. */
export const TITLE_MAX = 500;
export const DESCRIPTION_MAX = 20_000;
const chars = (s: string) => [...s].length;

let loading: Promise<{ parser: Parser; timeZone: string }> | null = null;
/** The parser chunk and the user's zone ("tomorrow 3pm" is 15:00 where the user's days are). */
function loadParser() {
  loading ??= Promise.all([
    import("../../../src/core/quick-add"),
    api.get<User>("/me").then(
      (u) => u.timezone,
      () => Intl.DateTimeFormat().resolvedOptions().timeZone,
    ),
  ]).then(([parser, timeZone]) => ({ parser, timeZone }));
  loading.catch(() => (loading = null)); // offline at first use: try again next time
  return loading;
}

/** A colour for a tag made by quick add (the tag dialog lets the user change it). */
const TAG_COLOURS = ["#255ccc", "#1b7340", "#935700", "#8e3fb8", "#c62828", "#00796b"];
const colourOf = (name: string) => TAG_COLOURS[[...name].reduce((h, c) => (h * 31 + c.codePointAt(0)!) >>> 0, 7) % TAG_COLOURS.length]!;

function describe(p: Parsed, tok: Parsed["tokens"][number]): string {
  switch (tok.kind) {
    case "date":
      return p.due_at ? t.quickAdd.due(formatDue(p.due_at)) : tok.text;
    case "repeat":
      return t.quickAdd.repeat(tok.text.toLowerCase());
    case "tag":
      return t.quickAdd.tag(tok.text.slice(1));
    case "list":
      return t.quickAdd.list(p.list?.name ?? tok.text.slice(1));
    case "priority":
      return t.quickAdd.priority(t.priorities[p.priority ?? 0]!);
  }
}

export function QuickAddBox(p: { listId: string | null; ctx: TaskContext; onAdded: (task: Task) => void; inputRef: Ref<HTMLInputElement>; children?: ComponentChildren }) {
  const [text, setText] = useState("");
  const [ignore, setIgnore] = useState<Ignored[]>([]);
  const [parser, setParser] = useState<{ parser: Parser; timeZone: string } | null>(null);
  const mirror = useRef<HTMLDivElement>(null);
  const own = useRef<HTMLInputElement | null>(null);

  const n = chars(text.trim());
  const tooLong = n > TITLE_MAX ? n : 0;
  const parse = (s: string, ig: Ignored[]): Parsed | null =>
    parser && chars(s) <= TITLE_MAX ? parser.parser.parseQuickAdd(s, { now: new Date(), timeZone: parser.timeZone, lists: p.ctx.lists, tags: p.ctx.tags, ignore: ig }) : null;
  const parsed = parse(text, ignore);
  const tokens = parsed?.tokens ?? [];

  const ensureParser = () => {
    if (!parser) void loadParser().then(setParser, () => undefined);
  };
  useEffect(() => {
    if (own.current && document.activeElement === own.current) ensureParser();
  }, []);
  // The highlight layer scrolls with the text of a long sentence.
  const syncScroll = () => {
    if (mirror.current && own.current) mirror.current.scrollLeft = own.current.scrollLeft;
  };
  useEffect(syncScroll);

  const keep = (tok: Parsed["tokens"][number]) => setIgnore((xs) => [...xs, { kind: tok.kind, text: tok.text }]);

  // The box is cleared at once and the request goes on its own, so fast typing never waits and
  // a second sentence can follow before the first is saved.
  const submit = (input: HTMLInputElement) => {
    const raw = input.value;
    const whole = raw.trim();
    if (!whole) return;
    if (chars(whole) > DESCRIPTION_MAX) return toast(t.tasks.tooLongRefused(DESCRIPTION_MAX));
    const ig = ignore;
    input.value = "";
    setText("");
    setIgnore([]);
    void send(input, raw, whole, ig);
  };

  const send = async (input: HTMLInputElement, raw: string, whole: string, ig: Ignored[]) => {
    let body: Record<string, unknown>;
    let q: Parsed | null = null;
    if (chars(whole) > TITLE_MAX) {
      // Never cut silently: the beginning is the title, the whole text the description.
      body = { title: [...whole].slice(0, TITLE_MAX).join("").trimEnd(), description: whole, ...(p.listId ? { list_id: p.listId } : {}) };
    } else {
      let ready = parser;
      try {
        ready ??= await loadParser();
      } catch {
        ready = null; // the parser chunk could not load (offline): the text is the title, as typed
      }
      q = ready ? ready.parser.parseQuickAdd(whole, { now: new Date(), timeZone: ready.timeZone, lists: p.ctx.lists, tags: p.ctx.tags, ignore: ig }) : null;
      body = q ? { ...ready!.parser.taskCreateBody(q, { listId: p.listId ?? undefined }) } : { title: whole, ...(p.listId ? { list_id: p.listId } : {}) };
    }
    try {
      if (q && q.tags.length) {
        const ids: string[] = [];
        let made = false;
        for (const tag of q.tags) {
          if (tag.id) ids.push(tag.id);
          else {
            ids.push((await api.post<Tag>("/tags", { name: tag.name, color: colourOf(tag.name) })).id);
            made = true;
          }
        }
        body.tag_ids = [...new Set(ids)];
        if (made) p.ctx.reloadTags();
      }
      let task = await api.post<Task>("/tasks", body);
      if (q?.recurrence) {
        try {
          await api.post("/recurrences", { task_id: task.id, ...q.recurrence });
          task = await api.get<Task>(`/tasks/${task.id}`);
        } catch (err) {
          toast(t.quickAdd.repeatFailed);
          toastError(err);
        }
      }
      p.onAdded(task);
      if (body.description !== undefined) toast(t.tasks.tooLongAdded(TITLE_MAX));
    } catch (err) {
      // Nothing typed is lost: the sentence comes back unless something new was typed meanwhile.
      if (!input.value) {
        input.value = raw;
        setText(raw);
        setIgnore(ig);
      }
      toastError(err);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    const input = e.currentTarget as HTMLInputElement;
    if (e.isComposing) return;
    if (e.key === "Enter") {
      e.preventDefault();
      submit(input);
      return;
    }
    // Undo a recognised piece: Backspace right after it (caret at its end, nothing selected) …
    if (e.key === "Backspace" && input.selectionStart === input.selectionEnd) {
      const at = input.selectionStart ?? -1;
      const tok = tokens.find((x) => x.end === at);
      if (tok) {
        e.preventDefault();
        keep(tok);
      }
      return;
    }
    // … or Escape: the last one recognised (Escape with none recognised does what it did before).
    if (e.key === "Escape" && tokens.length) {
      e.preventDefault();
      e.stopPropagation();
      keep(tokens[tokens.length - 1]!);
    }
  };

  // The highlight layer: the same text, transparent, with the recognised pieces marked behind the input's text.
  const pieces: ComponentChildren[] = [];
  let at = 0;
  for (const tok of tokens) {
    pieces.push(text.slice(at, tok.start));
    pieces.push(<mark key={tok.start} class={`qa-${tok.kind}`}>{tok.text}</mark>);
    at = tok.end;
  }
  pieces.push(text.slice(at));

  return (
    <>
      <div class="quick-row">
        <div class="quick-field">
          <div class="quick-mirror" ref={mirror} aria-hidden="true">{pieces}</div>
          <input
            ref={(el) => {
              own.current = el;
              if (typeof p.inputRef === "function") p.inputRef(el);
              else if (p.inputRef) p.inputRef.current = el;
            }}
            class="quick-add"
            placeholder={t.tasks.quickAdd}
            aria-label={t.tasks.quickAddLabel}
            aria-describedby={[tooLong ? "quick-add-note" : "", tokens.length ? "quick-add-understood" : "", "quick-add-help"].filter(Boolean).join(" ")}
            data-shortcut="quick-add"
            dir="auto"
            autoComplete="off"
            onFocus={ensureParser}
            onKeyDown={onKeyDown}
            onInput={(e) => {
              ensureParser();
              const v = (e.currentTarget as HTMLInputElement).value;
              setText(v);
              if (!v) setIgnore([]);
            }}
            onScroll={syncScroll}
            autoFocus={matchMedia("(min-width: 768px)").matches}
          />
        </div>
        {p.children}
      </div>
      <p id="quick-add-help" class="sr-only">{t.quickAdd.help}</p>
      {tooLong > 0 && (
        <p class="warning quick-note" id="quick-add-note" role="status">
          {t.tasks.tooLong(tooLong, TITLE_MAX)} {tooLong <= DESCRIPTION_MAX ? t.tasks.tooLongHint : t.tasks.tooLongRefused(DESCRIPTION_MAX)}
        </p>
      )}
      <ul class="quick-understood" id="quick-add-understood" aria-label={t.quickAdd.understood} aria-live="polite" hidden={!tokens.length}>
        {parsed &&
          tokens.map((tok) => (
            <li key={`${tok.kind}:${tok.start}`} class={`chip qa-${tok.kind}`}>
              <span>{describe(parsed, tok)}</span>
              <button type="button" class="icon small" aria-label={t.quickAdd.keepAsText(tok.text)} title={t.quickAdd.keepAsText(tok.text)} onClick={() => keep(tok)}>
                ×
              </button>
            </li>
          ))}
      </ul>
    </>
  );
}
