/**
 * Shared shapes of the audit engine: the per-URL record the crawler keeps (small on purpose:
 * the crawl keeps facts, not pages), the crawl result the site-level checks read, the check
 * object every check is, and the engine's persisted shapes the key table names (crawl state,
 * frontier, page, duplicate, link, resource and lab records, prune backfill). The modules that
 * work with them re-export them. A leaf but for `PageFacts`, derived from the fact families that
 * collect it (page_facts.ts), so that a new fact is declared only in its family's file.
 *
 * @module
 */
import type { PageFacts } from "./page_facts.ts";

/** A library and version a script shows (js_libraries.ts `Detected`, named here as stored). */
export type ScriptLibrary = Omit<PageFacts["inlineLibraries"][number], "index">;

/** What the crawl keeps of a script it read (crawl/banners.ts): the library it shows, or null. */
export interface ScriptLibraryValue {
  lib: ScriptLibrary | null;
}

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

export type Category =
  | "performance"
  | "security"
  | "indexability"
  | "mobile"
  | "structure"
  | "agents";
export type Severity = "critical" | "warning" | "info";

/**
 * What a check's finding costs in search, 0–5 (docs/audit.md "Impact and effort"): 5 keeps the
 * site or its pages out of search, 4 loses pages or the links to them, 3 weakens how pages rank
 * or show, 2 costs a little, 1 is hygiene with little direct search cost, 0 is a fact to know
 * (often intended) and never leads "Fix first".
 */
export type Impact = 0 | 1 | 2 | 3 | 4 | 5;
/** What fixing a check's finding usually takes: a setting or a tag, template work, or a project. */
export type Effort = "low" | "medium" | "high";

export const CATEGORIES: readonly Category[] = [
  "performance",
  "security",
  "indexability",
  "mobile",
  "structure",
  "agents",
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
   * The libraries external scripts' content shows (script URL → library and version read from
   * the file's first bytes, js_libraries.ts `scriptLibrary`); a script missing here was not read
   * or shows none. Optional: absent, only inline scripts' banners are recognised.
   */
  scriptLibraries?: ReadonlyMap<string, ScriptLibrary>;
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
  /** Pages that answered 402 Payment Required (pay per crawl): a price, not a 4xx defect. */
  paid: ItemGroup;
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
   * Pages with a `#fragment` link to an HTML page of the site the crawl fetched, and those with
   * one whose anchor the target lacks (count = pages, items = each link; finalize/fragments.ts).
   */
  fragmentPages: number;
  brokenFragments: ItemGroup;
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
  /** What the finding costs in search; weighs it in "Fix first" (fix_first.ts). */
  impact: Impact;
  /** What fixing it usually takes. */
  effort: Effort;
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
    /** "Fix first" (fix_first.ts); absent on audits completed before it existed. */
    fix_first?: FixFirstItem[];
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
  | "bytes"
  | "pages"
  | "duration"
  | "politeness_retries"
  | "error_rate";

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
  /** Times the error-rate stop paused the whole crawl (absent on older reports). */
  paused?: number;
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

export interface CrawlState {
  v: 1;
  phase: CrawlPhase;
  startUrl: string;
  origin: string;
  siteKey: string;
  /** The start host resolved (else the crawl is one failed fetch). */
  startChecked: boolean;
  ownBotBlocked: boolean;
  startBlockedForGoogle: boolean;
  robots: Record<string, RobotsMeta>;
  /** Lint problems of the start origin's robots.txt. */
  robotsProblems: string[];
  /** The start origin's Crawl-delay, ms (kept for older states; politeness reads `pace`). */
  crawlDelayMs: number;
  /** Older states' one request slot; politeness now keeps a slot per host in `pace`. */
  nextSlotAt: number;
  /** Per-host pace and throttling counts (politeness.ts); absent on states older than it. */
  pace?: PaceState;
  sitemap: SitemapInfo;
  sitemapChunks: number;
  /** Next sitemap chunk to seed into the frontier; equals sitemapChunks once seeded. */
  seedChunk: number;
  httpProbe: SiteFacts["httpProbe"];
  /** Frontier: next entry to take, next position to allocate. */
  head: number;
  tail: number;
  fetches: number;
  completed: number;
  failed: number;
  bytes: number;
  truncated: boolean;
  /** Page checks: id → [eligible, affected]. */
  tallies: Record<string, [number, number]>;
  /** Evidence items stored per check (capped). */
  stored: Record<string, number>;
  /** Script files read for library banners so far (at most MAX_BANNER_FETCHES per audit). */
  banners: number;
  sitePages: number;
  language: string | null;
  steps: number;
  result: CrawlOutcome | null;
  /** The agent-readiness and render steps between the crawl and `finalize` (post_steps.ts). */
  post?: PostCrawlState;
  /** Caps hit so far (absent on states written before caps existed). */
  capsHit?: Partial<Record<CapName, CapHit>>;
  /** The product token robots.txt was read for (absent: ours, SerpwrightBot). */
  botToken?: string;
  /** A scoped crawl (audit options): what each rule left out (absent: the whole site). */
  scope?: ScopeProgress;
  /** The resource queue of broken_resources (absent on states written before the check). */
  resources?: ResourceProgress;
  /**
   * The budget that stopped the crawl while sitemap chunks were still unseeded: they are seeded
   * (not fetched) first, so the cap's `leftOut` counts every URL known and not fetched. `extra`:
   * entries already taken off the frontier unfetched (the byte budget's skipped ones).
   */
  cut?: { cap: CapName; limit: number; extra: number };
  /** URLs discovered (links, redirects, sitemaps) and never fetched when a budget stopped it. */
  unfetched?: number;
  /** The error-rate stop's window and pauses (crawl/health.ts; absent: no error seen yet). */
  health?: HealthState;
  /**
   * Workers that may fetch for this crawl at once, fixed when it starts (crawl/partition.ts;
   * absent or 1: one chain of steps, `head` the next position to take).
   */
  partitions?: number;
  /**
   * An incremental crawl (crawl/reuse.ts): the options fingerprint its stored page facts are
   * valid for, and the pages whose stored facts it reused; absent: the audit stores none.
   */
  reuse?: { fp: string; reused: number };
  /**
   * The last steps' KV round trips, ms (the read of this state; crawl/step_size.ts): a slow KV
   * makes the steps larger. Absent on states written before it.
   */
  kvRttMs?: number[];
  /**
   * A uniform sample of the URLs recorded (crawl/url_sample.ts): where the passes over every
   * record cut their reads into ranges. Absent on states written before it (one range then).
   */
  urlSample?: UrlSample;
}

/** URL hashes and their (clipped) URLs, in no order: crawl/url_sample.ts. */
export interface UrlSample {
  h: number[];
  u: string[];
}

/**
 * What an incremental re-audit needs of one HTML 2xx page (crawl/reuse.ts): its validators, a
 * digest of its body, the status, headers and size it was judged with, and its parsed facts.
 */
export interface ReuseEntry {
  /** ETag, when the page sent one. */
  e?: string;
  /** Last-Modified, when the page sent one. */
  m?: string;
  /** The body's digest (128 bits of SHA-256, base64). */
  h: string;
  s: number;
  /** Response headers the checks read, as [name, value] pairs. */
  hd: [string, string][];
  /** Body bytes. */
  b: number;
  f: PageFacts;
}

/** A project's latest completed audit with stored page facts, and their options fingerprint. */
export interface ReuseBase {
  auditId: string;
  fp: string;
}

/** What the crawl state keeps of the site's health (crawl/health.ts; a few hundred bytes). */
export interface HealthState {
  /** The last responses, oldest first: 1 an error, 0 not (at most the window). */
  recent: number[];
  /** Pauses in a row (a healthy full window resets them). */
  pauses: number;
  /** Epoch ms (wall clock) before which the crawl fetches nothing; 0: not paused. */
  pausedUntil: number;
  /** Pauses over the whole crawl (the politeness report's `paused`). */
  total?: number;
  /** The longest Retry-After (ms) among the errors since the last judgement. */
  retryAfterMs?: number;
}

/** One position of the frontier: a URL to fetch and how it was reached. */
export interface FrontierEntry {
  url: string;
  depth: number;
  /** Redirects followed to reach this URL from a linked one (absent: none). */
  hops?: number;
  /** Times the URL was queued again after a 429/503 (absent: none; politeness.ts). */
  retry?: number;
  /**
   * Set when the allocation that wrote this entry wrote the URL's record fresh at this very
   * position (frontier.ts `allocate`): 1 not in the sitemap, 2 in it. The record is then what
   * the entry rebuilds, and a taker does not read it. Absent on an entry written again at another
   * position (a retry, one put back) and on those of older versions: the record is read.
   */
  rec?: 1 | 2;
  /** With `rec`: the record's `discoveredBy` (a link found in a rendered DOM). */
  via?: "render";
}

/**
 * One crawl step's entries in one LSH band of the near-duplicate index (page_recorder.ts
 * `NearRuns`): entry i is the page with URL hash `h[i]`, whose band holds the bin values
 * `v[4i..4i+3]`.
 */
export interface NearRun {
  v: Uint16Array;
  h: Float64Array;
}

/** A page's stored text signature (page_recorder.ts `indexDuplicates`). */
export interface NearSig {
  u: string;
  h: number;
  s: Uint16Array;
}

/**
 * One entry of the duplicate index as crawls begun before its runs wrote it: the text's digest
 * and the page are the key.
 */
export interface DupEntry {
  /** The text itself (title, description, or the text hash for content). */
  v: string;
}

/**
 * One crawl step's entries of the duplicate index of one kind and bucket (crawl/dup_runs.ts): the
 * i-th page's text digest (dupDigest), URL and text are `d[i]`, `u[i]` and `v[i]`.
 */
export interface DupRun {
  d: string[];
  u: string[];
  v: string[];
}

/** One stored chunk of a page's internal links (`writeLinks`). */
export interface LinkChunk {
  /** Targets, as `urlHash`es. */
  t: number[];
  /** Anchor texts, one per target. */
  a: string[];
  /** How many of the first targets are followable. */
  f: number;
}

/** One URL the crawl met: the seen set, the page inventory and the input of the site checks. */
export interface PageRecord {
  url: string;
  /** Hash of the URL: how the link graph names it (see `urlHash`). */
  hash: number;
  /** Frontier position; -1 while only known from the sitemap. */
  seq: number;
  /** Click depth from the start URL; -1 when only reachable through the sitemap. */
  depth: number;
  state: UrlState;
  status: number;
  failure: string | null;
  /** Redirect target (absolute URL, internal or not), or null. */
  location: string | null;
  /** The redirect leaves the site (its target is not crawled). */
  externalLocation: boolean;
  html: boolean;
  noindex: boolean;
  inSitemap: boolean;
  title: string | null;
  description: string | null;
  h1: string | null;
  words: number;
  textHash: number;
  /** Canonical target when it differs from this URL. */
  canonicalOther: string | null;
  ttfbMs: number;
  bytes: number;
  /** Internal links on the page (followable and nofollow). */
  outlinks: number;
  /** Followable internal links pointing here; known once the crawl is finalised. */
  inlinks: number;
  /**
   * Internal link equity, 0–100 (crawl/link_score.ts), for HTML 200 pages once the crawl is
   * finalised; absent otherwise and when the link graph was too large to score.
   */
  linkScore?: number;
  /** Internal hreflang alternates other than the page itself (capped; absent when none). */
  hreflang?: string[];
  /**
   * A non-HTML 2xx response's X-Robots-Tag when it says noindex, nofollow or none (absent
   * otherwise, and on records written before the field existed).
   */
  nonHtmlRobots?: { tag: string; type: string };
  /** Checks that fired on this URL (page checks as crawled, site checks at the end). */
  checks: string[];
  /**
   * `render`: first found in a rendered DOM (render_steps.ts), no served HTML fetched before
   * linked to it; absent for every other way a URL is found.
   */
  discoveredBy?: "render";
  /** A lab-sampled page's lab figures (render_steps.ts), absent on every other page. */
  lab?: LabFigures;
}

/**
 * One HTML page's anchors as stored (facts/fragments.ts): 32-bit hashes of its ids and
 * `<a name>` values, and whether more were left out (then no fragment is judged against it).
 */
export interface AnchorsValue {
  h: number[];
  more: boolean;
}

/** One page's fragment links as stored: targets (canonical) and fragments, same order. */
export interface FragLinksValue {
  t: string[];
  f: string[];
}

/** One page's references as stored: URL hashes and RESOURCE_ELEMENTS indexes, same order. */
export interface EmbedsValue {
  t: number[];
  e: number[];
}

/** One distinct resource: its queue position and, once checked, what it answered. */
export interface ResourceRecord {
  seq: number;
  /**
   * Checked: "ok"/"broken" with a status or failure; "skip": not judged (robots, refused, a 429 or
   * a 503 with Retry-After).
   */
  r?: "ok" | "broken" | "skip";
  /** HTTP status of the final answer (0 when none). */
  s?: number;
  /** Failure kind when no answer came (timeout, network, tls, dns). */
  f?: string | null;
}

export interface BackfillState {
  /** When the backfill first ran: every audit that ended after it got a marker when it ended. */
  startedAt: number;
  /** The last audit id read; null before the first page. */
  after: string | null;
  done: boolean;
}

/** How an audit ended, or `reuse`: only its stored page facts go (a newer audit replaced them). */
export type PruneKind = "completed" | "failed" | "reuse";

/** The finished crawl's result, kept in the state so a repeated last step finds it. */
export interface CrawlOutcome {
  score: number;
  summary: ScoreResult["summary"];
  pagesCrawled: number;
  jobsCompleted: number;
  jobsFailed: number;
  /** Every applicable check: id → [eligible, affected]. */
  tallies: Record<string, [number, number]>;
  host: string;
  language: string | null;
  truncated: boolean;
  /** The caps the crawl hit and what each left out (absent on outcomes before caps existed). */
  limitsHit?: Partial<Record<CapName, CapHit>>;
  /** A scoped crawl: what each scope rule left out (absent: the whole site). */
  scopeLeftOut?: Partial<Record<ScopeRule, number>>;
  /** How politeness paced the crawl (absent on outcomes before it was reported). */
  politeness?: PolitenessReport;
  /** URLs known and never fetched because a budget stopped the crawl (absent: older outcomes). */
  unfetched?: number;
}

export type CrawlPhase = "crawl" | "seed_sitemap" | "finalize" | "done";

/** What the scope of a scoped crawl left out so far. */
export interface ScopeProgress {
  /** List mode (`urls`): no link is followed, so the link graph is not the site's. */
  list: boolean;
  /** Per rule: link occurrences and sitemap URLs left out (see docs/audit.md "Scope"). */
  leftOut: Partial<Record<ScopeRule, number>>;
}

/** What the page inventory shows of a lab render: the metrics, whether or not a check fired. */
export interface LabFigures {
  /** Largest Contentful Paint, ms; null when the page painted no LCP candidate. */
  lcpMs: number | null;
  cls: number;
  tbtMs: number;
  /** Bytes the page transferred (every request), and how many requests. */
  bytes: number;
  requests: number;
}

/** What politeness keeps in the crawl state (absent on states older than it). */
export interface PaceState {
  hosts: Record<string, HostPace>;
  /** 429/503 answers that slowed the crawl (pages and resources). */
  throttled: number;
  /** Page URLs queued again after such an answer. */
  retries: number;
  /** Page URLs recorded with their 429/503 after MAX_RETRIES retries. */
  gaveUp: number;
  /** The largest Crawl-delay a robots.txt asked of us, in seconds (0: none). */
  crawlDelayAsked: number;
}

/** Progress of the post-crawl steps, kept in the crawl state. */
export interface PostCrawlState {
  agent: boolean;
  /** The render steps' (render_steps.ts); null until the first one. */
  render: null | RenderProgress;
}

/** Where the resource queue stands, kept in the crawl state. */
export interface ResourceProgress {
  /** Next queue position to allocate (= distinct resources queued). */
  tail: number;
  /** Next queue position to check. */
  checked: number;
  /** Resources left unchecked (byte budget or deadline reached first). */
  unchecked: number;
}

/** What the crawl state keeps about one origin's robots.txt (the body lives in a blob). */
export interface RobotsMeta {
  state: RobotsState;
  status: number;
  url: string;
}

/** One host's pace, in the crawl state. */
export interface HostPace {
  /** Epoch ms before which no request to the host starts. */
  next: number;
  /** Requests per second at most; null: no cap (only the concurrency bounds it). */
  rps: number | null;
  /** Epoch ms of the last throttle that halved the rate. */
  slowedAt: number;
}

export interface ScoreResult {
  score: number;
  summary: {
    issues_critical: number;
    issues_warning: number;
    issues_info: number;
    top_issues: TopIssue[];
    categories: Record<Category, number>;
    /** "Fix first" (fix_first.ts); absent on audits completed before it existed. */
    fix_first?: FixFirstItem[];
  };
}

/** Progress of the render steps, kept in the crawl state (`post.render`). */
export interface RenderProgress {
  /** Lab pages of this round's sample (its first ones). */
  lab: number;
  /** Pages in this round's sample, and the next one to render. */
  total: number;
  next: number;
  /** Renders done and failed, all rounds. */
  rendered: number;
  failed: number;
  /** The round (1: after the raw crawl). Absent on states written before rounds existed. */
  round?: number;
  /** This round's sample is still to be picked. */
  pending?: boolean;
  /** This round's candidates: records at frontier positions from here on (round 1: 0). */
  from?: number;
  /** Pages sampled, and lab pages among them, all rounds (what the caps count). */
  sampled?: number;
  labSampled?: number;
  /** URLs first queued from rendered DOMs, all rounds. */
  discovered?: number;
  /** Hashes of the path templates a lab page stood for so far (at most the lab cap). */
  labTemplates?: number[];
  /** The render steps are over (no further round). */
  over?: boolean;
}

export type RobotsState = "ok" | "missing" | "unreachable";

/** One "Fix first" item: what it costs, how far it reaches, how to fix it and what it takes. */
export interface FixFirstItem {
  check: string;
  title: string;
  category: Category;
  severity: Severity;
  impact: Impact;
  effort: Effort;
  affected_count: number;
  eligible_count: number;
  /** affected ÷ eligible, 0–1 (3 decimals). */
  reach: number;
  /** IMPACT_WEIGHT[impact] × reach (3 decimals); the list is ordered by it. */
  priority: number;
  /** What the finding costs the site (the check's meaning, check_docs.ts). */
  cost: string;
  /** How to fix it. */
  fix: string;
}

export interface TopIssue {
  check: string;
  severity: Severity;
  title: string;
  affected_count: number;
}

/** One lab page's figures, as the report shows them. */
export interface LabRecord {
  url: string;
  fcp_ms: number | null;
  lcp_ms: number | null;
  cls: number;
  tbt_ms: number;
  transfer_bytes: number;
  requests: number;
}
