import { type Deps, keys, read } from "../platform/mod.ts";
import type { CrawlAllowance } from "../billing/mod.ts";
import type { AuditRecord } from "./record.ts";

/**
 * The crawl budget the audit's funding buys (`crawlLimitsFor`): sandbox audits get the trial's
 * small budget, a `pro` subscription's audits crawl deeper; the plan is read when the audit runs.
 */
export async function crawlDepth(deps: Deps, audit: AuditRecord): Promise<CrawlAllowance> {
  if (audit.funding.kind === "sandbox") return "sandbox";
  if (audit.funding.kind !== "subscription") return "standard";
  const sub = (await read(deps.kv, keys.subscription(audit.projectId))).value;
  return sub?.plan === "pro" ? "pro" : "standard";
}
