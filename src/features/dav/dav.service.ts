import ICAL from "ical.js";
import type { Core } from "../../core/core";
import { readTx, writeTx, type Conn } from "../../core/db";
import { AppError } from "../../core/errors";
import { failpoint } from "../../core/failpoint";
import type { AuthUser } from "../../core/auth/principal";
import type { TasksService } from "../tasks/tasks.service";
import type { ListsService } from "../lists/lists.service";
import type { TagsService } from "../tags/tags.service";
import type { RecurrenceService } from "../recurrence/recurrence.service";
import type { RemindersService } from "../reminders/reminders.service";
import { remindersOfTargets } from "../reminders/reminders.repo";
import type { z } from "zod";
import { TaskCreate, TaskPatch } from "../tasks/tasks.schemas";
import { TagCreate } from "../tags/tags.schemas";
import { ListCreate, ListPatch } from "../lists/lists.schemas";
import { RecurrenceCreate, RecurrencePatch } from "../recurrence/recurrence.schemas";
import { listLists, type ListView } from "../lists/lists.repo";
import { canEdit, type ListRole } from "../lists/lists.access";
import { tagsAt } from "../tasks/tasks.repo";
import { rruleRecurrencesInLists, findRecurrenceOfTask, listExceptions, type RecurrenceRecord } from "../recurrence/recurrence.repo";
import { parseRRule, seriesFor, type Series } from "../recurrence/recurrence.engine";
import { isDateOnly } from "../../core/time";
import { laterInstances, type LaterInstances } from "./dav.instances";
// The one VTODO mapping, shared with the .ics importer (an allowed exception in .dependency-cruiser.cjs).
import { REMINDER_MARK, dropKeptAlarms, dropKeptExdates, exdatesOf, dropKeptParent, keptParentIs, keepRrule, readCalendarObject, reminderTrigger, sortOrderOfRank, taskToCalendarObject, vtodoToTask, type ReminderForVtodo, type VtodoTask } from "../../transfer/import/vtodo.mapping";
import {
  DAV_TOMBSTONE_DAYS,
  changedSince,
  collectionNames,
  dueOfTask,
  objectsMentioning,
  rankOf,
  siblingsInOrder,
  collectionSeq,
  insertCollectionName,
  listIdByCollectionName,
  currentSeq,
  floorOf,
  liveTaskIdsByUid,
  liveTasksIn,
  liveTasksOfList,
  memberSeqs,
  objectsOf,
  pruneTombstones,
  renameObject,
  taskIdByName,
  upsertObject,
  type DavObject,
  type MemberTask,
} from "./dav.repo";
import { yieldToRequests } from "../../core/yield";

/**
 * CalDAV's use cases over lists and tasks (RFC 4791, RFC 6578), without HTTP: a visible list is
 * a VTODO collection, each live task of it (subtasks and completed ones too) a resource. Writes go
 * through the tasks, tags, recurrence, reminders and lists services, so their rules, events and
 * audit stay in one place; a write made of several of their use cases is one transaction around
 * them (core/db.ts: theirs join it as savepoints, their events wait for its commit). The sync
 * state (tokens, ETags, tombstones) is the log in dav.repo.ts, written by triggers on every change
 * whatever made it.
 */

/** Why a CalDAV request is refused, in the protocol's terms (dav.routes.ts turns it into HTTP). */
export type DavRefusalKind =
  | "not-found"
  | "forbidden"
  | "conflict"
  | "precondition-failed"
  | "valid-sync-token"
  | "number-of-matches-within-limits"
  | "no-uid-conflict"
  | "valid-calendar-data"
  | "supported-calendar-component"
  | "valid-calendar-object-resource";

export class DavRefusal extends Error {
  constructor(
    readonly kind: DavRefusalKind,
    detail: string,
    /** For no-uid-conflict: where the UID already lives. */
    readonly href?: { segment: string; name: string },
  ) {
    super(detail);
  }
}

export interface Collection {
  id: string;
  /** Its path segment below the home: the name its client chose (MKCALENDAR), else the list id. */
  segment: string;
  name: string;
  color: string | null;
  role: ListRole;
  isInbox: boolean;
  ownerUsername: string;
  /** Sync token and CTag (the same string). */
  token: string;
}

export interface Resource {
  taskId: string;
  name: string;
  etag: string;
  /** The iCalendar object, when asked for (`withData`), once DavService.fill has built it. */
  ics?: string;
  /** For time-range filters: the due (YYYY-MM-DD or UTC instant) and completion. */
  dueAt: string | null;
  completedAt: string | null;
  createdAt: string;
  /** A repeating task's instances after its current due, when asked for (calendar-query's time-range). */
  later?: LaterInstances;
}

/** A resource's iCalendar object, read and not yet built (DavService.fill builds it). */
const PENDING = new WeakMap<Resource, () => string>();
/** Objects built between two turns of other requests (DavService.fill). */
export const FILL_SLICE = 50;

export interface SyncResult {
  changed: Resource[];
  removed: string[];
  token: string;
  /** More changes wait (a `limit` was reached): the client syncs again from `token`. */
  truncated: boolean;
}

/** Sync tokens are URIs (RFC 6578 §3.2), host-independent so a LAN and a public name share them. */
const TOKEN_BASE = "https://app.invalid/ns/sync/";
const tokenOf = (listId: string, seq: number) => `${TOKEN_BASE}${listId}/${seq}`;
/** Bumped when the serialisation changes, so every ETag changes with it. */
const RENDER_VERSION = 3;
const etagOf = (seq: number) => `"${seq}-${RENDER_VERSION}"`;
const PRUNE_EVERY_MS = 60 * 60 * 1000;

export class DavService {
  private lastPrune = 0;

  constructor(
    private readonly core: Core,
    private readonly tasks: TasksService,
    private readonly lists: ListsService,
    private readonly tags: TagsService,
    private readonly recurrence: RecurrenceService,
    private readonly reminders: RemindersService,
  ) {}

  // ---- collections -------------------------------------------------------------------------

  /** Every active list the user can see (own, inbox, shared with them), as collections. */
  collections(user: AuthUser): Collection[] {
    return readTx(this.core.db, (c) => {
      const ls = listLists(c, user.id, false);
      const names = collectionNames(c, ls.map((l) => l.id));
      return ls.map((l) => this.toCollection(c, l, names.get(l.id)));
    });
  }

  /** The active list as a collection, or not-found (another user's, archived, gone, or a name that is no list). */
  collection(user: AuthUser, segment: string): Collection {
    return readTx(this.core.db, (c) => this.collectionIn(c, user, segment));
  }

  private collectionIn(c: Conn, user: AuthUser, segment: string): Collection {
    const listId = listIdByCollectionName(c, segment) ?? segment;
    const l = listLists(c, user.id, false).find((x) => x.id === listId);
    if (!l) throw new DavRefusal("not-found", "no such collection");
    return this.toCollection(c, l, collectionNames(c, [l.id]).get(l.id));
  }

  private toCollection(c: Conn, l: ListView, segment: string | undefined): Collection {
    return { id: l.id, segment: segment ?? l.id, name: l.name, color: l.color, role: l.role, isInbox: l.isInbox, ownerUsername: l.owner.username, token: tokenOf(l.id, collectionSeq(c, l.id)) };
  }

  /** MKCALENDAR / Extended MKCOL: a new list (the client's path segment is not kept: the list is named by its id). */
  createCollection(user: AuthUser, segment: string, p: { displayName: string | null; color: string | null }): Collection {
    // One transaction: the list and the client's name for it (a list without it would answer 404 at the client's path).
    return writeTx(this.core.db, (tx) => {
      const taken = listIdByCollectionName(tx, segment) !== null || listLists(tx, user.id, true).concat(listLists(tx, user.id, false)).some((l) => l.id === segment);
      if (taken) throw new DavRefusal("precondition-failed", "a collection exists at this path");
      const name = (p.displayName ?? "").trim() || "Tasks";
      const color = normaliseColor(p.color);
      const l = this.wrap(() => this.lists.create(user.id, valid(ListCreate, { name: name.slice(0, 100), ...(color ? { color } : {}) })));
      if (segment !== l.id) insertCollectionName(tx, l.id, user.id, segment);
      failpoint("dav.mkcalendar.before_commit");
      return this.collectionIn(tx, user, segment);
    });
  }

  /** PROPPATCH displayname / calendar-color: the owner's act (a member's is forbidden per property). */
  updateCollection(user: AuthUser, segment: string, p: { displayName?: string; color?: string | null }): void {
    const col = this.collection(user, segment);
    if (col.role !== "owner") throw new DavRefusal("forbidden", "only the list's owner may rename or recolour it");
    const patch: { name?: string; color?: string | null } = {};
    if (p.displayName !== undefined && !col.isInbox) patch.name = p.displayName.trim().slice(0, 100) || col.name;
    if (p.color !== undefined) patch.color = normaliseColor(p.color);
    if (Object.keys(patch).length) this.wrap(() => this.lists.update(user.id, col.id, valid(ListPatch, patch)));
  }

  /** DELETE of a collection: the list goes to the trash (archived), as DELETE /lists/{id} does. */
  deleteCollection(user: AuthUser, segment: string): void {
    const col = this.collection(user, segment);
    if (col.role !== "owner") throw new DavRefusal("forbidden", "only the list's owner may delete it");
    if (col.isInbox) throw new DavRefusal("forbidden", "the inbox cannot be deleted");
    this.wrap(() => this.lists.archive(user.id, col.id));
  }

  // ---- members -----------------------------------------------------------------------------

  /**
   * Every member with its ETag (and its iCalendar when `withData`; a repeating task's later
   * instances when `instances`: one query for the list's rules, the exceptions of the dated ones).
   */
  members(user: AuthUser, segment: string, withData: boolean, instances = false): Resource[] {
    return readTx(this.core.db, (c) => {
      const listId = this.collectionIn(c, user, segment).id;
      const out = this.render(c, user, listId, liveTasksOfList(c, listId), withData);
      if (instances) {
        const byTask = new Map(out.map((r) => [r.taskId, r]));
        for (const rec of rruleRecurrencesInLists(c, [listId])) {
          const r = byTask.get(rec.task_id);
          if (r?.dueAt) r.later = laterInstances(rec, r.dueAt, listExceptions(c, rec.id)) ?? undefined;
        }
      }
      return out;
    });
  }

  /** The named members (calendar-multiget); a name that is no member is absent from the map. */
  membersByName(user: AuthUser, segment: string, names: string[], withData: boolean): Map<string, Resource> {
    return readTx(this.core.db, (c) => {
      const listId = this.collectionIn(c, user, segment).id;
      const ids = new Map<string, string>();
      for (const n of names) {
        const id = taskIdByName(c, listId, n);
        if (id) ids.set(id, n);
      }
      const out = new Map<string, Resource>();
      for (const r of this.render(c, user, listId, liveTasksIn(c, listId, [...ids.keys()]), withData)) out.set(r.name, r);
      return out;
    });
  }

  /** GET / HEAD of one resource, with its iCalendar object. */
  async member(user: AuthUser, segment: string, name: string): Promise<Resource> {
    const r = this.membersByName(user, segment, [name], true).get(name);
    if (!r) throw new DavRefusal("not-found", "no such resource");
    return (await this.fill([r]))[0]!;
  }

  /**
   * The iCalendar objects of resources read with data (`withData`), built outside the read and in
   * slices: building one costs ~0.1 ms, so a REPORT over a 5,000-task list would hold every other
   * request for half a second; other requests get their turn every FILL_SLICE objects. Each route
   * that asked for data awaits this before it reads `ics`.
   */
  async fill<T extends Resource>(resources: Iterable<T>): Promise<T[]> {
    const out = [...resources];
    let built = 0;
    for (const r of out) {
      const make = PENDING.get(r);
      if (make === undefined) continue;
      if (built > 0 && built % FILL_SLICE === 0) await yieldToRequests();
      r.ics = make();
      PENDING.delete(r);
      built++;
    }
    return out;
  }

  private render(c: Conn, user: AuthUser, listId: string, rows: MemberTask[], withData: boolean, known?: Map<string, number>): Resource[] {
    const ids = rows.map((r) => r.id);
    const seqs = known ?? memberSeqs(c, listId, ids);
    const objects = objectsOf(c, ids);
    const out: Resource[] = [];
    let tags: Map<string, string[]> | null = null;
    let rules: Map<string, { rrule: string; timezone: string; exdates: string[] }> | null = null;
    let parents: Map<string, DavObject> | null = null;
    let alarms: Map<string, ReminderForVtodo[]> | null = null;
    if (withData) {
      alarms = new Map();
      // Reminders are personal: each user's own, as VALARMs in what that user is sent.
      for (const r of remindersOfTargets(c, "task", ids)) {
        if (r.user_id !== user.id || (r.kind !== "before_due" && r.kind !== "at")) continue;
        const l = alarms.get(r.target_id) ?? [];
        l.push({ id: r.id, kind: r.kind, minutesBefore: r.minutes_before, at: r.at });
        alarms.set(r.target_id, l);
      }
      tags = new Map();
      for (const t of tagsAt(c, ids, user.id)) {
        const id = ids[t.at]!;
        const l = tags.get(id) ?? [];
        l.push(t.name);
        tags.set(id, l);
      }
      const dues = new Map(rows.map((r) => [r.id, r.due_at]));
      rules = new Map(
        rruleRecurrencesInLists(c, [listId])
          .filter((r) => r.rrule && dues.has(r.task_id))
          .map((r) => [r.task_id, { rrule: r.rrule!, timezone: r.timezone, exdates: exceptionDeadlines(c, r, dues.get(r.task_id) ?? null) }]),
      );
      parents = objectsOf(c, [...new Set(rows.map((r) => r.parent_id).filter((p): p is string => p !== null))]);
    }
    for (const t of rows) {
      const o = objects.get(t.id);
      const res: Resource = { taskId: t.id, name: o?.name ?? `${t.id}.ics`, etag: etagOf(seqs.get(t.id) ?? 0), dueAt: t.due_at, completedAt: t.completed_at, createdAt: t.created_at };
      if (withData) {
        const rule = rules!.get(t.id);
        const build = (kept: string) => taskToCalendarObject(
          {
            id: t.id,
            title: t.title,
            description: t.description,
            dueAt: t.due_at,
            priority: t.priority,
            completed: t.completed === 1,
            completedAt: t.completed_at,
            createdAt: t.created_at,
            updatedAt: t.updated_at,
            tags: tags!.get(t.id) ?? [],
            parentId: t.parent_id,
            parentUid: t.parent_id === null ? null : (parents!.get(t.parent_id)?.uid ?? t.parent_id),
            rrule: rule?.rrule ?? null,
            timezone: rule?.timezone ?? null,
            uid: o?.uid ?? t.id,
            sortOrder: sortOrderOfRank(t.rank),
            exdates: rule?.exdates ?? [],
          },
          kept,
          { reminders: alarms!.get(t.id) ?? [], reminderTime: user.reminderTime ?? "09:00" },
        );
        // Built later, out of the read (fill): what it needs was read here, in this snapshot.
        // One object that cannot be rebuilt with what its client kept must not fail the whole REPORT
        // (Vikunja #384: one odd task stopped iOS syncing): it is sent without the kept part, and logged.
        PENDING.set(res, () => {
          try {
            return build(o?.extra ?? "");
          } catch (e) {
            this.core.logger.error("dav: kept properties of a task could not be merged", { task_id: t.id, error: String(e) });
            return build("");
          }
        });
      }
      out.push(res);
    }
    return out;
  }

  // ---- sync-collection ---------------------------------------------------------------------

  /**
   * RFC 6578: what changed in the collection since `token` (null: everything). A token of another
   * collection, from the future (a restored database), malformed, or older than the list's
   * tombstone floor is refused with valid-sync-token, and the client starts over.
   */
  sync(user: AuthUser, segment: string, token: string | null, withData: boolean, limit: number | null = null): SyncResult {
    this.pruneNowAndThen();
    return readTx(this.core.db, (c) => {
      const col = this.collectionIn(c, user, segment);
      const listId = col.id;
      let log: { task_id: string; seq: number }[];
      // The initial sync reads the list's live tasks and their seqs once (not again below).
      let initial: { tasks: Map<string, MemberTask>; seqs: Map<string, number> } | null = null;
      if (token === null || token === "") {
        const all = liveTasksOfList(c, listId);
        const seqs = memberSeqs(c, listId, all.map((t) => t.id));
        initial = { tasks: new Map(all.map((t) => [t.id, t])), seqs };
        log = all.map((t) => ({ task_id: t.id, seq: seqs.get(t.id) ?? 0 })).sort((a, b) => a.seq - b.seq);
      } else log = changedSince(c, listId, this.parseToken(c, listId, token));
      let next = col.token;
      let truncated = false;
      // RFC 6578 §3.7: at most `limit` answers; cut at a change boundary so the token given back
      // covers exactly what was sent (the client asks again from there).
      if (limit !== null && log.length > limit) {
        let n = limit;
        while (n > 0 && log[n - 1]!.seq === log[n]!.seq) n--;
        if (n === 0) throw new DavRefusal("number-of-matches-within-limits", "more changes share one step than the limit allows");
        log = log.slice(0, n);
        next = tokenOf(listId, log[n - 1]!.seq);
        truncated = true;
      }
      const live = initial ? log.map((r) => initial.tasks.get(r.task_id)!) : liveTasksIn(c, listId, log.map((r) => r.task_id));
      const liveIds = new Set(live.map((t) => t.id));
      const gone = log.map((r) => r.task_id).filter((id) => !liveIds.has(id));
      const names = objectsOf(c, gone);
      const changed = this.render(c, user, listId, live, withData, initial?.seqs);
      // A name a member has now (a renamed resource's old name taken again, a trashed task's name
      // reused) is that member's: never also answered 404, which a client may apply after the 200.
      // Two that left under one name (a task replaced by a MOVE, then the mover moved on) are one href.
      const taken = new Set(changed.map((r) => r.name));
      const removed = [...new Set(gone.map((id) => names.get(id)?.name ?? `${id}.ics`))].filter((n) => !taken.has(n));
      return { changed, removed, token: next, truncated };
    });
  }

  private parseToken(c: Conn, listId: string, token: string): number {
    const m = token.startsWith(TOKEN_BASE) ? /^([^/]{1,64})\/(\d{1,15})$/.exec(token.slice(TOKEN_BASE.length)) : null;
    const seq = m ? Number(m[2]) : NaN;
    if (!m || m[1] !== listId || !(seq <= currentSeq(c)) || seq < floorOf(c, listId)) {
      throw new DavRefusal("valid-sync-token", "the sync token is unknown, of another collection, or too old: sync again from the start");
    }
    return seq;
  }

  private pruneNowAndThen(): void {
    const now = this.core.clock.now().getTime();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    writeTx(this.core.db, (tx) => pruneTombstones(tx, Math.floor(now / 1000) - DAV_TOMBSTONE_DAYS * 86_400));
  }

  // ---- writes --------------------------------------------------------------------------------

  /**
   * PUT of a resource: creates or updates the task through the services. Preconditions first:
   * `If-None-Match: *` on an existing resource and a stale `If-Match` are 412 and change nothing;
   * a UID the user already has under another name or list is no-uid-conflict (never a second task).
   *
   * One transaction: every service's use case it calls (tags, the task, its move, repeat, skipped
   * dates, order, alarms, the resource row, adopted children) joins it (core/db.ts writeTx), so a
   * refusal or a crash anywhere leaves nothing of the PUT, and its events reach the streams only
   * after the commit. A service's refusal the PUT recovers from (a rule kept verbatim) is rolled
   * back to its savepoint alone.
   */
  put(user: AuthUser, segment: string, name: string, body: string, cond: { ifMatch: string[] | null; ifNoneMatchAny: boolean }): { created: boolean } {
    return writeTx(this.core.db, () => {
      const r = this.putInTx(user, segment, name, body, cond);
      failpoint("dav.put.before_commit");
      return r;
    });
  }

  private putInTx(user: AuthUser, segment: string, name: string, body: string, cond: { ifMatch: string[] | null; ifNoneMatchAny: boolean }): { created: boolean } {
    const col = this.collection(user, segment);
    const listId = col.id;
    if (!canEdit(col.role)) throw new DavRefusal("forbidden", "a viewer of a shared list cannot change it");
    const obj = readCalendarObject(body);
    if ("refuse" in obj) {
      const kind = obj.refuse === "not-icalendar" ? "valid-calendar-data" : obj.refuse === "not-vtodo" ? "supported-calendar-component" : "valid-calendar-object-resource";
      throw new DavRefusal(kind, obj.detail);
    }
    const { existing, etag, sameUid } = readTx(this.core.db, (c) => {
      const id = taskIdByName(c, listId, name);
      const e = id ? this.render(c, user, listId, liveTasksIn(c, listId, [id]), false)[0] : undefined;
      const holders = liveTaskIdsByUid(c, null, obj.uid).filter((h) => h.id !== id);
      const visible = new Map(listLists(c, user.id, false).map((l) => [l.id, l.role]));
      const other = holders.find((h) => visible.has(h.list_id)) ?? null;
      const otherRole = other ? visible.get(other.list_id)! : null;
      const otherName = other ? (objectsOf(c, [other.id]).get(other.id)?.name ?? `${other.id}.ics`) : null;
      const ownUid = id ? (objectsOf(c, [id]).get(id)?.uid ?? id) : null;
      const otherSegment = other ? (collectionNames(c, [other.list_id]).get(other.list_id) ?? other.list_id) : null;
      return { existing: id, etag: e?.etag ?? null, sameUid: { other, otherName, otherSegment, otherRole, ownUid } };
    });
    if (cond.ifNoneMatchAny && existing) throw new DavRefusal("precondition-failed", "the resource exists (If-None-Match: *)");
    if (cond.ifMatch !== null && (existing === null || !(cond.ifMatch.includes("*") || cond.ifMatch.includes(etag!)))) {
      throw new DavRefusal("precondition-failed", "the resource changed since (If-Match)");
    }
    // iOS moves a reminder to another list by PUTting it (same UID, same name) into the target after
    // a MOVE failed (owncloud/core#23829): when the UID lives under that name in another list the
    // user may edit, the task moves here. RFC 4791 §5.3.2.1's no-uid-conflict is about the target
    // collection; a UID under another name (here or elsewhere) is still one.
    const moveFrom = sameUid.other && existing === null && sameUid.other.list_id !== listId && sameUid.otherName === name && canEdit(sameUid.otherRole) ? sameUid.other.id : null;
    if (sameUid.other && moveFrom === null) throw new DavRefusal("no-uid-conflict", "a task with this UID already exists", { segment: sameUid.otherSegment!, name: sameUid.otherName! });
    if (existing && sameUid.ownUid !== obj.uid) throw new DavRefusal("valid-calendar-object-resource", "the UID of an existing resource cannot change");

    let vt: VtodoTask;
    try {
      vt = vtodoToTask(obj.master, user.timezone, user.reminderTime ?? "09:00");
      // Values ical.js reads lazily (RRULE parts, durations): read them now, while a refusal is still clean.
      obj.master.getAllProperties().forEach((p) => p.getValues().map(String));
      obj.master.getAllSubcomponents().forEach((sub) => sub.getAllProperties().forEach((p) => p.getValues().map(String)));
    } catch (e) {
      if (e instanceof DavRefusal) throw e;
      throw new DavRefusal("valid-calendar-data", `a value is not of its type: ${String((e as Error).message).slice(0, 120)}`);
    }
    if (!vt.title.trim()) vt.title = "Untitled";
    // The task's own fields are checked before anything is written (tags are created next).
    valid(TaskCreate, { title: vt.title, description: vt.description, due_at: vt.dueAt, priority: vt.priority });
    for (const n of vt.tags) if (n.trim()) valid(TagCreate, { name: n.trim(), color: "#808080" });
    let kept = obj.kept;
    const tagIds = this.wrap(() => this.tagIdsFor(user, vt.tags));
    const parentId = vt.parentUid === null ? null : this.parentFor(user, listId, vt.parentUid, existing ?? moveFrom);
    if (vt.parentUid !== null && parentId === null) kept = keepRelatedTo(kept, obj.master);

    let taskId: string;
    if (moveFrom !== null) this.moveTask(user, moveFrom, listId);
    const target = existing ?? moveFrom;
    if (target === null) {
      const t = this.wrap(() =>
        this.tasks.create(
          user,
          valid(TaskCreate, {
            title: vt.title,
            description: vt.description,
            list_id: listId,
            ...(parentId ? { parent_id: parentId } : {}),
            completed: vt.completed,
            due_at: vt.dueAt,
            priority: vt.priority,
            tag_ids: tagIds,
          }),
        ),
      );
      taskId = t.id;
      // The task, its repeat, its alarms and its resource (UID, name) commit together: a client that
      // retries this PUT (an answer lost, the server stopped) finds either nothing (and creates it)
      // or the whole task by its UID (and updates it), never a second task or half of one.
      failpoint("dav.put.after_task");
      kept = this.applyRrule(user, taskId, vt.rrule, obj.master, kept);
    } else {
      taskId = target;
      kept = this.applyRrule(user, taskId, vt.rrule, obj.master, kept);
      const cur = this.tasks.getTaskForUser(user.id, taskId);
      const patch: Parameters<TasksService["update"]>[2] = { version: cur.version };
      if (cur.title !== vt.title) patch.title = vt.title;
      if (cur.description !== vt.description) patch.description = vt.description;
      // A repeating task's completion for an occurrence before the current one was already applied
      // (a retried PUT without If-Match, or a client that had not seen the series move on): the
      // series must move on exactly once, so neither the completion nor the old due is applied again.
      const repeats = readTx(this.core.db, (c) => findRecurrenceOfTask(c, taskId)) !== null;
      const stale = repeats && vt.completed && !cur.completed && vt.dueAt !== null && cur.due_at !== null && dueInstant(vt.dueAt) < dueInstant(cur.due_at);
      if (cur.due_at !== vt.dueAt && !stale) patch.due_at = vt.dueAt;
      if (cur.priority !== vt.priority) patch.priority = vt.priority;
      if (cur.completed !== vt.completed && !stale) patch.completed = vt.completed;
      if (cur.parent_id !== parentId && (parentId !== null || vt.parentUid === null)) patch.parent_id = parentId;
      const ownTags = cur.tags.map((t) => t.id).sort();
      if (ownTags.join() !== [...tagIds].sort().join()) patch.tag_ids = tagIds;
      if (Object.keys(patch).length > 1) this.wrap(() => this.tasks.update(user, taskId, valid(TaskPatch, patch)));
    }
    kept = this.applyExdates(user, taskId, obj.master, kept);
    if (vt.order !== null) this.applySortOrder(user, taskId, vt.order);
    kept = this.applyAlarms(user, taskId, obj.master, vt, kept);
    writeTx(this.core.db, (tx) => upsertObject(tx, user.id, { task_id: taskId, name, uid: obj.uid, extra: kept }, this.core.clock.now().toISOString()));
    if (target === null && parentId === null) this.adoptWaitingChildren(user, listId, taskId, obj.uid);
    return { created: existing === null };
  }

  /**
   * X-APPLE-SORT-ORDER → manual order: a number other than the one the task's key gives means the
   * client moved it; it goes before the first sibling whose number is larger (or last), through the
   * tasks service's move (one new key, no sibling renumbered).
   */
  private applySortOrder(user: AuthUser, taskId: string, order: number): void {
    const { rank, siblings } = readTx(this.core.db, (c) => ({ rank: rankOf(c, taskId), siblings: siblingsInOrder(c, taskId) }));
    if (rank === null || sortOrderOfRank(rank) === order) return;
    const next = siblings.find((s) => sortOrderOfRank(s.rank) > order);
    const prev = [...siblings].reverse().find((s) => sortOrderOfRank(s.rank) <= order);
    // Already between those two: nothing to move.
    if ((prev === undefined || prev.rank < rank) && (next === undefined || rank < next.rank)) return;
    this.wrap(() => this.tasks.move(user, taskId, next ? { before_id: next.id } : { to: "last" }));
  }

  /**
   * tasks.org may send a child before its parent: the child's RELATED-TO was kept verbatim then. When
   * the parent arrives, the children of the same list that name it become its subtasks (and their
   * kept link is dropped: the subtask relation writes it from now on). A child the tasks service
   * refuses as a subtask (it has subtasks of its own) keeps its RELATED-TO verbatim.
   */
  private adoptWaitingChildren(user: AuthUser, listId: string, parentId: string, uid: string): void {
    const waiting = readTx(this.core.db, (c) => {
      const candidates = objectsMentioning(c, uid).filter((o) => o.task_id !== parentId && keptParentIs(o.extra, uid));
      const live = new Set(liveTasksIn(c, listId, candidates.map((o) => o.task_id)).filter((t) => t.parent_id === null).map((t) => t.id));
      return candidates.filter((o) => live.has(o.task_id));
    });
    for (const o of waiting) {
      const cur = this.tasks.getTaskForUser(user.id, o.task_id);
      try {
        this.tasks.update(user, o.task_id, valid(TaskPatch, { version: cur.version, parent_id: parentId }));
      } catch (e) {
        if (e instanceof AppError && e.code !== "internal_error") continue;
        throw e;
      }
      writeTx(this.core.db, (tx) => upsertObject(tx, user.id, { ...o, extra: dropKeptParent(o.extra, uid) }, this.core.clock.now().toISOString()));
    }
  }

  /**
   * VALARMs ↔ the user's reminders on the task. A VALARM this server wrote (marked with its reminder's
   * id) keeps that reminder, or replaces it when the client changed its TRIGGER; an unmarked one that
   * maps to a reminder (vtodoToTask's mapping, as the .ics import) becomes one; the user's reminders
   * whose VALARM the client dropped are removed (a PUT is the whole object). A VALARM that maps to no
   * reminder (Apple's 1976 placeholder, one after the due time, an EMAIL action's extras) stays verbatim.
   */
  private applyAlarms(user: AuthUser, taskId: string, master: ICAL.Component, vt: VtodoTask, kept: string): string {
    const mine = this.reminders.list(user, "task", taskId).filter((r) => r.kind === "before_due" || r.kind === "at");
    const byId = new Map(mine.map((r) => [r.id, r]));
    const dueAt = readTx(this.core.db, (c) => dueOfTask(c, taskId));
    const reminderTime = user.reminderTime ?? "09:00";
    const seen = new Set<string>();
    const mapped = new Set<number>();
    const valarms = master.getAllSubcomponents("valarm");
    for (let i = 0; i < valarms.length; i++) {
      const a = valarms[i]!;
      const mark = String(a.getFirstPropertyValue(REMINDER_MARK) ?? "");
      const existing = byId.get(mark);
      const trigger = a.getFirstProperty("trigger")?.toICALString() ?? "";
      if (existing) {
        seen.add(existing.id);
        mapped.add(i);
        const ours = reminderTrigger({ id: existing.id, kind: existing.kind as "before_due" | "at", minutesBefore: existing.minutes_before, at: existing.at }, dueAt, reminderTime);
        if (ours !== null && normTrigger(ours) === normTrigger(trigger)) continue;
        this.reminders.remove(user, existing.id);
      }
      const m = vt.reminders[i];
      if (!m || "skip" in m) {
        if (existing) mapped.delete(i);
        continue;
      }
      const input = m.reminder.kind === "at" ? { kind: "at" as const, at: m.reminder.at } : { kind: "before_due" as const, minutes_before: m.reminder.minutesBefore };
      try {
        this.reminders.createNow(user, "task", taskId, input);
        mapped.add(i);
      } catch (e) {
        if (!(e instanceof AppError) || e.code === "internal_error") throw e;
        mapped.delete(i);
      }
    }
    for (const r of mine) if (!seen.has(r.id)) this.reminders.remove(user, r.id);
    return dropKeptAlarms(kept, mapped);
  }

  /**
   * MOVE (RFC 4918 §9.9) of a resource into another of the user's collections, under the same or
   * another name, or to another name in its own collection: the task changes lists through the
   * tasks service (its rules, events and audit; its subtasks go with it), and keeps its UID and
   * kept properties; a new name is the resource's from then on. The source's sync log gets a
   * tombstone under the old name, the target a member under the new one (the triggers, and
   * renameObject for the old name). A resource at the destination is replaced (Overwrite: T: it
   * goes to the trash, as a DELETE would) or the move is refused (Overwrite: F).
   */
  move(
    user: AuthUser,
    from: { segment: string; name: string },
    to: { segment: string; name: string },
    cond: { ifMatch: string[] | null; overwrite: boolean },
  ): { created: boolean } {
    // One transaction: the preconditions, the overwritten destination's deletion and the move (a
    // refused move must not leave the destination deleted).
    return writeTx(this.core.db, () => {
      const r = this.moveInTx(user, from, to, cond);
      failpoint("dav.move.before_commit");
      return r;
    });
  }

  private moveInTx(
    user: AuthUser,
    from: { segment: string; name: string },
    to: { segment: string; name: string },
    cond: { ifMatch: string[] | null; overwrite: boolean },
  ): { created: boolean } {
    const src = this.collection(user, from.segment);
    const r = this.membersByName(user, from.segment, [from.name], false).get(from.name);
    if (!r) throw new DavRefusal("not-found", "no such resource");
    if (cond.ifMatch !== null && !(cond.ifMatch.includes("*") || cond.ifMatch.includes(r.etag))) throw new DavRefusal("precondition-failed", "the resource changed since (If-Match)");
    let dst: Collection;
    try {
      dst = this.collection(user, to.segment);
    } catch (e) {
      // RFC 4918 §9.9.4: the destination's collection does not exist.
      if (e instanceof DavRefusal && e.kind === "not-found") throw new DavRefusal("conflict", "the destination collection does not exist");
      throw e;
    }
    if (!canEdit(src.role) || !canEdit(dst.role)) throw new DavRefusal("forbidden", "a viewer of a shared list cannot change it");
    if (src.id === dst.id && to.name === r.name) throw new DavRefusal("forbidden", "the source and the destination are the same resource");
    const occupant = readTx(this.core.db, (c) => taskIdByName(c, dst.id, to.name));
    if (occupant !== null && !cond.overwrite) throw new DavRefusal("precondition-failed", "the destination exists (Overwrite: F)");
    // Overwrite: T deletes the destination first (RFC 4918 §9.9.3), as DELETE would.
    if (occupant !== null) this.wrap(() => this.tasks.softDelete(user, occupant));
    // Moved first, then renamed where the new name is free (the occupant is gone): the source's
    // tombstone then takes the old name (renameObject).
    if (src.id !== dst.id) this.moveTask(user, r.taskId, dst.id);
    if (to.name !== r.name) {
      writeTx(this.core.db, (tx) => {
        const o = objectsOf(tx, [r.taskId]).get(r.taskId);
        renameObject(tx, user.id, dst.id, { task_id: r.taskId, name: to.name, uid: o?.uid ?? r.taskId, extra: o?.extra ?? "" }, r.name, src.id === dst.id, this.core.clock.now().toISOString());
      });
    }
    return { created: occupant === null };
  }

  /**
   * The task into another list through the tasks service; its subtasks go with it. A subtask moved
   * on its own leaves its parent (a subtask lives in its parent's list) and is top-level there.
   */
  private moveTask(user: AuthUser, taskId: string, listId: string): void {
    const cur = this.tasks.getTaskForUser(user.id, taskId);
    this.wrap(() => this.tasks.update(user, taskId, valid(TaskPatch, { version: cur.version, list_id: listId, ...(cur.parent_id !== null ? { parent_id: null } : {}) })));
  }

  /** DELETE of a resource: the task goes to the trash (with its subtasks), as DELETE /tasks/{id} does. */
  remove(user: AuthUser, segment: string, name: string, ifMatch: string[] | null): void {
    const col = this.collection(user, segment);
    const r = this.membersByName(user, segment, [name], false).get(name);
    if (!r) throw new DavRefusal("not-found", "no such resource");
    if (ifMatch !== null && !(ifMatch.includes("*") || ifMatch.includes(r.etag))) throw new DavRefusal("precondition-failed", "the resource changed since (If-Match)");
    if (!canEdit(col.role)) throw new DavRefusal("forbidden", "a viewer of a shared list cannot change it");
    this.wrap(() => this.tasks.softDelete(user, r.taskId));
  }

  /** The user's tag ids for CATEGORIES, creating the ones they lack (tags are personal). */
  private tagIdsFor(user: AuthUser, names: string[]): string[] {
    const wanted = [...new Set(names.map((n) => n.trim()).filter(Boolean))];
    if (wanted.length === 0) return [];
    const mine = new Map(this.tags.list(user.id).map((t) => [t.name.toLowerCase(), t.id]));
    return wanted.map((n) => mine.get(n.toLowerCase()) ?? this.tags.create(user.id, valid(TagCreate, { name: n, color: "#808080" })).id);
  }

  /** The live, top-level task of the same list with this UID, that can be the parent; else null (RELATED-TO is then kept verbatim). */
  private parentFor(user: AuthUser, listId: string, uid: string, self: string | null): string | null {
    return readTx(this.core.db, (c) => {
      const p = liveTaskIdsByUid(c, listId, uid)[0];
      if (!p || p.id === self) return null;
      const row = liveTasksIn(c, listId, [p.id])[0];
      return row && row.parent_id === null ? p.id : null;
    });
  }

  /** The task's repeat from RRULE through the recurrence service; a rule it refuses stays verbatim in the object instead. */
  private applyRrule(user: AuthUser, taskId: string, rrule: string | null, master: ICAL.Component, kept: string): string {
    const current = readTx(this.core.db, (c) => findRecurrenceOfTask(c, taskId));
    try {
      if (rrule === null) {
        if (current && current.kind === "rrule") this.recurrence.remove(user, current.id);
        return kept;
      }
      if (current?.kind === "rrule" && normRule(current.rrule) === normRule(rrule)) return kept;
      if (current) this.recurrence.update(user, current.id, valid(RecurrencePatch, { kind: "rrule", rrule, interval: null, unit: null }));
      else this.recurrence.create(user, valid(RecurrenceCreate, { task_id: taskId, kind: "rrule", rrule }));
      return kept;
    } catch (e) {
      if (!(e instanceof AppError || e instanceof DavRefusal) || (e instanceof AppError && e.code === "internal_error")) throw e;
      if (current?.kind === "rrule") this.recurrence.remove(user, current.id);
      return keepRrule(kept, master);
    }
  }

  /**
   * EXDATE ↔ the recurrence's exceptions (skipped occurrences), through the recurrence service: a
   * date the client skips that is no exception yet becomes one (skipping the current occurrence
   * moves the task on, as in the web app); an exception the client's object no longer names is
   * removed (a PUT is the whole object). EXDATEs held as exceptions leave the kept object (they are
   * written from the exceptions); one the service refuses (a past date, a date with no occurrence)
   * or of a task with no rule of ours stays verbatim.
   */
  private applyExdates(user: AuthUser, taskId: string, master: ICAL.Component, kept: string): string {
    const rec = readTx(this.core.db, (c) => findRecurrenceOfTask(c, taskId));
    const series = rec ? seriesOfRecord(rec) : null;
    if (!rec || !series) return kept;
    const wanted = new Set<string>();
    for (const x of exdatesOf(master, user.timezone)) {
      const key = dateKeyOf(series, x);
      if (key) wanted.add(key);
    }
    const have = new Set(readTx(this.core.db, (c) => listExceptions(c, rec.id)));
    const held = new Set<string>();
    const refusable = (e: unknown) => e instanceof AppError && e.code !== "internal_error";
    for (const key of [...wanted].sort()) {
      if (have.has(key)) {
        held.add(key);
        continue;
      }
      try {
        this.recurrence.addException(user, rec.id, key);
        held.add(key);
      } catch (e) {
        if (!refusable(e)) throw e;
      }
    }
    for (const key of have) {
      if (wanted.has(key)) continue;
      try {
        this.recurrence.removeException(user, rec.id, key);
      } catch (e) {
        if (!refusable(e)) throw e;
      }
    }
    return dropKeptExdates(kept, (x) => held.has(dateKeyOf(series, x) ?? ""), user.timezone);
  }

  /** A service's refusal of a client's write, as the protocol says it (the task's rules stay the services'). */
  private wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      if (e instanceof AppError) {
        if (e.code === "not_found") throw new DavRefusal("not-found", e.detail ?? "not found");
        if (e.code === "forbidden" || e.code === "inbox_immutable") throw new DavRefusal("forbidden", e.detail ?? "forbidden");
        if (e.code === "validation_failed" || e.code === "invalid_parent" || e.code === "invalid_reference" || e.code === "name_taken") {
          throw new DavRefusal("valid-calendar-object-resource", `${e.detail ?? e.code}${e.errors?.length ? `: ${e.errors.map((x) => `${x.path} ${x.message}`).join("; ")}` : ""}`);
        }
      }
      throw e;
    }
  }
}

/** The API's own input schema, so a CalDAV write obeys the same limits as a JSON one (the routes validate there). */
function valid<S extends z.ZodType>(schema: S, input: z.input<S>): z.output<S> {
  const r = schema.safeParse(input);
  if (r.success) return r.data;
  throw new DavRefusal("valid-calendar-object-resource", r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ").slice(0, 300));
}

/** The series of a stored rrule recurrence, or null when it is not one (or not usable). */
function seriesOfRecord(rec: RecurrenceRecord): Series | null {
  if (rec.kind !== "rrule" || !rec.rrule || !rec.dtstart) return null;
  const parsed = parseRRule(rec.rrule, isDateOnly(rec.dtstart));
  return parsed.ok ? seriesFor(parsed.rule, rec.dtstart, rec.timezone) : null;
}

/** The local date (the recurrence's zone) an exception of this deadline is written in; null when it cannot be read. */
function dateKeyOf(series: Series, deadline: string): string | null {
  try {
    return series.dateKey(deadline);
  } catch {
    return null;
  }
}

/**
 * The recurrence's exceptions as EXDATE deadlines in the due's form: a date for a date-only task,
 * else the occurrence's instant on that date (an exception whose date the rule no longer has, or a
 * rule that cannot be expanded, is left out).
 */
function exceptionDeadlines(c: Conn, rec: RecurrenceRecord, dueAt: string | null): string[] {
  const dates = listExceptions(c, rec.id);
  if (dates.length === 0 || dueAt === null) return [];
  if (isDateOnly(dueAt)) return dates;
  const series = seriesOfRecord(rec);
  if (!series) return [];
  return dates.flatMap((d) => {
    try {
      return series.occurrencesOn(d).slice(0, 1);
    } catch {
      return [];
    }
  });
}

/** A due's instant for ordering (a date-only due counts from its day's start, UTC). */
const dueInstant = (v: string) => Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);

const normTrigger = (t: string) => t.replace(/\s+/g, "").toUpperCase();

const normRule = (r: string | null) => (r ?? "").toUpperCase().split(";").filter(Boolean).sort().join(";");

function keepRelatedTo(kept: string, master: ICAL.Component): string {
  const k = new ICAL.Component(ICAL.parse(kept));
  const m = k.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  for (const p of master.getAllProperties("related-to")) m?.addProperty(ICAL.Property.fromString(p.toICALString()));
  return k.toString();
}

/** `#RRGGBB` or `#RRGGBBAA` (Apple's form) → the app's `#RRGGBB`; anything else → null (no colour). */
function normaliseColor(c: string | null | undefined): string | null {
  const m = c ? /^#([0-9a-fA-F]{6})(?:[0-9a-fA-F]{2})?$/.exec(c.trim()) : null;
  return m ? `#${m[1]!.toUpperCase()}` : null;
}
