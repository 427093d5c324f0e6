/**
 * Share links: a public, unguessable URL that opens one audit's HTML report (`/reports/{token}`)
 * or one article's preview (`/previews/{token}`) without an API key, until it expires or is
 * revoked.
 *
 * - The token is 32 random bytes (256 bits), base64url. It is stored as its SHA-256 (the key of
 *   the public lookup, `shareByToken`), so the lookup compares no secret string and a leaked store
 *   gives no working link; the record keeps only a hint (its last 4 characters). Where the
 *   operator set `WEBHOOK_ENCRYPTION_KEY`, the token is also sealed with it (AES-GCM, bound to the
 *   share id) so the owner's tools can repeat the link (`activeShareUrl`, the Markdown summary);
 *   never in a list or a log.
 * - A share expires after 1 to 90 days (default 30); a sandbox key's share never outlives the
 *   sandbox key that made it. Revoking deletes the token's index at once (the next request is
 *   404) and keeps the record, marked, until its KV expiry a week after it would have expired.
 * - At most `MAX_LIVE_SHARES` live links per audit or article (`limit_reached` beyond).
 * - The page is served for the share's account and the mode of the key that made it, through the
 *   same visibility rules as `/v1`: a deleted target or account, or one the mode may not see, is
 *   404 like an unknown token.
 *
 * @module
 */
import { getArticle } from "./articles.ts";
import { getAudit } from "./audits/record.ts";
import { iso } from "./clock.ts";
import type { Deps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import { newId } from "./ids.ts";
import type { KeyMode } from "./records.ts";
import { sha256Hex } from "./replay_seal.ts";
import { atomically } from "../kv/atomic.ts";
import { atomic, keys, list, read } from "./store.ts";
import { openSecret, sealSecret } from "./webhooks/secret_box.ts";
import type { SealedSecret } from "./webhooks/types.ts";

export type ShareKind = "audit" | "article";

export interface ShareRecord {
  id: string;
  kind: ShareKind;
  accountId: string;
  /** The audit or article id. */
  targetId: string;
  /** The mode of the key that made it: the page is served with that key's visibility. */
  mode: KeyMode;
  /** SHA-256 hex of the token (also the key of its index). */
  tokenHash: string;
  /** The token's last 4 characters, to tell links apart in a list. */
  last4: string;
  /** The token sealed with WEBHOOK_ENCRYPTION_KEY (bound to the share id); null without it. */
  sealed: SealedSecret | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /** The key that made it (null for work without a key). */
  createdBy: string | null;
}

/** Where the share record of a token hash is. */
export interface ShareLocation {
  accountId: string;
  targetId: string;
  shareId: string;
}

/** Who makes a share: the account, the calling key's mode, id and expiry. */
export interface ShareOwner {
  accountId: string;
  mode: KeyMode;
  keyId: string | null;
  /** The calling key's expiry (a sandbox key's 14 days), or null. */
  keyExpiresAt: number | null;
}

export const DEFAULT_SHARE_DAYS = 30;
export const MAX_SHARE_DAYS = 90;
/** Live (neither expired nor revoked) links per audit or article. */
export const MAX_LIVE_SHARES = 20;
/** Expired and revoked records stay listed this long past their expiry, then KV drops them. */
const RETAIN_MS = 7 * 86_400_000;
/** Records a listing reads at most (live ones are capped; the rest expire). */
const MAX_LISTED = 200;
const DAY_MS = 86_400_000;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** The public page a share opens. */
export function shareUrl(baseUrl: string, kind: ShareKind, token: string): string {
  return `${baseUrl}/${kind === "audit" ? "reports" : "previews"}/${token}`;
}

/** A share's state at `now`. */
export function shareStatus(s: ShareRecord, now: number): "active" | "expired" | "revoked" {
  if (s.revokedAt !== null) return "revoked";
  return now >= s.expiresAt ? "expired" : "active";
}

/** 32 random bytes as base64url without padding (43 characters). */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

const binding = (shareId: string) => `share:${shareId}`;

/** Checks that the caller may share `targetId` now: it is theirs, visible and finished. */
async function shareableTarget(
  deps: Deps,
  owner: ShareOwner,
  kind: ShareKind,
  targetId: string,
): Promise<void> {
  if (kind === "audit") {
    const audit = await getAudit(deps, owner.accountId, targetId, owner.mode);
    if (audit.status !== "completed") {
      throw new ApiError(
        "invalid_state",
        `Audit '${targetId}' is ${audit.status}; a report is shared once it is completed`,
      );
    }
    return;
  }
  const article = await getArticle(deps, owner.accountId, targetId, owner.mode);
  if (article.status !== "ready" && article.status !== "published") {
    throw new ApiError(
      "invalid_state",
      `Article '${targetId}' is ${article.status}; a preview is shared once it is ready`,
    );
  }
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
  await shareableTarget(deps, owner, kind, targetId);
  const now = deps.clock.now();
  const existing = await listShares(deps, owner.accountId, targetId);
  const live = existing.filter((s) => shareStatus(s, now) === "active").length;
  if (live >= MAX_LIVE_SHARES) {
    throw new ApiError(
      "limit_reached",
      `'${targetId}' already has ${MAX_LIVE_SHARES} live share links; revoke one first`,
    );
  }
  let expiresAt = now + Math.min(MAX_SHARE_DAYS, Math.max(1, days)) * DAY_MS;
  if (owner.mode === "sandbox" && owner.keyExpiresAt !== null) {
    expiresAt = Math.min(expiresAt, owner.keyExpiresAt);
  }
  const id = newId("shr", now);
  const token = newToken();
  const key = deps.config.webhookEncryptionKey;
  const share: ShareRecord = {
    id,
    kind,
    accountId: owner.accountId,
    targetId,
    mode: owner.mode,
    tokenHash: await sha256Hex(token),
    last4: token.slice(-4),
    sealed: key ? await sealSecret(key, token, binding(id)) : null,
    createdAt: now,
    expiresAt,
    revokedAt: null,
    createdBy: owner.keyId,
  };
  const expireIn = Math.max(1, expiresAt - now) + RETAIN_MS;
  const res = await atomic(deps.kv)
    .check({ key: keys.shareByToken(share.tokenHash), versionstamp: null })
    .set(keys.share(owner.accountId, targetId, id), share, { expireIn })
    .set(
      keys.shareByToken(share.tokenHash),
      { accountId: owner.accountId, targetId, shareId: id },
      { expireIn },
    )
    .commit();
  // A 256-bit token never collides; a failed commit is the store's, not the caller's.
  if (!res.ok) throw new Error("share token index already taken");
  return { share, token };
}

/** The share records of one audit or article, oldest first (visibility is the caller's check). */
export async function listShares(
  deps: Deps,
  accountId: string,
  targetId: string,
): Promise<ShareRecord[]> {
  const out: ShareRecord[] = [];
  const it = list(deps.kv, { prefix: keys.sharesOfTarget(accountId, targetId) }, {
    limit: MAX_LISTED,
  });
  for await (const e of it) out.push(e.value);
  return out;
}

/** The shares of a target the owner may see (404 otherwise). */
export async function sharesOf(
  deps: Deps,
  owner: Pick<ShareOwner, "accountId" | "mode">,
  kind: ShareKind,
  targetId: string,
): Promise<ShareRecord[]> {
  await visibleTarget(deps, owner, kind, targetId);
  return (await listShares(deps, owner.accountId, targetId)).filter((s) => s.kind === kind);
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
 * Revokes a share: its token stops opening anything at once. Revoking a revoked share answers
 * it again (the same terminal state); an unknown or foreign id is 404.
 */
export async function revokeShare(
  deps: Deps,
  owner: Pick<ShareOwner, "accountId" | "mode">,
  kind: ShareKind,
  targetId: string,
  shareId: string,
): Promise<ShareRecord> {
  await visibleTarget(deps, owner, kind, targetId);
  return await atomically(deps.kv, async () => {
    const entry = await read(deps.kv, keys.share(owner.accountId, targetId, shareId));
    const share = entry.value;
    if (!share || share.kind !== kind) {
      throw new ApiError("not_found", `No share '${shareId}' of '${targetId}'`);
    }
    if (share.revokedAt !== null) return { op: atomic(deps.kv).check(entry), result: share };
    const now = deps.clock.now();
    const revoked: ShareRecord = { ...share, revokedAt: now, sealed: null };
    const expireIn = Math.max(1, share.expiresAt - now) + RETAIN_MS;
    const op = atomic(deps.kv)
      .check(entry)
      .set(entry.key, revoked, { expireIn })
      .delete(keys.shareByToken(share.tokenHash));
    return { op, result: revoked };
  });
}

/**
 * The live share a public page's token opens, or null: malformed, unknown, revoked, expired or
 * of the other kind all read the same (the page answers 404 for each).
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
  if (!share || share.kind !== kind || shareStatus(share, deps.clock.now()) !== "active") {
    return null;
  }
  const account = (await read(deps.kv, keys.account(share.accountId))).value;
  if (!account) return null;
  // A sandbox key shares only sandbox targets, and only an upgrade moves a sandbox project to
  // the live side; so once the account upgraded, its trial's links keep opening their (now
  // live) targets, until they expire with the sandbox key that made them.
  if (share.mode === "sandbox" && account.upgradedAt) return { ...share, mode: "live" };
  return share;
}

/**
 * The URL of the newest live share link of an audit (or article) whose token can be opened again
 * (sealed under WEBHOOK_ENCRYPTION_KEY), or null: for the Markdown summary and the MCP resource.
 * The caller has already checked that the account may see the target.
 */
export async function activeShareUrl(
  deps: Deps,
  accountId: string,
  targetId: string,
  kind: ShareKind = "audit",
): Promise<string | null> {
  const key = deps.config.webhookEncryptionKey;
  if (!key) return null;
  const now = deps.clock.now();
  const shares = (await listShares(deps, accountId, targetId))
    .sort((a, b) => b.createdAt - a.createdAt);
  for (const s of shares) {
    if (s.kind !== kind || s.sealed === null || shareStatus(s, now) !== "active") continue;
    try {
      return shareUrl(
        deps.config.publicBaseUrl,
        kind,
        await openSecret(key, s.sealed, binding(s.id)),
      );
    } catch {
      continue; // sealed under an earlier key: not repeatable
    }
  }
  return null;
}

/** A share as the API lists it: never the token, only its hint. */
export function shareView(s: ShareRecord, now: number) {
  return {
    share_id: s.id,
    ...(s.kind === "audit" ? { audit_id: s.targetId } : { article_id: s.targetId }),
    status: shareStatus(s, now),
    hint: `…${s.last4}`,
    created_at: iso(s.createdAt)!,
    expires_at: iso(s.expiresAt)!,
    revoked_at: iso(s.revokedAt),
  };
}
