/// <reference lib="webworker" />
// The service worker, served at /sw.js (scope /). It makes the app open without waiting for the
// network and, when the server cannot be reached, shows what was last loaded:
// - the app shell (index.html, the hashed scripts and styles, icons, manifest) is cached when the
//   worker installs and served from the cache first; a new release is a new /sw.js (the asset
//   list below changes), installed beside the old one and used once no tab runs the old one;
// - GET /api/v1/… reads that ask for JSON go to the network first; each good answer is kept
//   (DATA_CACHE), and when no answer comes the kept one is served, marked `x-app-offline: <when
//   it was stored>` so the page says it is showing a saved copy;
// - writes (POST, PATCH, PUT, DELETE) are never answered from here: without the server they fail,
//   and the page says they need the server. Nothing is queued.
// The kept answers are the signed-in user's data: a 401 answer empties DATA_CACHE here, and the
// page empties it when the user signs out (web/src/offline.ts).
// Web Push (reminders): ./push.ts shows a reminder's notification with "Done" and "Snooze 10 min".
import { DATA_CACHE, OFFLINE_HEADER, SHELL_PREFIX } from "./cache-names";
import { installPushHandlers, type PushWorkerScope } from "./push";

declare const self: ServiceWorkerGlobalScope;
/** Set by web/build-web.ts: the shell's URLs, and a version that changes with them. */
declare const __SHELL_FILES__: string[];
declare const __SHELL_VERSION__: string;

const SHELL_CACHE = `${SHELL_PREFIX}${__SHELL_VERSION__}`;

// push.ts declares the few service-worker types it uses itself (the web app is checked against the DOM library).
installPushHandlers(self as unknown as PushWorkerScope);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL_CACHE).then((c) => c.addAll(__SHELL_FILES__)));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      // Only tabs of this version are left: earlier shells can go.
      for (const name of await caches.keys()) if (name.startsWith(SHELL_PREFIX) && name !== SHELL_CACHE) await caches.delete(name);
      // The first install takes the open tab at once, so it works offline without a reload.
      await self.clients.claim();
    })(),
  );
});

/** Paths the page routes itself (index.html answers them); everything else is a file or the API. */
function isPage(url: URL): boolean {
  return !url.pathname.startsWith("/api/") && !url.pathname.startsWith("/assets/") && url.pathname !== "/sw.js" && !/\.[a-z0-9]+$/i.test(url.pathname);
}

/** API reads worth keeping: JSON the page shows. Downloads, exports and event streams pass untouched. */
function isKeptRead(req: Request, url: URL): boolean {
  if (!url.pathname.startsWith("/api/v1/")) return false;
  if (!(req.headers.get("accept") ?? "").includes("application/json")) return false;
  return !/\/(attachments|backup|export)(\/|$|\.)/.test(url.pathname);
}

async function shellFirst(req: Request, key: string | Request): Promise<Response> {
  const cache = await caches.open(SHELL_CACHE);
  const hit = await cache.match(key);
  if (hit) return hit;
  const res = await fetch(req);
  // A lazily loaded chunk of this release is kept too (they are all in the list, but a list can lag).
  if (res.ok && typeof key !== "string") await cache.put(key, res.clone());
  return res;
}

async function networkThenKept(req: Request): Promise<Response> {
  const cache = await caches.open(DATA_CACHE);
  try {
    const res = await fetch(req);
    if (res.status === 401) await caches.delete(DATA_CACHE);
    else if (res.ok && (res.headers.get("content-type") ?? "").includes("json")) {
      const copy = new Response(await res.clone().arrayBuffer(), { status: res.status, headers: res.headers });
      copy.headers.set("x-app-stored-at", new Date().toISOString());
      await cache.put(req, copy);
    }
    return res;
  } catch (e) {
    const kept = await cache.match(req);
    if (!kept) throw e;
    const headers = new Headers(kept.headers);
    headers.set(OFFLINE_HEADER, kept.headers.get("x-app-stored-at") ?? "");
    return new Response(kept.body, { status: kept.status, headers });
  }
}

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return; // writes always go to the server
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (req.mode === "navigate" && isPage(url)) {
    event.respondWith(shellFirst(req, "/"));
  } else if (url.pathname.startsWith("/assets/")) {
    event.respondWith(shellFirst(req, req));
  } else if (url.pathname === "/manifest.webmanifest" || url.pathname === "/favicon.ico") {
    event.respondWith(shellFirst(req, url.pathname));
  } else if (isKeptRead(req, url)) {
    event.respondWith(networkThenKept(req));
  }
});
