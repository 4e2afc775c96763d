import { Elysia } from "elysia";
import { z } from "zod";
import { doc } from "../../core/openapi";
import { notReady } from "../../core/errors";
import { HealthService } from "./health.service";

export function healthRoutes(health: HealthService) {
  return new Elysia({ name: "health", prefix: "/api/v1" })
    .get("/health/live", () => ({ status: "ok" as const }), {
      detail: doc({ summary: "Liveness: the process runs", description: "Answers `200 {\"status\": \"ok\"}` whenever the process can serve HTTP; it touches neither the database nor the disk. Meant for a supervisor's liveness probe. No session needed.", tags: ["health"], public: true, ok: { status: 200, schema: z.object({ status: z.literal("ok") }) } }),
    })
    .get(
      "/health/ready",
      () => {
        const problem = health.readiness();
        if (problem) throw notReady(problem);
        return { status: "ready" as const, details: health.detailsNow() };
      },
      {
        detail: doc({
          summary: "Readiness: database open and migrated, data directory writable",
          description:
            "Answers `200 {\"status\": \"ready\"}` once the database is open and migrated to this version and the data directory is writable (a probe file is written and removed); otherwise `503 not_ready` with the reason in `detail` (also logged once when it changes). The result is cached for one second, so frequent probes cost nothing. `details.backups` lists each backup destination (`local`, and `s3` once configured) with `last_success_at`, `age_seconds` and `last_result` (`success`, `failure` or null): a failed or old backup is reported there, never by the status code. No session needed.",
          tags: ["health"],
          public: true,
          ok: { status: 200, schema: z.object({ status: z.literal("ready"), details: z.record(z.string(), z.unknown()).describe("informational sections (`backups`: per destination, the last verified snapshot's time and age in seconds and the last attempt's result); they never change the status code") }) },
          errors: ["not_ready"],
        }),
      },
    );
}
