/**
 * Lets the process answer its other work (HTTP requests, lease renewals) between the items of a
 * long synchronous loop: in the `all` role the API shares this event loop with the crawl, and a
 * hostile site can make a loop run over thousands of pages or URLs.
 *
 * @example
 * ```ts
 * for (let i = 0; i < urls.length; i++) {
 *   if (i % 256 === 255) await yieldToLoop();
 *   // …one URL's synchronous work…
 * }
 * ```
 *
 * @module
 */

/** Resolves on a later turn of the event loop, after the timers and I/O already due. */
export function yieldToLoop(): Promise<void> {
  return new Promise<void>((r) => setTimeout(r, 0));
}
