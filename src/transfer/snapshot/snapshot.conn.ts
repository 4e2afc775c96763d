import type { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { Conn } from "../../core/db";
import * as schema from "../../core/schema";

/** A Conn over a snapshot's own database file (its copy, not the serving database), for the owners' repo functions. */
export function connOf(s: Database): Conn {
  return Object.assign(drizzle({ client: s, schema }), { sqlite: s }) as unknown as Conn;
}
