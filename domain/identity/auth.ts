import type {
  AccountRecord,
  ApiKeyRecord,
  AuthChange,
  KeyMode,
  RevocationSignal,
} from "./types.ts";
import { ApiError, atomic, type Deps, keys, read, readMany } from "../platform/mod.ts";
import { hashKey } from "./key_hash.ts";
import type { SandboxUsage } from "../projects/types.ts";

/** Who is calling: the key, its account and (for sandbox keys) the trial usage. */
export interface Principal {
  key: ApiKeyRecord;
  account: AccountRecord;
  usage: SandboxUsage | null;
  /**
   * The OAuth grant (connected app) an access token resolved through; absent when the caller
   * presented the API key itself. A token acts as its approving key but only where an operation
   * admits tokens (app/operation.ts `tokens`).
   */
  grant?: { id: string; clientId: string };
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

/**
 * 401 `key_expired`, holding the principal of the expired key (never rendered): an operation
 * that serves an expired sandbox key (`expiredSandboxKey: "admit"` in app/operation.ts: starting
 * and polling an upgrade, where a trial that ran out continues) takes it from here.
 */
export class KeyExpiredError extends ApiError {
  constructor(readonly principal: Principal) {
    super(
      "key_expired",
      "This sandbox key has expired; it can still start an upgrade (POST /v1/upgrades) that a " +
        "human finishes",
    );
  }
}

/** The principal if its key may be used at `now`; 401 `key_revoked` or `key_expired` otherwise. */
function usable(principal: Principal, now: number): Principal {
  const { key } = principal;
  if (key.revokedAt !== null) throw new ApiError("key_revoked", "This API key was revoked");
  if (key.expiresAt !== null && key.expiresAt <= now) throw new KeyExpiredError(principal);
  return principal;
}

/**
 * The principal an expired sandbox key would have had, from the error resolving it, or null: a
 * revoked, unknown or live key, or an OAuth token (a token never reaches an upgrade), is not
 * admitted.
 */
export function expiredSandboxPrincipal(err: unknown): Principal | null {
  if (!(err instanceof KeyExpiredError)) return null;
  const p = err.principal;
  return p.key.mode === "sandbox" && !p.grant && p.key.revokedAt === null ? p : null;
}

interface CacheEntry {
  principal: Principal;
  fetchedAt: number;
}

const MAX_ENTRIES = 10_000;

export type { AuthChange };

export type { RevocationSignal };

/**
 * Changes each shard remembers. A process that finds more changes in a shard than this since it
 * last looked (a stalled event loop, a watch that restarted) cannot tell which accounts they named
 * and drops every cached account of that shard instead.
 */
export const REVOCATION_RING = 64;

/**
 * Shards of the revocation signal. Accounts are spread over them by a hash of their id, so
 * revocations in different accounts rarely contend on one key (each commit checks its shard), and
 * a burst that overflows one shard's ring costs the caches that shard's accounts, not all. At most
 * 10: every process reads all shards in one `getMany` and watches them in one `watch`, and both
 * take at most 10 keys.
 */
export const REVOCATION_SHARDS = 8;

/** The shard of an account's revocations: FNV-1a of its id, modulo `REVOCATION_SHARDS`. */
export function revocationShard(accountId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    h ^= accountId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % REVOCATION_SHARDS;
}

/** The keys of every shard of the signal, in shard order. */
export function revocationKeys(): ReturnType<typeof keys.authRevocations>[] {
  return Array.from({ length: REVOCATION_SHARDS }, (_, i) => keys.authRevocations(i));
}

/**
 * Adds the revocation signal to the atomic operation that makes a key unusable, so the signal and
 * the change commit together or not at all. `entry` is the account's shard,
 * `keys.authRevocations(revocationShard(accountId))`, as read in the same attempt (it is checked:
 * two revocations never lose each other's ring entry; one conflicts and retries, which only
 * revocations in accounts of the same shard do).
 *
 * @example
 * ```ts
 * import { keys } from "../platform/store.ts";
 * import type { ApiKeyRecord } from "./types.ts";
 * declare const kv: Deno.Kv, op: Deno.AtomicOperation, accountId: string, keyId: string;
 * declare const hash: string, revoked: ApiKeyRecord, now: number;
 * const shard = keys.authRevocations(revocationShard(accountId));
 * const [keyEntry, signal] = await kv.getMany<[ApiKeyRecord, RevocationSignal]>([
 *   keys.apiKey(hash),
 *   shard,
 * ]);
 * signalAuthChange(op.set(keyEntry.key, revoked), signal, { accountId, keyId, at: now });
 * ```
 */
export function signalAuthChange(
  op: Deno.AtomicOperation,
  entry: Deno.KvEntryMaybe<RevocationSignal>,
  change: Omit<AuthChange, "seq">,
): Deno.AtomicOperation {
  const shard = revocationShard(change.accountId);
  if (entry.key[0] !== "auth_revocations" || entry.key[1] !== shard) {
    throw new Error(`the revocation of ${change.accountId} belongs in shard ${shard}`);
  }
  const seq = (entry.value?.seq ?? 0) + 1;
  const recent = [...(entry.value?.recent ?? []), { seq, ...change }].slice(-REVOCATION_RING);
  return op.check(entry).set(
    keys.authRevocations(shard),
    {
      seq,
      recent,
    } satisfies RevocationSignal,
  );
}

/** What an invalidation drops: one account, every account of a signal shard, or everything. */
export type Invalidation = { accountId: string } | { shard: number } | "all";

/**
 * Resolves bearer keys to principals with an in-process cache, because a KV round trip on every
 * request would cap throughput far below the budget. Staleness is bounded three ways:
 * - writes made by this process invalidate the account's entries at once (`invalidateAccount`);
 * - writes by other processes that make a key unusable (revocation) carry the revocation signal
 *   (`signalAuthChange`, sharded by account), which every process follows (`follow`): through one
 *   `kv.watch` of every shard, and on a local KV file also by reading them all (one `getMany`)
 *   every `AUTH_REVOCATION_POLL_MS` (50 ms), because Deno's SQLite KV does not notify watchers in
 *   other processes (denoland/deno#21640, and domain/jobs/watch.ts). Either way the named
 *   accounts are dropped within ~100 ms;
 * - `authCacheTtlMs` (`AUTH_CACHE_TTL_MS`, 2 s) stays as the fallback: an entry older than that
 *   is read again whatever the signal said, should a signal be missed altogether.
 *
 * Sensitive writes do not trust the cache at all: `confirm` re-reads the key with strong
 * consistency (operations marked `sensitive`, over `/v1` and MCP alike).
 */
export class KeyResolver {
  #cache = new Map<string, CacheEntry>();
  #byAccount = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a lookup that started before one is answered, not cached. */
  #generation = 0;
  /** Per shard: the sequence number and versionstamp last applied; null until the first look. */
  #seen: ({ seq: number; stamp: string | null } | null)[] = Array(REVOCATION_SHARDS).fill(null);
  #following: { stop(): Promise<void> } | null = null;
  #listeners: ((dropped: Invalidation) => void)[] = [];

  constructor(private deps: Deps) {}

  /**
   * The principal of a raw key, or throws 401 with the precise code. Answers synchronously from a
   * fresh cache entry (the hot path), so callers only await when KV must be asked.
   */
  resolve(raw: string): Principal | Promise<Principal> {
    return this.resolveHash(hashKey(raw));
  }

  /**
   * As `resolve`, from the key's SHA-256 hex: how an OAuth access token reaches the principal of
   * the key that approved it (domain/identity/oauth/resolver.ts), on the same cache.
   */
  resolveHash(hash: string): Principal | Promise<Principal> {
    const now = this.deps.clock.now();
    const entry = this.#cache.get(hash);
    if (entry && now - entry.fetchedAt <= this.deps.config.authCacheTtlMs) {
      return usable(entry.principal, now);
    }
    return this.#fetch(hash, now);
  }

  /**
   * The caller's principal re-read from KV with strong consistency, bypassing the cache, for the
   * writes a revoked key must never make even in the moment before the revocation signal arrives
   * (operations marked `sensitive` in app/operation.ts: minting and revoking keys, webhooks,
   * purchases, subscriptions, schedules). Throws the same 401 `key_revoked` / `key_expired` /
   * `unauthorized` as `resolve`; refreshes the cache entry unless an invalidation raced the read.
   *
   * @example
   * ```ts
   * declare const services: { resolver: { confirm(p: Principal): Promise<unknown> } };
   * declare const principal: Principal;
   * const fresh = await services.resolver.confirm(principal);
   * ```
   */
  confirm(principal: Principal): Promise<Principal> {
    return this.#fetch(principal.key.hash, this.deps.clock.now());
  }

  /**
   * Calls `listener` on every invalidation (an account, a signal shard's accounts, or
   * everything), so caches derived from keys (OAuth access tokens) drop what they hold at the same
   * moments.
   */
  onInvalidate(listener: (dropped: Invalidation) => void): void {
    this.#listeners.push(listener);
  }

  /** Forgets every cached key of an account; called after any write that changes what they show. */
  invalidateAccount(accountId: string): void {
    this.#generation++;
    for (const l of this.#listeners) l({ accountId });
    this.#dropAccount(accountId);
  }

  /** Forgets every cached key of the accounts of one signal shard. */
  invalidateShard(shard: number): void {
    this.#generation++;
    for (const l of this.#listeners) l({ shard });
    for (const accountId of [...this.#byAccount.keys()]) {
      if (revocationShard(accountId) === shard) this.#dropAccount(accountId);
    }
  }

  /** Forgets every cached key. */
  invalidateAll(): void {
    this.#generation++;
    for (const l of this.#listeners) l("all");
    this.#cache.clear();
    this.#byAccount.clear();
  }

  #dropAccount(accountId: string): void {
    const hashes = this.#byAccount.get(accountId);
    if (!hashes) return;
    for (const h of hashes) this.#cache.delete(h);
    this.#byAccount.delete(accountId);
  }

  /**
   * Applies a read of one shard of the revocation signal (its value is null until the shard's
   * first revocation): drops the accounts of the changes made since the last value applied, or
   * every cached account of the shard on its first look, when more changes were made than the ring
   * holds, or when the sequence went back (a reset store). A read older than one already applied
   * (the watch and the poll race) changes nothing.
   */
  observe(entry: Deno.KvEntryMaybe<RevocationSignal>): void {
    const shard = entry.key[1];
    if (typeof shard !== "number" || !(shard >= 0 && shard < REVOCATION_SHARDS)) return;
    const stamp = entry.versionstamp;
    const seen = this.#seen[shard];
    if (stamp !== null && seen?.stamp != null && stamp < seen.stamp) return;
    const signal = entry.value;
    const seq = signal?.seq ?? 0;
    this.#seen[shard] = { seq, stamp };
    if (seen === null || seq < seen.seq) return this.invalidateShard(shard);
    if (seq === seen.seq) return;
    const missed = signal!.recent.filter((c) => c.seq > seen.seq);
    if (missed.length < seq - seen.seq) return this.invalidateShard(shard);
    for (const c of missed) this.invalidateAccount(c.accountId);
  }

  /** Reads every shard of the signal once (one `getMany`) and applies them: what the poll does. */
  async poll(): Promise<void> {
    for (const entry of await readMany(this.deps.kv, revocationKeys())) this.observe(entry);
  }

  /**
   * Follows the revocation signal until `close`: one `kv.watch` on its shards (restarted after a
   * failure), plus a read of them all every `authRevocationPollMs` when that is above 0 (the
   * default on a local KV file, where the watch sees only this process's writes). Idempotent.
   */
  follow(): void {
    if (this.#following) return;
    const { kv, config } = this.deps;
    const stopping = new AbortController();
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        if (stopping.signal.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          stopping.signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        stopping.signal.addEventListener("abort", done);
      });
    const watch: { reader: ReadableStreamDefaultReader<Deno.KvEntryMaybe<unknown>[]> | null } = {
      reader: null,
    };
    const watching = (async () => {
      while (!stopping.signal.aborted) {
        try {
          const reader = watch.reader = kv.watch(revocationKeys()).getReader();
          while (true) {
            const { done, value } = await reader.read();
            if (done) break;
            for (const e of value) this.observe(e as Deno.KvEntryMaybe<RevocationSignal>);
          }
        } catch (err) {
          if (!stopping.signal.aborted) logAuthError("revocation watch failed", err);
        }
        watch.reader = null;
        await pause(1_000);
      }
    })();
    const pollMs = config.authRevocationPollMs;
    const polling = (async () => {
      while (pollMs > 0 && !stopping.signal.aborted) {
        try {
          await this.poll();
        } catch (err) {
          if (!stopping.signal.aborted) logAuthError("revocation poll failed", err);
        }
        await pause(pollMs);
      }
    })();
    this.#following = {
      async stop() {
        stopping.abort();
        await watch.reader?.cancel().catch(() => {});
        await Promise.all([watching, polling]);
      },
    };
  }

  /** Stops following the revocation signal (before the KV closes). */
  async close(): Promise<void> {
    const following = this.#following;
    this.#following = null;
    await following?.stop();
  }

  /** Reads the key (and account) strongly, caches it unless an invalidation raced the read. */
  async #fetch(hash: string, now: number): Promise<Principal> {
    const generation = this.#generation;
    const principal = await this.#load(hash);
    if (!principal) {
      this.#drop(hash);
      throw new ApiError("unauthorized", "Unknown API key");
    }
    if (generation === this.#generation) this.#store(hash, { principal, fetchedAt: now });
    return usable(principal, now);
  }

  async #load(hash: string): Promise<Principal | null> {
    const { kv } = this.deps;
    const keyEntry = await read(kv, keys.apiKey(hash), "strong");
    const key = keyEntry.value;
    if (!key) return null;
    const [accountEntry, usageEntry] = await readMany(kv, [
      keys.account(key.accountId),
      keys.sandboxUsage(key.accountId),
    ], "strong");
    if (!accountEntry.value) return null;
    return {
      key,
      account: accountEntry.value,
      usage: key.mode === "sandbox" ? usageEntry.value ?? { audits: 0, articles: 0 } : null,
    };
  }

  #store(hash: string, entry: CacheEntry): void {
    if (this.#cache.size >= MAX_ENTRIES && !this.#cache.has(hash)) {
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

function logAuthError(msg: string, err: unknown): void {
  console.error(JSON.stringify({ level: "error", msg, error: String(err) }));
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
