// Names the service worker (web/src/sw/sw.ts) and the page (web/src/offline.ts) share.

/** The signed-in user's last API answers (emptied on sign-out and on a 401). */
export const DATA_CACHE = "app-data-v1";
/** Each release's app shell is `app-shell-<version>`. */
export const SHELL_PREFIX = "app-shell-";
/** On an answer the service worker served from DATA_CACHE: when it was stored (ISO 8601). */
export const OFFLINE_HEADER = "x-app-offline";
