import type { ServerSecret } from "../secret";

export const SESSION_COOKIE = "app_session";
export const CSRF_COOKIE = "app_csrf";
export const CSRF_HEADER = "x-csrf-token";

/**
 * Over HTTPS (directly or through a trusted proxy) the cookies carry the `__Host-` prefix: a
 * browser keeps such a cookie only if it was set Secure by an https page of this very host with
 * Path=/ and no Domain, so neither a sibling subdomain nor anyone on the network path of a plain
 * http request can plant or overwrite it (session fixation, a planted CSRF cookie). Over plain
 * http (a LAN address) no prefix is possible, and the plain names are used.
 */
export const HOST_PREFIX = "__Host-";

export interface CookieNames {
  session: string;
  csrf: string;
}

export const PLAIN_NAMES: CookieNames = { session: SESSION_COOKIE, csrf: CSRF_COOKIE };
export const SECURE_NAMES: CookieNames = { session: HOST_PREFIX + SESSION_COOKIE, csrf: HOST_PREFIX + CSRF_COOKIE };

/** The names cookies are set under for a request arriving over HTTPS (`secure`) or plain http. */
export function cookieNames(secure: boolean): CookieNames {
  return secure ? SECURE_NAMES : PLAIN_NAMES;
}

/** The CSRF token of a session: an HMAC of the session token's hash with the server secret. */
export function csrfTokenFor(secret: ServerSecret, tokenHash: string): string {
  return secret.sign("csrf", tokenHash);
}

/**
 * Set-Cookie values that establish a session: HttpOnly session cookie, script-readable CSRF cookie.
 * `stale`: cookie names the request carried under the other scheme's names, cleared at the same
 * time so a browser does not keep sending an old session alongside the new one.
 */
export function sessionCookies(token: string, csrf: string, maxAgeSeconds: number, secure: boolean, stale: string[] = []): string[] {
  const names = cookieNames(secure);
  const common = { path: "/", sameSite: "lax" as const, secure, maxAge: maxAgeSeconds };
  return [
    new Bun.Cookie(names.session, token, { ...common, httpOnly: true }).serialize(),
    new Bun.Cookie(names.csrf, csrf, { ...common, httpOnly: false }).serialize(),
    ...stale.map((name) => clearing(name, secure)),
  ];
}

/** Set-Cookie values that end the session cookies of this scheme (and `stale` ones of the other). */
export function clearedCookies(secure: boolean, stale: string[] = []): string[] {
  const names = cookieNames(secure);
  return [clearing(names.session, secure, true), clearing(names.csrf, secure), ...stale.map((name) => clearing(name, secure))];
}

function clearing(name: string, secure: boolean, httpOnly = name.endsWith(SESSION_COOKIE)): string {
  // A __Host- cookie can only be set (and so cleared) with Secure; a plain one is cleared either way.
  const s = secure || name.startsWith(HOST_PREFIX);
  return new Bun.Cookie(name, "", { path: "/", sameSite: "lax", secure: s, httpOnly, maxAge: 0, expires: new Date(0) }).serialize();
}

/**
 * The cookie names in `cookieHeader` that belong to the other scheme than `secure`: old plain
 * cookies on an HTTPS request (from before the switch to https), or __Host- cookies on a request the
 * server sees as plain http (a TLS proxy no longer declared trusted). Cleared with a new session.
 */
export function staleCookieNames(cookieHeader: string | null, secure: boolean): string[] {
  if (!cookieHeader || !cookieHeader.includes(SESSION_COOKIE + "=") && !cookieHeader.includes(CSRF_COOKIE + "=")) return [];
  const other = cookieNames(!secure);
  const jar = new Bun.CookieMap(cookieHeader);
  return [other.session, other.csrf].filter((n) => jar.has(n));
}
