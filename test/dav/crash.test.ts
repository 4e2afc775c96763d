import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppHandle } from "../../src/app";
import { ADMIN, TestClient } from "../helpers/app";
import { AppProcess, serverEnv } from "../helpers/spawn";

/**
 * kill -9 of the real server (`bun src/main.ts`, or APP_EXE) in the middle of a CalDAV PUT that
 * creates a repeating task with an alarm: right after the task is created (failpoint
 * dav.put.after_task), and after every step (repeat, alarm, the resource row) just before the
 * commit (dav.put.before_commit). The PUT is one transaction, so nothing of it survives the kill:
 * no task, no resource, no repeat, no alarm, no sync-log row. The client never got an answer, so
 * it sends the same PUT again after the restart: that creates the one task whole (201), never a
 * second one — duplicated tasks are what users of other CalDAV servers report.
 */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const start = (dir: string, failpoint = "") => AppProcess.start(["--data-dir", dir, "--port", "0", "--log-format", "json"], { env: serverEnv({ APP_FAILPOINT: failpoint }) });

function clientOf(base: string): TestClient {
  const handle = { fetch: (req: Request) => fetch(new Request(req.url.replace("http://localhost", base), req)) } as unknown as AppHandle;
  return new TestClient(handle, "127.0.0.1");
}

const ICS = [
  "BEGIN:VCALENDAR",
  "VERSION:2.0",
  "PRODID:-//test//crash//EN",
  "BEGIN:VTODO",
  "UID:crash-retry-1@example.org",
  "DTSTAMP:20261120T100000Z",
  "SUMMARY:Water the plants",
  "DUE;VALUE=DATE:20261201",
  "RRULE:FREQ=WEEKLY",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "DESCRIPTION:Water the plants",
  "TRIGGER:-PT30M",
  "END:VALARM",
  "END:VTODO",
  "END:VCALENDAR",
  "",
].join("\r\n");

describe("kill -9 during a CalDAV PUT", () => {
  for (const point of ["dav.put.after_task", "dav.put.before_commit"]) {
    test(`at ${point}: nothing of the PUT survives; the client's retry creates the task whole, no second one`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "app-davcrash-"));
      dirs.push(dir);
      const s1 = await start(dir, point);
      const c = clientOf(s1.base);
      expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
      const token = await c.post("/api/v1/tokens", { name: "phone", scopes: ["caldav"] });
      expect(token.status).toBe(201);
      const auth = `Basic ${Buffer.from(`${ADMIN.username}:${token.body.secret}`).toString("base64")}`;
      const inbox = (await c.get("/api/v1/lists")).body.items.find((l: { is_inbox: boolean }) => l.is_inbox).id as string;
      const path = `/dav/calendars/${ADMIN.username}/${inbox}/crash-retry-1.ics`;
      const put = (base: string) => fetch(`${base}${path}`, { method: "PUT", headers: { authorization: auth, "content-type": "text/calendar; charset=utf-8" }, body: ICS });
      const count = (db: Database, sql: string) => (db.query(sql).get() as { n: number }).n;
      const tables = ["tasks", "dav_objects", "recurrences", "reminders", "dav_changes", "tags"];
      const before = new Database(join(dir, "app.db"), { readonly: true });
      const had = Object.fromEntries(tables.map((t) => [t, count(before, `SELECT count(*) AS n FROM ${t}`)]));
      before.close();
      // The failpoint kills the server (SIGKILL) in the middle of the PUT: no answer reaches the client.
      await put(s1.base).then(
        () => undefined,
        () => undefined,
      );
      await s1.proc.exited;
      expect(s1.proc.signalCode).toBe("SIGKILL");
      const db = new Database(join(dir, "app.db"), { readonly: true });
      try {
        expect(count(db, "SELECT count(*) AS n FROM tasks WHERE title = 'Water the plants'")).toBe(0);
        expect(Object.fromEntries(tables.map((t) => [t, count(db, `SELECT count(*) AS n FROM ${t}`)]))).toEqual(had);
      } finally {
        db.close();
      }

      const s2 = await start(dir);
      try {
        const retry = await put(s2.base);
        expect(retry.status).toBe(201);
        const c2 = clientOf(s2.base);
        expect((await c2.post("/api/v1/auth/login", { username: ADMIN.username, password: ADMIN.password })).status).toBe(200);
        const found = (await c2.get("/api/v1/tasks?q=water")).body.items as { id: string; title: string }[];
        expect(found.map((t) => t.title)).toEqual(["Water the plants"]);
        const id = found[0]!.id;
        expect((await c2.get(`/api/v1/tasks/${id}/recurrence`)).body).toMatchObject({ rrule: expect.stringContaining("FREQ=WEEKLY") });
        expect((await c2.get(`/api/v1/tasks/${id}/reminders`)).body.items).toHaveLength(1);
        const got = await fetch(`${s2.base}${path}`, { headers: { authorization: auth } });
        expect(got.status).toBe(200);
        const text = await got.text();
        expect(text).toContain("UID:crash-retry-1@example.org");
        expect(text).toContain("RRULE:FREQ=WEEKLY");
        // The same PUT once more: the same task (204), still one.
        expect((await put(s2.base)).status).toBe(204);
        expect(((await c2.get("/api/v1/tasks?q=water")).body.items as unknown[]).length).toBe(1);
      } finally {
        await s2.stop();
      }
    }, 60_000);
  }
});
