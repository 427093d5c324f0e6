/**
 * An atomic write that kept conflicting past its attempts. Storage knows no business errors: the
 * one error handler renders this, like any unexpected failure, as 500 `internal_error` (safe to
 * retry with the same Idempotency-Key).
 */
export class AtomicConflictError extends Error {
  constructor(attempts: number) {
    super(`atomic write still conflicting after ${attempts} attempts`);
    this.name = "AtomicConflictError";
  }
}

/** One attempt's write and what to return when it commits. */
export interface Attempt<T> {
  op: Deno.AtomicOperation;
  result: T;
  /** Told the versionstamp when this attempt's write commits (what its keys now carry). */
  committed?: (versionstamp: string) => void;
}

/** Counts conflicts retried, so benchmarks can report retries per operation. */
export const atomicStats = { commits: 0, retries: 0 };

/**
 * Runs a read-check-write cycle until it commits: `attempt` reads what it needs, builds an atomic
 * operation that checks those reads, and returns it; on a version conflict the whole attempt runs
 * again with fresh reads. Business failures are thrown from `attempt` and end the loop. The only
 * read-modify-write helper of the service: money and counters go through it.
 *
 * @example
 * ```ts
 * import { atomic, keys, read } from "../domain/platform/store.ts";
 * declare const kv: Deno.Kv, accountId: string;
 * const count = await atomically(kv, async () => {
 *   const entry = await read(kv, keys.webhookCount(accountId));
 *   const next = (entry.value ?? 0) + 1;
 *   return { op: atomic(kv).check(entry).set(entry.key, next), result: next };
 * });
 * ```
 */
export async function atomically<T>(
  _kv: Deno.Kv,
  attempt: () => Promise<Attempt<T>>,
  maxAttempts = 64,
): Promise<T> {
  for (let i = 0; i < maxAttempts; i++) {
    const { op, result, committed } = await attempt();
    const res = await op.commit();
    if (res.ok) {
      atomicStats.commits++;
      committed?.(res.versionstamp);
      return result;
    }
    atomicStats.retries++;
    // Full jitter, growing slowly: contention on one key is short-lived.
    const cap = Math.min(50, 2 ** Math.min(i, 6));
    await new Promise((r) => setTimeout(r, Math.random() * cap));
  }
  throw new AtomicConflictError(maxAttempts);
}
