import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppHandle } from "../../src/app";
import { ADMIN, TestClient } from "../helpers/app";
import { AppProcess, serverEnv } from "../helpers/spawn";
import { Receiver } from "./helpers";

/**
 * kill -9 of the real server (`bun src/main.ts`, or APP_EXE) while it delivers a reminder, at each
 * step of a delivery, by failpoint: after the ledger row is claimed (before the send), after the
 * receiver answered (before the outcome is recorded), after the outcome is recorded. After a
 * restart the ledger holds exactly one delivery for the (reminder, occurrence, channel), it is
 * delivered (no loss), and the receiver saw it once, or, when the kill fell between its answer and
 * the record, twice under the same X-Delivery-Id (the id a receiver deduplicates on).
 */
const rx = new Receiver();
const dirs: string[] = [];
afterAll(() => {
  rx.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function clientOf(base: string): TestClient {
  const handle = { fetch: (req: Request) => fetch(new Request(req.url.replace("http://localhost", base), req)) } as unknown as AppHandle;
  return new TestClient(handle, "127.0.0.1");
}

const start = (dir: string, failpoint = "") => AppProcess.start(["--data-dir", dir, "--port", "0", "--log-format", "json"], { env: serverEnv({ APP_FAILPOINT: failpoint }) });

function ledger(dir: string): { id: string; status: string; attempts: number }[] {
  const db = new Database(join(dir, "app.db"), { readonly: true });
  try {
    return db.query("SELECT id, status, attempts FROM deliveries").all() as { id: string; status: string; attempts: number }[];
  } finally {
    db.close();
  }
}

async function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("timed out waiting");
    await Bun.sleep(50);
  }
}

const CASES = [
  ["reminders.after_claim", 1],
  ["reminders.after_send", 2],
  ["reminders.after_record", 1],
] as const;

describe("kill -9 during a delivery", () => {
  for (const [fp, wire] of CASES) {
    test(`at ${fp}: one ledger row, delivered after the restart; the receiver saw it ${wire === 1 ? "once" : "twice under one id"}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "app-remcrash-"));
      dirs.push(dir);
      const path = `/crash-${fp.replace(/\W/g, "")}`;
      const s1 = await start(dir, fp);
      const c = clientOf(s1.base);
      expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
      expect((await c.post("/api/v1/notification-channels", { type: "webhook", name: "rx", config: { url: `${rx.url}${path}` } })).status).toBe(201);
      const t = await c.post("/api/v1/tasks", { title: `crash ${fp}` });
      const at = new Date(Date.now() + 1500).toISOString();
      expect((await c.post(`/api/v1/tasks/${t.body.id}/reminders`, { kind: "at", at })).status).toBe(201);
      // The failpoint kills it (SIGKILL) in the middle of the delivery.
      const code = await s1.proc.exited;
      expect(s1.proc.signalCode).toBe("SIGKILL");
      void code;
      const before = rx.got.filter((g) => g.path === path).length;
      expect(before).toBe(fp === "reminders.after_claim" ? 0 : 1);

      const s2 = await start(dir);
      try {
        await until(() => ledger(dir).every((d) => d.status === "delivered"), 15_000);
        await Bun.sleep(300);
        const rows = ledger(dir);
        expect(rows).toHaveLength(1);
        const got = rx.got.filter((g) => g.path === path);
        expect(got).toHaveLength(wire);
        expect(new Set(got.map((g) => g.headers["x-delivery-id"]))).toEqual(new Set([rows[0]!.id]));
      } finally {
        await s2.stop();
      }
    }, 30_000);
  }
});
