import { type AuditRunner, crawlDepth, runAuditJob } from "../domain/audits.ts";
import { resendExpiredJobs } from "../domain/job_leases.ts";
import type { Deps } from "../domain/deps.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** How many times more pages a `pro` project's audit may crawl than `CRAWL_MAX_PAGES`. */
export const PRO_CRAWL_FACTOR = 5;
/** Audit-wide deadline: no new fetch starts after it (the report is then partial). */
const AUDIT_DEADLINE_MS = 60 * 60_000;

/** The crawl budgets of an audit (the operator's limits, the plan's depth) and the step size. */
export function auditRunner(deps: Deps): AuditRunner {
  const c = deps.config;
  return {
    limits: { pages: c.crawlStepPages, ms: c.crawlStepSeconds * 1000 },
    input: async (audit, project) => {
      const depth = await crawlDepth(deps, audit);
      return {
        startUrl: project.url,
        maxPages: Math.min(100_000, c.crawlMaxPages * (depth === "pro" ? PRO_CRAWL_FACTOR : 1)),
        concurrency: c.crawlConcurrency,
        allowPrivate: c.allowPrivateTargets,
        deadlineAt: (audit.runningAt ?? audit.createdAt) + AUDIT_DEADLINE_MS,
        now: audit.runningAt ?? audit.createdAt,
      };
    },
  };
}

/**
 * The queue handler: runs one step, and when another is due, takes it at once in this process
 * (detached, so a long crawl never holds the queue handler). The next step's message is already
 * enqueued by then; whoever claims first runs the step and the other finds it held, so the
 * message is the fallback (another process, a crash), and a step does not wait for the queue's
 * delivery latency (hundreds of ms on the local queue, a poll on the table queue).
 */
export function auditJobs(deps: Deps): JobHandlers {
  const runner = auditRunner(deps);
  const chain = async (id: string) => {
    try {
      while ((await runAuditJob(deps, id, runner)) === "next") { /* next step */ }
    } catch (err) {
      console.error(
        JSON.stringify({ level: "error", msg: "audit step chain stopped", id, error: String(err) }),
      );
    }
  };
  return {
    audit: async (id) => {
      if ((await runAuditJob(deps, id, runner)) === "next") setTimeout(() => chain(id), 0);
    },
  };
}

export async function auditMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "audit");
}
