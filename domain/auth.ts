import { atomic, keys, read, readMany } from "./store.ts";
import { hashKey } from "./api_keys.ts";
import type { Deps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import type { AccountRecord, ApiKeyRecord, KeyMode, SandboxUsage } from "./records.ts";

/** Who is calling: the key, its account and (for sandbox keys) the trial usage. */
export interface Principal {
  key: ApiKeyRecord;
  account: AccountRecord;
  usage: SandboxUsage | null;
}

/**
 * What a key may see of its account. A sandbox key is a trial credential, often handed to an agent
 * before anyone upgrades, so it sees only the sandbox side: sandbox keys and sandbox projects.
 * Live keys, live projects (their details and subscription state) and the credit balance are
 * invisible to it, answered as `not_found` like foreign ids, also when it starts work on one
 * (checked before any funding rule). Live keys see everything.
 */
export function canSee(caller: KeyMode, resourceIsSandbox: boolean): boolean {
  return caller === "live" || resourceIsSandbox;
}

/** The principal if its key may be used at `now`; 401 `key_revoked` or `key_expired` otherwise. */
function usable(principal: Principal, now: number): Principal {
  const { key } = principal;
  if (key.revokedAt !== null) throw new ApiError("key_revoked", "This API key was revoked");
  if (key.expiresAt !== null && key.expiresAt <= now) {
    throw new ApiError("key_expired", "This sandbox key has expired");
  }
  return principal;
}

interface CacheEntry {
  principal: Principal;
  fetchedAt: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Resolves bearer keys to principals with a short-lived in-process cache, because a KV round trip
 * on every request would cap throughput far below the budget. Writes made by this process
 * invalidate the account's entries at once; writes by other processes (revocation included) are
 * seen after at most `authCacheTtlMs`.
 */
export class KeyResolver {
  #cache = new Map<string, CacheEntry>();
  #byAccount = new Map<string, Set<string>>();

  constructor(private deps: Deps) {}

  /**
   * The principal of a raw key, or throws 401 with the precise code. Answers synchronously from a
   * fresh cache entry (the hot path), so callers only await when KV must be asked.
   */
  resolve(raw: string): Principal | Promise<Principal> {
    const hash = hashKey(raw);
    const now = this.deps.clock.now();
    const entry = this.#cache.get(hash);
    if (entry && now - entry.fetchedAt <= this.deps.config.authCacheTtlMs) {
      return usable(entry.principal, now);
    }
    return this.#load(hash).then((principal) => {
      if (!principal) {
        this.#drop(hash);
        throw new ApiError("unauthorized", "Unknown API key");
      }
      this.#store(hash, { principal, fetchedAt: now });
      return usable(principal, now);
    });
  }

  /**
   * The principal re-read from KV (strongly, past the cache): sensitive writes call it so a key
   * revoked a moment ago on another process cannot act there.
   */
  async confirm(principal: Principal): Promise<Principal> {
    const hash = principal.key.hash;
    const fresh = await this.#load(hash);
    if (!fresh) {
      this.#drop(hash);
      throw new ApiError("unauthorized", "Unknown API key");
    }
    const now = this.deps.clock.now();
    this.#store(hash, { principal: fresh, fetchedAt: now });
    return usable(fresh, now);
  }

  /** Forgets every cached key of an account; called after any write that changes what they show. */
  invalidateAccount(accountId: string): void {
    const hashes = this.#byAccount.get(accountId);
    if (!hashes) return;
    for (const h of hashes) this.#cache.delete(h);
    this.#byAccount.delete(accountId);
  }

  async #load(hash: string): Promise<Principal | null> {
    const { kv } = this.deps;
    const keyEntry = await read(kv, keys.apiKey(hash));
    const key = keyEntry.value;
    if (!key) return null;
    const [accountEntry, usageEntry] = await readMany(kv, [
      keys.account(key.accountId),
      keys.sandboxUsage(key.accountId),
    ]);
    if (!accountEntry.value) return null;
    return {
      key,
      account: accountEntry.value,
      usage: key.mode === "sandbox" ? usageEntry.value ?? { audits: 0, articles: 0 } : null,
    };
  }

  #store(hash: string, entry: CacheEntry): void {
    if (this.#cache.size >= MAX_ENTRIES) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#drop(oldest);
    }
    this.#cache.set(hash, entry);
    const accountId = entry.principal.account.id;
    let set = this.#byAccount.get(accountId);
    if (!set) this.#byAccount.set(accountId, set = new Set());
    set.add(hash);
  }

  #drop(hash: string): void {
    const entry = this.#cache.get(hash);
    if (!entry) return;
    this.#cache.delete(hash);
    this.#byAccount.get(entry.principal.account.id)?.delete(hash);
  }
}

/**
 * Remembers when each key was last used without writing on every request: uses are kept in memory
 * and flushed to KV in batches (every few seconds and at shutdown). A flush only moves a stored
 * time forward, so processes sharing a KV never move it back.
 */
export class KeyUsageTracker {
  #pending = new Map<string, number>();

  constructor(private deps: Deps) {}

  touch(keyId: string, at: number): void {
    this.#pending.set(keyId, at);
  }

  /** The newest use known here or in KV. */
  async lastUsed(keyIds: string[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>();
    for (let i = 0; i < keyIds.length; i += 10) {
      const batch = keyIds.slice(i, i + 10);
      const entries = await readMany(this.deps.kv, batch.map((id) => keys.apiKeyLastUsed(id)));
      batch.forEach((id, j) => {
        const stored = entries[j].value;
        const local = this.#pending.get(id) ?? null;
        out.set(id, stored === null ? local : local === null ? stored : Math.max(stored, local));
      });
    }
    return out;
  }

  async flush(): Promise<void> {
    const pending = [...this.#pending];
    this.#pending.clear();
    for (const [keyId, at] of pending) {
      const key = keys.apiKeyLastUsed(keyId);
      for (let i = 0; i < 5; i++) {
        const entry = await read(this.deps.kv, key);
        if (entry.value !== null && entry.value >= at) break;
        if ((await atomic(this.deps.kv).check(entry).set(key, at).commit()).ok) break;
      }
    }
  }
}

/** Wrong operator tokens one client IP may send per window before `/admin/*` answers 429. */
export const ADMIN_AUTH_FAILURES_PER_WINDOW = 10;
export const ADMIN_AUTH_WINDOW_MS = 10 * 60_000;
