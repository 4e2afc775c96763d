import { eq } from "drizzle-orm";
import type { Conn } from "../../core/db";
import { snapshotSettings, snapshotStatus } from "../../core/schema";

/** The owner of snapshot_settings and snapshot_status. */

export function readOverrides(c: Conn): Record<string, unknown> {
  const row = c.select().from(snapshotSettings).where(eq(snapshotSettings.id, 1)).get();
  if (!row) return {};
  try {
    const v = JSON.parse(row.overrides) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function writeOverrides(c: Conn, overrides: Record<string, unknown>, at: string): void {
  c.insert(snapshotSettings)
    .values({ id: 1, overrides: JSON.stringify(overrides), updatedAt: at })
    .onConflictDoUpdate({ target: snapshotSettings.id, set: { overrides: JSON.stringify(overrides), updatedAt: at } })
    .run();
}

export type StatusRow = typeof snapshotStatus.$inferSelect;

export function statusRows(c: Conn): StatusRow[] {
  return c.select().from(snapshotStatus).all();
}

/** Records one destination's outcome: a success replaces the last name/size/hash, a failure keeps them. */
export function recordOutcome(
  c: Conn,
  destination: string,
  at: string,
  o: { ok: true; name: string; bytes: number; sha256: string } | { ok: false; error: string },
): void {
  const set = o.ok
    ? { lastAttemptAt: at, lastSuccessAt: at, lastError: null, lastName: o.name, lastBytes: o.bytes, lastSha256: o.sha256 }
    : { lastAttemptAt: at, lastFailureAt: at, lastError: o.error.slice(0, 1000) };
  c.insert(snapshotStatus)
    .values({ destination, ...set })
    .onConflictDoUpdate({ target: snapshotStatus.destination, set })
    .run();
}
