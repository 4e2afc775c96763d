import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { deflateSync, strToU8, zipSync } from "fflate";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { entriesOf, exportBytes, preflight, readJson, rebuild, seed, sha256, writeJson } from "./helpers";
import { buildZip, rawEntries, type RawEntry } from "./zip-writer";

let app: TestApp;
let c: TestClient;
let base: Record<string, Uint8Array>;

beforeAll(async () => {
  app = makeTestApp({ config: { backupMaxEntries: 500 } });
  c = await setupAdmin(app);
  await seed(c);
  base = entriesOf(await exportBytes(app, c));
});
afterAll(() => app.close());

const clone = () => Object.fromEntries(Object.entries(base).map(([k, v]) => [k, v.slice()]));

/** Preflights `zip` and expects 422 backup_invalid with a problem matching `message` (and `path`), nothing staged or stored. */
async function rejects(zip: Uint8Array, message: RegExp, path?: RegExp | string, mode: "merge" | "replace" = "replace") {
  const before = dump(app.db);
  const stagedBefore = readdirSync(join(app.dir, "backup", "staging")).sort();
  const r = await preflight(c, zip, mode);
  expect(r.status).toBe(422);
  expect(r.body.code).toBe("backup_invalid");
  expect(r.body.preflight_token).toBeUndefined();
  const hit = (r.body.errors as { path: string; message: string }[]).find(
    (e) => message.test(e.message) && (path === undefined || (typeof path === "string" ? e.path === path : path.test(e.path))),
  );
  if (!hit) throw new Error(`no problem ${message} at ${String(path)} in ${JSON.stringify(r.body.errors)}`);
  expect(dump(app.db)).toEqual(before);
  expect(readdirSync(join(app.dir, "backup", "staging")).sort()).toEqual(stagedBefore);
  return r.body.errors as { path: string; message: string }[];
}

function attachmentName(e: Record<string, Uint8Array>): string {
  return Object.keys(e).find((n) => n.startsWith("attachments/"))!;
}

describe("preflight accepts", () => {
  test("the server's own export, with summary and counts", async () => {
    const r = await preflight(c, rebuild(clone()), "replace");
    expect(r.status).toBe(200);
    expect(r.body.valid).toBe(true);
    expect(r.body.summary).toMatchObject({ format: "app-backup", version: 2 });
    expect(r.body.counts.tasks).toBe(3);
    expect(typeof r.body.preflight_token).toBe("string");
    // Stored hashed: the token itself is nowhere in the database.
    expect(JSON.stringify(dump(app.db))).not.toContain(r.body.preflight_token);
  });
  test("an archive without data/tags.json (read as none) when no task uses a tag", async () => {
    const e = clone();
    delete e["data/tags.json"];
    const tasks = readJson<{ tag_ids: string[] }[]>(e, "data/tasks.json").map((t) => ({ ...t, tag_ids: [] }));
    writeJson(e, "data/tasks.json", tasks);
    const r = await preflight(c, rebuild(e, (m) => ((m.counts as Record<string, number>).tags = 0)));
    expect(r.status).toBe(200);
    expect(r.body.counts.tags).toBe(0);
  });
});

describe("preflight rejects files that are not our archive", () => {
  test("a 1-byte file", () => rejects(new Uint8Array([0x50]), /not a ZIP/));
  test("a non-zip", () => rejects(strToU8("this is plain text, not a zip archive at all, really".repeat(5)), /not a ZIP/));
  test("an empty upload", () => rejects(new Uint8Array(0), /not a ZIP/));
  test("a truncated archive (cut in half)", async () => {
    const z = rebuild(clone());
    await rejects(z.slice(0, Math.floor(z.length / 2)), /not a ZIP|truncated/);
  });
  test("a truncated archive (last bytes cut)", async () => {
    const z = rebuild(clone());
    await rejects(z.slice(0, z.length - 5), /not a ZIP|truncated/);
  });
  test("bytes prepended before the archive", async () => {
    const z = rebuild(clone());
    await rejects(new Uint8Array(Buffer.concat([Buffer.from("junkjunk"), z])), /central directory is not where|local header/);
  });
  test("a newer format version", async () => {
    await rejects(rebuild(clone(), (m) => (m.version = 3)), /newer than this server reads/, "manifest.json.version");
  });
  test("another format", async () => {
    await rejects(rebuild(clone(), (m) => (m.format = "other")), /not an app-backup archive/);
  });
  test("no manifest", async () => {
    const e = clone();
    delete e["manifest.json"];
    await rejects(zipSync(e), /missing/, "manifest.json");
  });
  test("a manifest that lists an entry missing from the archive", async () => {
    const e = clone();
    const name = attachmentName(e);
    const z = rebuild(e, (m) => {
      (m.entries as Record<string, unknown>)["data/extra.json"] = { size: 2, sha256: sha256("[]") };
    });
    void name;
    await rejects(z, /listed in the manifest but missing/, "data/extra.json");
  });
  test("an entry the manifest does not list", async () => {
    const e = clone();
    const z = rebuild(e);
    const m = readJson<Record<string, unknown>>(entriesOf(z), "manifest.json");
    const files = { ...e, "manifest.json": strToU8(JSON.stringify(m)), "data/notes.json": strToU8("[]") };
    const errors = await rejects(zipSync(files), /not listed in the manifest|unexpected entry/, "data/notes.json");
    expect(errors.some((x) => /unexpected entry/.test(x.message))).toBe(true);
  });
  test("a checksum that differs from the manifest", async () => {
    const e = clone();
    const z = rebuild(e, (m) => {
      const entries = m.entries as Record<string, { sha256: string }>;
      entries["data/memos.json"]!.sha256 = "0".repeat(64);
    });
    await rejects(z, /SHA-256 differs from the manifest/, "data/memos.json");
  });
  test("counts that differ from the records", async () => {
    await rejects(rebuild(clone(), (m) => ((m.counts as Record<string, number>).tasks = 99)), /declares 99/, "manifest.json.counts.tasks");
  });
  test("a data entry that is missing", async () => {
    const e = clone();
    delete e["data/habits.json"];
    delete e["data/habit_logs.json"];
    delete e["data/habit_pauses.json"];
    await rejects(rebuild(e), /missing/, "data/habits.json");
  });
});

describe("preflight rejects hostile ZIP structure", () => {
  const valid = () => {
    const z = rebuild(clone());
    return rawEntries(entriesOf(z));
  };
  const withExtra = (extra: RawEntry) => buildZip([...valid(), extra]);

  test("a zip bomb (a few MB inflating far past the ratio)", async () => {
    const zeros = new Uint8Array(64 * 1024 * 1024);
    const bomb = deflateSync(zeros, { level: 9 });
    expect(bomb.byteLength).toBeLessThan(200_000);
    await rejects(withExtra({ name: "attachments/00000000-0000-7000-8000-000000000000", data: zeros, raw: bomb }), /ratio/);
  });
  test("a bomb that lies about its size is stopped at the declared size", async () => {
    const zeros = new Uint8Array(32 * 1024 * 1024);
    const bomb = deflateSync(zeros, { level: 9 });
    const e = valid();
    const i = e.findIndex((x) => (x.name as string).startsWith("attachments/"));
    e[i] = { ...e[i]!, raw: bomb, size: e[i]!.data.byteLength, crc: Bun.hash.crc32(e[i]!.data) >>> 0 };
    await rejects(buildZip(e), /inflates past its declared size/);
  });
  test("a CRC-32 mismatch", async () => {
    const e = valid();
    const i = e.findIndex((x) => x.name === "data/memos.json");
    e[i] = { ...e[i]!, crc: 12345 };
    await rejects(buildZip(e), /CRC-32 mismatch/, "data/memos.json");
  });
  test("a declared size larger than what inflates", async () => {
    const e = valid();
    const i = e.findIndex((x) => x.name === "data/memos.json");
    e[i] = { ...e[i]!, size: e[i]!.data.byteLength + 10 };
    await rejects(buildZip(e), /inflates to \d+ bytes, declared/);
  });
  test("corrupt deflate data", async () => {
    const e = valid();
    const i = e.findIndex((x) => x.name === "data/memos.json");
    e[i] = { ...e[i]!, raw: new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff]) };
    await rejects(buildZip(e), /corrupt deflate|inflates|does not end/);
  });
  for (const [label, name, msg] of [
    ["a path with ..", "attachments/../../etc/passwd", /`\.` or `\.\.`/],
    ["an absolute path", "/etc/passwd", /absolute/],
    ["a backslash path", "attachments\\x", /backslash/],
    ["a drive letter", "C:/windows/x", /drive letter/],
    ["a NUL in the name", "data/a\0b.json", /NUL/],
  ] as const) {
    test(`${label}`, () => rejects(withExtra({ name, data: strToU8("x") }), msg));
  }
  test("duplicate names", async () => {
    const e = valid();
    const memo = e.find((x) => x.name === "data/memos.json")!;
    await rejects(buildZip([...e, { ...memo }]), /duplicate entry name/, "data/memos.json");
  });
  test("names that collide after NFC normalisation", async () => {
    const nfc = "attachments/caf\u00e9";
    const nfd = "attachments/cafe\u0301";
    await rejects(buildZip([...valid(), { name: nfc, data: strToU8("1") }, { name: nfd, data: strToU8("2") }]), /after Unicode normalisation/);
  });
  test("a symbolic link", async () => {
    await rejects(withExtra({ name: "attachments/link", data: strToU8("/etc/passwd"), method: 0, madeBy: 0x0314, externalAttr: (0o120777 << 16) >>> 0 }), /symbolic links/);
  });
  // The layout's own folders (`data/`, `attachments/`) are accepted when empty: directories.test.ts.
  test("a directory entry outside the layout", () => rejects(withExtra({ name: "extra/", data: new Uint8Array(0), method: 0 }), /unexpected directory entry/));
  test("an encrypted entry", () => rejects(withExtra({ name: "data/secret.json", data: strToU8("[]"), flags: 1 }), /encrypted/));
  test("a compression method other than stored/deflate", () => rejects(withExtra({ name: "data/bz.json", data: strToU8("[]"), method: 12 }), /method 12/));
  test("a name that is not UTF-8", () => rejects(withExtra({ name: new Uint8Array([0x64, 0xff, 0xfe]), data: strToU8("x"), flags: 0x800 }), /not UTF-8/));
  test("a non-ASCII name not flagged UTF-8", () => rejects(withExtra({ name: "attachments/\u00e9", data: strToU8("x"), flags: 0 }), /not flagged as UTF-8/));
  test("a local header that disagrees with the central directory", async () => {
    const e = valid();
    const i = e.findIndex((x) => x.name === "data/memos.json");
    e[i] = { ...e[i]!, localName: "data/memoz.json" };
    await rejects(buildZip(e), /local header disagrees/, "data/memos.json");
  });
  test("a local header with another method", async () => {
    const e = valid();
    const i = e.findIndex((x) => x.name === "data/memos.json");
    e[i] = { ...e[i]!, localMethod: 0 };
    await rejects(buildZip(e), /local header disagrees/);
  });
  test("overlapping entries (an entry hidden inside another's data)", async () => {
    const inner = buildZip([{ name: "attachments/b", data: strToU8("x"), method: 0 }]);
    const innerLocal = inner.slice(0, 30 + "attachments/b".length + 1);
    const e = valid();
    const outerOffset = e.reduce((n, x) => n + 30 + Buffer.byteLength(x.name as string) + (x.raw ?? deflateSync(x.data)).byteLength, 0);
    const z = buildZip([
      ...e,
      { name: "attachments/a", data: innerLocal, method: 0 },
      { name: "attachments/b", data: strToU8("x"), method: 0, atOffset: outerOffset + 30 + "attachments/a".length },
    ]);
    await rejects(z, /overlaps entry attachments\/a/, "attachments/b");
  });
  test("more entries than the cap", async () => {
    const many: RawEntry[] = [];
    for (let i = 0; i < 501; i++) many.push({ name: `attachments/x${i}`, data: strToU8("x"), method: 0 });
    await rejects(buildZip(many), /too many entries/);
  });
  test("an archive that inflates past the total size cap", async () => {
    const small = makeTestApp({ config: { backupMaxInflatedBytes: 1000 } });
    try {
      const sc = await setupAdmin(small);
      const r = await preflight(sc, rebuild(clone()), "replace");
      expect(r.status).toBe(422);
      expect(r.body.errors[0].message).toMatch(/inflates to more than 1000 bytes/);
      expect(readdirSync(join(small.dir, "backup", "staging"))).toEqual([]);
    } finally {
      small.close();
    }
  });
  test("an unexpected entry", () => rejects(withExtra({ name: "evil.sh", data: strToU8("rm -rf /") }), /unexpected entry/, "evil.sh"));
});

describe("preflight rejects bad records and broken rules", () => {
  const mutate = async (name: string, f: (rows: Record<string, unknown>[]) => unknown, message: RegExp, path?: RegExp | string, mode: "merge" | "replace" = "replace") => {
    const e = clone();
    writeJson(e, name, f(readJson<Record<string, unknown>[]>(e, name)));
    return rejects(rebuild(e), message, path, mode);
  };
  test("a JSON entry that is not an array", () => mutate("data/memos.json", () => ({ a: 1 }), /not a JSON array/));
  test("invalid JSON", async () => {
    const e = clone();
    e["data/memos.json"] = strToU8("[{\"id\": ");
    await rejects(rebuild(e), /invalid JSON|not closed/);
  });
  test("a record with a user id (per-user isolation: records carry none)", () =>
    mutate("data/memos.json", (r) => r.map((m) => ({ ...m, user_id: "someone" })), /unknown field/, /data\/memos\.json\[0\]/));
  test("a wrong type", () => mutate("data/tasks.json", (r) => r.map((t) => ({ ...t, priority: "high" })), /./, /data\/tasks\.json\[\d\]\.priority/));
  test("an enum outside its values", () => mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, type: "party" })), /./, /\.type$/));
  test("an invalid date", () => mutate("data/habit_logs.json", (r) => r.map((x) => ({ ...x, date: "2026-02-30" })), /must be a calendar date/, /data\/habit_logs\.json\[0\]\.date$/));
  test("an invalid instant", () => mutate("data/memos.json", (r) => r.map((x) => ({ ...x, created_at: "yesterday" })), /RFC 3339/));
  test("an over-long title", () => mutate("data/tasks.json", (r) => r.map((x) => ({ ...x, title: "x".repeat(501) })), /./, /\.title$/));
  test("a missing field", () => mutate("data/memos.json", (r) => r.map(({ pinned: _p, ...x }) => x), /./, /\.pinned$/));
  test("duplicate identifiers", () => mutate("data/memos.json", (r) => [...r, r[0]], /duplicate memos identifier/));
  test("a two-level task tree", () =>
    mutate(
      "data/tasks.json",
      (r) => {
        const sub = r.find((t) => t.parent_id !== null)!;
        const top = r.find((t) => t.parent_id === null && t.id !== sub.parent_id && t.list_id === sub.list_id);
        const grand = { ...sub, id: "01900000-0000-7000-8000-00000000abcd", parent_id: sub.id, tag_ids: [] };
        void top;
        return [...r, grand];
      },
      /nest one level only/,
    ));
  test("a subtask in another list than its parent", () =>
    mutate(
      "data/tasks.json",
      (r) => {
        const inbox = r.find((t) => t.parent_id === null && (t.title as string).startsWith("Inbox"))!;
        return r.map((t) => (t.parent_id !== null ? { ...t, list_id: inbox.list_id } : t));
      },
      /in its parent's list/,
    ));
  test("a reference to a list that is not in the archive (replace)", () =>
    mutate("data/tasks.json", (r) => r.map((t, i) => (i === 0 ? { ...t, list_id: "01900000-0000-7000-8000-0000000000aa" } : t)), /does not exist/, /list_id$/));
  test("a reference to a tag that is not in the archive", () =>
    mutate("data/tasks.json", (r) => r.map((t) => ({ ...t, tag_ids: ["01900000-0000-7000-8000-0000000000bb"] })), /tag .* does not exist/));
  test("tag names that collide (case-insensitively)", () =>
    mutate("data/tags.json", (r) => [...r, { ...r[0], id: "01900000-0000-7000-8000-0000000000cc", name: (r[0]!.name as string).toUpperCase() }], /unique/));
  test("two inboxes", () => mutate("data/lists.json", (r) => [...r, { ...r.find((l) => l.is_inbox)!, id: "01900000-0000-7000-8000-0000000000dd" }], /more than one system inbox/));
  test("two pinned countdowns", () =>
    mutate("data/countdowns.json", (r) => [{ ...r[0], pinned: true }, { ...r[0], id: "01900000-0000-7000-8000-0000000000ee", pinned: true }], /at most one countdown/));
  test("a recurrence on a subtask", () =>
    mutate(
      "data/recurrences.json",
      (r) => {
        const tasks = readJson<Record<string, unknown>[]>(base, "data/tasks.json");
        const sub = tasks.find((t) => t.parent_id !== null)!;
        return r.map((x) => ({ ...x, task_id: sub.id }));
      },
      /only top-level tasks recur/,
    ));
  test("an attachment file name with a path or a bidirectional mark", async () => {
    await mutate("data/attachments.json", (r) => r.map((a) => ({ ...a, filename: "../../etc/passwd" })), /not a clean file name/);
    await mutate("data/attachments.json", (r) => r.map((a) => ({ ...a, filename: "invoice\u202egpj.exe" })), /not a clean file name/);
  });
  test("names longer than the API allows, counted in characters", async () => {
    await mutate("data/folders.json", (r) => r.map((f) => ({ ...f, name: "x".repeat(201) })), /at most 200 characters/);
  });
  test("an RRULE the recurrence engine refuses", () => mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, rrule: "FREQ=SECONDLY" })), /./, /\.rrule$/));
  test("attachment metadata whose size does not match the bytes", () => mutate("data/attachments.json", (r) => r.map((a) => ({ ...a, size: (a.size as number) + 1 })), /differs from the attachment's/));
  test("attachment metadata whose SHA-256 does not match the bytes", () => mutate("data/attachments.json", (r) => r.map((a) => ({ ...a, sha256: "a".repeat(64) })), /SHA-256 differs from the attachment's/));
  test("attachment bytes without metadata", () => mutate("data/attachments.json", () => [], /bytes without attachment metadata/));
  test("attachment metadata without bytes", async () => {
    const e = clone();
    delete e[attachmentName(e)];
    await rejects(rebuild(e), /without its bytes/);
  });
  test("an attachment id that is not a UUID (it would name a file)", () =>
    mutate("data/attachments.json", (r) => r.map((a) => ({ ...a, id: "..-..-evil" })), /UUID/));
  // The API's fields are required, in the API's shapes; mirrors must agree with what is stored.
  test("a habit or countdown without the API's `archived`, or whose `archived` disagrees with archived_at", async () => {
    await mutate("data/habits.json", (r) => r.map(({ archived: _a, ...h }) => h), /./, /data\/habits\.json\[0\]\.archived$/);
    await mutate("data/habits.json", (r) => r.map((h) => ({ ...h, archived: true })), /`archived` must be true exactly when `archived_at` is set/, /\.archived$/);
    await mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, archived: "no" })), /./, /data\/countdowns\.json\[0\]\.archived$/);
    await mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, archived: false, archived_at: "2026-01-01T00:00:00.000Z" })), /`archived` must be true exactly/, /\.archived$/);
  });
  test("a countdown without its derived fields, or with values of the wrong shape", async () => {
    for (const field of ["next_date", "days_until", "count"]) {
      await mutate("data/countdowns.json", (r) => r.map((x) => Object.fromEntries(Object.entries(x).filter(([k]) => k !== field))), /./, new RegExp(`\\.${field}$`));
    }
    await mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, next_date: "2027-02-30" })), /real date/, /\.next_date$/);
    await mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, days_until: 1.5 })), /./, /\.days_until$/);
    await mutate("data/countdowns.json", (r) => r.map((x) => ({ ...x, count: -1 })), /./, /\.count$/);
  });
  test("a task still in the API's shape (`tags`, `subtasks`) instead of the archive's (`tag_ids`)", () =>
    mutate("data/tasks.json", (r) => r.map(({ tag_ids: _t, ...t }) => ({ ...t, tags: [], subtasks: [] })), /unknown field\(s\) "tags", "subtasks"/, /^data\/tasks\.json\[\d\]$/));
  test("a recurrence without `exceptions`, or with exceptions out of order or that are not dates", async () => {
    await mutate("data/recurrences.json", (r) => r.map(({ exceptions: _e, ...x }) => x), /./, /\.exceptions$/);
    await mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, exceptions: ["2026-12-15", "2026-12-01"] })), /distinct and ascending/, /\.exceptions$/);
    await mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, exceptions: ["2026-12-15", "2026-12-15"] })), /distinct and ascending/, /\.exceptions$/);
    await mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, exceptions: ["tomorrow"] })), /real date/);
  });
  test("a recurrence's `exceptions` that disagree with data/recurrence_exceptions.json", async () => {
    const rec = readJson<{ id: string }[]>(base, "data/recurrences.json")[0]!.id;
    await mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, exceptions: ["2026-12-15", "2026-12-22"] })), /lists 2026-12-22, not in data\/recurrence_exceptions\.json/, `data/recurrences.json#${rec}.exceptions`);
    await mutate("data/recurrences.json", (r) => r.map((x) => ({ ...x, exceptions: [] })), /leaves out 2026-12-15/, `data/recurrences.json#${rec}.exceptions`);
    await mutate("data/recurrence_exceptions.json", () => [], /lists 2026-12-15, not in/, `data/recurrences.json#${rec}.exceptions`);
  });
});
