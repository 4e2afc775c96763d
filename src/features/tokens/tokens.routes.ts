import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { requestMeta, sessionPrincipalOf } from "../../core/http";
import { TokensService } from "./tokens.service";
import { Token, TokenCreate, TokenCreated, TokenList, TokenParams } from "./tokens.schemas";
import { presentToken } from "./tokens.present";

const SESSION_ONLY = "Needs a signed-in session: a request with `Authorization: Bearer` is `403 forbidden` (a token cannot manage tokens).";

export function tokensRoutes(service: TokensService) {
  return new Elysia({ name: "tokens", prefix: "/api/v1" })
    .get("/tokens", ({ request }) => ({ items: service.list(sessionPrincipalOf(request)).map(presentToken) }), {
      detail: doc({
        summary: "The user's API tokens and app passwords",
        description: `Tokens not revoked, newest first (expired ones included: \`expires_at\` says so), with when and from which address each was last used (recorded at most once a minute). The secret is never answered again. ${SESSION_ONLY}`,
        tags: ["tokens"],
        ok: { status: 200, schema: TokenList },
        errors: ["forbidden"],
      }),
    })
    .post(
      "/tokens",
      ({ body, request, set }) => {
        const { row, secret } = service.create(sessionPrincipalOf(request), body, requestMeta(request));
        set.status = 201;
        set.headers["location"] = `/api/v1/tokens/${row.id}`;
        return { ...presentToken(row), secret };
      },
      {
        body: TokenCreate,
        detail: doc({
          summary: "Create an API token / app password",
          description:
            "Answers the token with its `secret` (`app_` and 256 random bits), shown this once: only its HMAC-SHA256 under the server secret is stored (a whole-instance snapshot, which carries that secret, keeps tokens working; the database on a server with another `secret.key` accepts none of them). Use it as `Authorization: Bearer <secret>` on the JSON API (`read`: GET and HEAD; `write`: every request a session may make except sign-in, account, session, token and admin ones; no CSRF header, and no session cookie with it) or as the password of HTTP Basic on CalDAV (`/dav/`, scope `caldav`, with the username). `expires_at` must lie in the future. At most 100 tokens per user (`409 state_conflict`). Audited (`token_created`). " +
            SESSION_ONLY,
          tags: ["tokens"],
          ok: { status: 201, schema: TokenCreated, headers: { Location: { description: "URL of the new token (GET without the secret, DELETE to revoke)" } } },
          errors: ["validation_failed", "state_conflict", "forbidden", "csrf_failed", "malformed_request", "payload_too_large"],
        }),
      },
    )
    .get("/tokens/:token_id", ({ params, request }) => presentToken(service.get(sessionPrincipalOf(request), params.token_id)), {
      params: TokenParams,
      detail: doc({
        summary: "One token (never its secret)",
        description: `An id that is not one of the user's tokens (another user's, or revoked) is \`404\`. ${SESSION_ONLY}`,
        tags: ["tokens"],
        ok: { status: 200, schema: Token },
        errors: ["not_found", "forbidden", "validation_failed"],
      }),
    })
    .delete(
      "/tokens/:token_id",
      ({ params, request, set }) => {
        service.revoke(sessionPrincipalOf(request), params.token_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: TokenParams,
        detail: doc({
          summary: "Revoke a token",
          description: `The token stops working at once: its next request is \`401\`. An id that is not one of the user's tokens (another user's, or already revoked) is \`404\`. A password change revokes no token. Audited (\`token_revoked\`). ${SESSION_ONLY}`,
          tags: ["tokens"],
          ok: { status: 204 },
          errors: ["not_found", "forbidden", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
