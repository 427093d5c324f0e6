/**
 * How many frontier entries a crawl step takes on a KV that answers slowly. A step makes about a
 * dozen round trips one after another (claim, state, frontier, robots, the records' commits, the
 * allocation's reads, the state's commit, the release), and meanwhile fetches nothing: on a local
 * KV that is under a millisecond each, on KV Connect across a network 10 to 30 ms each, which at
 * 100 pages a step cost a third of a crawl's pages/s or more. So a step measures its round trip
 * (the read of its state) and, when KV is slow, takes more pages, so the same round trips are
 * shared by more of them. The step's time limit still holds, a grown step takes no entry past
 * `limits.pages` once it has read GROWN_STEP_BYTES of bodies (a step holds its pages' facts until
 * it records them, so heavy pages keep the step near its usual size), and a worker that dies
 * still loses one step (now a larger one): the exactly-once recording does not depend on the
 * step's size. A partitioned crawl's ranges keep `limits.pages` (its workers overlap their round
 * trips already).
 *
 * @example
 * ```ts
 * import { stepPagesFor } from "./step_size.ts";
 * const limits = { pages: 100, ms: 20_000, maxPages: 800 };
 * stepPagesFor(limits, [0.3, 0.2]); // 100: a local KV
 * stepPagesFor(limits, [31, 30, 45]); // 750: 30 ms away
 * stepPagesFor(limits, [50, 48]); // 800: capped
 * ```
 *
 * @module
 */
import type { StepLimits } from "./state.ts";

/** A step takes one `limits.pages` more per this many ms of round trip (10 ms: 2.5×). */
export const STEP_RTT_UNIT_MS = 4;
/** Round-trip samples a crawl keeps (its last steps' state reads); the smallest counts. */
export const RTT_SAMPLES = 3;
/** How many times `CRAWL_STEP_PAGES`' default a step may grow to on a slow KV. */
export const MAX_STEP_GROWTH = 8;

/**
 * Entries for this step: `limits.pages`, or on a slow KV (the smallest of `rttMs`, so one sample
 * slowed by a busy event loop or a collection does not grow the step) up to `limits.maxPages`.
 * Without `maxPages` (the operator fixed `CRAWL_STEP_PAGES`, or a test) always `limits.pages`.
 */
export function stepPagesFor(limits: StepLimits, rttMs: readonly number[] | undefined): number {
  if (limits.maxPages === undefined || !rttMs || rttMs.length === 0) return limits.pages;
  const rtt = Math.min(...rttMs);
  const grown = Math.ceil(limits.pages * rtt / STEP_RTT_UNIT_MS);
  return Math.max(limits.pages, Math.min(limits.maxPages, grown));
}

/** Bodies a grown step reads before it takes no entry past `limits.pages`. */
export const GROWN_STEP_BYTES = 16 * 1024 * 1024;

/**
 * Whether a step that took `pages` entries (from `stepPagesFor`) should take no further one:
 * it grew past `limits.pages`, has taken that many (`taken`) and read `stepBytes` of bodies.
 */
export function grownStepFull(
  limits: StepLimits,
  pages: number,
  taken: number,
  stepBytes: number,
): boolean {
  return pages > limits.pages && taken >= limits.pages && stepBytes >= GROWN_STEP_BYTES;
}

/** `samples` with `ms` added, the oldest dropped past RTT_SAMPLES (rounded to 0.1 ms). */
export function noteRtt(samples: readonly number[] | undefined, ms: number): number[] {
  return [...(samples ?? []), Math.round(ms * 10) / 10].slice(-RTT_SAMPLES);
}
