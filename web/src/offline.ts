// The page's side of working without the server (the service worker is web/src/sw/sw.ts):
// registering the worker, knowing when what is shown is a saved copy, and forgetting saved copies
// when the user signs out.
import { useEffect, useState } from "preact/hooks";
import { DATA_CACHE, OFFLINE_HEADER } from "./sw/cache-names";

/**
 * Service workers run only in a secure context: HTTPS, or http://localhost / 127.0.0.1. Over plain
 * HTTP on another address the app works as before, without the offline copy.
 */
export function registerServiceWorker(): void {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return;
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {
    // Not fatal: the app works online without it (a browser setting, a private window).
  });
}

let storedAt: string | null = null;
const listeners = new Set<() => void>();

/** Called by the API client for every GET answer: `header` is the OFFLINE_HEADER value, or null. */
export function noteReadAnswer(res: Response): void {
  const v = res.headers.get(OFFLINE_HEADER);
  const next = v === null ? null : v || "unknown";
  if (next === storedAt) return;
  storedAt = next;
  for (const f of listeners) f();
}

/** When the data on screen was saved, if it came from the offline copy (else null). */
export function useOfflineCopy(): string | null {
  const [v, setV] = useState(storedAt);
  useEffect(() => {
    const f = () => setV(storedAt);
    listeners.add(f);
    f();
    return () => void listeners.delete(f);
  }, []);
  return v;
}

/** Drops the saved API answers (sign-out, session ended): the next user of this browser sees none. */
export async function forgetOfflineCopy(): Promise<void> {
  if (typeof caches === "undefined") return;
  try {
    await caches.delete(DATA_CACHE);
  } catch {
    // storage unavailable: nothing was saved either
  }
}
