import { runAudit } from "../domain/audit/run_audit.ts";
import { type AuditEngine, runAuditJob } from "../domain/audits.ts";
import { resendExpiredJobs } from "../domain/job_leases.ts";
import type { Deps } from "../domain/deps.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** How many times more pages a `pro` project's audit may crawl than `CRAWL_MAX_PAGES`. */
export const PRO_CRAWL_FACTOR = 5;

/** The crawler and checks engine with the operator's limits. */
export function auditEngine(deps: Deps): AuditEngine {
  return ({ startUrl, depth }) =>
    runAudit({
      startUrl,
      maxPages: deps.config.crawlMaxPages * (depth === "pro" ? PRO_CRAWL_FACTOR : 1),
      concurrency: deps.config.crawlConcurrency,
      allowPrivate: deps.config.allowPrivateTargets,
    });
}

export function auditJobs(deps: Deps): JobHandlers {
  const engine = auditEngine(deps);
  return { audit: (id) => runAuditJob(deps, id, engine) };
}

export async function auditMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "audit");
}
