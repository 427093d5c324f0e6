import {
  auditAuthFor,
  type AuditRunner,
  crawlDepth,
  crawlScopeOf,
  runAuditJob,
  runCrawlHelper,
} from "../domain/audits/mod.ts";
import {
  backfillPruneMarkers,
  beginPruneBackfill,
  effectiveMaxRps,
  MAX_STEP_GROWTH,
  pruneFinishedAudits,
} from "../domain/audit_engine/mod.ts";
import { crawlLimitsFor } from "../domain/billing/mod.ts";
import { resendExpiredJobs } from "../domain/jobs/mod.ts";
import type { Deps } from "../domain/platform/mod.ts";
import type { JobHandlers, JobRuntime } from "./dispatcher.ts";
import { recordJobRunFailure, span } from "../telemetry/mod.ts";

/**
 * The crawl budgets of an audit and the step size. The budgets are the catalogue's business rule
 * (`crawlLimitsFor`: the sandbox's small budget, `CRAWL_MAX_PAGES`, a `pro` plan's deeper crawl),
 * read for what pays for the audit when it runs. The pace is the audit's `max_rps` within
 * `CRAWL_MAX_RPS`; staging credentials are opened from their sealed copy for each step.
 */
export function auditRunner(deps: Deps): AuditRunner {
  const c = deps.config;
  return {
    limits: {
      pages: c.crawlStepPages,
      ms: c.crawlStepSeconds * 1000,
      // Unless the operator fixed the step's size, a slow KV makes steps larger (step_size.ts).
      maxPages: c.crawlStepAdaptive ? c.crawlStepPages * MAX_STEP_GROWTH : undefined,
    },
    // Rendered audits: the process's browser pool, a few pages per step (the pool caps pages in
    // flight; the step's lease is renewed while the browser works).
    render: deps.render?.enabled
      ? {
        renderer: deps.render,
        maxPages: c.render.maxPages,
        labPages: c.render.labPages,
        pagesPerStep: 2 * c.render.pagesInFlight,
        maxRounds: c.render.maxRounds,
      }
      : undefined,
    input: async (audit, project) => {
      const limits = crawlLimitsFor(await crawlDepth(deps, audit), c);
      const started = audit.runningAt ?? audit.createdAt;
      return {
        startUrl: project.url,
        maxPages: limits.maxPages,
        concurrency: limits.concurrency,
        allowPrivate: c.allowPrivateTargets,
        maxTotalBytes: limits.maxBytes,
        deadlineAt: started + limits.maxDurationMs,
        now: started,
        render: audit.render === true,
        caps: c.crawlCaps,
        // The audit options: its scope and the User-Agent preset it crawls as.
        scope: crawlScopeOf(audit.options),
        userAgent: audit.options?.userAgent,
        maxRps: effectiveMaxRps(audit.maxRps, c.crawlMaxRps) ?? undefined,
        errorStop: c.crawlErrorStop,
        partitions: c.crawlPartitions,
        auth: (await auditAuthFor(deps, audit)) ?? undefined,
      };
    },
  };
}

/** How long a first step that could not run waits before its message comes again, ms. */
const FIRST_STEP_RETRY_MS = 1_000;

/**
 * The queue handler: runs the audit's steps one after another in this process (inside the
 * handler on the job table, where it holds one of the worker's slots; detached on KV's native
 * queue, so a crawl never holds its handler). At shutdown no further step is taken. The next
 * step's message is already
 * enqueued by then; whoever claims first runs the step and the other finds it held, so the
 * message is the fallback (another process, a crash), and a step does not wait for the queue's
 * delivery latency (hundreds of ms on the local queue, a poll on the table queue).
 */
export function auditJobs(deps: Deps, rt: JobRuntime): JobHandlers {
  const runner = auditRunner(deps);
  // A span per step (inside the message's trace when the step is taken in its handler).
  const step = (id: string) =>
    span("audit.step", { "job.kind": "audit", "job.id": id }, () => runAuditJob(deps, id, runner));
  const chain = async (id: string) => {
    try {
      while (!rt.stopping.aborted && (await step(id)) === "next") {
        // next step
      }
    } catch (err) {
      console.error(
        JSON.stringify({ level: "error", msg: "audit step chain stopped", id, error: String(err) }),
      );
    }
  };
  const helper = (id: string) =>
    span(
      "audit.helper",
      { "job.kind": "crawl_slice", "job.id": id },
      () => runCrawlHelper(deps, id, runner, rt.stopping),
    );
  return {
    // A helper runs until its crawl has nothing left to claim: detached on KV's native queue.
    crawl_slice: async (id) => {
      if (rt.inline) await helper(id);
      else rt.track(helper(id).catch(() => {}));
    },
    // On KV's queue even the first step is detached: it crawls pages, and the queue's other
    // messages would wait for it. A first step that could not run (the store failed before it
    // was claimed) is sent again shortly, as the queue would redeliver a failed handler.
    audit: async (id) => {
      if (rt.inline) {
        if ((await step(id)) === "next") await chain(id);
        return;
      }
      rt.track((async () => {
        await new Promise((r) => setTimeout(r, 0));
        try {
          if ((await step(id)) !== "next") return;
        } catch (err) {
          recordJobRunFailure("audit");
          console.error(
            JSON.stringify({
              level: "error",
              msg: "audit step failed; sent again",
              id,
              error: String(err),
            }),
          );
          await deps.queue.enqueue({ type: "audit", id }, FIRST_STEP_RETRY_MS).catch(() => {});
          return;
        }
        await chain(id);
      })());
    },
  };
}

/** At process start: the backfill of prune markers knows from when audits mark themselves. */
export async function auditStart(deps: Deps): Promise<void> {
  await beginPruneBackfill(deps);
}

/**
 * Resends lost steps; marks audits that ended before prune markers existed (a page per run, once);
 * deletes finished audits' crawl working state in short batches.
 */
export async function auditMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "audit");
  await backfillPruneMarkers(deps);
  await pruneFinishedAudits(deps);
}
