import { keys } from "../../kv/keys.ts";
import type { CrawlAllowance } from "../billing/catalog.ts";
import type { Deps } from "../deps.ts";
import type { SubscriptionRecord } from "../records.ts";
import type { AuditRecord } from "./record.ts";

/**
 * The crawl budget the audit's funding buys (`crawlLimitsFor`): sandbox audits get the trial's
 * small budget, a `pro` subscription's audits crawl deeper; the plan is read when the audit runs.
 */
export async function crawlDepth(deps: Deps, audit: AuditRecord): Promise<CrawlAllowance> {
  if (audit.funding.kind === "sandbox") return "sandbox";
  if (audit.funding.kind !== "subscription") return "standard";
  const sub = (await deps.kv.get<SubscriptionRecord>(keys.subscription(audit.projectId))).value;
  return sub?.plan === "pro" ? "pro" : "standard";
}
