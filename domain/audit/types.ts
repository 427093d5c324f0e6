/**
 * Shared shapes of the audit engine: the per-URL record the crawler keeps (small on purpose:
 * the crawl keeps facts, not pages), the crawl result the site-level checks read, and the check
 * object every check is.
 *
 * @module
 */
import type { PageFacts } from "./page_facts.ts";
import type { Robots } from "./robots.ts";

export type Category = "performance" | "security" | "indexability" | "mobile" | "structure";
export type Severity = "critical" | "warning" | "info";

export const CATEGORIES: readonly Category[] = [
  "performance",
  "security",
  "indexability",
  "mobile",
  "structure",
];

/**
 * What a fired check says about one affected item (a resource URL and its element, a header and
 * its value, a library, its version and advisory ids). Flat on purpose: it is stored and served
 * as JSON.
 */
export type Evidence = Record<string, string | number | boolean | null | string[]>;

/**
 * A page check's verdict: `false`/`null`/`undefined` = not fired; `true` = fired; an Evidence
 * object or a non-empty Evidence[] = fired, with the items that show it. Any truthy value fires,
 * so a check returns `false`, never an empty array, when it finds nothing.
 */
export type PageVerdict = boolean | null | undefined | Evidence | Evidence[];

/** What a page-level check sees: one fetched HTML 2xx page, evaluated once, then dropped. */
export interface PageContext {
  url: URL;
  status: number;
  headers: Headers;
  facts: PageFacts;
  depth: number;
  isHome: boolean;
  /** Not noindex (robots-blocked pages are never fetched). */
  indexable: boolean;
  /** Epoch ms of the audit (for `unavailable_after`). */
  now: number;
  /**
   * First bytes of external scripts that name a known library without a version in their URL
   * (script URL as written in the page → head of the file), for banner recognition. Optional:
   * absent, only URL versions are recognised.
   */
  scriptHeads?: ReadonlyMap<string, string>;
}

/** One URL the crawler met, with only what site-level checks need. */
export interface UrlRecord {
  id: number;
  url: string;
  /** Click depth from the start URL; -1 when only known from the sitemap. */
  depth: number;
  state: "queued" | "blocked" | "fetched" | "failed" | "unvisited";
  /** HTTP status; 0 when not fetched or failed. */
  status: number;
  /** Failure kind (timeout, network, tls, refused, ...). */
  failure: string | null;
  /** Redirect target record id, or -1. */
  location: number;
  /** Redirect leaves the site (target not crawled). */
  externalLocation: boolean;
  html: boolean;
  noindex: boolean;
  title: string | null;
  description: string | null;
  h1: string | null;
  /** 52 bits of a 64-bit hash of the normalised visible words (exact duplicates). */
  textHash: number;
  /** MinHash signature of the visible text's word 3-shingles, 64 x 16 bits (near-duplicates). */
  textSig: Uint16Array;
  words: number;
  /** Canonical target URL when it differs from this URL. */
  canonicalOther: string | null;
  /** Internal link targets (record ids), followable and nofollow alike. */
  links: Uint32Array;
  inlinks: number;
  inSitemap: boolean;
  ttfbMs: number;
}

export interface SitemapInfo {
  /** At least one sitemap answered 200 with a urlset/sitemapindex root. */
  found: boolean;
  /** Problems that make a sitemap invalid. */
  problems: string[];
  /** Distinct internal URLs listed. */
  urlCount: number;
}

/** Everything the site-level checks read once the crawl ended. */
export interface CrawlResult {
  startUrl: string;
  siteKey: string;
  /** The start URL's record. */
  start: UrlRecord;
  /** Where the start URL's redirects end (the home page), or null on a loop. */
  home: UrlRecord | null;
  records: UrlRecord[];
  byUrl: Map<string, UrlRecord>;
  robots: Robots;
  /** Our own token is disallowed from the start URL (so nothing was crawled). */
  ownBotBlocked: boolean;
  sitemap: SitemapInfo;
  /** `http://host/` outcome when the site is on https. */
  httpProbe: "redirects_to_https" | "serves_http" | "unreachable" | "not_applicable";
  /** TTFB of fetched HTML pages, ms. */
  htmlTtfbs: number[];
  /** The crawl stopped at maxPages with URLs still queued. */
  truncated: boolean;
}

export interface CheckBase {
  id: string;
  category: Category;
  severity: Severity;
  title: string;
  /** One-line description for docs. */
  detects: string;
}

export interface PageCheck extends CheckBase {
  scope: "page";
  /** "indexable": HTML 2xx non-noindex pages (default). "html": every HTML 2xx page. */
  eligibility: "indexable" | "html";
  /** Narrows eligibility further (e.g. https pages only). */
  applies?: (p: PageContext) => boolean;
  evaluate: (p: PageContext) => PageVerdict;
}

/** A site-level result: how many were examined and how many were bad; null = not applicable. */
export interface SiteOutcome {
  eligible: number;
  affected: number;
}

export interface SiteCheck extends CheckBase {
  scope: "site";
  /** Caps the overall score when this check fires (see scoring.ts). */
  evaluate: (site: CrawlResult) => SiteOutcome | null;
}

export type Check = PageCheck | SiteCheck;

/** Per-check tally that scoring consumes. */
export interface CheckTally {
  eligible: number;
  affected: number;
}
