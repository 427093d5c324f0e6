/**
 * Audit entry point for tests, benchmarks and tools: runs the stepped crawl (crawl/engine.ts) to
 * its end on a fresh in-memory KV and reads the result back. The service runs the same steps
 * through the job queue instead (domain/audits/job.ts), on its own KV.
 *
 * @module
 */
import type { AuditPage, AuditReport, CheckTally, Evidence } from "./types.ts";
import type { RenderPlan } from "./crawl/post_steps.ts";
import { keys, list } from "../platform/mod.ts";
import { withKvLimits } from "../../kv/limits_guard.ts";
import { runCrawlStep, runHelperStep } from "./crawl/engine.ts";
import type { CrawlInput, CrawlOutcome, CrawlState, StepLimits } from "./crawl/state.ts";
import type { PageRecord } from "./crawl/store.ts";
import { MAX_SITE_PAGES } from "./crawl/page_recorder.ts";
import type { PolitenessReport } from "./crawl/politeness.ts";

export { PageTally } from "./page_checks.ts";

/**
 * A whole audit run in one call (tests, benches): the crawl's input with a clock function and a
 * deadline relative to the start instead of the step engine's absolute ones, and a render plan.
 */
export interface AuditInput extends Omit<CrawlInput, "now" | "deadlineAt" | "render"> {
  /** Render a sample after the crawl with this plan (a rendered audit; crawl/post_steps.ts). */
  render?: RenderPlan;
  now?: () => number;
  /** Audit-wide deadline after which no new fetch starts; default 10 minutes. */
  deadlineMs?: number;
  /** Pages per step (default 50, so small sites already take several steps). */
  stepPages?: number;
  /** Step wall time, ms (default 30 s). */
  stepMs?: number;
  /** Also return every page record (the inventory; tests of small sites). */
  keepRecords?: boolean;
}

export type { AuditPage };

export type { AuditReport };

/**
 * A crawl's site pages (shallowest first), final once its crawl phase ended: what `reportOf`
 * reads, which a caller may read ahead.
 */
export async function readSitePages(kv: Deno.Kv, auditId: string): Promise<AuditPage[]> {
  const pages: AuditPage[] = [];
  const deep: AuditPage[] = [];
  // One batch (a round trip on a remote KV): the site pages are at most MAX_SITE_PAGES.
  const batchSize = MAX_SITE_PAGES + 1;
  for await (const e of list(kv, { prefix: keys.auditSitePages(auditId) }, { batchSize })) {
    (e.value.depth < 0 ? deep : pages).push(e.value);
  }
  return [...pages, ...deep];
}

/**
 * The report of a finished crawl, with its site pages (`sitePages`, read ahead, or read from KV
 * now).
 */
export async function reportOf(
  kv: Deno.Kv,
  auditId: string,
  outcome: CrawlOutcome,
  sitePages?: Promise<AuditPage[]>,
): Promise<AuditReport> {
  const pages = await (sitePages ?? readSitePages(kv, auditId));
  return {
    score: outcome.score,
    summary: outcome.summary,
    pages_crawled: outcome.pagesCrawled,
    jobs_completed: outcome.jobsCompleted,
    jobs_failed: outcome.jobsFailed,
    site: { pages, host: outcome.host, language: outcome.language },
  };
}

/**
 * Audits a site. Throws `TargetRefusedError` only when the start URL is refused by the address
 * guard; an unreachable or broken site is a completed audit with critical issues.
 */
export async function runAudit(input: AuditInput): Promise<AuditReport> {
  return (await runAuditDetailed(input)).report;
}

/** `runAudit` plus every check's tally and the stored evidence of every fired check. */
export async function runAuditDetailed(input: AuditInput): Promise<{
  report: AuditReport;
  tallies: Map<string, CheckTally>;
  findings: Map<string, Evidence[]>;
  steps: number;
  /** How politeness paced the crawl (rate cap, Crawl-delay, 429/503 retries). */
  politeness: PolitenessReport | null;
  /** The finished crawl's state (caps hit, render progress, truncation). */
  state: CrawlState;
  /** Every page record, by URL, when `keepRecords` was asked for (else empty). */
  records: PageRecord[];
  /** The crawl's outcome as the job layer gets it (caps hit, scope left out…). */
  outcome: CrawlOutcome;
}> {
  const now = input.now ?? Date.now;
  const t0 = now();
  // Strict limits: a write past a KV limit fails here as it would on a shared store.
  const kv = withKvLimits(await Deno.openKv(":memory:"), { strict: true });
  // A partitioned crawl (crawl/partition.ts): helpers take ranges beside the chain of steps, as
  // other workers would, until it ends.
  let finished = false;
  let helpers: Promise<void>[] = [];
  try {
    const auditId = "aud_local";
    const limits: StepLimits = { pages: input.stepPages ?? 50, ms: input.stepMs ?? 30_000 };
    const crawlInput = {
      startUrl: input.startUrl,
      maxPages: input.maxPages,
      concurrency: input.concurrency,
      allowPrivate: input.allowPrivate,
      timeoutMs: input.timeoutMs,
      maxBytes: input.maxBytes,
      maxTotalBytes: input.maxTotalBytes,
      deadlineAt: t0 + (input.deadlineMs ?? 10 * 60_000),
      resolver: input.resolver,
      ca: input.ca,
      now: t0,
      render: input.render !== undefined,
      caps: input.caps,
      scope: input.scope,
      userAgent: input.userAgent,
      maxRps: input.maxRps,
      auth: input.auth,
      partitions: input.partitions,
    };
    helpers = Array.from({ length: Math.max(0, (input.partitions ?? 1) - 1) }, async (_, k) => {
      while (!finished) {
        const out = await runHelperStep(kv, auditId, crawlInput, limits, `local_${k + 1}`, now);
        if (out.idle) await new Promise((r) => setTimeout(r, Math.min(out.delayMs || 20, 200)));
      }
    });
    let steps = 0;
    while (true) {
      const out = await runCrawlStep(kv, auditId, crawlInput, limits, {
        now,
        render: input.render,
      });
      steps++;
      if (out.delayMs > 0) await new Promise((r) => setTimeout(r, out.delayMs));
      if (out.done) {
        const outcome = out.state!.result!;
        const tallies = new Map<string, CheckTally>();
        for (const [id, [eligible, affected]] of Object.entries(outcome.tallies)) {
          tallies.set(id, { eligible, affected });
        }
        const findings = new Map<string, Evidence[]>();
        for await (const e of list(kv, { prefix: keys.auditFindingsAll(auditId) })) {
          const check = e.key[2];
          const list = findings.get(check) ?? [];
          list.push(e.value);
          findings.set(check, list);
        }
        const records: PageRecord[] = [];
        if (input.keepRecords) {
          for await (const e of list(kv, { prefix: keys.auditPages(auditId) })) {
            records.push(e.value);
          }
        }
        return {
          report: await reportOf(kv, auditId, outcome),
          tallies,
          findings,
          steps,
          politeness: outcome.politeness ?? null,
          state: out.state!,
          records,
          outcome,
        };
      }
    }
  } finally {
    finished = true;
    await Promise.all(helpers);
    kv.close();
  }
}

/** Tallies of every check for a finished crawl; exported for tests that inspect a check. */
export type { CheckTally };
