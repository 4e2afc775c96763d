import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { SnapshotService } from "./snapshot.service";
import { BackupsOverview, RunStarted, SettingsPatch } from "./snapshot.schemas";

const OVERVIEW =
  "Administrators only (`403 forbidden` otherwise). `settings` are those in effect: each is the administrator's value if one was saved, else the server's configuration (`APP_BACKUP_*`). The S3 keys are write-only: only whether each is set is answered. `destinations` has `local` and, once S3 is configured or was used, `s3`: the last attempt's result and error, and the last verified snapshot's name, size and SHA-256.";

/** `snapshots` loads the service on its first call (and shares it afterwards): see app.ts. */
export function snapshotRoutes(snapshots: () => Promise<SnapshotService>) {
  return new Elysia({ name: "snapshots", prefix: "/api/v1" })
    .get("/admin/backups", async ({ request }) => (await snapshots()).overview(principalOf(request)), {
      detail: doc({
        summary: "Scheduled whole-instance backups: settings and last results (admin only)",
        description: `${OVERVIEW} \`next_run_at\` is the next scheduled run (null while the schedule is off), \`running\` whether a snapshot is being taken now.`,
        tags: ["instance-backups"],
        ok: { status: 200, schema: BackupsOverview },
        errors: ["forbidden"],
      }),
    })
    .patch("/admin/backups/settings", async ({ body, request }) => (await snapshots()).updateSettings(principalOf(request), body), {
      body: SettingsPatch,
      detail: doc({
        summary: "Change the backup schedule, retention or destinations (admin only)",
        description: `${OVERVIEW} Fields left out are unchanged; a field sent as \`null\` goes back to the configuration's value. \`schedule\` is a cron expression (croner: 5 fields, or 6 with seconds) run in \`timezone\` (an IANA zone; empty: the server's zone); an expression that never runs, an unknown zone, a relative \`local_dir\` or an \`s3.endpoint\` that is not an http(s) URL is \`422 validation_failed\` naming the field, and nothing changes. Retention keeps the newest snapshot of each of the last \`keep_daily\` days, \`keep_weekly\` ISO weeks and \`keep_monthly\` months (in \`timezone\`), and always the newest one; it prunes only after a new snapshot is verified. Answers the overview.`,
        tags: ["instance-backups"],
        ok: { status: 200, schema: BackupsOverview },
        errors: ["forbidden", "validation_failed"],
      }),
    })
    .post(
      "/admin/backups/run",
      async ({ request, set }) => {
        const service = await snapshots();
        // Started here, finished in the background: the result is in GET /admin/backups.
        void service.runNow(principalOf(request)).catch(() => {});
        set.status = 202;
        return { started: true as const };
      },
      {
        detail: doc({
          summary: "Take a whole-instance snapshot now (admin only)",
          description:
            "Starts the same run as the schedule's: the database copied with SQLite's `VACUUM INTO`, the server secret and every attachment file written to one ZIP with a manifest of SHA-256s, read back and verified (hashes, `PRAGMA integrity_check`) before it gets its name, old snapshots pruned by the retention, then the copy to S3 when configured (streamed, retried, read back and checked). Answers `202` at once; the outcome appears in `GET /admin/backups`. `409 state_conflict` while a snapshot is being taken.",
          tags: ["instance-backups"],
          ok: { status: 202, schema: RunStarted },
          errors: ["forbidden", "state_conflict"],
        }),
      },
    );
}
