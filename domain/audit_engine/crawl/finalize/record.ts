/**
 * How the passes read a stored page record: its summary for the checks that read single URLs,
 * and the states they test again and again.
 *
 * @example
 * ```ts
 * import type { PageRecord } from "../store.ts";
 * import type { UrlSummary } from "../../types.ts";
 * declare const r: PageRecord, sample: UrlSummary[];
 * if (attempted(r) && !is2xx(r)) sample.push(summary(r));
 * ```
 *
 * @module
 */
import type { UrlSummary } from "../../types.ts";
import type { PageRecord } from "../store.ts";

/** The record as the site checks see a single URL. */
export function summary(r: PageRecord): UrlSummary {
  return {
    url: r.url,
    state: r.state,
    status: r.status,
    failure: r.failure,
    html: r.html,
    noindex: r.noindex,
  };
}

/** Answered with a 2xx status. */
export const is2xx = (r: PageRecord): boolean => r.status >= 200 && r.status < 300;

/** Fetched, with a response or a failure (not queued, unvisited or blocked). */
export const attempted = (r: PageRecord): boolean => r.state === "fetched" || r.state === "failed";
