// The one way the web app talks to /api/v1: same origin, session cookie, CSRF double-submit header,
// problem+json errors turned into ApiError.
import { forgetOfflineCopy, noteReadAnswer } from "../offline";
import { noteOwnWrite } from "../live";

const BASE = "/api/v1";

export interface FieldProblem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    /** The problem's stable `code`; the app decides what to show by this alone, never by the text. */
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldProblem[] = [],
    /** Seconds from a Retry-After header (429), else null. */
    readonly retryAfter: number | null = null,
    /** A write (not GET) that got no answer: it needs the server and was not saved. */
    readonly write = false,
  ) {
    super(detail || code);
  }
  /** No answer at all: the network or the server is down (status 0). */
  get network(): boolean {
    return this.status === 0;
  }
  /**
   * A 404 `not_found` where the item cannot be missing (a collection, or a sub-collection of the item
   * on screen): the server has no such endpoint, a feature this version lacks.
   */
  get missingEndpoint(): boolean {
    return this.status === 404 && this.code === "not_found";
  }
}

/** Thrown for a request that got no answer (offline, server stopped, DNS, refused connection). */
export const networkError = (write = false) => new ApiError(0, "network_error", "", [], null, write);

type Listener = () => void;
const unauthenticatedListeners = new Set<Listener>();
/** Called when any request answers 401: the session ended (logout elsewhere, expiry). */
export function onUnauthenticated(f: Listener): () => void {
  unauthenticatedListeners.add(f);
  return () => unauthenticatedListeners.delete(f);
}

/** The CSRF cookie's value: `__Host-app_csrf` when the server saw HTTPS, else `app_csrf` (plain http). */
export function csrfToken(): string {
  const m = document.cookie.match(/(?:^|;\s*)__Host-app_csrf=([^;]*)/) ?? document.cookie.match(/(?:^|;\s*)app_csrf=([^;]*)/);
  return m ? decodeURIComponent(m[1]!) : "";
}

async function problemOf(res: Response): Promise<ApiError> {
  let body: { code?: string; detail?: string; title?: string; errors?: FieldProblem[] } = {};
  try {
    body = await res.json();
  } catch {
    // not problem+json (a proxy's error page): keep the status
  }
  const retry = Number(res.headers.get("retry-after"));
  return new ApiError(res.status, body.code ?? `http_${res.status}`, body.detail ?? body.title ?? res.statusText, body.errors ?? [], Number.isFinite(retry) && retry > 0 ? retry : null);
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export function url(path: string, query?: Query): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== "") qs.set(k, String(v));
  const s = qs.toString();
  return `${BASE}${path}${s ? `?${s}` : ""}`;
}

export async function request<T>(method: string, path: string, opts: { json?: unknown; body?: BodyInit; query?: Query; headers?: Record<string, string> } = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
  if (method !== "GET" && method !== "HEAD") headers["x-csrf-token"] = csrfToken();
  let body = opts.body;
  if (opts.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.json);
  }
  let res: Response;
  try {
    res = await fetch(url(path, opts.query), { method, headers, body, credentials: "same-origin" });
  } catch {
    throw networkError(method !== "GET" && method !== "HEAD"); // fetch rejects only when no answer came (its message is the browser's own)
  }
  if (method === "GET") noteReadAnswer(res);
  if (!res.ok) {
    const e = await problemOf(res);
    if (res.status === 401 && e.code === "unauthenticated") {
      void forgetOfflineCopy();
      for (const f of unauthenticatedListeners) f();
    }
    throw e;
  }
  // Every successful write: views and counts on screen read again (pages/planner.tsx).
  if (method !== "GET" && method !== "HEAD") window.dispatchEvent(new Event("app:changed"));
  if (res.status === 204) return undefined as T;
  const type = res.headers.get("content-type") ?? "";
  const answer = type.includes("json") ? await res.json() : await res.text();
  // The tasks this tab wrote: their echo on the event stream is not someone else's change (../live.ts).
  if (method !== "GET" && method !== "HEAD") noteOwnWrite(answer);
  return answer as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>("GET", path, { query }),
  post: <T>(path: string, json?: unknown, query?: Query) => request<T>("POST", path, { json: json ?? {}, query }),
  patch: <T>(path: string, json: unknown) => request<T>("PATCH", path, { json }),
  put: <T>(path: string, json: unknown) => request<T>("PUT", path, { json }),
  del: (path: string) => request<void>("DELETE", path),
};

/** multipart upload with progress (fetch has no upload progress): field `file`. */
export function upload<T>(path: string, file: File, onProgress: (fraction: number) => void, query?: Query): Promise<T> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url(path, query));
    xhr.setRequestHeader("x-csrf-token", csrfToken());
    xhr.setRequestHeader("accept", "application/json");
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(networkError(true));
    xhr.onload = () => {
      let body: { code?: string; detail?: string; errors?: FieldProblem[] } = {};
      try {
        body = JSON.parse(xhr.responseText || "{}");
      } catch {
        // keep the status
      }
      const retry = Number(xhr.getResponseHeader("retry-after"));
      if (xhr.status >= 200 && xhr.status < 300) resolve(body as T);
      else reject(new ApiError(xhr.status, body.code ?? `http_${xhr.status}`, body.detail ?? xhr.statusText, body.errors ?? [], Number.isFinite(retry) && retry > 0 ? retry : null));
    };
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
