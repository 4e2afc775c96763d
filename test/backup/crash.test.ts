import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppHandle } from "../../src/app";
import { TestClient } from "../helpers/app";
import { AppProcess, serverEnv } from "../helpers/spawn";
import { exportBytes, preflight, seed, sha256, userData, type UserData } from "./helpers";

/**
 * kill -9 of the real server (`bun src/main.ts`) at each step of a replace restore, by failpoint.
 * After a restart the account must equal exactly the state before or the backup (rows and every
 * attachment's SHA-256), the database must pass integrity_check, and the token must be consumed
 * only if the import committed.
 */

interface Server {
  proc: AppProcess["proc"];
  base: string;
}

/** The server (APP_EXE=/path/to/app runs the compiled executable instead of the sources), with an optional failpoint. */
async function start(dir: string, failpoint?: string): Promise<Server> {
  return await AppProcess.start(["--data-dir", dir, "--port", "0", "--log-format", "json"], { env: serverEnv({ APP_FAILPOINT: failpoint ?? "" }) });
}

async function stop(s: Server): Promise<void> {
  s.proc.kill("SIGTERM");
  await s.proc.exited;
}

/** A TestClient (cookie jar, CSRF) that talks to a real server over HTTP. */
function clientOf(getBase: () => string): TestClient {
  const handle = {
    fetch: (req: Request) => {
      const url = req.url.replace("http://localhost", getBase());
      return fetch(new Request(url, req));
    },
  } as unknown as AppHandle;
  return new TestClient(handle, "127.0.0.1");
}

interface State {
  data: UserData;
  files: Record<string, string>;
}

function stateOf(dir: string, userId: string): State {
  const db = new Database(join(dir, "app.db"), { readonly: true });
  try {
    const data = userData({ sqlite: db }, userId);
    const ids = (db.query("SELECT id FROM attachments WHERE user_id = ?").all(userId) as { id: string }[]).map((r) => r.id);
    const files: Record<string, string> = {};
    for (const n of readdirSync(join(dir, "attachments"))) files[n] = sha256(readFileSync(join(dir, "attachments", n)));
    // Every row has its file.
    for (const id of ids) expect(files[id]).toBeDefined();
    return { data, files };
  } finally {
    db.close();
  }
}

function integrity(dir: string): string {
  const db = new Database(join(dir, "app.db"));
  try {
    return (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check;
  } finally {
    db.close();
  }
}

const STEPS = [
  ["restore.after_staging", "old"],
  ["restore.after_quarantine", "old"],
  ["restore.after_commit", "new"],
  ["restore.during_cleanup", "new"],
] as const;

describe("kill -9 during a replace restore", () => {
  for (const [failpoint, expected] of STEPS) {
    test(`at ${failpoint}: after restart the account is the ${expected} state`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "app-crash-"));
      let server: Server | null = null;
      try {
        server = await start(dir);
        const c = clientOf(() => server!.base);
        const setup = await c.post("/api/v1/setup/initialize", { username: "owner", password: "correct horse battery" });
        expect(setup.status).toBe(201);
        const userId = setup.body.user.id as string;
        const ids = await seed(c);
        const zip = await exportBytes({ handle: { fetch: (r: Request) => fetch(new Request(r.url.replace("http://localhost", server!.base), r)) } } as never, c);
        const backupState = stateOf(dir, userId);
        // Change things after the export: the "old" state differs from the backup in rows and files.
        await c.post("/api/v1/memos", { content: "after the export" });
        await c.delete(`/api/v1/memos/${ids.memo}`);
        const fd = new FormData();
        fd.append("file", new Blob(["second file\n"], { type: "text/plain" }), "second.txt");
        expect((await c.request("POST", `/api/v1/tasks/${ids.task}/attachments`, { body: fd })).status).toBe(201);
        const oldState = stateOf(dir, userId);
        expect(oldState).not.toEqual(backupState);
        const pf = await preflight(c, zip, "replace");
        expect(pf.status).toBe(200);
        const token = pf.body.preflight_token as string;
        await stop(server);

        server = await start(dir, failpoint);
        await c.post("/api/v1/backup/restore", { preflight_token: token, mode: "replace" }).catch(() => null);
        await server.proc.exited;
        expect(server.proc.signalCode).toBe("SIGKILL");

        server = await start(dir);
        const want = expected === "old" ? oldState : backupState;
        expect(stateOf(dir, userId)).toEqual(want);
        expect(readdirSync(join(dir, "backup", "restores"))).toEqual([]);
        const again = await c.post("/api/v1/backup/restore", { preflight_token: token, mode: "replace" });
        if (expected === "new") {
          // Committed, and no client was told (the server died): the same token answers what the
          // contract says of the repeated call after a commit whose cleanup failed (§9), although
          // start-up has already finished the cleanup; nothing is imported again.
          expect(again.status).toBe(200);
          expect(again.body).toMatchObject({ mode: "replace", cleanup: "completed" });
          expect(again.body.counts.tasks).toBe(backupState.data.tasks.length);
          expect(stateOf(dir, userId)).toEqual(backupState);
          expect(readdirSync(join(dir, "backup", "staging"))).toEqual([]);
          // Told once: from now on the token is consumed.
          const third = await c.post("/api/v1/backup/restore", { preflight_token: token, mode: "replace" });
          expect(third.status).toBe(409);
          expect(third.body.code).toBe("token_consumed");
        } else {
          // Not committed: the token still works, and gives the backup.
          expect(again.status).toBe(200);
          expect(stateOf(dir, userId)).toEqual(backupState);
        }
        expect((await c.get(`/api/v1/attachments/${ids.attachment}`)).text).toBe("hello a\n");
        await stop(server);
        server = null;
        expect(integrity(dir)).toBe("ok");
      } finally {
        if (server) {
          server.proc.kill("SIGKILL");
          await server.proc.exited;
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);
  }
});

describe("clients that go away (real server, real sockets)", () => {
  test("halfway through an export and halfway through a preflight upload: no stray files, the server keeps serving", async () => {
    const dir = mkdtempSync(join(tmpdir(), "app-crash-"));
    let server: Server | null = null;
    try {
      server = await start(dir);
      const c = clientOf(() => server!.base);
      expect((await c.post("/api/v1/setup/initialize", { username: "owner", password: "correct horse battery" })).status).toBe(201);
      await seed(c);
      for (let i = 0; i < 40; i++) await c.post("/api/v1/memos", { content: `memo ${i} ` + crypto.randomUUID().repeat(500) });
      const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ");

      // Export: read one chunk, then drop the connection.
      const ac = new AbortController();
      const res = await fetch(`${server.base}/api/v1/backup/export.zip`, { headers: { cookie }, signal: ac.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await reader.cancel().catch(() => {});
      for (let i = 0; i < 100 && readdirSync(join(dir, "backup", "exports")).length > 0; i++) await Bun.sleep(50);
      expect(readdirSync(join(dir, "backup", "exports"))).toEqual([]);

      // Preflight: send the multipart head and part of the archive, then drop the connection.
      const zip = await exportBytes({ handle: { fetch: (r: Request) => fetch(new Request(r.url.replace("http://localhost", server!.base), r)) } } as never, c);
      const boundary = "----crashtest";
      const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.zip"\r\n\r\n`);
      const up = new AbortController();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(ctrl) {
          if (sent === 0) ctrl.enqueue(head);
          else if (sent < 4) ctrl.enqueue(zip.slice((sent - 1) * 20_000, sent * 20_000));
          else {
            await Bun.sleep(200);
            up.abort();
          }
          sent++;
        },
      });
      await fetch(`${server.base}/api/v1/backup/preflight?mode=merge`, {
        method: "POST",
        headers: { cookie, "x-csrf-token": c.jar.get("app_csrf")!, "content-type": `multipart/form-data; boundary=${boundary}` },
        body,
        signal: up.signal,
        duplex: "half",
      } as RequestInit).catch(() => null);
      for (let i = 0; i < 100 && readdirSync(join(dir, "backup", "staging")).length > 0; i++) await Bun.sleep(50);
      expect(readdirSync(join(dir, "backup", "staging"))).toEqual([]);

      // Still serving, and the quota is free: three preflights go through.
      for (let i = 0; i < 3; i++) expect((await preflight(c, zip, "merge")).status).toBe(200);
      await stop(server);
      server = null;
      expect(integrity(dir)).toBe("ok");
    } finally {
      if (server) {
        server.proc.kill("SIGKILL");
        await server.proc.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
