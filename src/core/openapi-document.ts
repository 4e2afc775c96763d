import { z } from "zod";
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { Problem, RETRY_AFTER_HEADER, WRITE, jsonSchema, namedSchemas, resolveDeferred } from "./openapi";
import { JSON_BODY_LIMIT, JSON_DEPTH_LIMIT } from "./body";
import { CROSS_SITE_REFUSED_GETS } from "./cross-site";
import { PROBLEM_LIST_MAX, PROBLEM_MESSAGE_MAX } from "./problem-caps";
import { tokenRefusedPath } from "./auth/guard";

/** The whole document, generated from the routes' own schemas and tidied for linters and client generators. */
export function buildOpenApiDocument(app: AnyElysia, version: string): Record<string, unknown> {
  const mapper = (s: z.ZodType) => jsonSchema(s, "input");
  // staticFile: false, or paths with a dot (/backup/export.zip, /export.csv) would be left out as static files.
  const generated = toOpenAPISchema(app, { staticFile: false }, undefined, { zod: mapper }, "3.1.1") as unknown as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  // Our body parser is a function (it counts bytes), so the generator leaves request bodies
  // without a media type; take the body schemas from the routes themselves.
  const bodies = new Map<string, z.ZodType>();
  for (const r of app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]) {
    const body = r.hooks?.body;
    if (body && typeof body === "object" && "~standard" in body) {
      bodies.set(`${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`, body as z.ZodType);
    }
  }
  jsonSchema(Problem, "output"); // registers components.schemas.Problem
  const paths: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const [path, ops] of Object.entries(generated.paths)) {
    if (!path.startsWith("/api/v1/") && !DOCUMENTED_OUTSIDE_API.has(path)) continue;
    for (const [method, deferredOp] of Object.entries(ops)) {
      const op = resolveDeferred(deferredOp) as Record<string, unknown>;
      const isPublic = op["x-app-public"] === true;
      delete op["x-app-public"];
      const bodyType = op["x-app-body-content-type"] as string | undefined;
      delete op["x-app-body-content-type"];
      const rb = op.requestBody as { content?: Record<string, { schema: unknown }>; required?: boolean } | undefined;
      if (rb) {
        // Our body parser is a function (it counts bytes), so the generator could not name the media type.
        const zodBody = bodies.get(`${method} ${path}`);
        const schema = zodBody ? jsonSchema(zodBody, "input") : Object.values(rb.content ?? {})[0]?.schema;
        rb.content = { [bodyType ?? "application/json"]: { schema: schema ?? { type: "object" } } };
      } else if (bodyType) {
        op.requestBody = { required: true, content: { [bodyType]: { schema: { type: "string", format: "binary" } } } };
      }
      addImpliedProblems(op, isPublic, WRITE.has(method), bodyType === undefined && op.requestBody !== undefined, CROSS_SITE_REFUSED_GETS.has(path) && method === "get");
      // An API token (Bearer) is the alternative to the session wherever the guard accepts one.
      const bearer = tokenRefusedPath(path, method.toUpperCase()) ? [] : [{ bearerToken: [] }];
      op.security = isPublic ? [] : [WRITE.has(method) ? { sessionCookie: [], csrfHeader: [] } : { sessionCookie: [] }, ...bearer];
      op.operationId = operationId(method, path);
      (paths[path] ??= {})[method] = op;
    }
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "app API",
      version,
      description:
        "Self-hosted personal productivity server. Cookie session (`app_session`; over HTTPS `__Host-app_session`) plus double-submit CSRF: every POST/PUT/PATCH/DELETE sent with the session cookie must carry `X-CSRF-Token` equal to the `app_csrf` cookie (over HTTPS `__Host-app_csrf`). Or a personal API token (`POST /tokens`) as `Authorization: Bearer <secret>`, without CSRF header and without the session cookie (both: `400 malformed_request`): scope `read` allows GET and HEAD, `write` every operation a session may perform except sign-in, set-up, account changes, sessions, tokens, the audit log and administration (`403 forbidden`); every use is throttled as a sign-in and audited (`token_used` at most once a minute per token, every refused one as `token_failed`). Errors are RFC 9457 problem details with a stable `code`." +
        `\n\nLimits: a JSON body is at most ${JSON_BODY_LIMIT} bytes (\`413 payload_too_large\`) and at most ${JSON_DEPTH_LIMIT} levels of arrays and objects deep, the outermost value being level 1 (\`400 malformed_request\`, decided before parsing; the legacy restore applies the same limit to its file). ` +
        `A problem's \`detail\` and each \`errors\` entry's \`path\` and \`message\` are at most ${PROBLEM_MESSAGE_MAX} characters (longer ones are cut and end in "…"; a value the client sent is quoted by a prefix only); \`errors\` lists at most ${PROBLEM_LIST_MAX} problems, then one entry \`{"path": "", "message": "N more problems not listed"}\`. ` +
        "GET of `/backup/export.zip`, `/export` and `/export.csv` marked `Sec-Fetch-Site: cross-site` is `403 csrf_failed`. " +
        "Every API answer carries `Content-Security-Policy: default-src 'none'; frame-ancestors 'none'` (attachment downloads: a sandboxing policy of their own), `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer`, `Cross-Origin-Resource-Policy: same-origin` and `X-Content-Type-Options: nosniff`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/" }],
    tags: documentTags(paths),
    paths,
    components: {
      schemas: Object.fromEntries([...namedSchemas].sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        sessionCookie: { type: "apiKey", in: "cookie", name: "app_session", description: "set by login and setup; named `__Host-app_session` when the request came over HTTPS (directly or through a trusted proxy)" },
        csrfHeader: { type: "apiKey", in: "header", name: "X-CSRF-Token", description: "value of the app_csrf cookie (`__Host-app_csrf` over HTTPS)" },
        bearerToken: {
          type: "http",
          scheme: "bearer",
          description:
            "A personal API token (POST /tokens): `read` allows GET and HEAD, `write` every request a session may make except sign-in, set-up, account changes (PATCH /me, password), sessions, tokens, the audit log and administration (`403 forbidden`). No CSRF header; a request carrying a session cookie too is `400 malformed_request`. A wrong, revoked or expired token is `401 unauthenticated` and counts as a failed sign-in of the client's address (same throttle, never the owner's username: `429 rate_limited`).",
        },
      },
    },
  };
}

/**
 * One tag per feature, in the order the app mounts them. A tag an operation uses must be described
 * here (buildOpenApiDocument throws otherwise, so a new feature cannot ship undocumented).
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  health: "Liveness and readiness probes for a supervisor or load balancer; no session needed.",
  account:
    "First-run set-up, sign-in and sign-out (a cookie session plus a double-submit CSRF token), password change, and the signed-in user's own profile and storage use.",
  users: "Accounts beyond the first, managed by an administrator. Every user's data is isolated from every other's.",
  tokens:
    "Personal API tokens and app passwords (one thing): named, with scopes (`read`, `write`, `caldav`), an optional expiry and the time and address of their last use. The secret is shown once; `Authorization: Bearer <secret>` on the JSON API, HTTP Basic (username and secret) on CalDAV. Managed with a session only.",
  sessions: "The signed-in user's live sessions (one per sign-in, with the device's address and user agent), and ending them.",
  audit: "The signed-in user's own security and data-transfer events (sign-ins, password changes, session ends, backups, restores), newest first.",
  memos: "Markdown notes of up to 100,000 characters, with pinning, soft delete (restore or purge) and optimistic locking (`version`).",
  habits: "Habits with a daily, weekday or times-per-week schedule and a daily goal: one log per day, pauses that neither count nor break a streak, a weekly grid and streak statistics computed in the user's time zone.",
  countdowns:
    "Countdowns to a date, anniversaries and birthdays, repeating weekly, monthly or yearly in the Gregorian or the Chinese lunar calendar, with the next date and the days left computed in the user's time zone. One may be pinned.",
  folders: "Folders group lists. Deleting a folder moves its lists to the root level.",
  lists: "Task lists: each user has an inbox that cannot be renamed, moved or archived. An archived list hides its tasks until it is restored, or is purged with them.",
  sharing:
    "Shared lists: an owner invites other users of the server as editor or viewer; the invitee accepts or declines (invitations expire after 14 days). Members see the list and its tasks in their own views, each filing it in their own folder; tags stay personal. A viewer's write, or an editor's owner-only act, is `403 forbidden`; someone not a member gets `404`.",
  events:
    "Server-Sent Events: changes to everything the user can see (their own lists and the lists shared with them), so an open list updates when another member changes it.",
  tags: "Labels for tasks, unique per user (case-insensitively), each with a colour.",
  tasks: "Tasks with a title, a Markdown description, a due date or instant, a priority, tags and one level of subtasks; searched and paged by cursor. Writes to one task use optimistic locking (`version`).",
  views:
    "Smart views across all lists (Today, overdue, Tomorrow, Next 7 days, Upcoming, No date, Completed), grouped by the user's local day, with counts for a sidebar.",
  calendar:
    "A month or week at a glance: dated tasks, the later occurrences of repeating tasks (computed, not stored), countdowns and habit check-ins on their days; moving a task to another day keeping its time.",
  trash: "Deleted tasks (with their subtasks), kept until restored or deleted for good.",
  recurrence:
    "Repeating tasks: an RFC 5545 RRULE from the task's due date, or an interval after each completion. Completing an occurrence records a completed copy and moves the task to the next occurrence; single occurrences can be skipped.",
  attachments: "Files attached to tasks: streamed uploads checked against an allow-list of types by their content, and downloads with ETags and byte ranges.",
  legacy: "The lightweight legacy v1 format (one JSON document or one CSV file, no attachments) for export and restore.",
  import:
    "Bring data in from other apps: a TickTick backup CSV, a Todoist project CSV or backup ZIP, or iCalendar VTODOs (.ics). A preview says what will be created, skipped or changed (with line numbers) and gives a 15-minute token; the import writes in one transaction, and the same file imported again creates nothing.",
  "instance-backups":
    "Scheduled whole-instance snapshots (database, server secret, attachments; verified after writing) with retention, a local directory and an optional S3-compatible copy: settings and last results, for administrators.",
  reminders: "Reminders on tasks (before the due time, or at an instant), habits (daily at a local time on scheduled days) and countdowns (days before each occurrence): each with its next fire time, re-armed when its target changes.",
  notifications: "Where reminders go: per-user channels (webhook, ntfy, e-mail, Web Push) with a test action, the deliveries list, and the signed done/snooze links notifications carry.",
  admin: "Instance settings for notifications (administrators only): the SMTP server e-mail channels use, and the outbound rule limiting where webhook, ntfy and push requests may go.",
  feeds:
    "Read-only calendar feeds: secret, revocable webcal URLs (all the user sees, or one list) that calendar apps subscribe to, with dated tasks as events or to-dos, countdowns (lunar ones on their Gregorian dates) and habit reminders.",
  backup: "Complete backups (app-backup v2 ZIP archives with attachments): streamed export, a preflight that validates an upload whole, and a merge or replace restore in one transaction.",
};

function documentTags(paths: Record<string, Record<string, Record<string, unknown>>>): { name: string; description: string }[] {
  const used = new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o.tags as string[] | undefined) ?? [])));
  const missing = [...used].filter((t) => !(t in TAG_DESCRIPTIONS));
  if (missing.length) throw new Error(`OpenAPI tags without a description in TAG_DESCRIPTIONS: ${missing.join(", ")}`);
  return Object.entries(TAG_DESCRIPTIONS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
}

/**
 * Answers the platform gives whatever the route says: a validated parameter or body can be 422, a
 * body sent to a write 400 (unparseable, wrong Content-Type) or 413 (over the limit), a
 * cookie-authenticated write 403 csrf_failed, any write 503 busy (with Retry-After). Added here so no route's `doc()` can forget them.
 */
function addImpliedProblems(op: Record<string, unknown>, isPublic: boolean, isWrite: boolean, jsonBody: boolean, crossSiteRefused: boolean): void {
  const responses = (op.responses ??= {}) as Record<string, { description?: string; content?: unknown; headers?: unknown }>;
  const add = (status: number, code: string, why = "") => {
    const r = responses[String(status)];
    if (!r) {
      responses[String(status)] = {
        description: `Problem: \`${code}\`${why}`,
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
      };
    } else if (!(r.description ?? "").includes(`\`${code}\``)) {
      r.description = `${r.description ?? "Problem:"}, \`${code}\`${why}`;
    } else if (why && !(r.description ?? "").includes(why)) {
      r.description = (r.description ?? "").replace(`\`${code}\``, `\`${code}\`${why}`);
    }
  };
  const hasParams = Array.isArray(op.parameters) && op.parameters.length > 0;
  if (hasParams || op.requestBody !== undefined) add(422, "validation_failed");
  // The body parser reads whatever body a write sends, schema or not.
  if (jsonBody || isWrite) {
    add(400, "malformed_request", jsonBody ? ` (not UTF-8 JSON, or nested deeper than ${JSON_DEPTH_LIMIT} levels)` : "");
    add(413, "payload_too_large");
  }
  if (isWrite && !isPublic) add(403, "csrf_failed");
  if (crossSiteRefused) add(403, "csrf_failed", " (`Sec-Fetch-Site: cross-site`: an export cannot be started from another site)");
  // A write that finds the database held by a long job (a restore in the job worker) is refused at once.
  if (isWrite) {
    add(503, "busy");
    responses["503"]!.headers = { "Retry-After": RETRY_AFTER_HEADER };
  }
  // Keep the answers in status order, as doc() writes them.
  op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

/**
 * Paths outside /api/v1 that belong in the document: what a client of the API needs to know of
 * (the calendar feed a created feed's `url` points at). The web app, the docs and /metrics stay out.
 */
export const DOCUMENTED_OUTSIDE_API: ReadonlySet<string> = new Set(["/feeds/{file}"]);

/** Stable camelCase operation ids: `get /api/v1/tasks/{task_id}` → `getTasksByTaskId`. */
function operationId(method: string, path: string): string {
  const parts = path
    .replace(/^\/api\/v1\//, "")
    .split("/")
    .filter(Boolean)
    .map((p) => {
      const param = /^\{(.+)\}$/.exec(p);
      const word = (param ? `by_${param[1]}` : p).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""));
      return word.charAt(0).toUpperCase() + word.slice(1);
    });
  return method + parts.join("");
}
