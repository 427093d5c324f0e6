/**
 * The budgets that stop a whole crawl (the page, byte and time budgets of the audit's funding,
 * and the error-rate stop), and how a stop is noted: the crawl is partial, and the cap's
 * `leftOut` is every URL the crawl knew and never fetched. It is set, not added to, because the
 * frontier's queue already holds everything left (a rendered audit's later round that stops
 * again must not count the same URLs twice).
 *
 * @example
 * ```ts
 * import type { CrawlInput, CrawlState } from "./state.ts";
 * import { ByteBudget } from "./byte_budget.ts";
 * declare const input: CrawlInput, state: CrawlState;
 * const stop = budgetStop(input, state, new ByteBudget(input.maxTotalBytes, state.bytes), Date.now());
 * if (stop) noteStop(state, stop, state.tail - state.head);
 * ```
 *
 * @module
 */
import type { ByteBudget } from "./byte_budget.ts";
import type { CapName } from "./caps.ts";
import type { CrawlInput, CrawlState } from "./state.ts";

/** A budget that stopped the crawl (CrawlState `cut`). */
export type CrawlCut = { cap: CapName; limit: number; extra: number };

/** Which budget allows no further fetch now (null: none), with its value. */
export function budgetStop(
  input: CrawlInput,
  state: Pick<CrawlState, "fetches">,
  bytes: Pick<ByteBudget, "exhausted" | "limit">,
  now: number,
): CrawlCut | null {
  if (state.fetches >= Math.max(1, input.maxPages)) {
    return { cap: "pages", limit: input.maxPages, extra: 0 };
  }
  if (bytes.exhausted) return { cap: "bytes", limit: bytes.limit!, extra: 0 };
  if (input.deadlineAt !== undefined && now > input.deadlineAt) {
    return { cap: "duration", limit: Math.round((input.deadlineAt - input.now) / 1000), extra: 0 };
  }
  return null;
}

/** Notes a stop that left `left` URLs unfetched (nothing when it left none). */
export function noteStop(
  state: Pick<CrawlState, "capsHit" | "unfetched" | "truncated">,
  stop: CrawlCut,
  left: number,
): void {
  if (left <= 0) return;
  state.truncated = true;
  state.unfetched = left;
  (state.capsHit ??= {})[stop.cap] = { limit: stop.limit, leftOut: left };
}
