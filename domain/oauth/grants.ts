/**
 * Grants: what one approval allowed (a connected app) and the family of tokens it issued. Ending
 * a grant ends every token of it at once, because each access token is checked against its grant
 * on every uncached use and the revocation signal (domain/auth.ts) drops cached ones in every
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
import { atomically } from "../../kv/atomic.ts";
import { canSee, revocationShard, signalAuthChange } from "../auth.ts";
import type { Deps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import type { KeyMode } from "../records.ts";
import { atomic, keys, list, read, readMany } from "../store.ts";
import { LIFETIME } from "./secrets.ts";
import type { GrantRecord } from "./types.ts";

/** Why a grant ended (stored as `revokedReason`). */
export type EndReason = "user" | "client" | "key_revoked" | "code_reuse" | "refresh_reuse";

/** The most grants a listing shows (newest first). */
export const MAX_LISTED_GRANTS = 100;

/**
 * Ends a grant (idempotent) and signals every process; returns the grant as stored after, or
 * null when there is no such grant.
 */
export function endGrant(
  deps: Deps,
  accountId: string,
  grantId: string,
  reason: EndReason,
): Promise<GrantRecord | null> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
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
      .delete(keys.oauthRefreshToken(grant.refreshHash));
    signalAuthChange(op, signal, { accountId, keyId: grant.keyId, at: now });
    return { op, result: ended };
  });
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
