/**
 * Persisted shapes of audits: the audit record, its stored issues, lab results and sealed site credentials.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { SealedSecret } from "../webhooks/types.ts";
import type {
  AuditReport,
  CapHit,
  CapName,
  MaskedSiteAuth,
  PolitenessReport,
  ScopeRule,
  UserAgentPreset,
} from "../audit_engine/types.ts";
import type { Funding } from "../billing/types.ts";

/** The options of one audit, as stored (all optional; absent means the default). */
export interface AuditOptions {
  /** Path globs a URL must match one of (domain/audit_engine/scope.ts). */
  include?: string[];
  /** Path globs that leave a URL out (they win over include). */
  exclude?: string[];
  /** Link depth from the start URL past which nothing is crawled. */
  maxDepth?: number;
  /** List mode: exactly these URLs of the project's site (canonical, distinct, in order). */
  urls?: string[];
  /** Only the start URL and the URLs the sitemaps list. */
  sitemapOnly?: boolean;
  /** Who the crawl says it is (user_agents.ts); absent: `serpwright`. */
  userAgent?: UserAgentPreset;
  /** The caller's page groups, first match wins (groups.ts); absent: groups are detected. */
  groups?: PageGroupDef[];
}

/** A page group the caller names: a path glob (scope.ts rules) and the group's name. */
export interface PageGroupDef {
  name: string;
  pattern: string;
}

/**
 * One page group of a completed audit (groups.ts): how it is defined and what it holds. Written
 * once when the audit completes; `checks` is bounded by the number of checks.
 */
export interface PageGroupRecord {
  name: string;
  /** Its path glob; null for `other` (the pages no group took). */
  pattern: string | null;
  source: "custom" | "detected" | "other";
  /** Where it is listed (and matched): custom in the caller's order, detected by size, other last. */
  order: number;
  pages: number;
  /** Pages at least one check fired on. */
  pagesWithIssues: number;
  /** Check id → the group's pages it fired on. */
  checks: Record<string, number>;
}

export interface StoredIssues {
  previousAuditId: string | null;
  issues: StoredIssue[];
}

export interface AuditRecord {
  id: string;
  accountId: string;
  projectId: string;
  status: AuditStatus;
  funding: Funding;
  createdAt: number;
  runningAt: number | null;
  completedAt: number | null;
  score: number | null;
  summary: AuditReport["summary"] | null;
  error: { code: string; message: string } | null;
  /** Times a worker started it; a run that keeps dying is failed after MAX_ATTEMPTS. */
  attempts: number;
  /** A worker owns the run until then; after it, the stale-job sweep may hand it to another. */
  leaseUntil: number;
  jobsCompleted: number;
  jobsFailed: number;
  /** A worker is inside a step (a claim that never released it means the worker died). */
  inStep?: boolean;
  /** The token of the claim that owns the current step. */
  stepToken?: string | null;
  /** New, persisting and fixed issues against the project's previous completed audit. */
  changes?: AuditChanges | null;
  /** A rendered audit (`{"render": true}`); absent on raw audits. */
  render?: boolean;
  /** What the render steps did, once completed. */
  renderStats?: RenderStats | null;
  /** The crawl caps the site hit (crawl/caps.ts), once completed. */
  limitsHit?: Partial<Record<CapName, CapHit>>;
  /**
   * Once completed: whether the crawl covered what it found (no budget cut it short) and the
   * URLs it knew and never fetched, and the pages judged on the previous audit's stored facts
   * (`reused`, an incremental crawl; absent before it existed). Absent on audits completed
   * before it was kept.
   */
  crawl?: { complete: boolean; unfetched: number; reused?: number };
  /**
   * The audit carries staging credentials: only their mask is here; the sealed copy lives under
   * `audit_auth/<id>` until the audit ends (site_access.ts).
   */
  auth?: MaskedSiteAuth;
  /** The audit's own per-host rate cap (`max_rps`), within the operator's `CRAWL_MAX_RPS`. */
  maxRps?: number;
  /** How politeness paced the crawl, once completed (crawl/politeness.ts). */
  politeness?: PolitenessReport;
  /**
   * Who started it, fixed at creation, so completion says `scheduled` without reading the
   * schedule (audits import nothing from the schedules). Absent on records older than the field.
   */
  trigger?: AuditTrigger;
  /** The audit options it was started with (options.ts); absent: none (the whole site). */
  options?: AuditOptions;
  /** A scoped audit, once completed: what each scope rule left out (crawl/frontier.ts). */
  scopeLeftOut?: Partial<Record<ScopeRule, number>>;
}

/** Credentials as stored: the sealed JSON and the mask that may be shown. */
export interface SealedSiteAuth {
  v: 1;
  mask: MaskedSiteAuth;
  box: SealedSecret;
}

/** One check of a finished audit, as stored under `auditIssues` (one small value per audit). */
export interface StoredIssue {
  check: string;
  /** Affected items (pages or URLs); 0 for a fixed check. */
  affected: number;
  /** Pages or URLs the check applied to. */
  eligible: number;
  /** Evidence items stored (at most the cap; `affected` stays the true count). */
  stored: number;
  change: IssueChange;
}

/** How a completed audit compares with the project's previous completed audit. */
export interface AuditChanges {
  previous_audit_id: string | null;
  /** Checks that fire now and did not before (all fired checks when there is no previous audit). */
  new: number;
  /** Checks that fired before and still fire. */
  persisting: number;
  /** Checks that fired before and no longer fire. */
  fixed: number;
}

export type AuditStatus = "queued" | "running" | "completed" | "failed";

/** Who started an audit: an API or MCP call, or the project's schedule. */
export type AuditTrigger = "api" | "schedule";

/**
 * Pages a rendered audit rendered (lab: throttled, with LCP/CLS/TBT) and those that failed; URLs
 * first found in rendered DOMs and render rounds (absent on audits completed before rounds).
 */
export interface RenderStats {
  pages_rendered: number;
  lab_pages: number;
  pages_failed: number;
  pages_discovered?: number;
  rounds?: number;
}

export type IssueChange = "new" | "persisting" | "fixed";

/**
 * A broken internal URL of a completed audit and the live URL it most likely meant (fixes.ts),
 * worked out once from the audit's records and kept beside them.
 */
export interface RedirectGuess {
  /** The live URL most likely meant; null when none is similar enough. */
  to: string | null;
  /** 0-1: path and content similarity of the best live URL (0 when none). */
  score: number;
  /** Internal links found pointing at the broken URL (at most the stored evidence). */
  links: number;
}
