import { createHmac } from "node:crypto";
import { join } from "node:path";
import { createApp, type AppHandle } from "../../src/app";
import { Config } from "../../src/config";
import { migrate, openDatabase, type Db } from "../../src/core/db";
import { Logger } from "../../src/core/log";
import { ServerSecret } from "../../src/core/secret";
import type { Clock } from "../../src/core/time";
import { TestClient } from "../helpers/app";

/** An app on an existing data directory (a restart of the same server, with a pinned clock). */
export function openApp(dir: string, clock: Clock, config: Partial<Config> = {}): { handle: AppHandle; db: Db; client(): TestClient; close(): void } {
  const cfg = Config.parse({ dataDir: dir, logFormat: "off", argon2MemoryKiB: 1024, argon2TimeCost: 1, sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400, ...config });
  const db = openDatabase(join(dir, "app.db"));
  migrate(db);
  const handle = createApp({ db, config: cfg, secret: ServerSecret.loadOrCreate(dir), clock, logger: new Logger("off") });
  handle.channels.publicUrl = "http://localhost";
  return { handle, db, client: () => new TestClient(handle, "127.0.0.1"), close: () => (handle.close(), db.close()) };
}

export interface Received {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  raw: Buffer;
}

/**
 * A real local HTTP receiver on a free port: records every request; `answer` decides the status
 * (default 200). Webhook and ntfy channels point at it.
 */
export class Receiver {
  readonly got: Received[] = [];
  answer: (r: Received) => Response | Promise<Response> = () => new Response("ok");
  private server: ReturnType<typeof Bun.serve>;

  constructor() {
    this.server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        const u = new URL(req.url);
        const raw = Buffer.from(await req.arrayBuffer());
        const r: Received = { method: req.method, path: u.pathname, headers: Object.fromEntries(req.headers), body: raw.toString("utf8"), raw };
        this.got.push(r);
        return this.answer(r);
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  stop(): void {
    this.server.stop(true);
  }
}

export const hmacHex = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");
