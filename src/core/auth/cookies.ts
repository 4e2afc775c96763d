import type { ServerSecret } from "../secret";

export const SESSION_COOKIE = "app_session";
export const CSRF_COOKIE = "app_csrf";
export const CSRF_HEADER = "x-csrf-token";

/** The CSRF token of a session: an HMAC of the session token's hash with the server secret. */
export function csrfTokenFor(secret: ServerSecret, tokenHash: string): string {
  return secret.sign("csrf", tokenHash);
}

/** Set-Cookie values that establish a session: HttpOnly session cookie, script-readable CSRF cookie. */
export function sessionCookies(token: string, csrf: string, maxAgeSeconds: number, secure: boolean): string[] {
  const common = { path: "/", sameSite: "lax" as const, secure, maxAge: maxAgeSeconds };
  return [
    new Bun.Cookie(SESSION_COOKIE, token, { ...common, httpOnly: true }).serialize(),
    new Bun.Cookie(CSRF_COOKIE, csrf, { ...common, httpOnly: false }).serialize(),
  ];
}

export function clearedCookies(secure: boolean): string[] {
  const common = { path: "/", sameSite: "lax" as const, secure, maxAge: 0, expires: new Date(0) };
  return [
    new Bun.Cookie(SESSION_COOKIE, "", { ...common, httpOnly: true }).serialize(),
    new Bun.Cookie(CSRF_COOKIE, "", { ...common, httpOnly: false }).serialize(),
  ];
}
