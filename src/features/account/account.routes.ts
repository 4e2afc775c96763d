import { Elysia } from "elysia";
import { z } from "zod";
import type { Core } from "../../core/core";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
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
      detail: doc({ summary: "Whether the service has been set up", tags: ["account"], public: true, ok: { status: 200, schema: SetupStatus } }),
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
        account.logout(principalOf(request), meta);
        set.status = 204;
        set.headers["set-cookie"] = clearedCookies(meta.secure, staleCookieNames(request.headers.get("cookie"), meta.secure));
      },
      { detail: doc({ summary: "Sign out (ends this session)", tags: ["account"], ok: { status: 204, headers: cookieHeader }, errors: ["csrf_failed"] }) },
    )
    .post(
      "/auth/change-password",
      async ({ body, request, set }) => {
        const meta = requestMeta(request);
        const session = await account.changePassword(principalOf(request), body, meta);
        set.status = 204;
        set.headers["set-cookie"] = cookiesFor(session, request, meta.secure);
      },
      {
        body: ChangePasswordBody,
        detail: doc({
          summary: "Change the password; ends every other session and rotates this one",
          tags: ["account"],
          ok: { status: 204, headers: cookieHeader },
          errors: ["invalid_credentials", "rate_limited", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .get("/me", ({ request }) => presentAuthUser(principalOf(request).user, quota), {
      detail: doc({
        summary: "The current user, with `attachment_bytes` (the storage its attachments take) and `attachment_quota_bytes` (their limit, null when there is none)",
        tags: ["account"],
        ok: { status: 200, schema: Me },
      }),
    })
    .patch("/me", ({ body, request }) => presentMe(account.updateMe(principalOf(request), body), principalOf(request).user, quota), {
      body: MePatch,
      detail: doc({
        summary: "Update display name or time zone",
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
          tags: ["users"],
          ok: { status: 201, schema: User, headers: { Location: { description: "the user's URL" } } },
          errors: ["forbidden", "name_taken", "validation_failed", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .get("/users/:user_id", ({ params, request }) => presentUser(account.getUser(principalOf(request), params.user_id)), {
      params: z.object({ user_id: z.string().max(64) }),
      detail: doc({ summary: "One user (admin only)", tags: ["users"], ok: { status: 200, schema: User }, errors: ["forbidden", "not_found"] }),
    })
    .get("/users", ({ request }) => ({ items: account.listUsers(principalOf(request)).map(presentUser) }), {
      detail: doc({ summary: "List users (admin only)", tags: ["users"], ok: { status: 200, schema: UserList }, errors: ["forbidden"] }),
    });
}
