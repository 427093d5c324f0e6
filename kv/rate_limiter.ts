import { atomically } from "./atomic.ts";
import { keys } from "./keys.ts";
import { atomic, read } from "./typed.ts";

/** The time source the limiter reads (any object with `now()`, e.g. the service clock). */
export interface TimeSource {
  /** Epoch milliseconds. */
  now(): number;
}

/** What a hit on a limiter decided, with everything the response headers need. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds at which the window resets. */
  reset: number;
  /** Seconds until the window resets (for Retry-After). */
  retryAfter: number;
}

export interface RateLimiterOptions {
  /** Names the limiter's buckets in KV. */
  name: string;
  limit: number;
  windowMs: number;
  /**
   * `strict`: every hit is a checked KV increment (for low, abuse-facing limits such as signups).
   * `batched`: hits are counted in memory and reconciled with KV every `syncMs`, so the hot path
   * makes no KV write per request while processes sharing the KV still see each other's counts.
   */
  mode: "strict" | "batched";
  syncMs?: number;
  /**
   * `batched`: also reconcile as soon as this many hits are unsynced (default: 1/50 of the limit),
   * so a burst that fits in one `syncMs` interval cannot pass the limit once per process.
   */
  syncEvery?: number;
  /**
   * `batched`: once this few requests are left by the local view (default: 1/5 of the limit),
   * each allowed hit is a checked KV increment, so the end of the budget is exact across
   * processes however fast they are hit; refusals past the limit stay in memory.
   */
  exactBelow?: number;
}

interface Local {
  windowStart: number;
  /** Total in KV when last read, ours included. */
  base: number;
  /** Hits counted here and not yet added to KV. */
  unsynced: number;
  /** Hits being added to KV by a running sync or exact hit. */
  pushing: number;
  lastSync: number;
  syncing: Promise<void> | null;
  loaded: Promise<void> | null;
}

/**
 * A fixed-window limiter over Deno KV. Counters live at `["rate_limits", bucket, windowStart]`
 * with an expiry of two windows, and are updated with a checked write (never `sum`, which drops
 * the expiry on SQLite).
 *
 * @example
 * ```ts
 * declare const kv: Deno.Kv, clock: ConstructorParameters<typeof RateLimiter>[1];
 * declare function tooMany(d: RateDecision): Error;
 * const limiter = new RateLimiter(kv, clock, { name: "key", limit: 600, windowMs: 60_000, mode: "batched" });
 * const d = await limiter.hit("key_123");
 * if (!d.allowed) throw tooMany(d);
 * ```
 */
export class RateLimiter {
  #local = new Map<string, Local>();
  #lastSweep = 0;

  constructor(
    private kv: Deno.Kv,
    private clock: TimeSource,
    readonly options: RateLimiterOptions,
  ) {}

  /**
   * Counts one request. Answers synchronously once the bucket's window is loaded (the common case
   * on the hot path), so callers only await when it actually waits on KV.
   */
  hit(bucket: string): RateDecision | Promise<RateDecision> {
    const now = this.clock.now();
    const { windowMs } = this.options;
    const windowStart = Math.floor(now / windowMs) * windowMs;
    if (this.options.mode === "strict") return this.#strictHit(bucket, windowStart, now);

    const id = `${this.options.name}:${bucket}`;
    let local = this.#local.get(id);
    if (!local || local.windowStart !== windowStart) {
      local = {
        windowStart,
        base: 0,
        unsynced: 0,
        pushing: 0,
        lastSync: now,
        syncing: null,
        loaded: null,
      };
      this.#local.set(id, local);
      const fresh = local;
      // A failed read must not fail requests: count from 0 here; the next sync learns the total.
      fresh.loaded = this.#read(id, windowStart).then(
        (n) => void (fresh.base = n),
        (err) => logSyncFailure(this.options.name, err),
      ).finally(() => (fresh.loaded = null));
      this.#sweep(now);
    }
    if (local.loaded) {
      const pending = local;
      return pending.loaded!.then(() => this.#count(id, pending, windowStart, now));
    }
    return this.#count(id, local, windowStart, now);
  }

  #count(
    id: string,
    local: Local,
    windowStart: number,
    now: number,
  ): RateDecision | Promise<RateDecision> {
    const { limit } = this.options;
    const used = local.base + local.unsynced + local.pushing;
    const every = this.options.syncEvery ?? Math.max(1, Math.ceil(limit / 50));
    // A sync that is slow to commit (other processes writing the same counter) leaves `base` stale:
    // past one batch of hits waiting behind it, count exactly instead of trusting it.
    const stale = local.syncing !== null && local.unsynced >= every;
    // `base` is a KV total: at the limit, the window is spent whatever the other processes did.
    const nearLimit = used >= limit - (this.options.exactBelow ?? Math.ceil(limit / 5));
    if (local.base < limit && (nearLimit || stale)) {
      return this.#exactHit(id, local, windowStart, now);
    }
    const allowed = used < limit;
    if (allowed) local.unsynced++;
    const due = now - local.lastSync >= (this.options.syncMs ?? 250) || local.unsynced >= every;
    if (!local.syncing && due) {
      local.lastSync = now;
      const l = local;
      // In the background, so a KV failure must not become an unhandled rejection (which ends
      // the process): the hits stay unsynced and the next sync pushes them.
      l.syncing = this.#sync(id, l)
        .catch((err) => logSyncFailure(this.options.name, err))
        .finally(() => (l.syncing = null));
    }
    return this.#decision(allowed, used + (allowed ? 1 : 0), windowStart, now);
  }

  /** Reconciles every bucket with KV now: pushes unsynced hits, learns other processes' counts. */
  async flush(): Promise<void> {
    for (const [id, local] of this.#local) {
      if (local.syncing) await local.syncing;
      if (local.loaded) await local.loaded;
      await this.#sync(id, local);
    }
  }

  #decision(allowed: boolean, used: number, windowStart: number, now: number): RateDecision {
    const end = windowStart + this.options.windowMs;
    return {
      allowed,
      limit: this.options.limit,
      remaining: Math.max(0, this.options.limit - used),
      reset: Math.ceil(end / 1000),
      retryAfter: Math.max(1, Math.ceil((end - now) / 1000)),
    };
  }

  /** The decision a hit on a strict limiter's bucket would meet now, without counting one. */
  async peek(bucket: string): Promise<RateDecision> {
    const now = this.clock.now();
    const windowStart = Math.floor(now / this.options.windowMs) * this.options.windowMs;
    const used = await this.#read(`${this.options.name}:${bucket}`, windowStart);
    return this.#decision(used < this.options.limit, used, windowStart, now);
  }

  async #strictHit(bucket: string, windowStart: number, now: number): Promise<RateDecision> {
    const key = keys.rateLimit(`${this.options.name}:${bucket}`, windowStart);
    const { allowed, used } = await atomically(this.kv, async () => {
      const entry = await read(this.kv, key);
      const count = entry.value ?? 0;
      if (count >= this.options.limit) {
        return { op: this.kv.atomic().check(entry), result: { allowed: false, used: count } };
      }
      const op = atomic(this.kv).check(entry).set(key, count + 1, {
        expireIn: 2 * this.options.windowMs,
      });
      return { op, result: { allowed: true, used: count + 1 } };
    });
    return this.#decision(allowed, used, windowStart, now);
  }

  async #read(id: string, windowStart: number): Promise<number> {
    return (await read(this.kv, keys.rateLimit(id, windowStart))).value ?? 0;
  }

  async #sync(id: string, local: Local): Promise<void> {
    const delta = local.unsynced;
    if (delta === 0) {
      const read = await this.#read(id, local.windowStart);
      local.base = Math.max(local.base, read);
      return;
    }
    const { total } = await this.#push(id, local, delta, false);
    local.base = Math.max(local.base, total);
  }

  /**
   * Near the limit: adds this process's unsynced hits and, if the KV total leaves room, this hit,
   * in one checked write. Exact across processes up to their own unsynced hits.
   */
  async #exactHit(
    id: string,
    local: Local,
    windowStart: number,
    now: number,
  ): Promise<RateDecision> {
    // A background sync still committing holds hits the KV total does not show yet: deciding
    // against that total would admit one past the limit, so wait for it to land first.
    while (local.syncing) await local.syncing;
    let result: { allowed: boolean; total: number };
    try {
      result = await this.#push(id, local, local.unsynced, true);
    } catch (err) {
      // KV unavailable: decide on the local view, as the batched path does.
      logSyncFailure(this.options.name, err);
      const used = local.base + local.unsynced + local.pushing;
      const allowed = used < this.options.limit;
      if (allowed) local.unsynced++;
      return this.#decision(allowed, used + (allowed ? 1 : 0), windowStart, now);
    }
    local.base = Math.max(local.base, result.total);
    const used = local.base + local.unsynced + local.pushing;
    return this.#decision(result.allowed, used, windowStart, now);
  }

  /**
   * Moves `delta` unsynced hits (plus one new hit when `withHit` and the total is under the
   * limit) into the KV counter. The hits count as `pushing` meanwhile, and go back to `unsynced`
   * if the write fails, so nothing is lost or counted twice.
   */
  async #push(
    id: string,
    local: Local,
    delta: number,
    withHit: boolean,
  ): Promise<{ allowed: boolean; total: number }> {
    local.unsynced -= delta;
    local.pushing += delta;
    const key = keys.rateLimit(id, local.windowStart);
    try {
      return await atomically(this.kv, async () => {
        const entry = await read(this.kv, key);
        const before = (entry.value ?? 0) + delta;
        const allowed = withHit && before < this.options.limit;
        const next = before + (allowed ? 1 : 0);
        const op = atomic(this.kv).check(entry);
        if (next !== (entry.value ?? 0)) {
          op.set(key, next, { expireIn: 2 * this.options.windowMs });
        }
        return { op, result: { allowed, total: next } };
      });
    } catch (err) {
      local.unsynced += delta;
      throw err;
    } finally {
      local.pushing -= delta;
    }
  }

  #sweep(now: number): void {
    if (now - this.#lastSweep < this.options.windowMs) return;
    this.#lastSweep = now;
    for (const [id, local] of this.#local) {
      if (
        local.windowStart + this.options.windowMs <= now && !local.syncing && local.unsynced === 0
      ) {
        this.#local.delete(id);
      }
    }
  }
}

function logSyncFailure(limiter: string, err: unknown): void {
  console.error(JSON.stringify({
    level: "error",
    msg: "rate limit sync with KV failed; counting locally until the next sync",
    limiter,
    error: String(err),
  }));
}
