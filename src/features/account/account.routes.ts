import { Elysia } from "elysia";
import { z } from "zod";
import { maxChars } from "../../core/text";
import type { Core } from "../../core/core";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta, sessionPrincipalOf } from "../../core/http";
import { getContext } from "../../core/request-context";
import { clearedCookies, csrfTokenFor, sessionCookies, staleCookieNames } from "../../core/auth/cookies";
import type { IssuedSession } from "../../core/auth/session-store";
import { AccountService } from "./account.service";
import { ChangePasswordBody, LoginBody, Me, MePatch, NewUser, SetupStatus, User, UserEnvelope, UserList } from "./account.schemas";
import { presentAuthUser, presentMe, presentUser } from "./account.present";

const cookieHeader = {
  "Set-Cookie": {
    description:
      "app_session (HttpOnly) and app_csrf cookies; over HTTPS (directly or through a trusted proxy) named __Host-app_session and __Host-app_csrf. Cookies the request carried under the other scheme's names are cleared.",
  },
};

export function accountRoutes(core: Core, account: AccountService) {
  const cookiesFor = (s: IssuedSession, request: Request, secure: boolean) =>
    sessionCookies(s.token, csrfTokenFor(core.secret, s.tokenHash), core.config.sessionAbsoluteSeconds, secure, staleCookieNames(request.headers.get("cookie"), secure));

  const quota = core.config.attachmentQuotaBytes > 0 ? core.config.attachmentQuotaBytes : null;

  return new Elysia({ name: "account", prefix: "/api/v1" })
    .get("/setup/status", () => ({ initialized: account.isInitialized() }), {
      detail: doc({ summary: "Whether the service has been set up", description: "`initialized` is false until `POST /setup/initialize` has created the first user; the web app shows its set-up page while it is. No session needed.", tags: ["account"], public: true, ok: { status: 200, schema: SetupStatus } }),
    })
    .post(
      "/setup/initialize",
      async ({ body, request, set }) => {
        const meta = requestMeta(request);
        const { user, session } = await account.initialize(body, meta);
        set.status = 201;
        set.headers["location"] = "/api/v1/me";
        set.headers["set-cookie"] = cookiesFor(session, request, meta.secure);
        return { user: presentUser(user) };
      },
      {
        body: NewUser,
        detail: doc({
          summary: "Create the first (admin) user and sign in",
          description:
            "Works once: when a user exists it is `409 already_initialized` (of concurrent calls exactly one wins). Creates the user as an administrator with its inbox, signs it in (sets the session and CSRF cookies) and records `setup` in its audit log. `display_name` defaults to the username, `timezone` to `UTC`. The password must be 8 to 1024 characters and not too easy to guess (see the `password` field). A request that shows another site in `Origin` or `Sec-Fetch-Site` is `403 csrf_failed`. No session needed.",
          tags: ["account"],
          public: true,
          ok: { status: 201, schema: UserEnvelope, headers: { ...cookieHeader, Location: { description: "the signed-in user's URL (/api/v1/me)" } } },
          errors: ["already_initialized", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .post(
      "/auth/login",
      async ({ body, request, set }) => {
        const meta = requestMeta(request);
        const { user, session } = await account.login(body, meta, getContext(request)?.principal ?? null);
        set.headers["set-cookie"] = cookiesFor(session, request, meta.secure);
        return { user: presentUser(user) };
      },
      {
        body: LoginBody,
        detail: doc({
          summary: "Sign in",
          description:
            "The username is matched case-insensitively (after Unicode NFKC normalisation). A wrong password and an unknown username get the same `401 invalid_credentials` after the same work. On success a new session is issued (a session the request came with ends) and the cookies are set. Both outcomes are audited (`login`, `login_failed`). Failures are throttled per username and per client address, and password checks wait in a short bounded queue: `429 rate_limited` with `Retry-After` when either is full. A request that shows another site in `Origin` or `Sec-Fetch-Site` is `403 csrf_failed`. No session needed.",
          tags: ["account"],
          public: true,
          ok: { status: 200, schema: UserEnvelope, headers: cookieHeader },
          errors: ["invalid_credentials", "rate_limited", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .post(
      "/auth/logout",
      ({ request, set }) => {
        const meta = requestMeta(request);
        account.logout(sessionPrincipalOf(request), meta);
        set.status = 204;
        set.headers["set-cookie"] = clearedCookies(meta.secure, staleCookieNames(request.headers.get("cookie"), meta.secure));
      },
      { detail: doc({ summary: "Sign out (ends this session)", description: "Revokes the session the request came with, clears both cookies and records `logout` in the audit log. Like every write, needs the `X-CSRF-Token` header.", tags: ["account"], ok: { status: 204, headers: cookieHeader }, errors: ["csrf_failed"] }) },
    )
    .post(
      "/auth/change-password",
      async ({ body, request, set }) => {
        const meta = requestMeta(request);
        const session = await account.changePassword(sessionPrincipalOf(request), body, meta);
        set.status = 204;
        set.headers["set-cookie"] = cookiesFor(session, request, meta.secure);
      },
      {
        body: ChangePasswordBody,
        detail: doc({
          summary: "Change the password; ends every other session and rotates this one",
          description:
            "`current_password` is checked like a sign-in, under the same throttle (`401 invalid_credentials`, `429 rate_limited`); `new_password` must pass the same rules as at set-up (`422` on `new_password`, saying why). Every session of the user ends, the caller gets a fresh session (new cookies), and `password_changed` is audited.",
          tags: ["account"],
          ok: { status: 204, headers: cookieHeader },
          errors: ["invalid_credentials", "rate_limited", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .get("/me", ({ request }) => presentAuthUser(principalOf(request).user, quota), {
      detail: doc({
        summary: "The current user, with `attachment_bytes` (the storage its attachments take) and `attachment_quota_bytes` (their limit, null when there is none)",
        description:
          "`timezone` is the IANA zone in which \"today\" is computed for due dates, habits, countdowns and repeat-after-completion. A client can call this first to learn whether its session is still valid (`401 unauthenticated` otherwise).",
        tags: ["account"],
        ok: { status: 200, schema: Me },
      }),
    })
    .patch("/me", ({ body, request }) => presentMe(account.updateMe(principalOf(request), body), principalOf(request).user, quota), {
      body: MePatch,
      detail: doc({
        summary: "Update display name, time zone, reminder time or quiet hours",
        description:
          "`display_name` is 1 to 100 characters (trimmed, no control characters); `timezone` is an IANA zone such as `Europe/Berlin` (UTC offsets are refused), stored in its canonical spelling. A new zone changes the user's \"today\" from now on; stored instants are unchanged, and armed reminders are computed again in the new zone. `reminder_time` (HH:MM, default 09:00) is the local time a date-only task's reminders count from; `quiet_hours` (`{start, end}` HH:MM local times, or null) holds deliveries due inside them until they end (not marked late). Answers the updated user as `GET /me` does.",
        tags: ["account"],
        ok: { status: 200, schema: Me },
        errors: ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
      }),
    })
    .post(
      "/users",
      async ({ body, request, set }) => {
        const user = await account.createUser(principalOf(request), body, requestMeta(request));
        set.status = 201;
        set.headers["location"] = `/api/v1/users/${user.id}`;
        return presentUser(user);
      },
      {
        body: NewUser,
        detail: doc({
          summary: "Create a user (admin only)",
          description:
            "Administrators only (`403 forbidden` otherwise). The username (1 to 64 characters, no spaces, control or invisible characters) must be unused, compared case-insensitively (`409 name_taken`); the password follows the rules of set-up. The new user is not an administrator, gets its own inbox and sees none of the other users' data. Audited (`user_created`) in the administrator's log. The new user signs in with `POST /auth/login`.",
          tags: ["users"],
          ok: { status: 201, schema: User, headers: { Location: { description: "the user's URL" } } },
          errors: ["forbidden", "name_taken", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .get("/users/:user_id", ({ params, request }) => presentUser(account.getUser(principalOf(request), params.user_id)), {
      params: z.object({ user_id: maxChars(z.string(), 64) }),
      detail: doc({ summary: "One user (admin only)", description: "Administrators only (`403 forbidden` otherwise); an unknown id is `404`.", tags: ["users"], ok: { status: 200, schema: User }, errors: ["forbidden", "not_found"] }),
    })
    .get("/users", ({ request }) => ({ items: account.listUsers(principalOf(request)).map(presentUser) }), {
      detail: doc({ summary: "List users (admin only)", description: "Administrators only (`403 forbidden` otherwise). Every account, oldest first. Not paginated: a self-hosted server has few accounts.", tags: ["users"], ok: { status: 200, schema: UserList }, errors: ["forbidden"] }),
    });
}
