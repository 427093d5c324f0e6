/**
 * The crawl's byte budget, shared by every fetch of a step (pages, robots.txt, sitemaps,
 * llms.txt, library heads). A fetch reserves before it starts and is capped at what it reserved,
 * so concurrent fetches together never read past the budget: counting after a batch let a
 * sandbox audit of 5 MiB pages read 121 MiB against a 10 MiB budget.
 *
 * @example
 * ```ts
 * const budget = new ByteBudget(10 * 1024 * 1024, 0); // the step starts from state.bytes
 * const cap = await budget.reserve(5 * 1024 * 1024); // null: spent
 * if (cap !== null) {
 *   // safeFetch(url, { maxBytes: cap }) reads at most `cap`; settle with what it read.
 *   budget.settle(cap, 1_234);
 * }
 * budget.used; // 1234, what the step stores back in state.bytes
 * ```
 *
 * @module
 */

/** A fetch is not started for less than this while others are in flight: it waits for them. */
const MIN_SLICE = 64 * 1024;

export class ByteBudget {
  #used: number;
  #reserved = 0;
  #inFlight = 0;
  #waiters: (() => void)[] = [];

  /** `limit` undefined: no budget (every reservation gets what it asks). */
  constructor(readonly limit: number | undefined, used = 0) {
    this.#used = used;
  }

  /** Bytes read so far, this step's included. */
  get used(): number {
    return this.#used;
  }

  /** True once nothing more may be read. */
  get exhausted(): boolean {
    return this.limit !== undefined && this.#used >= this.limit;
  }

  /**
   * Reserves up to `want` bytes for one fetch: resolves with the cap the fetch must use, or null
   * when the budget is spent. Waits while others hold the rest of it (they hand back what they
   * did not read when they settle).
   */
  async reserve(want: number): Promise<number | null> {
    if (this.limit === undefined) {
      this.#inFlight++;
      return want;
    }
    while (true) {
      const free = this.limit - this.#used - this.#reserved;
      if (free <= 0 && this.#inFlight === 0) return null;
      if (free > 0 && (free >= Math.min(want, MIN_SLICE) || this.#inFlight === 0)) {
        const take = Math.min(want, free);
        this.#reserved += take;
        this.#inFlight++;
        return take;
      }
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  /** Ends a reservation: `read` bytes count, the rest goes back to the budget. */
  settle(reserved: number, read: number): void {
    this.#inFlight--;
    if (this.limit !== undefined) this.#reserved -= reserved;
    this.#used += Math.max(0, read);
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}

/** Thrown by a crawl fetch that found the byte budget spent before it started. */
export class BudgetSpentError extends Error {
  constructor() {
    super("The crawl's byte budget is spent");
    this.name = "BudgetSpentError";
  }
}
