/**
 * Giving the event loop back during long synchronous work. The site-wide passes run loops over a
 * whole site's URLs or links; a hostile site can make those millions of items, and one process
 * may also be serving requests or renewing a lease, so such loops yield every so often.
 *
 * @example
 * ```ts
 * const pace = new Pacer();
 * for (const url of urls) {
 *   if (pace.due()) await yieldToLoop();
 *   work(url);
 * }
 * ```
 *
 * @module
 */

/** Items a loop handles between two yields: a few hundred cheap ones stay well under 1 ms. */
export const YIELD_EVERY = 256;

/** Lets timers, I/O and other tasks run (a macrotask: microtasks alone would not). */
export const yieldToLoop = (): Promise<void> => new Promise<void>((r) => setTimeout(r, 0));

/**
 * Counts work and says when a yield is due. A plain counter, so a tight loop pays a comparison
 * per item rather than a promise per item.
 */
export class Pacer {
  #done = 0;

  /** `budget`: units of work between two yields (items by default; links, edges, ...). */
  constructor(readonly budget: number = YIELD_EVERY) {}

  /** Counts `work` units; true once `budget` of them were done since the last time it said so. */
  due(work = 1): boolean {
    this.#done += work;
    if (this.#done < this.budget) return false;
    this.#done = 0;
    return true;
  }
}
