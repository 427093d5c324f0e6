/**
 * The crawl state: the one small KV value each step reads at its start and commits at its end
 * (with the owner's check), so a step either counts completely or not at all. Everything that
 * grows with the site lives in other keys (store.ts); this value stays a few KiB.
 *
 * @module
 */
import type { Resolver } from "../../net/address_guard.ts";
import type { SiteFacts, SitemapInfo } from "../types.ts";
import type { RobotsMeta } from "./robots_source.ts";
import type { ScoreResult } from "../scoring.ts";
import type { PostCrawlState } from "./post_steps.ts";
import type { CapHit, CapName, CrawlCaps } from "./caps.ts";
import type { ResourceProgress } from "./resource_checks.ts";
import type { CrawlScope, ScopeRule } from "../scope.ts";
import type { UserAgentPreset } from "../user_agents.ts";
import type { PaceState, PolitenessReport } from "./politeness.ts";
import type { SiteAuth } from "../site_auth.ts";

/** What an audit's crawl is asked to do; the budgets are the operator's and the plan's. */
export interface CrawlInput {
  startUrl: string;
  /** Fetches allowed (robots-blocked URLs are not fetched and do not count). */
  maxPages: number;
  concurrency: number;
  allowPrivate: boolean;
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  /** Per-response body cap; default 5 MiB. */
  maxBytes?: number;
  /** Body bytes read over the whole crawl; no new fetch starts beyond it. Default unlimited. */
  maxTotalBytes?: number;
  /** Epoch ms (the injected clock) after which no new fetch starts; the report is then partial. */
  deadlineAt?: number;
  resolver?: Resolver;
  /** Extra trusted CA (PEM) for private https servers in tests. */
  ca?: string;
  /** Epoch ms the audit runs at (for `unavailable_after`). */
  now: number;
  /** A rendered audit: the render steps run after the crawl (post_steps.ts). */
  render?: boolean;
  /** What a hostile site may make the crawl hold (caps.ts); default DEFAULT_CRAWL_CAPS. */
  caps?: CrawlCaps;
  /** Which URLs the crawl may fetch (scope.ts); absent: the whole site. */
  scope?: CrawlScope;
  /** Who the crawl says it is and which robots.txt group it obeys; default `serpwright`. */
  userAgent?: UserAgentPreset;
  /**
   * Requests per second per host at most (the audit's `max_rps` within the operator's
   * `CRAWL_MAX_RPS`); absent: no cap but the concurrency (politeness.ts).
   */
  maxRps?: number;
  /**
   * Staging credentials, sent only to the start URL's origin (site_auth.ts). Opened from their
   * sealed copy for each step by the caller, never stored in the state.
   */
  auth?: SiteAuth;
}

/** How much one step may do before it commits and hands over to the next. */
export interface StepLimits {
  /** Frontier entries taken per step. */
  pages: number;
  /** Wall time after which a step starts no new fetch, ms. */
  ms: number;
}

export type CrawlPhase = "crawl" | "seed_sitemap" | "finalize" | "done";

/** What the scope of a scoped crawl left out so far. */
export interface ScopeProgress {
  /** List mode (`urls`): no link is followed, so the link graph is not the site's. */
  list: boolean;
  /** Per rule: link occurrences and sitemap URLs left out (see docs/audit.md "Scope"). */
  leftOut: Partial<Record<ScopeRule, number>>;
}

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
}

/**
 * The link graph the crawl saw is not the whole site's: the budget cut it short (`truncated`),
 * or the scope left URLs out (or list mode followed no link). Orphans and single-inlink pages
 * cannot be proven then.
 */
export function linkGraphPartial(state: Pick<CrawlState, "truncated" | "scope">): boolean {
  const scope = state.scope;
  return state.truncated ||
    (scope !== undefined && (scope.list || Object.values(scope.leftOut).some((n) => n > 0)));
}
