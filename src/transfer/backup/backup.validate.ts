import type { Conn } from "../../core/db";
import { quoted as quote, type FieldProblem } from "../../core/errors";
import { exceedsQuota } from "../../features/attachments/attachments.rules";
import { ContentTypeCheck } from "../../features/attachments/attachments.types";
import { loadLunar } from "../../features/countdowns/countdowns.rules";
import { lunarFieldsProblem, type LunarFields } from "../../features/countdowns/countdowns.rules";
import { logBeforeStartProblem, overlapMessage, overlappingPause, type PausePeriod } from "../../features/habits/habits.rules";
import { checkSchedule } from "../../features/recurrence/recurrence.rules";
import { isOwnAttachment } from "../../features/attachments/attachments.repo";
import { isOwnFolder } from "../../features/folders/folders.repo";
import { isOwnHabit, ownHabitStart } from "../../features/habits/habits.repo";
import { isOwnList } from "../../features/lists/lists.repo";
import { ownRecurrenceKind } from "../../features/recurrence/recurrence.repo";
import { isOwnTag, tagNameKey } from "../../features/tags/tags.repo";
import { ownTaskPlace } from "../../features/tasks/tasks.repo";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { inflateEntry, jsonNestingOver, JsonArraySplitter, MAX_JSON_DEPTH, readCentralDirectory, ZipError, type ZipEntry, type ZipFile, type ZipLimits } from "./backup.archive";
import { ENTITIES, Manifest, ManifestEntry, OPTIONAL_ENTITIES, RECORD_SCHEMAS, type Entity } from "./backup.records";
import { countdownOwner } from "../../features/countdowns/countdowns.repo";
import { ledgerLookup } from "./backup.repo";
import type { Mode } from "./backup.schemas";

// Until core/problem.ts caps every problem list centrally (issue 11 §1), the same values here;
// the lead unifies them. A list of 100 short problems says everything a person can act on.
/** At most this many problems are listed; past it the archive is plainly not ours, and reading stops. */
export const PROBLEM_LIST_MAX = 100;
/** At most this many characters per problem message (and per path): a user's value is quoted by a prefix only. */
export const PROBLEM_MESSAGE_MAX = 200;
const MANIFEST_MAX_BYTES = 64 * 1024 * 1024;
/**
 * The manifest names each other entry once (~140 bytes as exported, pretty-printed with one space);
 * 256 bytes per entry of the archive, plus room for the rest, bounds it before it is read whole.
 */
const MANIFEST_BYTES_PER_ENTRY = 256;
const MANIFEST_BASE_BYTES = 64 * 1024;
const ATTACHMENT_ENTRY = /^attachments\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
/** The folders of the layout (data/…, attachments/…): their directory entries are accepted when empty. */
export const ARCHIVE_DIRECTORIES: ReadonlySet<string> = new Set(["data/", "attachments/"]);
/** Data entries in dependency order (references point to earlier kinds). */
export const DATA_ORDER: Entity[] = [...ENTITIES];

/** What the preflight enforces beyond the ZIP structure: the same limits as the API. */
export interface ArchiveRules extends ZipLimits {
  /** APP_ATTACHMENT_MAX_BYTES: an attachment larger than an upload may be is refused. */
  attachmentMaxBytes: number;
  /** APP_ATTACHMENT_QUOTA_BYTES (null: none), and the bytes a user's attachments take now. */
  attachmentQuota: { bytes: number; usedBy(userId: string): number } | null;
}

export interface ValidArchive {
  manifest: Manifest;
  counts: Record<Entity, number>;
  entries: Map<string, ZipEntry>;
}

/** At most `max` characters: a longer text is cut, with an ellipsis. */
export function clip(s: string, max = PROBLEM_MESSAGE_MAX): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}\u2026`;
}


/**
 * Invalid records read before the preflight stops, in characters: a few large junk records (a
 * key of a million characters each) would otherwise cost up to PROBLEM_LIST_MAX × 1 Mi characters
 * of inflating and parsing before the list is full. The archive is refused either way.
 */
const INVALID_RECORDS_MAX_CHARS = 8 * 1024 * 1024;

/** Thrown through the reading of an entry when the problem list is full: nothing more is read. */
export class ProblemsFull extends Error {}

export class Problems {
  readonly list: FieldProblem[] = [];
  private invalidChars = 0;
  private stopped = false;
  add(path: string, message: string): void {
    if (this.list.length < PROBLEM_LIST_MAX) this.list.push({ path: clip(path), message: clip(message) });
  }
  get full(): boolean {
    return this.stopped || this.list.length >= PROBLEM_LIST_MAX;
  }
  /** Counts an invalid record's size; past the budget, reading stops (and says so). */
  invalidRecord(path: string, chars: number): void {
    this.invalidChars += chars;
    if (this.invalidChars > INVALID_RECORDS_MAX_CHARS && !this.stopped) {
      if (this.list.length >= PROBLEM_LIST_MAX) this.list.pop();
      this.add(path, `reading stopped: more than ${INVALID_RECORDS_MAX_CHARS} characters of invalid records`);
      this.stopped = true;
    }
  }
}

/**
 * Streams each record of one data entry, schema-checked, to `onRecord`; a bad record is a problem
 * (the rest are still read). Sync: the importing transaction uses it too.
 */
export function readRecords(
  zip: ZipFile,
  entry: ZipEntry,
  entity: Entity,
  problems: Problems,
  onRecord: (r: Record<string, unknown>, index: number) => void,
  garbagePerByte = 30,
): string {
  const schema = RECORD_SCHEMAS[entity];
  const splitter = new JsonArraySplitter(entry.name, (value, index, chars) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      for (const issue of parsed.error.issues.slice(0, 5)) {
        const sub = issue.path.map(String).join(".");
        problems.add(`${entry.name}[${index}]${sub ? `.${sub}` : ""}`, issue.code === "unrecognized_keys" ? unknownFields(issue.keys) : issue.message);
      }
      problems.invalidRecord(`${entry.name}[${index}]`, chars);
      // Lost already: the rest of the entry (maybe millions of records) is not read.
      if (problems.full) throw new ProblemsFull();
      return;
    }
    onRecord(parsed.data as Record<string, unknown>, index);
    if (problems.full) throw new ProblemsFull();
  }, undefined, garbagePerByte);
  const sha = inflateEntry(zip, entry, (chunk) => splitter.push(chunk));
  splitter.end();
  return sha;
}

/** "unknown field(s) …": a few names, each by a prefix. */
function unknownFields(keys: readonly string[]): string {
  const shown = keys.slice(0, 3).map((k) => quote(k));
  return `unknown field(s) ${shown.join(", ")}${keys.length > 3 ? ` and ${keys.length - 3} more` : ""}`;
}

/**
 * References to the user's own data (merge only), asked one id at a time: an archive referring
 * to a few of the user's records costs a few lookups, not a load of every row.
 */
class OwnData {
  constructor(
    private readonly merge: boolean,
    private readonly userId: string,
    private readonly c: Conn,
  ) {}
  folder = (id: string) => this.merge && isOwnFolder(this.c, id, this.userId);
  list = (id: string) => this.merge && isOwnList(this.c, id, this.userId);
  tag = (id: string) => this.merge && isOwnTag(this.c, id, this.userId);
  habit = (id: string) => this.merge && isOwnHabit(this.c, id, this.userId);
  countdown = (id: string) => this.merge && countdownOwner(this.c, id) === this.userId;
  /** An attachment a merge would not add: the user's own, or one an earlier merge imported (the ledger). */
  attachmentKnown = (id: string) => this.merge && (isOwnAttachment(this.c, id, this.userId) || ledgerLookup(this.c, this.userId, "attachments", id) !== null);
  /** The start_date of the user's habit with this id, or null. */
  habitStart(id: string): string | null {
    return this.merge ? ownHabitStart(this.c, id, this.userId) : null;
  }
  /** The kind of the user's recurrence with this id, or null. */
  recurrenceKind(id: string): string | null {
    return this.merge ? ownRecurrenceKind(this.c, id, this.userId) : null;
  }
  task(id: string): { listId: string; parentId: string | null } | null {
    return this.merge ? ownTaskPlace(this.c, id, this.userId) : null;
  }
}

/** What the business rules need of the records, kept compact (ids and references only). */
class Topology {
  folders = new Set<string>();
  lists = new Set<string>();
  inboxes: string[] = [];
  tags = new Set<string>();
  tagKeys = new Map<string, string>();
  /** Task id → index of its list in listOf (list ids interned: 100k tasks share a few lists). */
  tasks = new Map<string, number>();
  listIndex = new Map<string, number>();
  listOf: string[] = [];
  /** Flat pairs [subtask id, parent id, …]. */
  subtasks: string[] = [];
  /** Tasks that have subtasks. */
  parents = new Set<string>();
  recurrences = new Map<string, string>();
  recurrenceTasks = new Set<string>();
  exceptions = new Set<string>();
  /** A recurrence's `exceptions` as its record lists them (non-empty lists only), and as data/recurrence_exceptions.json holds them. */
  listedExceptions = new Map<string, string[]>();
  heldExceptions = new Map<string, Set<string>>();
  /** Habit id → its start_date (a log may not lie before it). */
  habits = new Map<string, string>();
  habitLogs = new Set<string>();
  pauses = new Set<string>();
  countdowns = new Set<string>();
  pinned = 0;
  memos = new Set<string>();
  /** Recurrences of kind after_completion (they have no occurrences to skip). */
  afterCompletion = new Set<string>();
  /** Per habit, its pauses (they may not overlap). */
  pausesOf = new Map<string, (PausePeriod & { path: string })[]>();
  /** Lunar countdowns, checked against the lunar calendar once it is loaded. */
  lunarCountdowns: { date: string; lunar: LunarFields | null; path: string }[] = [];
  attachments = new Map<string, { size: number; sha256: string; task: string; contentType: string; filename: string }>();
  listFolder: { id: string; folder: string; path: string }[] = [];
  recurrenceOf: { id: string; task: string; path: string }[] = [];
  exceptionOf: { rec: string; path: string }[] = [];
  logOf: { habit: string; path: string }[] = [];
  channels = new Set<string>();
  reminders = new Set<string>();
  /** Reminders' targets, checked once every kind is read. */
  reminderOf: { type: "task" | "habit" | "countdown"; id: string; path: string }[] = [];
}

/**
 * The whole preflight check of a staged archive: ZIP structure, manifest, checksums, every
 * record's schema, the business rules and the attachment bytes. Problems are listed up to
 * PROBLEM_LIST_MAX; reading stops there.
 */
export async function validateArchive(
  zip: ZipFile,
  limits: ArchiveRules,
  mode: Mode,
  userId: string,
  c: Conn,
): Promise<{ ok: true; archive: ValidArchive } | { ok: false; problems: FieldProblem[] }> {
  const problems = new Problems();
  try {
    return await validate(zip, limits, mode, userId, c, problems);
  } catch (e) {
    if (e instanceof ProblemsFull) return { ok: false, problems: problems.list };
    throw e;
  }
}

async function validate(
  zip: ZipFile,
  limits: ArchiveRules,
  mode: Mode,
  userId: string,
  c: Conn,
  problems: Problems,
): Promise<{ ok: true; archive: ValidArchive } | { ok: false; problems: FieldProblem[] }> {
  const zipProblems: ZipError[] = [];
  let entriesList: ZipEntry[];
  try {
    entriesList = readCentralDirectory(zip, limits, zipProblems);
  } catch (e) {
    if (e instanceof ZipError) {
      problems.add(e.path, e.message);
      return { ok: false, problems: problems.list };
    }
    throw e;
  }
  for (const p of zipProblems) problems.add(p.path, p.message);
  const entries = new Map(entriesList.map((e) => [e.name, e]));
  if (problems.full) return { ok: false, problems: problems.list };

  // No unexpected entries.
  for (const name of entries.keys()) {
    if (name === "manifest.json") continue;
    if (name.startsWith("data/") && (ENTITIES as readonly string[]).includes(name.slice(5, -5)) && name.endsWith(".json")) continue;
    if (ATTACHMENT_ENTRY.test(name)) continue;
    problems.add(name, "unexpected entry");
    if (problems.full) return { ok: false, problems: problems.list };
  }

  // The manifest.
  const me = entries.get("manifest.json");
  if (!me) {
    problems.add("manifest.json", "missing");
    return { ok: false, problems: problems.list };
  }
  let manifest: Manifest;
  /** The manifest's `entries`, by own key (a `__proto__` key is a name like any other). */
  const declaredEntries = new Map<string, ManifestEntry>();
  try {
    // Bounded before it is read whole: it names each other entry once.
    const maxBytes = Math.min(MANIFEST_MAX_BYTES, MANIFEST_BASE_BYTES + MANIFEST_BYTES_PER_ENTRY * entries.size);
    if (me.size > maxBytes) throw new ZipError("manifest.json", `too large: ${me.size} bytes for an archive of ${entries.size} entries (at most ${maxBytes})`);
    const parts: Uint8Array[] = [];
    // Copied: the reader hands out views of a buffer it reuses.
    inflateEntry(zip, me, (c) => parts.push(new Uint8Array(c)));
    let raw: unknown;
    try {
      const text = new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(parts));
      parts.length = 0;
      if (jsonNestingOver(text, MAX_JSON_DEPTH)) throw new ZipError("manifest.json", `nested deeper than ${MAX_JSON_DEPTH} levels`);
      raw = JSON.parse(text);
    } catch (e) {
      if (e instanceof ZipError) throw e;
      throw new ZipError("manifest.json", "not valid UTF-8 JSON");
    }
    const r = raw as { format?: unknown; version?: unknown; entries?: unknown } | null;
    if (!r || typeof r !== "object" || Array.isArray(r) || r.format !== "app-backup") throw new ZipError("manifest.json.format", "not an app-backup archive");
    if (r.version !== 2) {
      throw new ZipError(
        "manifest.json.version",
        typeof r.version === "number" && r.version > 2 ? `format version ${r.version} is newer than this server reads (2)` : `unsupported format version ${quote(String(r.version))}`,
      );
    }
    const rawEntries = r.entries;
    const parsed = Manifest.safeParse({ ...r, entries: {} });
    if (!parsed.success) {
      for (const issue of parsed.error.issues.slice(0, 20)) {
        problems.add(`manifest.json.${issue.path.map(String).join(".")}`, issue.code === "unrecognized_keys" ? unknownFields(issue.keys) : issue.message);
      }
    }
    if (!rawEntries || typeof rawEntries !== "object" || Array.isArray(rawEntries)) {
      problems.add("manifest.json.entries", "an object naming every other entry");
    } else {
      const names = Object.keys(rawEntries);
      if (names.length > entries.size) {
        problems.add("manifest.json.entries", `lists ${names.length} entries; the archive holds ${entries.size}`);
      } else {
        for (const name of names) {
          const v = ManifestEntry.safeParse((rawEntries as Record<string, unknown>)[name]);
          if (name.length > 300) problems.add(`manifest.json.entries.${name}`, "not an entry name (too long)");
          else if (!v.success) problems.add(`manifest.json.entries.${name}`, v.error.issues[0]!.message);
          else declaredEntries.set(name, v.data);
          if (problems.full) break;
        }
      }
    }
    if (!parsed.success || problems.list.length > 0) return { ok: false, problems: problems.list };
    manifest = { ...parsed.data, entries: Object.fromEntries(declaredEntries) };
  } catch (e) {
    if (e instanceof ZipError) {
      problems.add(e.path, e.message);
      return { ok: false, problems: problems.list };
    }
    throw e;
  }

  // Manifest entries ↔ archive entries.
  for (const [path, declared] of declaredEntries) {
    const e = entries.get(path);
    if (!e) problems.add(path, "listed in the manifest but missing from the archive");
    else if (e.size !== declared.size) problems.add(path, `size ${e.size} differs from the manifest's ${declared.size}`);
    if (problems.full) return { ok: false, problems: problems.list };
  }
  for (const name of entries.keys()) {
    if (name !== "manifest.json" && !declaredEntries.has(name)) problems.add(name, "not listed in the manifest");
  }

  const checkSha = (name: string, sha: string) => {
    const declared = declaredEntries.get(name);
    if (declared && declared.sha256 !== sha) problems.add(name, "SHA-256 differs from the manifest");
  };

  // Data entries: schema of every record, ids unique, counts.
  const topo = new Topology();
  const own = new OwnData(mode === "merge", userId, c);
  const counts = {} as Record<Entity, number>;
  for (const entity of DATA_ORDER) {
    const name = `data/${entity}.json`;
    const e = entries.get(name);
    counts[entity] = 0;
    if (!e) {
      if (!OPTIONAL_ENTITIES.includes(entity)) problems.add(name, "missing");
      continue;
    }
    try {
      const sha = readRecords(zip, e, entity, problems, (r, i) => {
        counts[entity]++;
        collect(topo, own, entity, r, `${name}[${i}]`, problems, limits);
      });
      checkSha(name, sha);
    } catch (err) {
      if (!(err instanceof ZipError)) throw err;
      problems.add(err.path, err.message);
    }
    await Bun.sleep(0);
    if (problems.full) return { ok: false, problems: problems.list };
  }
  for (const entity of ENTITIES) {
    const declared = manifest.counts[entity] ?? 0;
    if (declared !== counts[entity]) problems.add(`manifest.json.counts.${entity}`, `declares ${declared}, the archive holds ${counts[entity]}`);
  }

  // Lunar countdowns: their lunar month and day are those of their date (the calendar loads on first need).
  if (topo.lunarCountdowns.length > 0) {
    const lunar = await loadLunar();
    for (const c of topo.lunarCountdowns) {
      const p = lunarFieldsProblem(c.date, "lunar", c.lunar, lunar);
      if (p) problems.add(`${c.path}.lunar`, p);
    }
    topo.lunarCountdowns = [];
  }

  // Attachment bytes: checksums, they match their metadata, and the upload's allow-list decides
  // for them the type the metadata says.
  for (const [name, e] of entries) {
    const m = ATTACHMENT_ENTRY.exec(name);
    if (!m) continue;
    const meta = topo.attachments.get(m[1]!);
    if (!meta) problems.add(name, "bytes without attachment metadata");
    try {
      const check = meta ? new ContentTypeCheck(meta.contentType, meta.filename, (reason) => new ZipError(name, reason)) : null;
      const sha = inflateEntry(zip, e, (chunk) => check?.push(chunk));
      checkSha(name, sha);
      if (meta && meta.size !== e.size) problems.add(name, `size ${e.size} differs from the attachment's ${meta.size}`);
      if (meta && meta.sha256 !== sha) problems.add(name, "SHA-256 differs from the attachment's");
      const decided = check?.end();
      if (meta && decided && decided.contentType !== meta.contentType) {
        problems.add(`data/attachments.json#${m[1]!}.content_type`, `${quote(meta.contentType)} is not the type of these bytes (${decided.contentType})`);
      }
    } catch (err) {
      if (!(err instanceof ZipError)) throw err;
      problems.add(err.path, err.message);
    }
    await Bun.sleep(0);
    if (problems.full) return { ok: false, problems: problems.list };
  }
  for (const id of topo.attachments.keys()) {
    if (!entries.has(`attachments/${id}`)) problems.add(`attachments/${id}`, "attachment metadata without its bytes");
  }
  checkQuota(topo, own, mode, userId, limits, problems);

  checkRelations(topo, own, problems);
  if (problems.list.length > 0) return { ok: false, problems: problems.list };
  return { ok: true, archive: { manifest, counts, entries } };
}

/**
 * The upload's quota rule (attachments.quota.ts) for what the restore would add: replace, the
 * archive's attachments instead of yours; merge, the ones you do not have yet beside yours. The
 * restore checks it again, exactly, in its transaction (413 storage_quota_exceeded, as an upload).
 */
function checkQuota(t: Topology, own: OwnData, mode: Mode, userId: string, rules: ArchiveRules, problems: Problems): void {
  const quota = rules.attachmentQuota;
  if (quota === null || t.attachments.size === 0) return;
  let adding = 0;
  for (const [id, a] of t.attachments) if (mode === "replace" || !own.attachmentKnown(id)) adding += a.size;
  const used = mode === "replace" ? 0 : quota.usedBy(userId);
  if (!exceedsQuota(quota.bytes, used, adding)) return;
  const beside = mode === "replace" ? "in place of yours" : `beside the ${used} bytes yours take`;
  problems.add("data/attachments.json", `the attachments would take ${used + adding} bytes (${adding} ${beside}); your attachment quota is ${quota.bytes} bytes (APP_ATTACHMENT_QUOTA_BYTES)`);
}

function collect(t: Topology, own: OwnData, entity: Entity, r: Record<string, unknown>, path: string, problems: Problems, rules: ArchiveRules): void {
  const id = r.id as string;
  const dup = (set: { has(k: string): boolean }, key: string) => {
    if (set.has(key)) {
      problems.add(path, `duplicate ${entity} identifier ${key}`);
      return true;
    }
    return false;
  };
  switch (entity) {
    case "folders":
      if (!dup(t.folders, id)) t.folders.add(id);
      return;
    case "lists":
      if (dup(t.lists, id)) return;
      t.lists.add(id);
      if (r.is_inbox) t.inboxes.push(id);
      if (r.folder_id) t.listFolder.push({ id, folder: r.folder_id as string, path: `${path}.folder_id` });
      return;
    case "tags": {
      if (dup(t.tags, id)) return;
      t.tags.add(id);
      const key = tagNameKey(r.name as string);
      if (t.tagKeys.has(key)) problems.add(`${path}.name`, "tag names must be unique (case-insensitive)");
      t.tagKeys.set(key, id);
      return;
    }
    case "tasks": {
      if (dup(t.tasks, id)) return;
      // Lists and tags come before tasks in the archive: their references are checked here.
      const list = r.list_id as string;
      if (!t.lists.has(list) && !own.list(list)) problems.add(`${path}.list_id`, `list ${list} does not exist`);
      const tags = r.tag_ids as string[];
      if (new Set(tags).size !== tags.length) problems.add(`${path}.tag_ids`, "duplicate tag id");
      for (const tag of tags) if (!t.tags.has(tag) && !own.tag(tag)) problems.add(`${path}.tag_ids`, `tag ${tag} does not exist`);
      let li = t.listIndex.get(list);
      if (li === undefined) {
        li = t.listOf.length;
        t.listOf.push(list);
        t.listIndex.set(list, li);
      }
      t.tasks.set(id, li);
      const parent = r.parent_id as string | null;
      if (parent !== null) {
        t.subtasks.push(id, parent);
        t.parents.add(parent);
      }
      if (r.completed === false && r.completed_at !== null) problems.add(`${path}.completed_at`, "set on a task that is not completed");
      return;
    }
    case "recurrences":
      if (dup(t.recurrences, id)) return;
      t.recurrences.set(id, r.task_id as string);
      if (r.kind === "after_completion") t.afterCompletion.add(id);
      else {
        // The API's check of a schedule about to be stored: it runs from its first occurrence.
        const check = checkSchedule(r.rrule as string, r.dtstart as string, r.timezone as string);
        if (!check.ok) problems.add(`${path}.rrule`, check.message);
      }
      if ((r.exceptions as string[]).length > 0) t.listedExceptions.set(id, r.exceptions as string[]);
      t.recurrenceOf.push({ id, task: r.task_id as string, path: `${path}.task_id` });
      return;
    case "recurrence_exceptions": {
      const key = `${r.recurrence_id as string}:${r.date as string}`;
      if (!dup(t.exceptions, key)) t.exceptions.add(key);
      const held = t.heldExceptions.get(r.recurrence_id as string);
      if (held) held.add(r.date as string);
      else t.heldExceptions.set(r.recurrence_id as string, new Set([r.date as string]));
      t.exceptionOf.push({ rec: r.recurrence_id as string, path: `${path}.recurrence_id` });
      return;
    }
    case "habits":
      if (!dup(t.habits, id)) t.habits.set(id, r.start_date as string);
      return;
    case "habit_logs": {
      const habit = r.habit_id as string;
      const key = `${habit}:${r.date as string}`;
      if (!dup(t.habitLogs, key)) t.habitLogs.add(key);
      t.logOf.push({ habit, path: `${path}.habit_id` });
      // The API's rule (habits come before their logs in the archive; merge: or the user's own habit).
      const start = t.habits.get(habit) ?? own.habitStart(habit);
      const beforeStart = start === null ? null : logBeforeStartProblem(r.date as string, start);
      if (beforeStart) problems.add(`${path}.date`, beforeStart);
      return;
    }
    case "habit_pauses": {
      if (dup(t.pauses, id)) return;
      t.pauses.add(id);
      t.logOf.push({ habit: r.habit_id as string, path: `${path}.habit_id` });
      // Checked for overlaps once all are read (checkRelations).
      const habit = r.habit_id as string;
      const pause = { id, startDate: r.start_date as string, endDate: r.end_date as string | null, path };
      const others = t.pausesOf.get(habit);
      if (others) others.push(pause);
      else t.pausesOf.set(habit, [pause]);
      return;
    }
    case "countdowns":
      if (dup(t.countdowns, id)) return;
      t.countdowns.add(id);
      if (r.calendar === "lunar") t.lunarCountdowns.push({ date: r.date as string, lunar: r.lunar as LunarFields | null, path });
      else {
        const p = lunarFieldsProblem(r.date as string, "gregorian", r.lunar as LunarFields | null, null);
        if (p) problems.add(`${path}.lunar`, p);
      }
      if (r.pinned) {
        t.pinned++;
        if (t.pinned > 1) problems.add(`${path}.pinned`, "at most one countdown may be pinned");
      }
      return;
    case "memos":
      if (!dup(t.memos, id)) t.memos.add(id);
      return;
    case "attachments":
      if (dup(t.attachments, id)) return;
      // The upload's limit (413 there).
      if ((r.size as number) > rules.attachmentMaxBytes) problems.add(`${path}.size`, `larger than an attachment may be (${rules.attachmentMaxBytes} bytes, APP_ATTACHMENT_MAX_BYTES)`);
      t.attachments.set(id, { size: r.size as number, sha256: r.sha256 as string, task: r.task_id as string, contentType: r.content_type as string, filename: r.filename as string });
      return;
    case "notification_channels":
      if (!dup(t.channels, id)) t.channels.add(id);
      return;
    case "reminders": {
      if (dup(t.reminders, id)) return;
      t.reminders.add(id);
      const target = r.target as { type: "task" | "habit" | "countdown"; id: string };
      t.reminderOf.push({ type: target.type, id: target.id, path: `${path}.target.id` });
      return;
    }
  }
}

/** References resolve inside the archive (or, for merge, to the user's own data); the one-level task tree. */
function checkRelations(t: Topology, own: OwnData, problems: Problems): void {
  if (t.inboxes.length > 1) problems.add("data/lists.json", "more than one system inbox");
  for (const l of t.listFolder) if (!t.folders.has(l.folder) && !own.folder(l.folder)) problems.add(l.path, `folder ${l.folder} does not exist`);

  /** Subtask id → its parent's id. */
  const subIds = new Map<string, string>();
  for (let i = 0; i < t.subtasks.length; i += 2) subIds.set(t.subtasks[i]!, t.subtasks[i + 1]!);
  for (let i = 0; i < t.subtasks.length; i += 2) {
    const id = t.subtasks[i]!;
    const parent = t.subtasks[i + 1]!;
    const path = `data/tasks.json#${id}.parent_id`;
    const list = t.listOf[t.tasks.get(id)!];
    let parentList: string | undefined;
    let parentIsSub = false;
    const pli = t.tasks.get(parent);
    if (pli !== undefined) {
      parentList = t.listOf[pli];
      parentIsSub = subIds.has(parent);
    } else {
      const o = own.task(parent);
      if (o) {
        parentList = o.listId;
        parentIsSub = o.parentId !== null;
      }
    }
    if (parentList === undefined) problems.add(path, `task ${parent} does not exist`);
    else if (parent === id) problems.add(path, "a task cannot be its own parent");
    else if (parentIsSub) problems.add(path, "subtasks nest one level only (the parent is itself a subtask)");
    else if (parentList !== list) problems.add(path, "a subtask must be in its parent's list");
    if (t.parents.has(id)) problems.add(path, "a task with subtasks cannot be a subtask");
    if (i % 2048 === 0 && problems.full) return;
  }
  /** The task's parent id (null: top-level), or undefined when there is no such task. */
  const parentOf = (task: string): string | null | undefined => {
    if (t.tasks.has(task)) return subIds.get(task) ?? null;
    return own.task(task)?.parentId;
  };
  for (const r of t.recurrenceOf) {
    const parent = parentOf(r.task);
    const onSubtask = parent === undefined ? null : recurrenceOnSubtaskProblem(parent);
    if (parent === undefined) problems.add(r.path, `task ${r.task} does not exist`);
    else if (onSubtask) problems.add(r.path, onSubtask);
    if (t.recurrenceTasks.has(r.task)) problems.add(r.path, "one recurrence per task");
    t.recurrenceTasks.add(r.task);
  }
  // A recurrence's `exceptions` (the API's field) and data/recurrence_exceptions.json say the same.
  const exceptionsAgree = (rec: string) => {
    const listed = t.listedExceptions.get(rec) ?? [];
    const held = t.heldExceptions.get(rec) ?? new Set<string>();
    const path = `data/recurrences.json#${rec}.exceptions`;
    const notHeld = listed.filter((d) => !held.has(d));
    const listedSet = new Set(listed);
    const notListed = [...held].filter((d) => !listedSet.has(d)).sort();
    if (notHeld.length > 0) problems.add(path, `lists ${notHeld.slice(0, 5).join(", ")}, not in data/recurrence_exceptions.json`);
    if (notListed.length > 0) problems.add(path, `leaves out ${notListed.slice(0, 5).join(", ")}, which data/recurrence_exceptions.json holds`);
  };
  for (const rec of t.listedExceptions.keys()) exceptionsAgree(rec);
  for (const rec of t.heldExceptions.keys()) if (t.recurrences.has(rec) && !t.listedExceptions.has(rec)) exceptionsAgree(rec);
  for (const e of t.exceptionOf) {
    const kind = t.recurrences.has(e.rec) ? (t.afterCompletion.has(e.rec) ? "after_completion" : "rrule") : own.recurrenceKind(e.rec);
    if (kind === null) problems.add(e.path, `recurrence ${e.rec} does not exist`);
    else if (kind !== "rrule") problems.add(e.path, "only an rrule recurrence has occurrences to skip");
  }
  for (const l of t.logOf) if (!t.habits.has(l.habit) && !own.habit(l.habit)) problems.add(l.path, `habit ${l.habit} does not exist`);
  // The API's rule: the pauses of one habit never overlap. In start order, a pause overlaps an
  // earlier one exactly when it overlaps the earlier one that ends last (n log n, not n²).
  for (const pauses of t.pausesOf.values()) {
    pauses.sort((a, b) => (a.startDate < b.startDate ? -1 : a.startDate > b.startDate ? 1 : 0));
    let latest = pauses[0]!;
    for (let i = 1; i < pauses.length; i++) {
      const p = pauses[i]!;
      const other = overlappingPause([latest], p.startDate, p.endDate, null);
      if (other) problems.add(`${p.path}.start_date`, `${overlapMessage(other)} (${other.path})`);
      if (latest.endDate !== null && (p.endDate === null || p.endDate > latest.endDate)) latest = p;
    }
    if (problems.full) return;
  }
  for (const [id, a] of t.attachments) {
    if (parentOf(a.task) === undefined) problems.add(`data/attachments.json#${id}.task_id`, `task ${a.task} does not exist`);
  }
  // A reminder's target is in the archive (or, for merge, the user's own).
  for (const r of t.reminderOf) {
    const exists = r.type === "task" ? parentOf(r.id) !== undefined : r.type === "habit" ? t.habits.has(r.id) || own.habit(r.id) : t.countdowns.has(r.id) || own.countdown(r.id);
    if (!exists) problems.add(r.path, `${r.type} ${r.id} does not exist`);
  }
}
