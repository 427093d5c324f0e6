/**
 * A small uniform sample of the URLs a crawl recorded, kept on its state, from which the passes
 * that read every record (or every page's links, keyed by URL too) cut the keys into ranges read
 * side by side (store.ts `listInPages`): on a remote KV a pass over 2,000 records waited five
 * list round trips one after another, and waits two with four ranges. The sample is the
 * URL_SAMPLE_SIZE smallest URL hashes seen (a bottom-k sketch): uniform over the site's URLs
 * whatever the order they were fetched in, and the same for a step taken twice. Its URLs are
 * clipped: a split point need only be a string between keys, not a key.
 *
 * @example
 * ```ts
 * import { sampleUrl, splitsOf, type UrlSample } from "./url_sample.ts";
 * const sample: UrlSample = { h: [], u: [] };
 * for (let i = 0; i < 100; i++) sampleUrl(sample, i * 7919 % 1000, `https://a.test/p/${i}`);
 * splitsOf(sample, 4).length; // 3: four ranges
 * ```
 *
 * @module
 */
import type { CrawlState, UrlSample } from "../types.ts";

/** URLs a sample keeps. */
export const URL_SAMPLE_SIZE = 16;
/** Characters kept of a sampled URL (its state stays small whatever the site's URLs). */
const SAMPLE_URL_CHARS = 120;
/** Ranges the record passes read side by side, at most. */
export const LIST_RANGES = 4;
/**
 * The KV round trip (ms, the smallest the crawl's last steps timed: step_size.ts) from which the
 * passes read in ranges. Below it, as on a local file, a list's next page is there before the
 * pass wants it, and the pages the ranges hold ahead would be memory for nothing.
 */
export const RANGES_FROM_RTT_MS = 2;

export type { UrlSample };

/** Adds a URL to the sample when its hash is among the smallest seen. */
export function sampleUrl(sample: UrlSample, hash: number, url: string): void {
  if (sample.h.includes(hash)) return;
  if (sample.h.length < URL_SAMPLE_SIZE) {
    sample.h.push(hash);
    sample.u.push(url.slice(0, SAMPLE_URL_CHARS));
    return;
  }
  let top = 0;
  for (let i = 1; i < sample.h.length; i++) if (sample.h[i] > sample.h[top]) top = i;
  if (hash >= sample.h[top]) return;
  sample.h[top] = hash;
  sample.u[top] = url.slice(0, SAMPLE_URL_CHARS);
}

/**
 * The split points for a crawl's record passes: `splitsOf` its sample when its KV answers slowly
 * (RANGES_FROM_RTT_MS), else none (one range, as one list).
 */
export function rangeSplits(state: Pick<CrawlState, "urlSample" | "kvRttMs">): string[] {
  const rtt = state.kvRttMs?.length ? Math.min(...state.kvRttMs) : 0;
  return rtt >= RANGES_FROM_RTT_MS ? splitsOf(state.urlSample) : [];
}

/**
 * Up to `ranges` − 1 split points (ascending, distinct) cutting a sampled site's URLs into
 * `ranges` parts of about equal size; none for a sample too small to say (or none at all).
 */
export function splitsOf(sample: UrlSample | undefined, ranges = LIST_RANGES): string[] {
  if (!sample || sample.u.length < 2 * ranges) return [];
  const sorted = [...sample.u].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const out: string[] = [];
  for (let k = 1; k < ranges; k++) {
    const s = sorted[Math.floor(sorted.length * k / ranges)];
    if (s !== out[out.length - 1]) out.push(s);
  }
  return out;
}
