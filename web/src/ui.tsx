// Small shared pieces: toasts, error and "not available" states, a loader hook, date formatting.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
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
  setTimeout(() => {
    toasts = toasts.filter((x) => x.id !== id);
    toastListeners.forEach((f) => f());
  }, 6000);
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

export function errorText(e: unknown): string {
  if (e instanceof ApiError) {
    if (e.status === 0) return t.offline;
    const fields = e.errors.map((x) => `${x.path}: ${x.message}`).join("; ");
    return fields ? `${e.detail} (${fields})` : e.detail || e.code;
  }
  return e instanceof Error ? e.message : t.errorGeneric;
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

export function Modal({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const self = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Escape closes the topmost dialog only (a conflict dialog opens over the task's details).
    const k = (e: KeyboardEvent) => {
      const all = document.querySelectorAll(".modal");
      if (e.key === "Escape" && all[all.length - 1] === self.current) onClose();
    };
    window.addEventListener("keydown", k);
    return () => window.removeEventListener("keydown", k);
  }, [onClose]);
  return (
    <div class="modal-backdrop" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="modal" role="dialog" aria-modal="true" aria-label={title} ref={self}>
        <header>
          <h2>{title}</h2>
          <button class="icon" aria-label={t.close} onClick={onClose}>
            ✕
          </button>
        </header>
        {children}
      </div>
    </div>
  );
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
