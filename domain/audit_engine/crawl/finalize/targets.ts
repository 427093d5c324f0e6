/**
 * The link targets the link pass reports on, by URL hash: broken ones (failed fetches, error
 * statuses, redirects that end in one) for broken_internal_links, redirecting ones for
 * internal_redirect_links.
 *
 * @example
 * ```ts
 * import { urlHash } from "../store.ts";
 * import type { PageRecord } from "../store.ts";
 * declare const r: PageRecord;
 * const broken = new Map<number, BrokenTarget>();
 * broken.set(urlHash(r.url), { url: r.url, status: 404, failure: null });
 * ```
 *
 * @module
 */

/** A URL whose link is broken: its status (0 when the fetch failed) and failure kind. */
export interface BrokenTarget {
  url: string;
  status: number;
  failure: string | null;
}

/** A redirecting URL and where it redirects. */
export interface RedirectTarget {
  url: string;
  target: string;
}
