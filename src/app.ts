import { Elysia, type AnyElysia } from "elysia";
import type { Config } from "./config";
import { buildCore, type Core } from "./core/core";
import { SERVING_BUSY_TIMEOUT_MS, setBusyTimeout, type Db } from "./core/db";
import { JobRunner } from "./core/jobs/jobs.runner";
import { parseBody } from "./core/body";
import { AuthGuard, isDavPath } from "./core/auth/guard";
import { Logger } from "./core/log";
import { errorResponse } from "./core/problem";
import { getContext, setContext, RequestContext } from "./core/request-context";
import { requestPath, routableRequest } from "./core/request-path";
import { refuseCrossSiteDownload } from "./core/cross-site";
import type { ServerSecret } from "./core/secret";
import { systemClock, type Clock } from "./core/time";
import { APP_VERSION } from "./version";
import { lazy } from "./core/lazy";
import { Metrics } from "./core/metrics";
import { AccountService } from "./features/account/account.service";
import { findSessionWithUser } from "./features/account/account.repo";
import { accountRoutes } from "./features/account/account.routes";
import { SessionsService } from "./features/sessions/sessions.service";
import { sessionsRoutes } from "./features/sessions/sessions.routes";
import { AuditService } from "./features/audit/audit.service";
import { TokensService } from "./features/tokens/tokens.service";
import { tokensRoutes } from "./features/tokens/tokens.routes";
import { auditRoutes } from "./features/audit/audit.routes";
import { HealthService } from "./features/health/health.service";
import { healthRoutes } from "./features/health/health.routes";
import { docsRoutes } from "./features/docs/docs.routes";
import { WebService } from "./features/web/web.service";
import { webRoutes } from "./features/web/web.routes";
import { TaskPurgeHooks } from "./features/tasks/tasks.purge-hooks";
import { TasksService } from "./features/tasks/tasks.service";
import { tasksRoutes } from "./features/tasks/tasks.routes";
import { TaskViews } from "./features/tasks/tasks.views";
import { CalendarService } from "./features/calendar/calendar.service";
import { calendarRoutes } from "./features/calendar/calendar.routes";
import { taskViewsRoutes } from "./features/tasks/tasks.views.routes";
import { trashRoutes } from "./features/trash/trash.routes";
import { FoldersService } from "./features/folders/folders.service";
import { FolderDeleteHooks } from "./features/folders/folders.delete-hooks";
import { foldersRoutes } from "./features/folders/folders.routes";
import { ListsService } from "./features/lists/lists.service";
import { ListPurgeHooks } from "./features/lists/lists.purge-hooks";
import { listsRoutes } from "./features/lists/lists.routes";
import { SharingService } from "./features/sharing/sharing.service";
import { sharingRoutes } from "./features/sharing/sharing.routes";
import { eventsRoutes } from "./features/events/events.routes";
import { listAudience, listVisibleTo } from "./features/lists/lists.audience";
import { TagsService } from "./features/tags/tags.service";
import { TagDeleteHooks } from "./features/tags/tags.delete-hooks";
import { tagsRoutes } from "./features/tags/tags.routes";
import { MemosService } from "./features/memos/memos.service";
import { memosRoutes } from "./features/memos/memos.routes";
import { HabitsService } from "./features/habits/habits.service";
import { habitsRoutes } from "./features/habits/habits.routes";
import { CountdownsService } from "./features/countdowns/countdowns.service";
import { countdownsRoutes } from "./features/countdowns/countdowns.routes";
import { RecurrenceService } from "./features/recurrence/recurrence.service";
import { recurrenceRoutes } from "./features/recurrence/recurrence.routes";
import { AttachmentsService } from "./features/attachments/attachments.service";
import { attachmentsRoutes } from "./features/attachments/attachments.routes";
import { RemindersService } from "./features/reminders/reminders.service";
import { remindersRoutes } from "./features/reminders/reminders.routes";
import { ChannelsService } from "./features/reminders/channels.service";
import { channelsRoutes } from "./features/reminders/channels.routes";
import { ReminderScheduler } from "./features/reminders/reminders.scheduler";
import { legacyRoutes } from "./transfer/legacy/legacy.routes";
import { reconcileAtStartup as reconcileBackups } from "./transfer/backup/backup.reconcile";
import { backupRoutes } from "./transfer/backup/backup.routes";
import { metricsRoutes } from "./features/metrics/metrics.routes";
import { RouteTemplates, requestMetrics } from "./features/metrics/metrics.http";
import { instanceMetrics } from "./features/metrics/metrics.instance";
import { importRoutes } from "./transfer/import/import.routes";
import { SnapshotService } from "./transfer/snapshot/snapshot.service";
import { snapshotRoutes } from "./transfer/snapshot/snapshot.routes";
import { FeedsService } from "./features/feeds/feeds.service";
import { feedsRoutes } from "./features/feeds/feeds.routes";
import { pathForLog } from "./features/feeds/feeds.secret";

export interface AppOptions {
  db: Db;
  config: Config;
  secret: ServerSecret;
  clock?: Clock;
  logger?: Logger;
  /** How long the serving connection waits for another connection's write lock (default SERVING_BUSY_TIMEOUT_MS; the CLI waits longer). */
  busyTimeoutMs?: number;
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
  /** Attachments (main.ts sweeps orphaned files at start-up). */
  attachments: AttachmentsService;
  /** Reminders: the service, the channels and the scheduler (main.ts starts it; tests run its passes). */
  reminders: RemindersService;
  channels: ChannelsService;
  scheduler: ReminderScheduler;
  /** The job worker's runner (backup and legacy files); started on the first heavy job. */
  jobs: JobRunner;
  /** Scheduled whole-instance snapshots (main.ts starts the schedule; /metrics reads ages()). */
  snapshots: SnapshotService;
  /** Ends the job worker (the server is stopping; a test is done). */
  close(): void;
}

// Request ids: a random per-process prefix and a counter; unique in the logs and cheap to make.
const ID_PREFIX = (() => {
  const b = new Uint8Array(6);
  crypto.getRandomValues(b);
  return Buffer.from(b).toString("base64url");
})();
let requestCounter = 0;
function shortId(): string {
  return `${ID_PREFIX}-${(++requestCounter).toString(36)}`;
}

export function createApp(opts: AppOptions): AppHandle {
  const logger = opts.logger ?? new Logger(opts.config.logFormat);
  // The session lookup reads users: the account feature's statement, handed to core.
  const core = buildCore({
    db: opts.db,
    config: opts.config,
    clock: opts.clock ?? systemClock,
    secret: opts.secret,
    logger,
    version: APP_VERSION,
    findSession: findSessionWithUser,
    // Off unless a token is configured: then no metric is measured and prom-client is not loaded.
    metrics: new Metrics(opts.config.metricsToken !== undefined),
  });
  const instance = instanceMetrics(core.metrics, { databaseFile: opts.db.sqlite.filename, version: APP_VERSION });
  // API tokens and app passwords: the guard resolves them (with the tokens feature's statements).
  const tokens = new TokensService(core);
  const guard = new AuthGuard(core.secret, core.sessions, core.config.trustProxy, tokens.credentials(), core.throttle, core.clock);

  const account = new AccountService(core);
  const health = new HealthService(core);
  // Dependencies point one way (folders ← lists ← tasks ← recurrence, attachments): a feature
  // tells those built on it what happened (a folder deleted, a list purged) through hooks they
  // register on, never by importing them.
  const folderDeleteHooks = new FolderDeleteHooks();
  const listPurgeHooks = new ListPurgeHooks();
  const tagDeleteHooks = new TagDeleteHooks();
  // Features that own something of a task (recurrence, attachments) register purge hooks here.
  const taskPurgeHooks = new TaskPurgeHooks();
  const folders = new FoldersService(core, folderDeleteHooks);
  const lists = new ListsService(core, listPurgeHooks, folderDeleteHooks);
  const tasks = new TasksService(core, taskPurgeHooks, listPurgeHooks, tagDeleteHooks);
  // Before anything touches attachment files: finish or undo restores a crash interrupted.
  reconcileBackups(core);
  // Heavy jobs (backup, legacy files) run in a worker thread with its own connection, started on
  // the first one. Its entry is worked out here, beside this file: in the executable every module's
  // import.meta.url is the bundle's, at the root where build.ts puts the worker's entry too.
  const jobs = new JobRunner({ workerUrl: new URL("./jobs.worker.ts", import.meta.url).href, db: opts.db, config: core.config, clock: core.clock, logger, version: APP_VERSION });
  // Rarely used features whose code is loaded on first use (an idle server does not hold it).
  const legacy = lazy(async () => new (await import("./transfer/legacy/legacy.service")).LegacyService(jobs));
  const backup = lazy(async () => new (await import("./transfer/backup/backup.service")).BackupService(core, jobs));
  const importer = lazy(async () => new (await import("./transfer/import/import.service")).ImportService(jobs));
  const attachments = new AttachmentsService(core, taskPurgeHooks);
  const snapshots = new SnapshotService(core, jobs);
  // /health/ready reports the backups' last results in its body (never in its status code).
  health.addDetail("backups", () => snapshots.ages());
  const habits = new HabitsService(core);
  const countdowns = new CountdownsService(core);
  // Reminders build on tasks, habits and countdowns and on the user's settings: each tells them
  // of its changes through hooks (inside its transaction), so none of them imports reminders.
  const reminders = new RemindersService(core);
  tasks.changeHooks.register((c, _userId, ids) => reminders.rearmTargets(c, "task", ids));
  taskPurgeHooks.register((c, _userId, ids) => reminders.dropTargets(c, "task", ids));
  habits.changeHooks.register((c, _userId, ids) => reminders.rearmTargets(c, "habit", ids));
  countdowns.changeHooks.register((c, _userId, ids) => reminders.rearmTargets(c, "countdown", ids));
  account.onSettingsChanged((c, userId) => reminders.rearmUser(c, userId));
  const channels = new ChannelsService(core, reminders, tasks, habits);
  // A failed backup reaches the administrators through their notification channels.
  snapshots.onFailure((text) => channels.alertAdmins(text));
  // Built here, started by main.ts once the server listens (tests drive it themselves).
  const scheduler = new ReminderScheduler(core, reminders, channels);
  const sharing = new SharingService(core, tasks.repeatHooks);
  // Reminders are personal (sharing.md): a member's on a shared list's tasks go when they leave or are removed.
  sharing.memberGone.register((c, userId, listId) => reminders.dropUserOnList(c, userId, listId));
  // Who hears of a list's changes: lists.access decides, as for every read.
  const recurrence = new RecurrenceService(core, tasks.repeatHooks, taskPurgeHooks, tasks.changeHooks);
  const tags = new TagsService(core, tagDeleteHooks);
  // CalDAV (its routes and service, fast-xml-parser, ical.js) loads on the first request to its paths
  // (core/lazy.ts): a server no phone syncs with does not hold it.
  const dav = lazy(async () => {
    const [{ DavService }, { davHandler }] = await Promise.all([import("./features/dav/dav.service"), import("./features/dav/dav.routes")]);
    return davHandler(new DavService(core, tasks, lists, tags, recurrence, reminders));
  });
  core.events.configure({ audience: (listId) => listAudience(core.db, listId), canSee: (userId, listId) => listVisibleTo(core.db, userId, listId) });

  const ensureContext = (request: Request): RequestContext => {
    let ctx = getContext(request);
    if (!ctx) {
      ctx = new RequestContext(shortId(), request, () => null, core.config.trustProxy);
      setContext(request, ctx);
    }
    return ctx;
  };

  let root: AnyElysia;
  root = new Elysia()
    .onRequest(({ request }) => {
      const ctx = ensureContext(request);
      // The path the router uses (fetch() hands Elysia a routable request: core/request-path.ts).
      const path = requestPath(request.url);
      refuseCrossSiteDownload(request, path);
      guard.check(request, path, ctx);
      // CalDAV's methods and XML/iCalendar bodies are its own protocol: answered here, after the guard (dav.routes.ts).
      if (isDavPath(path)) return dav().then((handle) => handle(request, ctx, path));
    })
    .onParse(({ request, contentType, path }) => parseBody(request, path, contentType))
    .onError(({ error, request }) => errorResponse(error, getContext(request)?.id, logger))
    .use(healthRoutes(health))
    .use(accountRoutes(core, account))
    .use(sessionsRoutes(new SessionsService(core)))
    .use(tokensRoutes(tokens))
    .use(auditRoutes(new AuditService(core.db, core.cursors)))
    .use(memosRoutes(new MemosService(core)))
    .use(habitsRoutes(habits))
    .use(countdownsRoutes(countdowns))
    .use(foldersRoutes(folders))
    .use(listsRoutes(lists))
    .use(sharingRoutes(sharing))
    .use(eventsRoutes(core.events))
    .use(tagsRoutes(tags))
    .use(tasksRoutes(tasks))
    .use(taskViewsRoutes(new TaskViews(core)))
    .use(calendarRoutes(new CalendarService(core, tasks)))
    .use(trashRoutes(tasks))
    .use(recurrenceRoutes(recurrence))
    .use(remindersRoutes(reminders))
    .use(channelsRoutes(channels))
    .use(attachmentsRoutes(attachments))
    .use(legacyRoutes(legacy, core.clock))
    .use(backupRoutes(backup))
    .use(importRoutes(importer))
    .use(snapshotRoutes(async () => snapshots))
    // Calendar feeds: the feature gathers what a feed shows, transfer/feeds writes it as iCalendar
    // (with ical.js, loaded on the first fetch of a feed, as for the .ics import).
    .use(feedsRoutes(new FeedsService(core, lazy(async () => (await import("./transfer/feeds/feeds.ics")).renderFeed)), core.config.trustProxy))
    .use(docsRoutes(() => root, APP_VERSION))
    .use(metricsRoutes(core.metrics, core.config.metricsToken))
    .use(webRoutes(new WebService()));

  // Every route is registered: requests are counted by the template the router matches (metrics on only).
  const requests = core.metrics.enabled ? requestMetrics(core.metrics, new RouteTemplates(root.routes)) : null;

  // From here on the connection serves requests: it never waits long for a lock (core/db.ts).
  setBusyTimeout(opts.db, opts.busyTimeoutMs ?? SERVING_BUSY_TIMEOUT_MS);

  const finish = (request: Request, ctx: RequestContext, res: Response): Response => {
    const h = res.headers;
    h.set("x-request-id", ctx.id);
    if (!h.has("cache-control")) h.set("cache-control", "no-store");
    h.set("x-content-type-options", "nosniff");
    // Answers with a policy of their own keep it (the web app and the API docs forbid framing in
    // theirs; attachment downloads are sandboxed); the rest, API answers above all, may not be
    // framed, loaded by another site or leak their URL as a referrer. X-Frame-Options says "never
    // framed" to every answer, the downloads included, in the older header browsers also honour.
    if (!h.has("content-security-policy")) h.set("content-security-policy", API_CSP);
    h.set("x-frame-options", "DENY");
    if (!h.has("referrer-policy")) h.set("referrer-policy", "no-referrer");
    if (!h.has("cross-origin-resource-policy")) h.set("cross-origin-resource-policy", "same-origin");
    if (requests) requests.observe(request.method, requestPath(request.url), res.status, (performance.now() - ctx.startedAt) / 1000);
    if (logger.enabled) {
      logger.request({
        method: request.method,
        // A feed URL's secret is not written to the log (features/feeds/feeds.secret.ts).
        path: pathForLog(requestPath(request.url)),
        status: res.status,
        duration_ms: Math.round((performance.now() - ctx.startedAt) * 10) / 10,
        request_id: ctx.id,
        user_id: ctx.principal?.user.id ?? null,
        ip: ctx.ip,
      });
    }
    return res;
  };

  return {
    app: root,
    core,
    account,
    tasks,
    taskPurgeHooks,
    attachments,
    reminders,
    channels,
    scheduler,
    jobs,
    snapshots,
    close: () => {
      instance.stop();
      snapshots.stop();
      scheduler.stop();
      core.events.closeAll();
      jobs.close();
    },
    fetch(original, server) {
      // The socket address is asked of the object the server made (requestIP knows no copy).
      const ctx = new RequestContext(shortId(), original, () => server?.requestIP(original)?.address ?? null, core.config.trustProxy);
      const request = routableRequest(original);
      setContext(request, ctx);
      // handle() is async: whatever Elysia throws arrives here as a rejection.
      return root.handle(request).then(
        (res) => finish(request, ctx, res),
        (e: unknown) => finish(request, ctx, errorResponse(e, ctx.id, logger)),
      );
    },
  };
}

/** What an API answer allows a browser to do with it: nothing (no scripts, no framing). */
const API_CSP = "default-src 'none'; frame-ancestors 'none'";
