import type { CapHit, CapName, CrawlCaps, RobotsCaps } from "../types.ts";
import { DEFAULT_ROBOTS_CAPS, type Robots } from "../robots.ts";
import { MAX_URL_LENGTH } from "./store.ts";

/**
 * The caps on what a crawled site can make the crawler hold or do. Signup is public, so the site
 * may be hostile: a page with 30,000 links, an endless calendar, a redirect maze, a robots.txt
 * of wildcard rules. Each cap is an operator setting (config.ts) and each hit is recorded
 * on the crawl state and reported on the audit (`limits_hit`), never silent.
 *
 * @module
 */
export type { CrawlCaps };

export const DEFAULT_CRAWL_CAPS: CrawlCaps = {
  linksPerPage: 1_000,
  frontierFactor: 5,
  maxUrlLength: 1_500,
  redirectHops: 10,
  sitemapFiles: 20,
  sitemapBytes: 64 * 1024 * 1024,
  robots: DEFAULT_ROBOTS_CAPS,
  resources: 5_000,
};

/**
 * The caps a crawl runs under: its input's, else the defaults, the URL length never past what a
 * KV key holds (MAX_URL_LENGTH), whatever the operator set.
 *
 * @example
 * ```ts
 * const caps = capsOf({ caps: undefined });
 * caps.maxUrlLength; // 1500
 * ```
 */
export function capsOf(input: { caps?: CrawlCaps }): CrawlCaps {
  const caps = input.caps ?? DEFAULT_CRAWL_CAPS;
  return {
    ...caps,
    maxUrlLength: Math.min(caps.maxUrlLength, MAX_URL_LENGTH),
    resources: caps.resources ?? DEFAULT_CRAWL_CAPS.resources,
  };
}

/** The frontier never holds fewer positions than this, whatever the page budget. */
const MIN_FRONTIER = 500;

/** Frontier positions an audit may allocate. */
export function frontierCap(caps: CrawlCaps, maxPages: number): number {
  return Math.max(MIN_FRONTIER, caps.frontierFactor * maxPages);
}

export type { CapHit, CapName };

/** What `leftOut` counts, per cap (the audit view prints it). */
export const CAP_UNITS: Record<CapName, string> = {
  links_per_page: "links not kept (on pages over the cap, counted per occurrence)",
  frontier: "links to URLs not queued",
  url_length: "links to URLs too long to crawl",
  redirect_hops: "redirects not followed",
  sitemap_files: "sitemap files not read",
  sitemap_urls: "sitemap URLs not kept",
  sitemap_bytes: "sitemap files cut",
  robots_bytes: "robots.txt files cut",
  robots_rules: "robots.txt rules dropped",
  robots_pattern_length: "robots.txt rules dropped",
  robots_wildcards: "robots.txt rules dropped",
  robots_wildcard_rules: "robots.txt rules dropped",
  library_scripts: "library script files not read, their versions unconfirmed (counted per step)",
  resources: "distinct resources not checked (counted once per crawl step that met them)",
  resources_per_page: "resource references not kept (on pages over the cap, per occurrence)",
  render_rounds: "URLs found in rendered pages after the last render round, not crawled",
  bytes: "URLs not fetched",
  pages: "URLs not fetched",
  duration: "URLs not fetched",
  politeness_retries: "URLs given up after their retries (recorded with the 429/503 status)",
  error_rate: "URLs not fetched",
};

/** The caps that stop the whole crawl: the audit's budgets, and its error-rate stop. */
export const STOPPING_CAPS: readonly CapName[] = ["pages", "bytes", "duration", "error_rate"];

/** Records what a robots.txt's caps cut (robots.ts `capped`) as the crawl's cap hits. */
export function noteRobotsCaps(
  hits: Partial<Record<CapName, CapHit>>,
  robots: Robots,
  caps: RobotsCaps,
): void {
  const c = robots.capped;
  if (c.bytesTruncated) noteCap(hits, "robots_bytes", caps.maxBytes);
  if (c.rulesDropped > 0) noteCap(hits, "robots_rules", caps.maxRules, c.rulesDropped);
  if (c.longPatternsDropped > 0) {
    noteCap(hits, "robots_pattern_length", caps.maxPatternLength, c.longPatternsDropped);
  }
  if (c.wildcardPatternsDropped > 0) {
    noteCap(hits, "robots_wildcards", caps.maxWildcards, c.wildcardPatternsDropped);
  }
  if (c.wildcardRulesDropped > 0) {
    noteCap(hits, "robots_wildcard_rules", caps.maxWildcardRules, c.wildcardRulesDropped);
  }
}

/** Records a cap hit on the crawl state's map. */
export function noteCap(
  hits: Partial<Record<CapName, CapHit>>,
  name: CapName,
  limit: number,
  leftOut = 1,
): void {
  const h = hits[name];
  if (h) h.leftOut += leftOut;
  else hits[name] = { limit, leftOut };
}
