import type { Core } from "../../core/core";
import type { AuthUser } from "../../core/auth/principal";
import { addressKey, LoginThrottle } from "../../core/auth/throttle";
import { readSnapshot, writeTx } from "../../core/db";
import { invalidReference, notFound, rateLimited, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId } from "../../core/ids";
import { recordAudit } from "../audit/audit.repo";
import { roleOnList } from "../lists/lists.access";
import { listHead } from "../lists/lists.repo";
import { feedContent } from "./feeds.content";
import { presentFeed } from "./feeds.present";
import { activeFeedsOf, findActiveFeed, findFeedById, insertFeed, revokeFeed } from "./feeds.repo";
import { FEED_INCLUDES, type Feed, type FeedCreate } from "./feeds.schemas";
import { parseFeedFile, signatureMatches } from "./feeds.secret";
import type { LoadFeedRenderer } from "./feeds.types";

/** A feed fetch's answer: the calendar, or 304 when the client's copy is current. */
export type FeedFetch = { status: 200; body: string; etag: string } | { status: 304; etag: string };

/**
 * Wrong feed URLs an address may try before it waits (then 1 s, doubling, up to a minute; past four
 * times as many, up to 15 minutes: core/auth/throttle.ts). Generous, because one address can be a
 * calendar service polling for thousands of people; a revoked URL still being polled is not counted.
 */
const PROBE_FREE_FAILURES = 20;

/**
 * Read-only calendar feeds (devices.md, "Calendar feed"): secret URLs a calendar app subscribes
 * to. The API manages them (session-authenticated); GET /feeds/<secret>.ics answers without one.
 */
export class FeedsService {
  private readonly probes: LoginThrottle;

  constructor(
    private readonly core: Core,
    private readonly loadRenderer: LoadFeedRenderer,
  ) {
    this.probes = new LoginThrottle(core.clock, PROBE_FREE_FAILURES);
  }

  list(user: AuthUser, origin: string): Feed[] {
    return readSnapshot(this.core.db, (c) => activeFeedsOf(c, user.id)).map((r) => presentFeed(r, this.core.secret, origin));
  }

  get(user: AuthUser, id: string, origin: string): Feed {
    const row = readSnapshot(this.core.db, (c) => findActiveFeed(c, user.id, id));
    if (!row) throw notFound("feed");
    return presentFeed(row, this.core.secret, origin);
  }

  create(user: AuthUser, body: FeedCreate, origin: string, meta: RequestMeta): Feed {
    const listId = body.list_id ?? null;
    if (body.scope === "list" && listId === null) throw validationFailed([{ path: "list_id", message: "required with scope list" }]);
    if (body.scope === "all" && listId !== null) throw validationFailed([{ path: "list_id", message: "only with scope list" }]);
    const include = FEED_INCLUDES.filter((i) => body.include.includes(i));
    const now = this.core.clock.now();
    const row = writeTx(this.core.db, (tx) => {
      if (listId !== null) {
        // lists.access: the user's own list or one shared with them, active (not in the trash).
        const head = listHead(tx, listId);
        const role = head ? roleOnList(tx, user.id, head) : null;
        if (!head || role === null || head.deletedAt !== null) throw invalidReference([{ path: "list_id", message: `no active list ${listId}` }], `list ${listId} does not exist or is archived`);
      }
      const r = { id: newId(), userId: user.id, scope: body.scope, listId, include: JSON.stringify(include), taskFormat: body.task_format, createdAt: now.toISOString(), revokedAt: null };
      insertFeed(tx, r);
      recordAudit(tx, { userId: user.id, action: "feed_created", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "feed", targetId: r.id, detail: { scope: r.scope, list_id: listId } });
      return r;
    });
    return presentFeed(row, this.core.secret, origin);
  }

  revoke(user: AuthUser, id: string, meta: RequestMeta): void {
    const now = this.core.clock.now();
    writeTx(this.core.db, (tx) => {
      if (!findActiveFeed(tx, user.id, id)) throw notFound("feed");
      revokeFeed(tx, id, now.toISOString());
      recordAudit(tx, { userId: user.id, action: "feed_revoked", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "feed", targetId: id });
    });
  }

  /**
   * The calendar behind a feed URL's file name (`<secret>.ics`). An unknown, forged or revoked
   * secret is 404 after the same work (the id looked up and its HMAC computed either way); a feed
   * whose list the user can no longer see, or of a disabled account, is 404 too. Wrong secrets are
   * counted per client address; past the allowance the address gets 429 for a while, whatever it asks.
   */
  async fetch(file: string, ip: string | null, ifNoneMatch: string | null): Promise<FeedFetch> {
    const ipKey = addressKey(ip);
    const probeKey = `feed ${ipKey}`;
    const wait = this.probes.retryAfter(ipKey, probeKey);
    if (wait > 0) throw rateLimited(wait, "too many wrong feed URLs from this address; try again later");
    const parsed = parseFeedFile(file);
    const row = parsed ? readSnapshot(this.core.db, (c) => findFeedById(c, parsed.id)) : undefined;
    // The HMAC is computed whether or not the row exists (the same work for unknown and revoked).
    const genuine = parsed !== null && signatureMatches(this.core.secret, parsed.id, parsed.signature);
    if (!row || !genuine) {
      this.probes.recordFailure(ipKey, probeKey);
      throw notFound("feed");
    }
    if (row.revokedAt !== null) throw notFound("feed");
    const content = await feedContent(this.core, row);
    if (content === null) throw notFound("feed");
    // The document is a function of the content and of this version's renderer: hashing those
    // gives the ETag without writing the document, so a client whose copy is current costs the
    // reads only (the render is most of a big feed's time: bench/feeds.ts).
    const etag = `"${Bun.SHA256.hash(`${this.core.version}\0${JSON.stringify(content)}`, "base64").replace(/=+$/, "")}"`;
    if (ifNoneMatch !== null && matches(ifNoneMatch, etag)) return { status: 304, etag };
    return { status: 200, body: await (await this.loadRenderer())(content), etag };
  }
}

/** If-None-Match against our strong tag: `*`, or any listed tag equal to it (weak comparison, RFC 9110 §13.1.2). */
function matches(header: string, etag: string): boolean {
  return header.split(",").some((t) => {
    const v = t.trim();
    return v === "*" || v.replace(/^W\//, "") === etag;
  });
}
