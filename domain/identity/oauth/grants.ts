/**
 * Grants: what one approval allowed (a connected app) and the family of tokens it issued. Ending
 * a grant ends every token of it at once, because each access token is checked against its grant
 * on every uncached use and the revocation signal (domain/identity/auth.ts) drops cached ones in every
 * process within ~100 ms. A grant ends when:
 *
 * - the human revokes it (`DELETE /v1/connected-apps/{id}`, the MCP `api_keys` tool);
 * - the client revokes one of its tokens (RFC 7009 `/oauth/revoke`);
 * - the approving API key is revoked (`revokeKey` calls `endGrantsOfKey`; until then the key's
 *   own revocation already refuses the tokens, which resolve to that key);
 * - its authorization code is presented a second time (OAuth 2.1 §4.1.3), or a rotated refresh
 *   token is replayed (§4.3.1: the family is revoked).
 *
 * @module
 */
import { atomically } from "../../../kv/atomic.ts";
import { canSee, revocationShard, signalAuthChange } from "../auth.ts";
import {
  ApiError,
  type Atomic,
  atomic,
  type Deps,
  keys,
  list,
  read,
  readMany,
} from "../../platform/mod.ts";
import type { KeyMode } from "../types.ts";
import { settleClient } from "./client_life.ts";
import { OAuthError } from "./errors.ts";
import { digest, LIFETIME } from "./secrets.ts";
import type { GrantRecord } from "./types.ts";

/** Why a grant ended (stored as `revokedReason`). */
export type EndReason = "user" | "client" | "key_revoked" | "code_reuse" | "refresh_reuse";

/** The most grants a listing shows (newest first), and the most an account keeps stored. */
export const MAX_LISTED_GRANTS = 100;

/**
 * The most live grants (connected apps) one account may have at once: approving past it is
 * refused on the page, and redeeming a code past it at the token endpoint (exactly, across
 * processes: every new grant checks and bumps the account's `oauth_grant_seqs` counter).
 */
export const MAX_ACTIVE_GRANTS = 50;

/** Ended grants one new grant's commit deletes at most (the oldest first, past the 100 kept). */
const MAX_PRUNED_PER_GRANT = 20;

/** A grant still usable: not revoked and its refresh token not expired. */
export function grantActive(g: GrantRecord, now: number): boolean {
  return g.revokedAt === null && g.expiresAt > now;
}

/** What the cap says to a human or a client; null while there is room. */
export function grantCapMessage(active: number): string | null {
  return active < MAX_ACTIVE_GRANTS ? null : `This account already has ${active} connected apps, ` +
    `the most it may have (${MAX_ACTIVE_GRANTS}): revoke one (DELETE /v1/connected-apps/{id}) ` +
    "and connect again";
}

/** The account's live grants. */
export async function activeGrantCount(deps: Deps, accountId: string): Promise<number> {
  const now = deps.clock.now();
  let n = 0;
  for await (const e of list(deps.kv, { prefix: keys.oauthGrantsOfAccount(accountId) })) {
    if (grantActive(e.value, now)) n++;
  }
  return n;
}

/**
 * Room for one more grant on the account, added to the new grant's commit `op` (not returned: an
 * atomic operation is a thenable that must not be awaited): checks the account's grant
 * counter (so two concurrent approvals see each other), refuses past `MAX_ACTIVE_GRANTS` with
 * `invalid_grant`, and deletes the oldest ended grants the account keeps past
 * `MAX_LISTED_GRANTS` (never listed anyway), with their client listings.
 */
export async function makeRoomForGrant(
  deps: Deps,
  op: Atomic,
  accountId: string,
): Promise<void> {
  const now = deps.clock.now();
  const seq = await read(deps.kv, keys.oauthGrantSeq(accountId), "strong");
  const ended: GrantRecord[] = [];
  let active = 0;
  let stored = 0;
  for await (const e of list(deps.kv, { prefix: keys.oauthGrantsOfAccount(accountId) })) {
    stored++;
    if (grantActive(e.value, now)) active++;
    else ended.push(e.value);
  }
  const refusal = grantCapMessage(active);
  if (refusal) throw new OAuthError("invalid_grant", refusal);
  op.check(seq).set(seq.key, (seq.value ?? 0) + 1, {
    expireIn: LIFETIME.refreshMs + LIFETIME.endedGrantMs,
  });
  const excess = Math.min(stored + 1 - MAX_LISTED_GRANTS, MAX_PRUNED_PER_GRANT);
  if (excess > 0) {
    ended.sort((a, b) => a.createdAt - b.createdAt);
    for (const g of ended.slice(0, excess)) {
      op.delete(keys.oauthGrant(accountId, g.id))
        .delete(keys.oauthClientGrant(digest(g.clientId), g.id));
    }
  }
}

/**
 * Ends a grant (idempotent) and signals every process; returns the grant as stored after, or
 * null when there is no such grant.
 */
export async function endGrant(
  deps: Deps,
  accountId: string,
  grantId: string,
  reason: EndReason,
): Promise<GrantRecord | null> {
  const { kv, clock } = deps;
  let endedNow = false;
  const out = await atomically(kv, async () => {
    endedNow = false;
    const [grantEntry, signal] = await readMany(kv, [
      keys.oauthGrant(accountId, grantId),
      keys.authRevocations(revocationShard(accountId)),
    ]);
    const grant = grantEntry.value;
    if (!grant) return { op: atomic(kv).check(grantEntry), result: null };
    if (grant.revokedAt !== null) return { op: atomic(kv).check(grantEntry), result: grant };
    const now = clock.now();
    const ended: GrantRecord = { ...grant, revokedAt: now, revokedReason: reason };
    const op = atomic(kv)
      .check(grantEntry)
      .set(grantEntry.key, ended, { expireIn: LIFETIME.endedGrantMs })
      .delete(keys.oauthRefreshToken(grant.refreshHash))
      .delete(keys.oauthClientGrant(digest(grant.clientId), grant.id));
    signalAuthChange(op, signal, { accountId, keyId: grant.keyId, at: now });
    endedNow = true;
    return { op, result: ended };
  });
  // The client now lives a day past its last live grant (client_life.ts).
  if (endedNow && out) await settleClient(deps, out.clientId);
  return out;
}

/** The account's grants a caller of `mode` may see (`canSee`), newest first. */
export async function listGrants(
  deps: Deps,
  accountId: string,
  mode: KeyMode,
): Promise<GrantRecord[]> {
  const out: GrantRecord[] = [];
  for await (const e of list(deps.kv, { prefix: keys.oauthGrantsOfAccount(accountId) })) {
    if (canSee(mode, e.value.mode === "sandbox")) out.push(e.value);
  }
  return out.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
    .slice(0, MAX_LISTED_GRANTS);
}

/**
 * Revokes a connected app for its account (the human's `DELETE /v1/connected-apps/{id}`). A
 * sandbox caller cannot see live grants: they answer 404 as if absent, like live keys.
 */
export async function revokeGrant(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  grantId: string,
): Promise<GrantRecord> {
  const missing = () => new ApiError("not_found", `No connected app '${grantId}' on this account`);
  const grant = (await read(deps.kv, keys.oauthGrant(caller.accountId, grantId))).value;
  if (!grant || !canSee(caller.mode, grant.mode === "sandbox")) throw missing();
  const ended = await endGrant(deps, caller.accountId, grantId, "user");
  if (!ended) throw missing();
  return ended;
}

/** Ends every live grant an API key approved (after the key's revocation). */
export async function endGrantsOfKey(
  deps: Deps,
  accountId: string,
  keyId: string,
): Promise<number> {
  let n = 0;
  for await (const e of list(deps.kv, { prefix: keys.oauthGrantsOfAccount(accountId) })) {
    if (e.value.keyId !== keyId || e.value.revokedAt !== null) continue;
    if (await endGrant(deps, accountId, e.value.id, "key_revoked")) n++;
  }
  return n;
}
