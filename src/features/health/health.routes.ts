import { Elysia } from "elysia";
import { z } from "zod";
import { doc } from "../../core/openapi";
import { notReady } from "../../core/errors";
import { HealthService } from "./health.service";

export function healthRoutes(health: HealthService) {
  return new Elysia({ name: "health", prefix: "/api/v1" })
    .get("/health/live", () => ({ status: "ok" as const }), {
      detail: doc({ summary: "Liveness: the process runs", tags: ["health"], public: true, ok: { status: 200, schema: z.object({ status: z.literal("ok") }) } }),
    })
    .get(
      "/health/ready",
      () => {
        const problem = health.readiness();
        if (problem) throw notReady(problem);
        return { status: "ready" as const };
      },
      {
        detail: doc({
          summary: "Readiness: database open and migrated, data directory writable",
          tags: ["health"],
          public: true,
          ok: { status: 200, schema: z.object({ status: z.literal("ready") }) },
          errors: ["not_ready"],
        }),
      },
    );
}
