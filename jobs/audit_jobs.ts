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

export function auditJobs(deps: Deps): JobHandlers {
  const runner = auditRunner(deps);
  return { audit: (id) => runAuditJob(deps, id, runner) };
}

export async function auditMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "audit");
}
