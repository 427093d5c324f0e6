/**
 * Giving the event loop back during long synchronous work. The site-wide passes run loops over a
 * whole site's URLs or links; a hostile site can make those millions of items, and one process
 * may also be serving requests or renewing a lease, so such loops yield every so often.
 *
 * @example
 * ```ts
 * declare const urls: string[], work: (url: string) => void;
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

/** A yield costs a timer turn (1–2 ms on a loaded machine): not more often than this. */
const MIN_SLICE_MS = 8;

/**
 * Counts work and says when a yield is due: after `budget` units, once at least MIN_SLICE_MS
 * have passed since the last yield. A plain counter, so a tight loop pays a comparison per item
 * rather than a promise (or a clock read) per item; the time check keeps cheap loops from paying
 * a timer turn every few hundred items.
 */
export class Pacer {
  #done = 0;
  #since = performance.now();

  /** `budget`: units of work between two looks at the clock (items by default; links, ...). */
  constructor(readonly budget: number = YIELD_EVERY) {}

  /** Counts `work` units; true when a yield is due (the caller then yields). */
  due(work = 1): boolean {
    this.#done += work;
    if (this.#done < this.budget) return false;
    this.#done = 0;
    const now = performance.now();
    if (now - this.#since < MIN_SLICE_MS) return false;
    this.#since = now;
    return true;
  }
}
