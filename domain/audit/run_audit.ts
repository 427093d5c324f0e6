/**
 * Audit entry point: crawl, run every check, score. Free of HTTP routes and KV so it can be
 * tested and benchmarked alone; the job layer stores what it returns.
 *
 * @module
 */
import type { Resolver } from "../net/address_guard.ts";
import { crawlSite } from "./crawler.ts";
import { ALL_CHECKS, PAGE_CHECKS, SITE_CHECKS } from "./checks/index.ts";
import { scoreAudit } from "./scoring.ts";
import type { Category, CheckTally, PageContext, Severity, UrlRecord } from "./types.ts";

export interface AuditInput {
  startUrl: string;
  maxPages: number;
  concurrency: number;
  allowPrivate: boolean;
  /** Per-request timeout; default 10 s. */
  timeoutMs?: number;
  /** Per-response body cap; default 5 MiB. */
  maxBytes?: number;
  resolver?: Resolver;
  now?: () => number;
  /** Audit-wide deadline after which no new fetch starts; default 10 minutes. */
  deadlineMs?: number;
  /** Extra trusted CA (PEM) for private https servers in tests. */
  ca?: string;
}

export interface AuditPage {
  url: string;
  title: string | null;
  h1: string | null;
  description: string | null;
  /** Click depth from the start URL; -1 for pages only reachable through the sitemap. */
  depth: number;
}

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

const MAX_SITE_PAGES = 200;

/** Per-page check tallies: eligible/affected counters, one pair per page check. */
export class PageTally {
  readonly eligible = new Uint32Array(PAGE_CHECKS.length);
  readonly affected = new Uint32Array(PAGE_CHECKS.length);

  /** Runs every page check on one page. */
  add(ctx: PageContext): void {
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      const c = PAGE_CHECKS[i];
      if (c.eligibility === "indexable" && !ctx.indexable) continue;
      if (c.applies && !c.applies(ctx)) continue;
      this.eligible[i]++;
      // Any truthy verdict fires: true, an Evidence object or a non-empty Evidence[].
      if (c.evaluate(ctx)) this.affected[i]++;
    }
  }

  into(map: Map<string, CheckTally>): void {
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      map.set(PAGE_CHECKS[i].id, { eligible: this.eligible[i], affected: this.affected[i] });
    }
  }
}

/**
 * Audits a site. Throws `TargetRefusedError` only when the start URL is refused by the address
 * guard; an unreachable or broken site is a completed audit with critical issues.
 */
export async function runAudit(input: AuditInput): Promise<AuditReport> {
  return (await runAuditDetailed(input)).report;
}

/** `runAudit` plus every check's tally (tests and diagnostics read which checks fired). */
export async function runAuditDetailed(
  input: AuditInput,
): Promise<{ report: AuditReport; tallies: Map<string, CheckTally> }> {
  const now = (input.now ?? Date.now)();
  const tally = new PageTally();
  const pages: AuditPage[] = [];
  let language: string | null = null;
  const crawl = await crawlSite({
    startUrl: input.startUrl,
    maxPages: input.maxPages,
    concurrency: input.concurrency,
    allowPrivate: input.allowPrivate,
    timeoutMs: input.timeoutMs ?? 10_000,
    maxBytes: input.maxBytes ?? 5 * 1024 * 1024,
    resolver: input.resolver,
    now,
    deadlineMs: input.deadlineMs ?? 10 * 60_000,
    ca: input.ca,
    onPage: (ctx: PageContext, rec: UrlRecord) => {
      tally.add(ctx);
      if (ctx.isHome && language === null) language = ctx.facts.htmlLang || null;
      if (ctx.indexable && rec.canonicalOther === null && pages.length < MAX_SITE_PAGES * 2) {
        pages.push({
          url: rec.url,
          title: rec.title,
          h1: rec.h1,
          description: rec.description,
          depth: rec.depth,
        });
      }
    },
  });
  const tallies = new Map<string, CheckTally>();
  tally.into(tallies);
  for (const c of SITE_CHECKS) {
    const out = c.evaluate(crawl.result);
    if (out) tallies.set(c.id, out);
  }
  const scored = scoreAudit(ALL_CHECKS, tallies);
  const depthKey = (d: number) => (d < 0 ? Number.MAX_SAFE_INTEGER : d);
  pages.sort((a, b) => depthKey(a.depth) - depthKey(b.depth));
  const report: AuditReport = {
    score: scored.score,
    summary: scored.summary,
    pages_crawled: crawl.jobsCompleted + crawl.jobsFailed,
    jobs_completed: crawl.jobsCompleted,
    jobs_failed: crawl.jobsFailed,
    site: {
      pages: pages.slice(0, MAX_SITE_PAGES),
      host: new URL(crawl.result.startUrl).host,
      language,
    },
  };
  return { report, tallies };
}

/** Tallies of every check for a finished crawl; exported for tests that inspect a check. */
export type { CheckTally };
