/**
 * Share links: a public, unguessable URL that opens one audit's HTML report (`/reports/{token}`)
 * or one article's preview (`/previews/{token}`) without an API key, until it expires, is
 * revoked, or the key or connected app that made it ends.
 *
 * - The token is 32 random bytes (256 bits), base64url. It is stored as its SHA-256 (the key of
 *   the public lookup, `shareByToken`), so the lookup compares no secret string and a leaked store
 *   gives no working link; the record keeps only a hint (its last 4 characters). Where the
 *   operator set `WEBHOOK_ENCRYPTION_KEY`, the token is also sealed with it (AES-GCM, bound to the
 *   share id) so the owner's tools can repeat the link (`activeShareUrl`, the Markdown summary);
 *   never in a list or a log.
 * - A share expires after 1 to 90 days (default 30), and a sandbox key's share is capped at the
 *   sandbox key's expiry. Revoking deletes the token's index at once (the next request is 404)
 *   and keeps the record, marked, until its KV expiry a week after it would have expired.
 * - **Its creator bounds it.** The record names the key that made it (`createdBy`: the caller's
 *   key, or the key that approved the connected app whose OAuth token made it) and that app
 *   (`grantId`). The public page reads both records on every open: a revoked or expired key, or
 *   a revoked or lapsed grant, makes the link 404 like an expired one. No sweep is needed for
 *   that; listings show such a link as `revoked` with `revoked_reason` `key_ended`/`app_ended`.
 * - **The cap is exact.** At most `MAX_LIVE_SHARES` live links per audit or article. Each target
 *   has one small index of its unexpired, unrevoked links (`shareLiveOfTarget`, an array of at
 *   most the cap), rewritten in the same commit as every share and revocation of the target and
 *   checked by it, so concurrent creates serialise on it. Expiry is counted exactly by filtering
 *   the array on `expiresAt > now` at each create (nothing waits for a sweep or a KV expiry);
 *   entries whose creator ended are dropped only when the array is full (reading their key and
 *   grant then), since below the cap they cannot change the answer.
 * - **The account's live links** are one more index (`shareLive`, account → share id, time
 *   ordered), written and deleted in the same commits: `GET /v1/shares` lists it newest first,
 *   `DELETE /v1/shares` revokes every entry (one commit per link; a failure midway is retried by
 *   calling again).
 * - Links made before these indexes existed are indexed once per account (`ensureIndexed`), on
 *   the first create, revoke or account listing that finds share records and no `shareIndexed`
 *   marker; a create sets the marker in its own commit when the account had no records at all.
 *   More than 100 live links on one target (only the old bypass of the cap made them) are cut to
 *   the newest 100 then, the older revoked.
 * - The page is served for the share's account and the mode of the key that made it, through the
 *   same visibility rules as `/v1`: a deleted target or account, or one the mode may not see, is
 *   404 like an unknown token.
 *
 * @module
 */
import type { LiveShare, ShareKind, ShareLocation, ShareRecord } from "./types.ts";
import { getArticle } from "../articles/mod.ts";
import { getAudit } from "../audits/mod.ts";
import { canSee } from "../identity/mod.ts";
import {
  ApiError,
  atomic,
  badCursor,
  decodeCursor,
  type Deps,
  encodeCursor,
  iso,
  keys,
  list,
  newId,
  read,
  readMany,
  sha256Hex,
} from "../platform/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import { atomically } from "../../kv/atomic.ts";
import { openSecret, sealSecret } from "../webhooks/mod.ts";

export type { ShareKind };

export type { LiveShare, ShareLocation, ShareRecord };

/** Who makes a share: the account, the calling key's mode, id and expiry, and its grant. */
export interface ShareOwner {
  accountId: string;
  mode: KeyMode;
  keyId: string | null;
  /** The calling key's expiry (a sandbox key's 14 days), or null. */
  keyExpiresAt: number | null;
  /** The connected app whose OAuth token is calling; null for a key. */
  grantId: string | null;
}

export const DEFAULT_SHARE_DAYS = 30;
export const MAX_SHARE_DAYS = 90;
/** Live (neither expired nor revoked, creator standing) links per audit or article. */
export const MAX_LIVE_SHARES = 20;
/** Links per page of a listing: default and most. */
export const DEFAULT_SHARE_PAGE = 50;
export const MAX_SHARE_PAGE = 100;
/** Expired and revoked records stay listed this long past their expiry, then KV drops them. */
const RETAIN_MS = 7 * 86_400_000;
/** Index entries an account listing examines per request (expired or ended ones are skipped). */
const MAX_SCAN = 1_000;
/**
 * Live links of one target the one-time indexing keeps (a target's live array stays well under a
 * KV value's 64 KiB, its commit under the mutation limit); only the old bypass of the cap could
 * have made more, and the older ones beyond it are revoked then.
 */
const MAX_INDEXED_PER_TARGET = 100;
/** The version `shareIndexed` holds once an account's links are in the live indexes. */
const INDEX_VERSION = 1;
const DAY_MS = 86_400_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The public page a share opens. */
export function shareUrl(baseUrl: string, kind: ShareKind, token: string): string {
  return `${baseUrl}/${kind === "audit" ? "reports" : "previews"}/${token}`;
}

/** A share's own state at `now` (revoked by its owner, expired), whatever its creator's. */
export function shareStatus(s: ShareRecord, now: number): "active" | "expired" | "revoked" {
  if (s.revokedAt !== null) return "revoked";
  return now >= s.expiresAt ? "expired" : "active";
}

/** Why a link stopped opening before its expiry. */
export type RevokedReason = "user" | "key_ended" | "app_ended";

/** A share's state as listings show it: its own, then its creator's. */
export interface ShareState {
  status: "active" | "expired" | "revoked";
  revokedAt: number | null;
  reason: RevokedReason | null;
}

/** How a creator ended: the reason and, where known, when. */
export interface CreatorEnd {
  reason: "key_ended" | "app_ended";
  at: number | null;
}

interface Creator {
  keyId: string | null;
  grantId: string | null;
}

const creatorOf = (s: ShareRecord): Creator => ({
  keyId: s.createdBy,
  grantId: s.grantId ?? null,
});

/**
 * Whether the keys and connected apps that made links still stand, read once per key and grant
 * (a listing asks about many links of few creators). The records are read by id: the key through
 * its account index (key id → hash), the grant under its account. A missing record ended.
 */
export class CreatorCheck {
  #keys = new Map<string, CreatorEnd | null>();
  #grants = new Map<string, CreatorEnd | null>();

  constructor(private deps: Deps, private accountId: string, private now: number) {}

  /** Reads the creators not read yet, ten keys per round trip, keys and grants side by side. */
  async load(creators: readonly Creator[]): Promise<void> {
    const keyIds = [...new Set(creators.map((c) => c.keyId))]
      .filter((id): id is string => id !== null && !this.#keys.has(id));
    const grantIds = [...new Set(creators.map((c) => c.grantId))]
      .filter((id): id is string => id !== null && !this.#grants.has(id));
    await Promise.all([this.#loadKeys(keyIds), this.#loadGrants(grantIds)]);
  }

  async #loadKeys(keyIds: string[]): Promise<void> {
    const { kv } = this.deps;
    for (let i = 0; i < keyIds.length; i += 10) {
      const ids = keyIds.slice(i, i + 10);
      const hashes = await readMany(kv, ids.map((id) => keys.apiKeyOfAccount(this.accountId, id)));
      const found = hashes.map((h) => h.value).filter((h): h is string => h !== null);
      const records = await readMany(kv, found.map((h) => keys.apiKey(h)));
      const byId = new Map(records.flatMap((r) => r.value ? [[r.value.id, r.value]] : []));
      for (const id of ids) {
        const key = byId.get(id);
        this.#keys.set(
          id,
          !key || key.accountId !== this.accountId
            ? { reason: "key_ended", at: null }
            : key.revokedAt !== null
            ? { reason: "key_ended", at: key.revokedAt }
            : key.expiresAt !== null && key.expiresAt <= this.now
            ? { reason: "key_ended", at: key.expiresAt }
            : null,
        );
      }
    }
  }

  async #loadGrants(grantIds: string[]): Promise<void> {
    const { kv } = this.deps;
    for (let i = 0; i < grantIds.length; i += 10) {
      const ids = grantIds.slice(i, i + 10);
      const grants = await readMany(kv, ids.map((id) => keys.oauthGrant(this.accountId, id)));
      ids.forEach((id, j) => {
        const grant = grants[j].value;
        this.#grants.set(
          id,
          !grant
            ? { reason: "app_ended", at: null }
            : grant.revokedAt !== null
            ? { reason: "app_ended", at: grant.revokedAt }
            : grant.expiresAt <= this.now
            ? { reason: "app_ended", at: grant.expiresAt }
            : null,
        );
      });
    }
  }

  /** How the creator ended, or null while it stands (`load` it first). */
  endOf(c: Creator): CreatorEnd | null {
    return (c.keyId !== null ? this.#keys.get(c.keyId) : null) ??
      (c.grantId !== null ? this.#grants.get(c.grantId) : null) ?? null;
  }

  /** `load` then `endOf`. */
  async ended(c: Creator): Promise<CreatorEnd | null> {
    await this.load([c]);
    return this.endOf(c);
  }
}

/** The state of each share at `now`: its own, then (for those still active) its creator's. */
export async function shareStates(
  deps: Deps,
  accountId: string,
  shares: readonly ShareRecord[],
  now: number,
): Promise<ShareState[]> {
  const check = new CreatorCheck(deps, accountId, now);
  await check.load(shares.filter((s) => shareStatus(s, now) === "active").map(creatorOf));
  return shares.map((s) => stateOf(s, now, check));
}

function stateOf(s: ShareRecord, now: number, check: CreatorCheck): ShareState {
  const own = shareStatus(s, now);
  if (own === "revoked") return { status: own, revokedAt: s.revokedAt, reason: "user" };
  if (own === "expired") return { status: own, revokedAt: null, reason: null };
  const end = check.endOf(creatorOf(s));
  if (end) return { status: "revoked", revokedAt: end.at, reason: end.reason };
  return { status: "active", revokedAt: null, reason: null };
}

/** 32 random bytes as base64url without padding (43 characters). */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

const binding = (shareId: string) => `share:${shareId}`;

function liveOf(s: ShareRecord): LiveShare {
  return {
    id: s.id,
    kind: s.kind,
    targetId: s.targetId,
    sandbox: s.sandbox ?? s.mode === "sandbox",
    createdAt: s.createdAt,
    expiresAt: s.expiresAt,
    last4: s.last4,
    keyId: s.createdBy,
    grantId: s.grantId ?? null,
  };
}

/** KV expiry of a target's live array: past its last entry's expiry, so a missing one is empty. */
function liveArrayExpireIn(live: readonly LiveShare[], now: number): number {
  return Math.max(0, ...live.map((l) => l.expiresAt - now)) + RETAIN_MS;
}

/** KV expiry of an account's live entry: shortly past the link's expiry (listings skip it before). */
function liveEntryExpireIn(l: LiveShare, now: number): number {
  return Math.max(1, l.expiresAt - now) + 60_000;
}

/** KV expiry of a share record and its token index: a week past its expiry. */
function recordExpireIn(s: ShareRecord, now: number): number {
  return Math.max(1, s.expiresAt - now) + RETAIN_MS;
}

/**
 * Indexes the account's links made before the live indexes existed, once: reads its share
 * records, writes each target's live array (only where none exists: a create or another run
 * got there first) with the account entries in the same commit, then the marker. Answers
 * whether the marker is set; an account without any share record needs nothing (its first
 * create sets the marker) and is left unwritten, so reads of a new account write nothing.
 */
async function ensureIndexed(deps: Deps, accountId: string): Promise<boolean> {
  const { kv } = deps;
  if ((await read(kv, keys.shareIndexed(accountId))).value !== null) return true;
  const now = deps.clock.now();
  const byTarget = new Map<string, LiveShare[]>();
  let records = 0;
  for await (const e of list(kv, { prefix: keys.sharesOfAccount(accountId) })) {
    records++;
    if (shareStatus(e.value, now) !== "active") continue;
    const live = byTarget.get(e.value.targetId) ?? [];
    live.push(liveOf(e.value));
    byTarget.set(e.value.targetId, live);
  }
  if (records === 0) return false;
  for (const [targetId, all] of byTarget) {
    // Only the old bypass of the cap could leave more: the newest are indexed, the rest end.
    all.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const live = all.slice(0, MAX_INDEXED_PER_TARGET);
    for (const l of all.slice(MAX_INDEXED_PER_TARGET)) {
      await atomically(kv, async () => {
        const entry = await read(kv, keys.share(accountId, targetId, l.id));
        const share = entry.value;
        const op = atomic(kv).check(entry);
        if (!share || share.revokedAt !== null) return { op, result: null };
        op.set(entry.key, { ...share, revokedAt: now, sealed: null }, {
          expireIn: recordExpireIn(share, now),
        }).delete(keys.shareByToken(share.tokenHash));
        return { op, result: null };
      });
    }
    const at = keys.shareLiveOfTarget(accountId, targetId);
    const op = atomic(kv).check({ key: at, versionstamp: null })
      .set(at, live, { expireIn: liveArrayExpireIn(live, now) });
    for (const l of live) {
      op.set(keys.shareLive(accountId, l.id), l, { expireIn: liveEntryExpireIn(l, now) });
    }
    await op.commit(); // not ok: the array exists already, written with its entries
  }
  await kv.set(keys.shareIndexed(accountId), INDEX_VERSION);
  return true;
}

/**
 * Checks that the caller may share `targetId` now: it is theirs, visible and finished. Answers
 * whether it is on the sandbox side.
 */
async function shareableTarget(
  deps: Deps,
  owner: ShareOwner,
  kind: ShareKind,
  targetId: string,
): Promise<{ sandbox: boolean }> {
  let projectId: string;
  if (kind === "audit") {
    const audit = await getAudit(deps, owner.accountId, targetId, owner.mode);
    if (audit.status !== "completed") {
      throw new ApiError(
        "invalid_state",
        `Audit '${targetId}' is ${audit.status}; a report is shared once it is completed`,
      );
    }
    projectId = audit.projectId;
  } else {
    const article = await getArticle(deps, owner.accountId, targetId, owner.mode);
    if (article.status !== "ready" && article.status !== "published") {
      throw new ApiError(
        "invalid_state",
        `Article '${targetId}' is ${article.status}; a preview is shared once it is ready`,
      );
    }
    projectId = article.projectId;
  }
  // A sandbox key sees only sandbox projects; a live key's target may be on either side.
  if (owner.mode === "sandbox") return { sandbox: true };
  const project = (await read(deps.kv, keys.project(owner.accountId, projectId))).value;
  return { sandbox: project?.sandbox ?? false };
}

/**
 * Makes a share link of a completed audit or a ready article of the owner's (404 for one it may
 * not see, 409 before it is finished, 409 `limit_reached` past the live links cap). Returns the
 * record and the raw token, which is shown once, in this answer.
 */
export async function createShare(
  deps: Deps,
  owner: ShareOwner,
  kind: ShareKind,
  targetId: string,
  days: number = DEFAULT_SHARE_DAYS,
): Promise<{ share: ShareRecord; token: string }> {
  const { kv } = deps;
  const { sandbox } = await shareableTarget(deps, owner, kind, targetId);
  const indexed = await ensureIndexed(deps, owner.accountId);
  const now = deps.clock.now();
  let expiresAt = now + Math.min(MAX_SHARE_DAYS, Math.max(1, days)) * DAY_MS;
  if (owner.mode === "sandbox" && owner.keyExpiresAt !== null) {
    expiresAt = Math.min(expiresAt, owner.keyExpiresAt);
  }
  const id = newId("shr", now);
  const token = newToken();
  const secret = deps.config.webhookEncryptionKey;
  const share: ShareRecord = {
    id,
    kind,
    accountId: owner.accountId,
    targetId,
    mode: owner.mode,
    tokenHash: await sha256Hex(token),
    last4: token.slice(-4),
    sealed: secret ? await sealSecret(secret, token, binding(id)) : null,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    createdBy: owner.keyId,
    grantId: owner.grantId,
    sandbox,
  };
  const entry = liveOf(share);
  return await atomically(kv, async () => {
    const at = await read(kv, keys.shareLiveOfTarget(owner.accountId, targetId));
    // Exact at this instant: expired entries drop by time; entries whose key or app ended drop
    // when they would decide the answer.
    let live = (at.value ?? []).filter((l) => l.expiresAt > now);
    if (live.length >= MAX_LIVE_SHARES) {
      const check = new CreatorCheck(deps, owner.accountId, now);
      await check.load(live);
      live = live.filter((l) => check.endOf(l) === null);
    }
    if (live.length >= MAX_LIVE_SHARES) {
      throw new ApiError(
        "limit_reached",
        `'${targetId}' already has ${MAX_LIVE_SHARES} live share links; revoke one first`,
      );
    }
    const next = [...live, entry];
    const expireIn = recordExpireIn(share, now);
    const op = atomic(kv)
      .check(at)
      // A 256-bit token never collides; were it taken, the commit fails and is retried.
      .check({ key: keys.shareByToken(share.tokenHash), versionstamp: null })
      .set(keys.share(owner.accountId, targetId, id), share, { expireIn })
      .set(
        keys.shareByToken(share.tokenHash),
        { accountId: owner.accountId, targetId, shareId: id },
        { expireIn },
      )
      .set(at.key, next, { expireIn: liveArrayExpireIn(next, now) })
      .set(keys.shareLive(owner.accountId, id), entry, {
        expireIn: liveEntryExpireIn(entry, now),
      });
    // The account had no share record: its indexes start complete with this one.
    if (!indexed) op.set(keys.shareIndexed(owner.accountId), INDEX_VERSION);
    return { op, result: { share, token } };
  });
}

/** A page of a listing and the cursor of the next one (null on the last page). */
export interface SharePage<T> {
  data: T[];
  next_cursor: string | null;
}

/** Where a listing starts and how much it takes. */
export interface PageQuery {
  limit?: number;
  cursor?: string;
}

function pageSize(limit: number | undefined): number {
  return Math.max(1, Math.min(MAX_SHARE_PAGE, limit ?? DEFAULT_SHARE_PAGE));
}

/**
 * Walks a KV listing newest first, keeping the entries `keep` admits, until a page is full
 * (one more kept entry proves a next page) or `maxScan` entries were read. The cursor points
 * just past the last entry the page holds or skipped.
 */
async function newestFirst<T>(
  it: Deno.KvListIterator<T>,
  limit: number,
  maxScan: number,
  keep: (value: T) => boolean | Promise<boolean>,
  cursor: string | undefined,
): Promise<SharePage<T>> {
  const data: T[] = [];
  let after: string | null = null;
  let scanned = 0;
  let more = false;
  try {
    for await (const e of it) {
      scanned++;
      if (await keep(e.value)) {
        if (data.length === limit) {
          more = true;
          break;
        }
        data.push(e.value);
      }
      after = it.cursor;
    }
  } catch (err) {
    if (err instanceof ApiError || cursor === undefined) throw err;
    throw badCursor();
  }
  const next = more || scanned >= maxScan ? after : null;
  return { data, next_cursor: next === null || next === "" ? null : encodeCursor(next) };
}

/**
 * A page of the shares of a target the owner may see (404 otherwise), newest first: active,
 * expired (kept a week) and revoked, each with its state.
 */
export async function sharesOf(
  deps: Deps,
  owner: Pick<ShareOwner, "accountId" | "mode">,
  kind: ShareKind,
  targetId: string,
  query: PageQuery = {},
): Promise<SharePage<{ share: ShareRecord; state: ShareState }>> {
  await visibleTarget(deps, owner, kind, targetId);
  const limit = pageSize(query.limit);
  const it = list(deps.kv, { prefix: keys.sharesOfTarget(owner.accountId, targetId) }, {
    reverse: true,
    limit: limit + 1,
    cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  });
  const page = await newestFirst(it, limit, Infinity, (s) => s.kind === kind, query.cursor);
  const now = deps.clock.now();
  const states = await shareStates(deps, owner.accountId, page.data, now);
  return {
    data: page.data.map((share, i) => ({ share, state: states[i] })),
    next_cursor: page.next_cursor,
  };
}

/**
 * A page of the account's live links (audits' and articles'), newest first: unexpired,
 * unrevoked, their key and connected app standing; a sandbox caller sees the sandbox side's.
 * A page may hold fewer than `limit` when many entries just expired: follow `next_cursor`.
 */
export async function liveSharesOfAccount(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  query: PageQuery = {},
): Promise<SharePage<LiveShare>> {
  const limit = pageSize(query.limit);
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  if (!(await ensureIndexed(deps, caller.accountId))) return { data: [], next_cursor: null };
  const now = deps.clock.now();
  const check = new CreatorCheck(deps, caller.accountId, now);
  const it = list(deps.kv, { prefix: keys.sharesLiveOfAccount(caller.accountId) }, {
    reverse: true,
    limit: MAX_SCAN,
    cursor,
  });
  return await newestFirst(
    it,
    limit,
    MAX_SCAN,
    async (l) =>
      canSee(caller.mode, l.sandbox) && l.expiresAt > now && (await check.ended(l)) === null,
    query.cursor,
  );
}

async function visibleTarget(
  deps: Deps,
  owner: Pick<ShareOwner, "accountId" | "mode">,
  kind: ShareKind,
  targetId: string,
): Promise<void> {
  if (kind === "audit") await getAudit(deps, owner.accountId, targetId, owner.mode);
  else await getArticle(deps, owner.accountId, targetId, owner.mode);
}

/**
 * Ends one share in one commit: the record marked, its token index, its account entry and its
 * place in the target's live array gone. `kind` set: only a share of that kind (null answered
 * otherwise, nothing written). A missing record still clears its index entries.
 */
async function endShare(
  deps: Deps,
  accountId: string,
  targetId: string,
  shareId: string,
  kind: ShareKind | null,
): Promise<{ share: ShareRecord | null; changed: boolean }> {
  const { kv } = deps;
  return await atomically<{ share: ShareRecord | null; changed: boolean }>(kv, async () => {
    const [entry, at] = await readMany(kv, [
      keys.share(accountId, targetId, shareId),
      keys.shareLiveOfTarget(accountId, targetId),
    ]);
    const share = entry.value;
    if (kind !== null && (!share || share.kind !== kind)) {
      return { op: atomic(kv).check(entry), result: { share: null, changed: false } };
    }
    if (share && share.revokedAt !== null) {
      return { op: atomic(kv).check(entry), result: { share, changed: false } };
    }
    const now = deps.clock.now();
    const rest = (at.value ?? []).filter((l) => l.id !== shareId && l.expiresAt > now);
    const op = atomic(kv)
      .check(entry, at)
      .delete(keys.shareLive(accountId, shareId))
      .set(at.key, rest, { expireIn: liveArrayExpireIn(rest, now) });
    if (!share) return { op, result: { share: null, changed: false } };
    const revoked: ShareRecord = { ...share, revokedAt: now, sealed: null };
    op.set(entry.key, revoked, { expireIn: recordExpireIn(share, now) })
      .delete(keys.shareByToken(share.tokenHash));
    return { op, result: { share: revoked, changed: true } };
  });
}

/**
 * Revokes a share: its token stops opening anything at once. Revoking a revoked share answers
 * it again (the same terminal state); an unknown or foreign id is 404.
 */
export async function revokeShare(
  deps: Deps,
  owner: Pick<ShareOwner, "accountId" | "mode">,
  kind: ShareKind,
  targetId: string,
  shareId: string,
): Promise<{ share: ShareRecord; state: ShareState }> {
  await visibleTarget(deps, owner, kind, targetId);
  await ensureIndexed(deps, owner.accountId);
  const { share } = await endShare(deps, owner.accountId, targetId, shareId, kind);
  if (!share) throw new ApiError("not_found", `No share '${shareId}' of '${targetId}'`);
  const [state] = await shareStates(deps, owner.accountId, [share], deps.clock.now());
  return { share, state };
}

/**
 * Ends every live link of the account the caller may see (a sandbox key: the sandbox side's),
 * audits' and articles' alike, one commit per link, and answers how many were live (opening)
 * just before; links whose key or app had already ended are revoked too, uncounted. A failure
 * midway leaves the rest live: calling again ends them. Links made while this runs may stay.
 */
export async function endAllShares(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
): Promise<number> {
  if (!(await ensureIndexed(deps, caller.accountId))) return 0;
  const now = deps.clock.now();
  const check = new CreatorCheck(deps, caller.accountId, now);
  let ended = 0;
  for await (const e of list(deps.kv, { prefix: keys.sharesLiveOfAccount(caller.accountId) })) {
    const l = e.value;
    // An expired link is left as it is (its entry leaves KV shortly).
    if (!canSee(caller.mode, l.sandbox) || l.expiresAt <= now) continue;
    const live = (await check.ended(l)) === null;
    const { changed } = await endShare(deps, caller.accountId, l.targetId, l.id, null);
    if (changed && live) ended++;
  }
  return ended;
}

/**
 * The live share a public page's token opens, or null: malformed, unknown, revoked, expired, of
 * the other kind, or made by a key or connected app that has since ended all read the same (the
 * page answers 404 for each).
 */
export async function resolveShare(
  deps: Deps,
  kind: ShareKind,
  token: string,
): Promise<ShareRecord | null> {
  if (!TOKEN.test(token)) return null;
  const at = (await read(deps.kv, keys.shareByToken(await sha256Hex(token)))).value;
  if (!at) return null;
  const share = (await read(deps.kv, keys.share(at.accountId, at.targetId, at.shareId))).value;
  const now = deps.clock.now();
  if (!share || share.kind !== kind || shareStatus(share, now) !== "active") return null;
  const check = new CreatorCheck(deps, share.accountId, now);
  const [account] = await Promise.all([
    read(deps.kv, keys.account(share.accountId)),
    check.load([creatorOf(share)]),
  ]);
  if (!account.value || check.endOf(creatorOf(share)) !== null) return null;
  // A sandbox key shares only sandbox targets, and only an upgrade moves a sandbox project to
  // the live side; so once the account upgraded, its trial's links keep opening their (now
  // live) targets, while the sandbox key that made them lasts.
  if (share.mode === "sandbox" && account.value.upgradedAt) return { ...share, mode: "live" };
  return share;
}

/** A target's share records listed ahead of knowing whether the account is indexed, at most. */
const FIRST_LISTED = 20;

/**
 * The URL of the newest live share link of an audit (or article) whose token can be opened again
 * (sealed under WEBHOOK_ENCRYPTION_KEY), or null: for the Markdown summary and the MCP resource.
 * The caller has already checked that the account may see the target. Reads the target's live
 * array (at most the cap); an account not indexed yet is read from its records instead, so this
 * read writes nothing.
 */
export async function activeShareUrl(
  deps: Deps,
  accountId: string,
  targetId: string,
  kind: ShareKind = "audit",
): Promise<string | null> {
  const key = deps.config.webhookEncryptionKey;
  if (!key) return null;
  const { kv } = deps;
  const now = deps.clock.now();
  // An account not indexed yet lists the target's records: the first few are listed beside the
  // index's read (a round trip on a remote KV), wasted on an indexed account.
  const listAll = async (limit?: number) => {
    const out: ShareRecord[] = [];
    const prefix = keys.sharesOfTarget(accountId, targetId);
    for await (const e of list(kv, { prefix }, { limit, batchSize: limit })) out.push(e.value);
    return out;
  };
  const first = listAll(FIRST_LISTED);
  first.catch(() => {}); // awaited below unless the index answers
  const [marker, at] = await readMany(kv, [
    keys.shareIndexed(accountId),
    keys.shareLiveOfTarget(accountId, targetId),
  ]);
  let shares: ShareRecord[] = [];
  if (marker.value !== null) {
    const ids = (at.value ?? []).filter((l) => l.kind === kind && l.expiresAt > now)
      .map((l) => l.id);
    for (let i = 0; i < ids.length; i += 10) {
      const got = await readMany(
        kv,
        ids.slice(i, i + 10).map((id) => keys.share(accountId, targetId, id)),
      );
      for (const e of got) if (e.value) shares.push(e.value);
    }
  } else {
    shares = await first;
    if (shares.length === FIRST_LISTED) shares = await listAll();
  }
  shares = shares.filter((s) => s.kind === kind && s.sealed !== null)
    .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const states = await shareStates(deps, accountId, shares, now);
  for (const [i, s] of shares.entries()) {
    if (states[i].status !== "active") continue;
    try {
      return shareUrl(
        deps.config.publicBaseUrl,
        kind,
        await openSecret(key, s.sealed!, binding(s.id)),
      );
    } catch {
      continue; // sealed under an earlier key: not repeatable
    }
  }
  return null;
}

/** Who made a link, as the API shows it. */
function createdByView(keyId: string | null, grantId: string | null) {
  return { key_id: keyId, connected_app_id: grantId };
}

/** A share as the API lists it: never the token, only its hint. */
export function shareView(s: ShareRecord, state: ShareState) {
  return {
    share_id: s.id,
    ...(s.kind === "audit" ? { audit_id: s.targetId } : { article_id: s.targetId }),
    status: state.status,
    hint: `…${s.last4}`,
    created_at: iso(s.createdAt)!,
    expires_at: iso(s.expiresAt)!,
    revoked_at: iso(state.revokedAt),
    revoked_reason: state.reason,
    created_by: createdByView(s.createdBy, s.grantId ?? null),
  };
}

/** A live link of the account's listing: its target and creator. */
export function liveShareView(l: LiveShare) {
  return {
    share_id: l.id,
    kind: l.kind,
    ...(l.kind === "audit" ? { audit_id: l.targetId } : { article_id: l.targetId }),
    status: "active" as const,
    hint: `…${l.last4}`,
    created_at: iso(l.createdAt)!,
    expires_at: iso(l.expiresAt)!,
    revoked_at: null,
    revoked_reason: null,
    created_by: createdByView(l.keyId, l.grantId),
  };
}
