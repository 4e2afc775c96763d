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
 * kill -9 of the real server (`bun src/main.ts`, or APP_EXE) while it delivers reminders, at each
 * step of a delivery, by failpoint: after a batch of ledger rows is claimed (before any send),
 * after receivers answered (before the group commit of their outcomes), in the middle of that
 * group commit's transaction, and after it. Each case delivers a burst (2 reminders × 3 channels
 * firing at one instant: one claimed batch, one group of outcomes), so the batching is what is
 * under test. After a restart the ledger holds exactly one delivery per (reminder, occurrence,
 * channel), all delivered (no loss), and the receiver saw each delivery id once, plus once more
 * exactly when it had been sent but its outcome was not committed before the kill (the repeat
 * carries the same X-Delivery-Id, the id a receiver deduplicates on).
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
    return db.query("SELECT id, status, attempts FROM deliveries ORDER BY id").all() as { id: string; status: string; attempts: number }[];
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

const CASES = ["reminders.after_claim", "reminders.after_send", "reminders.in_record", "reminders.after_record"] as const;
const REMINDERS = 2;
const CHANNELS = 3;

describe("kill -9 during a burst of deliveries", () => {
  for (const fp of CASES) {
    test(`at ${fp}: one ledger row each, all delivered after the restart; a delivery is repeated (same id) exactly when its outcome was not committed`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "app-remcrash-"));
      dirs.push(dir);
      const prefix = `/crash-${fp.replace(/\W/g, "")}`;
      const seen = () => {
        const n = new Map<string, number>();
        for (const g of rx.got) if (g.path.startsWith(prefix)) n.set(g.headers["x-delivery-id"]!, (n.get(g.headers["x-delivery-id"]!) ?? 0) + 1);
        return n;
      };
      const s1 = await start(dir, fp);
      const c = clientOf(s1.base);
      expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
      for (let i = 0; i < CHANNELS; i++) {
        expect((await c.post("/api/v1/notification-channels", { type: "webhook", name: `rx${i}`, config: { url: `${rx.url}${prefix}/${i}` } })).status).toBe(201);
      }
      const at = new Date(Date.now() + 2000).toISOString();
      for (let i = 0; i < REMINDERS; i++) {
        const t = await c.post("/api/v1/tasks", { title: `crash ${fp} ${i}` });
        expect((await c.post(`/api/v1/tasks/${t.body.id}/reminders`, { kind: "at", at })).status).toBe(201);
      }
      // The failpoint kills it (SIGKILL) in the middle of the burst.
      await s1.proc.exited;
      expect(s1.proc.signalCode).toBe("SIGKILL");
      const seenBefore = seen();
      const recordedBefore = new Set(ledger(dir).filter((d) => d.status === "delivered").map((d) => d.id));
      const sentBefore = [...seenBefore.values()].reduce((a, b) => a + b, 0);
      if (fp === "reminders.after_claim") expect(sentBefore).toBe(0);
      else expect(sentBefore).toBeGreaterThan(0);
      // Killed before or inside the group commit: none of the group is recorded (one atomic commit).
      if (fp === "reminders.after_claim" || fp === "reminders.after_send" || fp === "reminders.in_record") expect(recordedBefore.size).toBe(0);
      else expect(recordedBefore.size).toBeGreaterThan(0);
      for (const id of recordedBefore) expect(seenBefore.get(id)).toBe(1);

      const s2 = await start(dir);
      try {
        await until(() => ledger(dir).length === REMINDERS * CHANNELS && ledger(dir).every((d) => d.status === "delivered"), 20_000);
        await Bun.sleep(300);
        const rows = ledger(dir);
        expect(rows).toHaveLength(REMINDERS * CHANNELS);
        const after = seen();
        expect(new Set(after.keys())).toEqual(new Set(rows.map((r) => r.id)));
        for (const r of rows) expect(after.get(r.id)).toBe((seenBefore.get(r.id) ?? 0) + (recordedBefore.has(r.id) ? 0 : 1));
      } finally {
        await s2.stop();
      }
    }, 40_000);
  }
});
