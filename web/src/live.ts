// Live updates (sharing.md, "Changes arrive without reloading"): ONE EventSource per tab on
// /api/v1/events while signed in. Pages subscribe with `onLive`; the smart-list counts, views and
// calendar re-read through the app's change event (pages/planner.tsx CHANGED_EVENT). Reconnecting
// and Last-Event-ID are the browser's own (the server sends `retry: 3000`); a `resync` event, or a
// stream that had to be opened anew, tells every subscriber to reload what it shows.
export type LiveType = "task.changed" | "task.deleted" | "list.changed" | "membership.changed";
export interface LiveEvent {
  type: LiveType | "resync";
  id: string;
  list_id: string;
  version: number | null;
}

const TYPES: LiveType[] = ["task.changed", "task.deleted", "list.changed", "membership.changed"];
/** The same name as pages/planner.tsx CHANGED_EVENT (not imported: this module loads with the first page and stays small). */
const CHANGED_EVENT = "app:changed";
/** A burst of changes (a batch by another member) re-reads the counts once. */
const COALESCE_MS = 250;
/** An answer other than a stream (429, 503, a proxy) closes the EventSource for good: open a new one after this. */
const REOPEN_MS = 15_000;

const listeners = new Set<(e: LiveEvent) => void>();

/** Subscribes to the tab's events; returns the unsubscribe function. */
export function onLive(f: (e: LiveEvent) => void): () => void {
  listeners.add(f);
  return () => void listeners.delete(f);
}

// Task versions this tab wrote itself (the API answered them): their echo on the stream changes
// nothing on screen, so it does not re-read the counts a second time.
const own = new Map<string, number>();
const OWN_MAX = 200;

/** Called by the API client with every write's JSON answer: remembers the tasks it returned. */
export function noteOwnWrite(answer: unknown): void {
  const note = (x: unknown) => {
    if (!x || typeof x !== "object") return;
    const { id, version } = x as { id?: unknown; version?: unknown };
    if (typeof id === "string" && typeof version === "number") {
      own.delete(id);
      own.set(id, version);
      if (own.size > OWN_MAX) own.delete(own.keys().next().value!);
    }
  };
  note(answer);
  if (answer && typeof answer === "object") for (const v of Object.values(answer)) note(v);
}

/** The echo of a task version this tab wrote (its answer is already on screen). */
export function isOwnEcho(e: LiveEvent): boolean {
  return e.type === "task.changed" && e.version !== null && own.get(e.id) === e.version;
}

let changedTimer: ReturnType<typeof setTimeout> | null = null;
function changedSoon(): void {
  if (changedTimer) return;
  changedTimer = setTimeout(() => {
    changedTimer = null;
    window.dispatchEvent(new Event(CHANGED_EVENT));
  }, COALESCE_MS);
}

function deliver(e: LiveEvent): void {
  if (!isOwnEcho(e)) changedSoon();
  for (const f of [...listeners]) {
    try {
      f(e);
    } catch {
      // one page's handler failing must not stop the others
    }
  }
}

const RESYNC: LiveEvent = { type: "resync", id: "", list_id: "", version: null };

/** Opens the tab's stream (signed in); the returned function closes it (signed out). */
export function startLive(): () => void {
  if (typeof EventSource === "undefined") return () => {};
  let es: EventSource | null = null;
  let reopen: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const open = (fresh: boolean) => {
    es = new EventSource("/api/v1/events");
    // A new EventSource has no Last-Event-ID: what happened while none was open is unknown.
    if (fresh) es.addEventListener("open", () => deliver(RESYNC), { once: true });
    for (const type of TYPES) {
      es.addEventListener(type, (m) => {
        try {
          deliver({ ...(JSON.parse((m as MessageEvent<string>).data) as LiveEvent), type });
        } catch {
          // not an event of ours
        }
      });
    }
    es.addEventListener("resync", () => deliver(RESYNC));
    es.onerror = () => {
      // CONNECTING: the browser retries by itself, with Last-Event-ID. CLOSED: it gave up.
      if (stopped || !es || es.readyState !== EventSource.CLOSED) return;
      es = null;
      reopen = setTimeout(() => !stopped && open(true), REOPEN_MS);
    };
  };
  open(false);
  return () => {
    stopped = true;
    if (reopen) clearTimeout(reopen);
    es?.close();
    es = null;
  };
}
