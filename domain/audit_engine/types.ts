/**
 * Shared shapes of the audit engine: the per-URL record the crawler keeps (small on purpose:
 * the crawl keeps facts, not pages), the crawl result the site-level checks read, and the check
 * object every check is.
 *
 * @module
 */
import type { PageFacts } from "./page_facts.ts";

/**
 * What a check says about one affected item: small named facts (the link target, the value and
 * its length, the measured figure). The engine adds the page `url` to each item of a page check.
 * Shared contract with every check: keep values short (strings are clipped when stored).
 */
export type Evidence = Record<string, string | number | boolean | null | string[]>;

/**
 * A page check's verdict: `false`/`null`/`undefined` = not fired; `true` = fired (the evidence
 * is the page URL); an `Evidence` object; or an `Evidence[]` for several items on one page
 * (each broken link, say). An empty array counts as not fired.
 */
export type PageVerdict = boolean | null | undefined | Evidence | Evidence[];

export type Category = "performance" | "security" | "indexability" | "mobile" | "structure";
export type Severity = "critical" | "warning" | "info";

export const CATEGORIES: readonly Category[] = [
  "performance",
  "security",
  "indexability",
  "mobile",
  "structure",
];

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

/** Where a crawled URL stands. */
export type UrlState = "queued" | "blocked" | "fetched" | "failed" | "unvisited";

/** A small view of one URL (the start, the home page, a failed fetch) that site checks read. */
export interface UrlSummary {
  url: string;
  state: UrlState;
  /** HTTP status; 0 when not fetched or failed. */
  status: number;
  /** Failure kind (timeout, network, tls, refused, ...). */
  failure: string | null;
  html: boolean;
  noindex: boolean;
}

export interface SitemapInfo {
  /** At least one sitemap answered 200 with a urlset/sitemapindex root. */
  found: boolean;
  /** Problems that make a sitemap invalid (at most 20 kept). */
  problems: string[];
  /** Distinct internal URLs listed. */
  urlCount: number;
  /** A crawl cap left part of the sitemaps unread (crawl/caps.ts): absence from them proves nothing. */
  partial?: boolean;
}

/** Affected items of one site-level finding: the true count and at most the stored cap of items. */
export interface ItemGroup {
  count: number;
  items: Evidence[];
}

/**
 * Everything the site-level checks read, computed by `finalize.ts` from the facts the crawl
 * stored in KV, in pages, keeping only counters, capped item lists and compact aggregates. Its
 * size does not grow with the site.
 */
export interface SiteFacts {
  startUrl: string;
  siteKey: string;
  start: UrlSummary;
  /** Where the start URL's redirects end (the home page), or null on a loop. */
  home: UrlSummary | null;
  robots: {
    state: "ok" | "missing" | "unreachable";
    status: number;
    url: string;
    /** Lines a strict reader rejects, as "line N: problem". */
    problems: string[];
    /** robots.txt blocks the start URL for Googlebot (or `*`). */
    startBlockedForGoogle: boolean;
  };
  /** The crawl's token (`botToken`) is disallowed from the start URL (so nothing was crawled). */
  ownBotBlocked: boolean;
  sitemap: SitemapInfo;
  /** `http://host/` outcome when the site is on https. */
  httpProbe: "redirects_to_https" | "serves_http" | "unreachable" | "not_applicable";
  /**
   * The link graph is not the whole site's: the crawl stopped at its page, byte or time budget
   * with URLs still queued, or a scoped crawl (audit options) left URLs out.
   */
  truncated: boolean;
  /** The robots.txt product token the crawl obeyed (SerpwrightBot, or a preset's). */
  botToken: string;
  /**
   * A bounded sample for checks written against single URLs: the start, the home page, the first
   * fetched https URL and the failed fetches (capped).
   */
  records: UrlSummary[];
  /** Fetched URLs (responses and failures). */
  attempted: number;
  status4xx: ItemGroup;
  status5xx: ItemGroup;
  failed: ItemGroup;
  /** URLs whose fate is known (fetched, failed, blocked). */
  known: number;
  blocked: ItemGroup;
  /** HTML 2xx pages, and how many of them are noindex. */
  html2xx: number;
  noindexPages: number;
  /** Sitemap URLs fetched, failed or blocked; bad = not an indexable canonical 200 page. */
  sitemapListed: number;
  sitemapBad: ItemGroup;
  /** Pages canonicalised to another crawled internal URL; bad = the target is not a 200 page. */
  canonicalTargets: number;
  canonicalBad: ItemGroup;
  /** Pages whose (indexable 200) canonical target names yet another canonical: the chain. */
  canonicalChains: ItemGroup;
  /**
   * Indexable self-canonical HTML 2xx pages reached through links, and those no sitemap lists
   * (items carry the click depth).
   */
  sitemapCandidates: number;
  sitemapMissing: ItemGroup;
  /**
   * Indexable self-canonical HTML 2xx pages other than the start and home page, and those with
   * exactly one followable internal inlink (items name the linking page).
   */
  inlinkCandidates: number;
  singleInlink: ItemGroup;
  /** Non-HTML 2xx responses (PDFs, images, ...) and those whose X-Robots-Tag says noindex/nofollow. */
  nonHtml2xx: number;
  xRobotsNonHtml: ItemGroup;
  /**
   * Pages with an internal hreflang alternate that is a good page (indexable, self-canonical
   * HTML 200), and those with such an alternate that does not list them back (items name them).
   */
  hreflangPages: number;
  hreflangNoReturn: ItemGroup;
  /**
   * Pages with an internal hreflang alternate the crawl reached, and those with an alternate
   * that redirects, fails, is blocked, not HTML, noindex or canonicalised elsewhere (counted per
   * page; one item per such alternate).
   */
  hreflangTargetPages: number;
  hreflangTargetBad: ItemGroup;
  /** Pages linking to broken / redirecting internal URLs (count = pages, items = each link). */
  brokenLinks: ItemGroup;
  /**
   * HTML pages with a same-site resource or frame source that was checked (or crawled), and
   * those loading one that answers 4xx/5xx or fails (count = pages, items = each resource).
   */
  resourcePages: number;
  brokenResources: ItemGroup;
  redirectLinks: ItemGroup;
  /** Redirect chain heads; chains of 2+ hops and loops, each item with every hop. */
  redirectStarts: number;
  redirectChains: ItemGroup;
  redirectLoops: ItemGroup;
  /** Indexable self-canonical HTML 2xx pages, and the duplicate groups among them. */
  dupCandidates: number;
  dupTitle: ItemGroup;
  dupDescription: ItemGroup;
  dupContent: ItemGroup;
  /**
   * Groups of identical text whose URLs are one path up to letter case (caseDuplicates) or one
   * path with different query strings (parameterDuplicates): counted there, not in dupContent.
   */
  caseDuplicates: ItemGroup;
  parameterDuplicates: ItemGroup;
  /**
   * Dup candidates with at least 20 words and a text signature, and those with a near-duplicate
   * (estimated Jaccard >= 0.8 of word 3-shingles, not identical text; pages with an identical
   * twin are left to dupContent).
   */
  nearCandidates: number;
  nearDupContent: ItemGroup;
  /** Sitemap-listed HTML 2xx pages (not the home page) and those no crawled page links to. */
  orphanCandidates: number;
  orphans: ItemGroup;
  /** TTFB of HTML pages: how many, the median, and the pages over 800 ms and 1,800 ms. */
  ttfb: { pages: number; medianMs: number; over800: ItemGroup; over1800: ItemGroup };
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

/**
 * A site-level result: how many were examined and how many were bad; null = not applicable.
 * `items` carries the evidence of the affected items (at most the stored cap; `affected` stays
 * the true count). Items name their page in `url` when they have one.
 */
export interface SiteOutcome {
  eligible: number;
  affected: number;
  items?: Evidence[];
}

export interface SiteCheck extends CheckBase {
  scope: "site";
  /** Caps the overall score when this check fires (see scoring.ts). */
  evaluate: (site: SiteFacts) => SiteOutcome | null;
}

/**
 * A check evaluated by a step after the crawl (rendering: `domain/render/checks.ts`;
 * agent-readiness: `checks/agent.ts`); that step tallies it and stores its evidence, and it is
 * scored with the others.
 */
export interface StepCheck extends CheckBase {
  scope: "render" | "agent";
}

export type Check = PageCheck | SiteCheck | StepCheck;

/** Per-check tally that scoring consumes. */
export interface CheckTally {
  eligible: number;
  affected: number;
}

/** Limits on what a robots.txt may cost; each is meant to become an operator setting. */
export interface RobotsCaps {
  /** Bytes of the file read (Google's limit); whole lines only, the rest is ignored. */
  maxBytes: number;
  /** Allow/Disallow rules kept across all groups, in file order. */
  maxRules: number;
  /** Characters in one pattern as written. */
  maxPatternLength: number;
  /** `*` wildcards in one pattern, once runs of `**` are collapsed into one. */
  maxWildcards: number;
  /**
   * Rules with any wildcard kept across all groups: each may scan the whole path, so they set a
   * call's worst case (500 of them: about 10 ms on 2,048-octet paths, where 5,000 took 80–160).
   */
  maxWildcardRules: number;
  /** Octets of path + query matched; a longer URL is judged by its first ones. */
  maxPathLength: number;
}

/**
 * The caps on what a crawled site can make the crawler hold or do (domain/audit_engine/crawl/caps.ts).
 */
export interface CrawlCaps {
  /** Distinct internal links kept per page (the true count is still recorded as `outlinks`). */
  linksPerPage: number;
  /** Frontier positions (and sitemap URLs kept) per audit: this many times its page budget. */
  frontierFactor: number;
  /** Longer URLs are neither crawled nor stored (a KV key holds at most 2 KiB). */
  maxUrlLength: number;
  /** Redirects followed one after another from a linked URL. */
  redirectHops: number;
  /** Sitemap files read per audit (indexes included). */
  sitemapFiles: number;
  /** Sitemap text read per audit once inflated, over all files. */
  sitemapBytes: number;
  /** What one robots.txt may cost (bytes, rules, pattern length, wildcards, path length). */
  robots: RobotsCaps;
  /**
   * Distinct same-site resources (images, scripts, stylesheets, fonts, media) checked per audit
   * for broken_resources; 0 turns the check off. Absent on inputs older than the check.
   */
  resources?: number;
}

export type RecheckResult = "fixed" | "still_failing" | "not_checked";

/** Why a URL got no verdict. */
export type NotCheckedReason =
  | "blocked_by_robots"
  | "fetch_failed"
  | "error_status"
  | "redirect"
  | "not_html"
  | "noindex"
  | "budget";

/** What may be shown of the credentials: the kind, a Basic user name, header names. */
export type MaskedSiteAuth =
  | { type: "basic"; user: string; password: "***" }
  | { type: "headers"; headers: Record<string, "***"> }
  | { type: "cookie"; cookie: "***" };

/** The crawler identities an audit may use (user_agents.ts `USER_AGENT_PRESETS`). */
export type UserAgentPreset =
  | "serpwright"
  | "googlebot_smartphone"
  | "googlebot_desktop"
  | "bingbot";

export interface AuditReport {
  score: number;
  summary: {
    issues_critical: number;
    issues_warning: number;
    issues_info: number;
    top_issues: {
      check: string;
      severity: Severity;
      title: string;
      affected_count: number;
    }[];
    categories: Record<Category, number>;
  };
  /** URLs fetched (any response or failure; robots-blocked URLs are not fetched). */
  pages_crawled: number;
  /** Fetches that got an HTTP response. */
  jobs_completed: number;
  /** Fetches that failed (timeout, network, TLS, refused). */
  jobs_failed: number;
  site: {
    /** At most 200 indexable HTML 2xx pages, shallowest first (internal-link candidates). */
    pages: AuditPage[];
    host: string;
    language: string | null;
  };
}

/** Which cap a crawl hit and how much it left out. */
export interface CapHit {
  /** The cap's value. */
  limit: number;
  /** What was left out: links, URLs, rules, bytes (see `CAP_UNITS`). */
  leftOut: number;
}

export type CapName =
  | "links_per_page"
  | "frontier"
  | "url_length"
  | "redirect_hops"
  | "sitemap_files"
  | "sitemap_urls"
  | "sitemap_bytes"
  | "robots_bytes"
  | "robots_rules"
  | "robots_pattern_length"
  | "robots_wildcards"
  | "robots_wildcard_rules"
  | "library_scripts"
  | "resources"
  | "resources_per_page"
  | "render_rounds"
  | "bytes";

/** What the audit says about politeness once completed (the view's `politeness`). */
export interface PolitenessReport {
  /** The per-host rate cap the crawl started with; null: none. */
  maxRps: number | null;
  /** Crawl-delay honoured, s (clamped to MAX_CRAWL_DELAY_S); null: robots.txt asked none. */
  crawlDelay: number | null;
  /** The Crawl-delay asked for when it was larger than the cap; null otherwise. */
  crawlDelayClamped: number | null;
  throttled: number;
  retries: number;
  gaveUp: number;
  /** The slowest per-host rate the crawl ended at (after halvings); null: never capped. */
  finalRps: number | null;
  /** Whether Crawl-delay, the rate cap's halving or a Retry-After slowed the crawl. */
  slowed: boolean;
}

/** The scope rules an audit may set (scope.ts `SCOPE_RULES`). */
export type ScopeRule = "urls" | "sitemap_only" | "exclude" | "include" | "max_depth";

export interface AuditPage {
  url: string;
  title: string | null;
  h1: string | null;
  description: string | null;
  /** Click depth from the start URL; -1 for pages only reachable through the sitemap. */
  depth: number;
}
