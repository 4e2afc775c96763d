import { Elysia, type AnyElysia } from "elysia";
import type { Config } from "./config";
import { buildCore, type Core } from "./core/core";
import type { Db } from "./core/db";
import { parseBody } from "./core/body";
import { AuthGuard } from "./core/auth/guard";
import { Logger } from "./core/log";
import { problemResponse, toProblem } from "./core/problem";
import { getContext, setContext, type RequestContext } from "./core/request-context";
import type { ServerSecret } from "./core/secret";
import { systemClock, type Clock } from "./core/time";
import { APP_VERSION } from "./version";
import { AccountService } from "./features/account/account.service";
import { accountRoutes } from "./features/account/account.routes";
import { SessionsService } from "./features/sessions/sessions.service";
import { sessionsRoutes } from "./features/sessions/sessions.routes";
import { AuditService } from "./features/audit/audit.service";
import { auditRoutes } from "./features/audit/audit.routes";
import { HealthService } from "./features/health/health.service";
import { healthRoutes } from "./features/health/health.routes";
import { docsRoutes } from "./features/docs/docs.routes";
import { TaskPurgeHooks } from "./features/tasks/tasks.purge-hooks";
import { TasksService } from "./features/tasks/tasks.service";
import { tasksRoutes } from "./features/tasks/tasks.routes";
import { trashRoutes } from "./features/trash/trash.routes";
import { FoldersService } from "./features/folders/folders.service";
import { foldersRoutes } from "./features/folders/folders.routes";
import { ListsService } from "./features/lists/lists.service";
import { listsRoutes } from "./features/lists/lists.routes";
import { TagsService } from "./features/tags/tags.service";
import { tagsRoutes } from "./features/tags/tags.routes";
import { MemosService } from "./features/memos/memos.service";
import { memosRoutes } from "./features/memos/memos.routes";

export interface AppOptions {
  db: Db;
  config: Config;
  secret: ServerSecret;
  clock?: Clock;
  logger?: Logger;
}

export interface AppHandle {
  /** The Elysia root (for tests that want it, and for the OpenAPI generator). */
  app: AnyElysia;
  core: Core;
  /** Serves one request: context, logging, request id and security headers around the app. */
  fetch(request: Request, server?: { requestIP(r: Request): { address: string } | null }): Promise<Response>;
  account: AccountService;
  /** The task service and its purge hooks, for features built on tasks. */
  tasks: TasksService;
  taskPurgeHooks: TaskPurgeHooks;
}

function shortId(): string {
  const b = new Uint8Array(9);
  crypto.getRandomValues(b);
  return Buffer.from(b).toString("base64url");
}

/** Client address: the socket's, or the last X-Forwarded-For hop when the proxy is trusted. */
function clientIp(request: Request, socketIp: string | null, trustProxy: boolean): string | null {
  if (trustProxy) {
    const xff = request.headers.get("x-forwarded-for");
    if (xff) {
      const hops = xff.split(",").map((s) => s.trim()).filter(Boolean);
      const last = hops[hops.length - 1];
      if (last) return last.slice(0, 64);
    }
  }
  return socketIp;
}

export function createApp(opts: AppOptions): AppHandle {
  const logger = opts.logger ?? new Logger(opts.config.logFormat);
  const core = buildCore({ db: opts.db, config: opts.config, clock: opts.clock ?? systemClock, secret: opts.secret, logger, version: APP_VERSION });
  const guard = new AuthGuard(core.secret, core.sessions, core.config.trustProxy);

  const account = new AccountService(core);
  const health = new HealthService(core);
  // Features that own something of a task (recurrence, attachments) register purge hooks here.
  const taskPurgeHooks = new TaskPurgeHooks();
  const tasks = new TasksService(core, taskPurgeHooks);

  const ensureContext = (request: Request): RequestContext => {
    let ctx = getContext(request);
    if (!ctx) {
      ctx = {
        id: shortId(),
        startedAt: performance.now(),
        ip: clientIp(request, null, core.config.trustProxy),
        userAgent: request.headers.get("user-agent"),
        secure: new URL(request.url).protocol === "https:",
        principal: null,
      };
      setContext(request, ctx);
    }
    return ctx;
  };

  let root: AnyElysia;
  root = new Elysia()
    .onRequest(({ request }) => {
      const ctx = ensureContext(request);
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const q = url.indexOf("?", start);
      const path = q === -1 ? url.slice(start) : url.slice(start, q);
      guard.check(request, path, ctx);
    })
    .onParse(({ request, contentType, path }) => parseBody(request, path, contentType))
    .onError(({ error, request }) => {
      const ctx = getContext(request);
      const { body, headers, internal } = toProblem(error);
      if (internal) {
        body.request_id = ctx?.id;
        logger.error("unhandled error", {
          request_id: ctx?.id ?? null,
          error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
          stack: error instanceof Error ? error.stack?.split("\n").slice(0, 6).join(" | ") : undefined,
        });
      }
      return problemResponse(body, headers);
    })
    .use(healthRoutes(health))
    .use(accountRoutes(core, account))
    .use(sessionsRoutes(new SessionsService(core)))
    .use(auditRoutes(new AuditService(core.db, core.cursors)))
    .use(memosRoutes(new MemosService(core)))
    .use(foldersRoutes(new FoldersService(core)))
    .use(listsRoutes(new ListsService(core, taskPurgeHooks)))
    .use(tagsRoutes(new TagsService(core)))
    .use(tasksRoutes(tasks))
    .use(trashRoutes(tasks))
    .use(docsRoutes(() => root, APP_VERSION));

  return {
    app: root,
    core,
    account,
    tasks,
    taskPurgeHooks,
    async fetch(request, server) {
      const ctx: RequestContext = {
        id: shortId(),
        startedAt: performance.now(),
        ip: clientIp(request, server?.requestIP(request)?.address ?? null, core.config.trustProxy),
        userAgent: request.headers.get("user-agent"),
        secure:
          new URL(request.url).protocol === "https:" ||
          (core.config.trustProxy && request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https"),
        principal: null,
      };
      setContext(request, ctx);
      let res: Response;
      try {
        res = await root.handle(request);
      } catch (e) {
        const { body } = toProblem(e);
        body.request_id = ctx.id;
        res = problemResponse(body);
      }
      res.headers.set("x-request-id", ctx.id);
      if (!res.headers.has("cache-control")) res.headers.set("cache-control", "no-store");
      res.headers.set("x-content-type-options", "nosniff");
      res.headers.set("referrer-policy", "same-origin");
      const url = new URL(request.url);
      logger.request({
        method: request.method,
        path: url.pathname,
        status: res.status,
        duration_ms: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
        request_id: ctx.id,
        user_id: ctx.principal?.user.id ?? null,
        ip: ctx.ip,
      });
      return res;
    },
  };
}
