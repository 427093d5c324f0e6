import { runAudit } from "../domain/audit/run_audit.ts";
import { type AuditEngine, runAuditJob } from "../domain/audits.ts";
import { crawlLimitsFor } from "../domain/billing/catalog.ts";
import { resendExpiredJobs } from "../domain/job_leases.ts";
import type { Deps } from "../domain/deps.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** Per-response body cap of the crawler when the budget leaves more (its own default). */
const PAGE_BYTES = 5 * 1024 * 1024;

/**
 * The crawler and checks engine with the catalogue's crawl budget for what pays for the audit
 * (`crawlLimitsFor`: sandbox, standard or pro). The total-bytes budget is passed as
 * `maxTotalBytes` for the crawl engine to enforce, and bounded meanwhile by capping each response
 * at its share of it.
 */
export function auditEngine(deps: Deps): AuditEngine {
  return ({ startUrl, depth }) => {
    const limits = crawlLimitsFor(depth, deps.config);
    return runAudit({
      startUrl,
      maxPages: limits.maxPages,
      concurrency: limits.concurrency,
      allowPrivate: deps.config.allowPrivateTargets,
      deadlineMs: limits.maxDurationMs,
      maxBytes: Math.min(PAGE_BYTES, Math.ceil(limits.maxBytes / limits.maxPages)),
      maxTotalBytes: limits.maxBytes,
    });
  };
}

export function auditJobs(deps: Deps): JobHandlers {
  const engine = auditEngine(deps);
  return { audit: (id) => runAuditJob(deps, id, engine) };
}

export async function auditMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "audit");
}
