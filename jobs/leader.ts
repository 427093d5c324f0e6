/**
 * One leader across every process on a KV, for periodic work that must run once (stale-job
 * sweeps, schedule dispatch, pruning): a lease record in KV, taken with a checked commit when it
 * is free or expired and renewed by its holder on each tick. Self-hosted, every process runs its
 * own crons and timers; with the lease only the leader's tick does the shared work. A leader that
 * dies is replaced once its lease runs out.
 *
 * @example
 * ```ts
 * declare const kv: Deno.Kv, sweep: () => Promise<void>;
 * const leader = new LeaderLease(kv, "maintenance", { ttlMs: 30_000, now: () => Date.now() });
 * if (await leader.acquire()) await sweep();
 * await leader.release(); // at shutdown
 * ```
 *
 * @module
 */
import { atomic, keys, type LeaseRecord, randomPart, read } from "../domain/platform/mod.ts";

export class LeaderLease {
  readonly holder = randomPart(12);

  constructor(
    private readonly kv: Deno.Kv,
    private readonly name: string,
    private readonly opts: { ttlMs: number; now: () => number },
  ) {}

  /** Takes or renews the lease; true when this process leads until the next call. */
  async acquire(): Promise<boolean> {
    const key = keys.lease(this.name);
    const entry = await read(this.kv, key);
    const now = this.opts.now();
    const cur = entry.value;
    if (cur && cur.holder !== this.holder && cur.until > now) return false;
    const res = await atomic(this.kv).check(entry)
      .set(key, { holder: this.holder, until: now + this.opts.ttlMs } satisfies LeaseRecord)
      .commit();
    return res.ok;
  }

  /** Gives the lease up (shutdown), so another process leads at its next tick. */
  async release(): Promise<void> {
    const key = keys.lease(this.name);
    const entry = await read(this.kv, key);
    if (entry.value?.holder !== this.holder) return;
    await this.kv.atomic().check(entry).delete(key).commit();
  }
}
