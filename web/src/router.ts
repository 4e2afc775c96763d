// A small router on the History API: the current location as a signal-like hook, and `navigate`.
import { useEffect, useState } from "preact/hooks";

export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();
const current = (): Location => ({ path: window.location.pathname, query: new URLSearchParams(window.location.search) });

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === window.location.pathname + window.location.search) return;
  if (opts.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const f of listeners) f();
}

window.addEventListener("popstate", () => {
  for (const f of listeners) f();
});

// Same-origin links navigate without a page load.
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element | null)?.closest?.("a");
  if (!a || a.target || a.hasAttribute("download")) return;
  const href = a.getAttribute("href");
  if (!href || !href.startsWith("/") || href.startsWith("/api/")) return;
  e.preventDefault();
  navigate(href);
});

export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const f = () => setLoc(current());
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return loc;
}

/** `/memos/:id` style matching; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split("/");
  const s = path.split("/");
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(":")) out[p[i]!.slice(1)] = decodeURIComponent(s[i]!);
    else if (p[i] !== s[i]) return null;
  }
  return out;
}
