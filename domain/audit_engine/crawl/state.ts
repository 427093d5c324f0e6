/**
 * The crawl state: the one small KV value each step reads at its start and commits at its end
 * (with the owner's check), so a step either counts completely or not at all. Everything that
 * grows with the site lives in other keys (store.ts); this value stays a few KiB.
 *
 * @module
 */
import type { CrawlOutcome, CrawlPhase, CrawlState, ScopeProgress } from "../types.ts";
import type { Resolver } from "../../net/mod.ts";
import type { CrawlCaps } from "./caps.ts";
import type { CrawlScope } from "../scope.ts";
import type { UserAgentPreset } from "../user_agents.ts";
import type { SiteAuth } from "../site_auth.ts";
import type { ErrorStopSettings } from "./health.ts";
import type { ReuseBase } from "../types.ts";

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
  /** The error-rate stop (health.ts, the operator's `CRAWL_ERROR_*`); absent: none. */
  errorStop?: ErrorStopSettings;
  /**
   * Workers that may fetch for this crawl at once (the operator's `CRAWL_PARTITIONS`), read when
   * the crawl starts; absent: 1.
   */
  partitions?: number;
  /**
   * An incremental crawl (crawl/reuse.ts): the audit stores each HTML page's facts, and reuses
   * those `previous` (the project's latest audit that stored any) stored when compatible.
   * Absent: no facts stored or reused.
   */
  incremental?: { previous: ReuseBase | null };
}

/** How much one step may do before it commits and hands over to the next. */
export interface StepLimits {
  /** Frontier entries taken per step. */
  pages: number;
  /** Wall time after which a step starts no new fetch, ms. */
  ms: number;
  /**
   * Entries a step may take when KV answers slowly (step_size.ts); absent: always `pages` (the
   * operator set `CRAWL_STEP_PAGES`, or a test fixed the step).
   */
  maxPages?: number;
}

export type { CrawlOutcome, CrawlPhase, ScopeProgress };

export type { CrawlState };

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

/** Pages fetched and body bytes read by one step. */
export interface StepFetched {
  pages: number;
  bytes: number;
}

/** A step that fetched nothing (or did not commit). */
export const NOTHING_FETCHED: StepFetched = { pages: 0, bytes: 0 };

/** What a step fetched: its committed state against the one it read (null: a first step). */
export function fetchedSince(
  before: Pick<CrawlState, "fetches" | "bytes"> | null,
  after: Pick<CrawlState, "fetches" | "bytes">,
): StepFetched {
  return {
    pages: after.fetches - (before?.fetches ?? 0),
    bytes: after.bytes - (before?.bytes ?? 0),
  };
}
