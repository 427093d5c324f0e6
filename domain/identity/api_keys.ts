import { atomically } from "../../kv/atomic.ts";
import {
  ApiError,
  type Atomic,
  atomic,
  type Deps,
  keys,
  list,
  newId,
  read,
  readMany,
} from "../platform/mod.ts";
import { canSee, revocationShard, signalAuthChange } from "./auth.ts";
import { hashKey } from "./key_hash.ts";
import { endGrantsOfKey } from "./oauth/grants.ts";
import type { ApiKeyRecord, KeyMode } from "./types.ts";

export const MAX_ACTIVE_KEYS = 5;
export const SANDBOX_KEY_LIFETIME_MS = 14 * 86_400_000;
export const KEY_PREFIX: Record<KeyMode, string> = { sandbox: "sk_sandbox_", live: "sk_live_" };

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A new raw key: the mode's prefix and 40 base62 characters (about 238 bits) from the CSPRNG. */
export function generateRawKey(mode: KeyMode): string {
  // Rejection sampling keeps every character uniformly likely.
  let body = "";
  while (body.length < 40) {
    for (const b of crypto.getRandomValues(new Uint8Array(48))) {
      if (b < 248 && body.length < 40) body += BASE62[b % 62];
    }
  }
  return KEY_PREFIX[mode] + body;
}

/** The key record and its raw value, which is shown once and never stored. */
export interface CreatedKey {
  record: ApiKeyRecord;
  raw: string;
}

/**
 * Builds a key record for an atomic operation the caller commits (signup creates the account and
 * its first key in one commit).
 */
export function buildKey(
  input: { accountId: string; mode: KeyMode; name: string; expiresAt: number | null; now: number },
): CreatedKey {
  const raw = generateRawKey(input.mode);
  const record: ApiKeyRecord = {
    id: newId("key", input.now),
    accountId: input.accountId,
    hash: hashKey(raw),
    name: input.name,
    prefix: KEY_PREFIX[input.mode],
    last4: raw.slice(-4),
    mode: input.mode,
    createdAt: input.now,
    expiresAt: input.expiresAt,
    revokedAt: null,
  };
  return { record, raw };
}

/** Adds the key record and its account index to an atomic operation. */
export function writeKey(op: Atomic, record: ApiKeyRecord): Atomic {
  return op
    .check({ key: keys.apiKey(record.hash), versionstamp: null })
    .set(keys.apiKey(record.hash), record)
    .set(keys.apiKeyOfAccount(record.accountId, record.id), record.hash);
}

/**
 * Mints a key of the caller's own mode (`POST /v1/api-keys`, the MCP api_keys tool): a sandbox
 * rotation inherits the calling key's expiry, so rotating never extends the trial.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, principal: Parameters<typeof rotateKey>[1];
 * const { record, raw } = await rotateKey(deps, principal, "ci");
 * ```
 */
export function rotateKey(
  deps: Deps,
  caller: { account: { id: string }; key: { mode: KeyMode; expiresAt: number | null } },
  name: string,
): Promise<CreatedKey> {
  return createKey(deps, {
    accountId: caller.account.id,
    mode: caller.key.mode,
    name,
    expiresAt: caller.key.mode === "sandbox" ? caller.key.expiresAt : null,
  });
}

/**
 * Mints a key on an account, enforcing the cap of 5 active keys under concurrency: the account's
 * active-key counter is checked and bumped in the same commit as the key.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, accountId: string, expiresAt: number | null;
 * const { record, raw } = await createKey(deps, { accountId, mode: "sandbox", name: "ci", expiresAt });
 * ```
 */
export function createKey(
  deps: Deps,
  input: { accountId: string; mode: KeyMode; name: string; expiresAt: number | null },
): Promise<CreatedKey> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const accountEntry = await read(kv, keys.account(input.accountId));
    const account = accountEntry.value;
    if (!account) throw new ApiError("not_found", `No account '${input.accountId}'`);
    if (account.activeKeys >= MAX_ACTIVE_KEYS) {
      throw new ApiError(
        "key_limit_reached",
        `The account already has ${MAX_ACTIVE_KEYS} active API keys; revoke one first`,
      );
    }
    const created = buildKey({ ...input, now: clock.now() });
    const op = atomic(kv)
      .check(accountEntry)
      .set(accountEntry.key, { ...account, activeKeys: account.activeKeys + 1 });
    writeKey(op, created.record);
    return { op, result: created };
  });
}

/** The account's keys a caller of `mode` may see (`canSee`), newest first. */
export async function listKeys(
  deps: Deps,
  accountId: string,
  mode: KeyMode,
): Promise<ApiKeyRecord[]> {
  const hashes: string[] = [];
  for await (const e of list(deps.kv, { prefix: keys.apiKeysOfAccount(accountId) })) {
    hashes.push(e.value);
  }
  const records: ApiKeyRecord[] = [];
  for (let i = 0; i < hashes.length; i += 10) {
    const batch = await readMany(
      deps.kv,
      hashes.slice(i, i + 10).map((h) => keys.apiKey(h)),
    );
    for (const e of batch) {
      if (e.value && canSee(mode, e.value.mode === "sandbox")) records.push(e.value);
    }
  }
  return records.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
}

/**
 * Revokes a key. Revoking a revoked key returns it unchanged; the last active key cannot go. A
 * sandbox caller cannot touch live keys: they answer 404 as if absent. The revocation signal is
 * written in the same commit, so every process drops the key from its cache within ~100 ms
 * (`KeyResolver.follow`); the caller still invalidates this process's cache at once. The OAuth
 * grants (connected apps) the key approved end with it.
 */
export async function revokeKey(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  keyId: string,
): Promise<ApiKeyRecord> {
  const revoked = await revokeKeyRecord(deps, caller, keyId);
  // The apps this key approved over OAuth end with it. Their tokens already fail (they resolve to
  // this key), so a crash before this line leaves no access, only listings not yet updated; a
  // second revocation of the same key finishes the job.
  await endGrantsOfKey(deps, caller.accountId, revoked.id);
  return revoked;
}

function revokeKeyRecord(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  keyId: string,
): Promise<ApiKeyRecord> {
  const { accountId } = caller;
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const index = await read(kv, keys.apiKeyOfAccount(accountId, keyId));
    if (!index.value) throw new ApiError("not_found", `No API key '${keyId}' on this account`);
    const [keyEntry, accountEntry, signal] = await readMany(kv, [
      keys.apiKey(index.value),
      keys.account(accountId),
      keys.authRevocations(revocationShard(accountId)),
    ]);
    const key = keyEntry.value;
    const account = accountEntry.value;
    if (!key || !account || !canSee(caller.mode, key.mode === "sandbox")) {
      throw new ApiError("not_found", `No API key '${keyId}' on this account`);
    }
    if (key.revokedAt !== null) return { op: atomic(kv).check(keyEntry), result: key };
    if (account.activeKeys <= 1) {
      throw new ApiError(
        "cannot_revoke_last_key",
        "This is the account's only active key; create a new key before revoking it",
      );
    }
    const now = clock.now();
    const revoked: ApiKeyRecord = { ...key, revokedAt: now };
    const op = atomic(kv)
      .check(keyEntry, accountEntry)
      .set(keyEntry.key, revoked)
      .set(accountEntry.key, { ...account, activeKeys: account.activeKeys - 1 });
    signalAuthChange(op, signal, { accountId, keyId: key.id, at: now });
    return { op, result: revoked };
  });
}
