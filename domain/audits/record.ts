/**
 * The audit record (the truth of an audit job, design.md) and the reads of it: its types, and
 * `getAudit`, which answers 404 for an audit the caller may not see.
 *
 * @module
 */
import type { CapHit, CapName } from "../audit_engine/crawl/caps.ts";
import type { ScopeRule } from "../audit_engine/scope.ts";
import type { AuditOptions } from "./options.ts";
import type { PolitenessReport } from "../audit_engine/crawl/politeness.ts";
import type { MaskedSiteAuth } from "../audit_engine/site_auth.ts";
import type { AuditReport } from "../audit_engine/run_audit.ts";
import type { Deps } from "../platform/deps.ts";
import { ApiError } from "../platform/errors.ts";
import type { Funding } from "../billing/funding.ts";
import { projectVisibleTo } from "../projects/projects.ts";
import type { KeyMode } from "../identity/types.ts";
import { keys, read } from "../platform/store.ts";

export type AuditStatus = "queued" | "running" | "completed" | "failed";

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

/** Who started an audit: an API or MCP call, or the project's schedule. */
export type AuditTrigger = "api" | "schedule";

/** The audit's trigger; records written before the field existed were all started by the API. */
export function triggerOf(audit: Pick<AuditRecord, "trigger">): AuditTrigger {
  return audit.trigger ?? "api";
}

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

/** An audit of the account, or 404. */
export async function getAudit(
  deps: Deps,
  accountId: string,
  auditId: string,
  mode: KeyMode,
): Promise<AuditRecord> {
  const audit = (await read(deps.kv, keys.audit(accountId, auditId))).value;
  if (!audit || !(await projectVisibleTo(deps, accountId, audit.projectId, mode))) {
    throw new ApiError("not_found", `No audit '${auditId}' on this account`);
  }
  return audit;
}
