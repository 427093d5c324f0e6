/**
 * Persisted shapes of rechecks.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { Evidence, NotCheckedReason, RecheckResult } from "../audit_engine/types.ts";
import type { Funding } from "../billing/types.ts";

/** One URL of a re-check, and once judged its outcome. */
export interface RecheckItem {
  url: string;
  /** The audit's click depth of the URL (-1 unknown). */
  depth: number;
  outcome: {
    result: RecheckResult;
    status: number | null;
    failure: string | null;
    reason: NotCheckedReason | null;
    evidence: Evidence[];
    evidenceCount: number;
    /**
     * Link checks: one verdict per link target of the page (recheck_eval.ts `RecheckPart`);
     * absent for the other checks and on items stored before it existed.
     */
    parts?: {
      target: string;
      result: RecheckResult;
      status: number | null;
      failure: string | null;
      linkRemoved: boolean;
    }[];
    checkedAt: number;
  } | null;
}

export interface RecheckRecord {
  id: string;
  accountId: string;
  projectId: string;
  auditId: string;
  /** The check re-checked (recheck_rules.ts says how). */
  check: string;
  status: RecheckStatus;
  funding: Funding;
  createdAt: number;
  runningAt: number | null;
  completedAt: number | null;
  error: { code: string; message: string } | null;
  /** URLs taken from the audit's evidence (at most RECHECK_MAX_URLS): the items. */
  urls: number;
  /** URLs the audit found affected (its affected_count). */
  affected: number;
  /** Affected URLs not re-checked (past RECHECK_MAX_URLS, or past the audit's stored evidence). */
  leftOut: number;
  /** Items judged so far (the next step starts at this item). */
  done: number;
  counts: RecheckCounts;
  /** Items that got no HTTP answer at all: when every item is one, the re-check fails. */
  noAnswer: number;
  /** Body bytes read so far, against the re-check's byte budget. */
  bytes: number;
  /** Epoch ms the next request may start (robots.txt Crawl-delay, carried across steps). */
  nextSlotAt: number;
  /** Times a worker started a step that never ended; a re-check that keeps dying is failed. */
  attempts: number;
  leaseUntil: number;
  /** A worker is inside a step (a claim that never released it means the worker died). */
  inStep: boolean;
  /** The token of the claim that owns the current step. */
  stepToken: string | null;
}

/** Items by outcome. */
export interface RecheckCounts {
  fixed: number;
  still_failing: number;
  not_checked: number;
}

export type RecheckStatus = "queued" | "running" | "completed" | "failed";
