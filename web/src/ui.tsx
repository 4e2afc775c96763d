// Small shared pieces: toasts, error and "not available" states, a loader hook, date formatting.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api/client";
import { t } from "./i18n";

// ---- toasts
interface ToastItem {
  id: number;
  text: string;
  action?: { label: string; run: () => void };
}
let toasts: ToastItem[] = [];
const toastListeners = new Set<() => void>();
let toastId = 0;
export function toast(text: string, action?: ToastItem["action"]): void {
  const id = ++toastId;
  toasts = [...toasts, { id, text, action }];
  toastListeners.forEach((f) => f());
  // A message with an action (Undo) stays longer: time to notice and reach it.
  setTimeout(() => {
    toasts = toasts.filter((x) => x.id !== id);
    toastListeners.forEach((f) => f());
  }, action ? 10_000 : 6000);
}
export function toastError(e: unknown): void {
  toast(errorText(e));
}
export function Toasts() {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    toastListeners.add(f);
    return () => void toastListeners.delete(f);
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.map((x) => (
        <div class="toast" key={x.id}>
          <span>{x.text}</span>
          {x.action && (
            <button
              class="link"
              onClick={() => {
                toasts = toasts.filter((y) => y.id !== x.id);
                toastListeners.forEach((f) => f());
                x.action!.run();
              }}
            >
              {x.action.label}
            </button>
          )}
        </div>
      ))}
    </div>
  );
}

/** What the form calls an API field path (`title`, `days.2`, `frequency.count`). */
function fieldName(path: string): string {
  const key = path.split(".")[0]!;
  return t.fieldNames[path] ?? t.fieldNames[key] ?? path;
}

/**
 * One clear sentence for a failed request, chosen by the problem's `code` (never by its text).
 * Field problems name the field and say what is wrong, once; no answer at all is "cannot be reached".
 */
export function errorText(e: unknown): string {
  if (!(e instanceof ApiError)) return t.errorGeneric;
  if (e.network) return e.write ? t.offlineWrite : t.offline;
  switch (e.code) {
    case "validation_failed":
    case "invalid_reference":
    case "invalid_parent": {
      const seen = new Set<string>();
      const parts: string[] = [];
      for (const x of e.errors) {
        const part = `${fieldName(x.path)} (${x.message})`;
        if (!seen.has(part) && parts.length < 3) parts.push(part);
        seen.add(part);
      }
      return parts.length ? t.errors.invalid(parts.join(", ")) : t.errors.invalidGeneric;
    }
    case "rate_limited":
      return t.errors.rateLimited(e.retryAfter);
    case "state_conflict": {
      // The rule that refused is named by the server's detail, a sentence of its own.
      const d = e.detail.trim();
      return d ? `${d[0]!.toUpperCase()}${d.slice(1)}${/[.!?]$/.test(d) ? "" : "."}` : t.errorGeneric;
    }
  }
  const known = t.errors.byCode[e.code];
  if (known) return known;
  // A proxy's own error page in front of a stopped server: no problem body, a gateway status.
  if (e.status === 502 || e.status === 503 || e.status === 504) return t.offline;
  if (e.status >= 500) return t.errors.byCode.internal_error!;
  return t.errorGeneric;
}

export function NotAvailable() {
  return (
    <div class="empty not-available" data-testid="not-available">
      <strong>{t.notAvailable}</strong>
      <p class="muted">{t.notAvailableHint}</p>
    </div>
  );
}

export function ErrorBox({ error, retry }: { error: unknown; retry?: () => void }) {
  if (error instanceof ApiError && error.missingEndpoint) return <NotAvailable />;
  return (
    <div class="error-box" role="alert">
      {errorText(error)} {retry && <button onClick={retry}>{t.retry}</button>}
    </div>
  );
}

/**
 * Press and hold (touch, pen or mouse) for `ms`: calls `onLong`. Touch has no right-click, Shift-click
 * or hover, so this is how a phone selects tasks or logs a partial amount. A move of more than 10 px
 * is a scroll, not a press. The click that ends a press is swallowed: `consumeClick()` says so.
 */
export function useLongPress(onLong: () => void, opts: { ms?: number; skip?: (e: PointerEvent) => boolean } = {}) {
  const press = useRef<{ timer: ReturnType<typeof setTimeout>; x: number; y: number } | null>(null);
  const fired = useRef(false);
  const latest = useRef(onLong);
  latest.current = onLong;
  const cancel = () => {
    if (press.current) clearTimeout(press.current.timer);
    press.current = null;
  };
  useEffect(() => cancel, []);
  return {
    handlers: {
      onPointerDown: (e: PointerEvent) => {
        fired.current = false;
        if (e.button !== 0 || opts.skip?.(e)) return;
        cancel();
        press.current = {
          x: e.clientX,
          y: e.clientY,
          timer: setTimeout(() => {
            press.current = null;
            fired.current = true;
            navigator.vibrate?.(15);
            latest.current();
          }, opts.ms ?? 500),
        };
      },
      onPointerMove: (e: PointerEvent) => {
        if (press.current && Math.hypot(e.clientX - press.current.x, e.clientY - press.current.y) > 10) cancel();
      },
      onPointerUp: cancel,
      onPointerCancel: cancel,
      onDragStart: cancel,
    },
    /** Android's long-press menu would open over the press. */
    pressing: () => press.current !== null || fired.current,
    /** True (once) for the click that ends a press that fired. */
    consumeClick: () => {
      const was = fired.current;
      fired.current = false;
      return was;
    },
  };
}

/** Sets the document title (the browser tab, history, bookmarks) while the page is shown. */
export function useTitle(page: string): void {
  useEffect(() => {
    document.title = t.docTitle(page);
  }, [page]);
}

/** Loads with `f` on mount and whenever `deps` change; `reload` runs it again. */
export function useLoad<T>(f: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; loading: boolean; reload: () => void; set: (v: T) => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const n = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    f().then(
      (data) => n === seq.current && setState({ data, loading: false }),
      (error) => n === seq.current && setState({ error, loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { data: state.data, error: state.error, loading: state.loading, reload: run, set: (data: T) => setState({ data, loading: false }) };
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

function focusables(root: HTMLElement): HTMLElement[] {
  return [...root.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) => !el.hidden && el.getClientRects().length > 0);
}

/** The open dialog that is on top (a conflict or discard dialog opens over the task's details). */
function topmost(): HTMLElement | null {
  const all = document.querySelectorAll<HTMLElement>(".modal");
  return all[all.length - 1] ?? null;
}

/**
 * A modal dialog: focus moves into it when it opens (its first field, else its first control after
 * the close button, else the dialog itself; `focusDialog`: the dialog itself, for a long dialog whose
 * first field should not pop up a phone's keyboard), Tab and Shift+Tab cycle inside it, Escape and
 * the backdrop call onClose, and focus goes back to where it was when it closes.
 */
export function Modal({ title, onClose, children, class: cls, focusDialog }: { title: string; onClose: () => void; children: ComponentChildren; class?: string; focusDialog?: boolean }) {
  const self = useRef<HTMLDivElement>(null);
  const close = useRef(onClose);
  close.current = onClose;
  // A layout effect: the focus is inside the dialog in the same frame as the dialog appears.
  useLayoutEffect(() => {
    const dialog = self.current!;
    const before = document.activeElement as HTMLElement | null;
    if (focusDialog) dialog.focus();
    else if (!dialog.contains(document.activeElement)) {
      const inside = focusables(dialog);
      const first = inside.find((el) => el.matches("input, select, textarea")) ?? inside.find((el) => !el.matches(".modal-close")) ?? dialog;
      first.focus();
    }
    const onKey = (e: KeyboardEvent) => {
      if (topmost() !== dialog) return;
      if (e.key === "Escape") {
        e.preventDefault();
        close.current();
        return;
      }
      if (e.key !== "Tab") return;
      const inside = focusables(dialog);
      if (!inside.length) {
        e.preventDefault();
        dialog.focus();
        return;
      }
      const first = inside[0]!;
      const last = inside[inside.length - 1]!;
      const at = document.activeElement as HTMLElement | null;
      if (!at || !dialog.contains(at) || at === dialog) {
        e.preventDefault();
        (e.shiftKey ? last : first).focus();
      } else if (e.shiftKey && at === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && at === last) {
        e.preventDefault();
        first.focus();
      }
    };
    // Focus that lands behind the dialog (a click on a toast, a script) is brought back.
    const onFocus = (e: FocusEvent) => {
      const target = e.target as Node | null;
      if (topmost() === dialog && target && !dialog.contains(target) && !(target as HTMLElement).closest?.(".toasts")) (focusables(dialog)[0] ?? dialog).focus();
    };
    window.addEventListener("keydown", onKey);
    document.addEventListener("focusin", onFocus);
    return () => {
      window.removeEventListener("keydown", onKey);
      document.removeEventListener("focusin", onFocus);
      // Once the dialog (and any dialog closing with it) is gone: back to where the user was, unless
      // something else took the focus meanwhile or that element went away too.
      setTimeout(() => {
        const lost = !document.activeElement || document.activeElement === document.body;
        if (lost && before && before.isConnected && before !== document.body) before.focus();
      });
    };
  }, []);
  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class={`modal ${cls ?? ""}`} role="dialog" aria-modal="true" aria-label={title} ref={self} tabIndex={-1}>
        <header>
          <h2 dir="auto">{title}</h2>
          <button class="icon modal-close" aria-label={t.close} onClick={onClose}>
            ✕
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}

/** A yes/no question in a dialog (instead of window.confirm, which cannot be styled or tested well). */
export function ConfirmDialog(p: { title: string; text: ComponentChildren; yes: string; no: string; danger?: boolean; onYes: () => void; onNo: () => void }) {
  return (
    <Modal title={p.title} onClose={p.onNo} class="confirm">
      <div class="stack">
        <div>{p.text}</div>
        <div class="buttons">
          <span class="spacer" />
          <button type="button" onClick={p.onNo}>{p.no}</button>
          <button type="button" class={p.danger ? "danger" : "primary"} onClick={p.onYes}>{p.yes}</button>
        </div>
      </div>
    </Modal>
  );
}

/** Black or white text, whichever reads better on a user-chosen `#rrggbb` background (WCAG luminance). */
export function textOn(hex: string): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex);
  if (!m) return "";
  const lin = (c: string) => {
    const v = parseInt(c, 16) / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  };
  const l = 0.2126 * lin(m[1]!) + 0.7152 * lin(m[2]!) + 0.0722 * lin(m[3]!);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000000" : "#ffffff";
}

// ---- dates
const pad = (n: number) => String(n).padStart(2, "0");
export function todayLocal(): string {
  const d = new Date();
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
export function isDateOnly(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s);
}
/** A due_at as the user reads it: a date, or a date and local time. */
export function formatDue(due: string): string {
  if (isDateOnly(due)) {
    const [y, m, d] = due.split("-").map(Number) as [number, number, number];
    return new Date(y, m - 1, d).toLocaleDateString(undefined, { month: "short", day: "numeric", year: y === new Date().getFullYear() ? undefined : "numeric" });
  }
  return new Date(due).toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}
export function formatDate(s: string): string {
  const [y, m, d] = s.split("-").map(Number) as [number, number, number];
  return new Date(y, m - 1, d).toLocaleDateString(undefined, { weekday: "short", month: "short", day: "numeric", year: "numeric" });
}
export function formatInstant(s: string): string {
  return new Date(s).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
/** Splits a due_at into the date and time inputs' values (local time for an instant). */
export function dueParts(due: string | null): { date: string; time: string } {
  if (!due) return { date: "", time: "" };
  if (isDateOnly(due)) return { date: due, time: "" };
  const d = new Date(due);
  return { date: `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`, time: `${pad(d.getHours())}:${pad(d.getMinutes())}` };
}
export function dueFromParts(date: string, time: string): string | null {
  if (!date) return null;
  if (!time) return date;
  return new Date(`${date}T${time}:00`).toISOString();
}
export function addDays(date: string, n: number): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const x = new Date(Date.UTC(y, m - 1, d + n));
  return x.toISOString().slice(0, 10);
}
export function formatSize(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
