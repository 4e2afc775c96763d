// The job worker's entry (a Bun Worker started by core/jobs/jobs.runner.ts on the first heavy job):
// the backup's and the legacy files' heavy work, each feature's module loaded on its first job.
// A second entry point of the executable (build.ts).
import { serveJobs } from "./core/jobs/jobs.host";

serveJobs({
  import: async () => (await import("./transfer/import/import.jobs")).importJobs(),
  backup: async () => (await import("./transfer/backup/backup.jobs")).backupJobs(),
  snapshot: async () => (await import("./transfer/snapshot/snapshot.jobs")).snapshotJobs(),
  legacy: async (core) => {
    const [{ legacyJobs }, { TaskPurgeHooks }, { AttachmentsService }] = await Promise.all([
      import("./transfer/legacy/legacy.jobs"),
      import("./features/tasks/tasks.purge-hooks"),
      import("./features/attachments/attachments.service"),
    ]);
    // The same purge hooks as app.ts: a replace removes the account's attachment files after it commits.
    const hooks = new TaskPurgeHooks();
    new AttachmentsService(core, hooks);
    return legacyJobs(hooks);
  },
});
