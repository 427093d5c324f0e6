/**
 * The re-check record (the truth of a re-check job) and its items, its place in the one job
 * lifecycle (domain/jobs/lifecycle.ts), and `getRecheck`, which answers 404 for a re-check the
 * caller may not see. A re-check fetches again the URLs of one check of a completed audit and
 * judges each (domain/audit_engine/recheck_eval.ts); it never changes the audit.
 *
 * @module
 */
import type { RecheckCounts, RecheckItem, RecheckRecord, RecheckStatus } from "./types.ts";
import { ApiError, type Deps, keys, list, read } from "../platform/mod.ts";
import type { JobSpec } from "../jobs/mod.ts";
import { projectVisibleTo } from "../projects/mod.ts";
import type { KeyMode } from "../identity/types.ts";

export type { RecheckCounts, RecheckStatus };

export type { RecheckItem, RecheckRecord };

/** How long a queued message may take to be picked up, a step may hold its lease, attempts. */
export const RECHECK_QUEUE_GRACE_MS = 2 * 60_000;
export const RECHECK_LEASE_MS = 5 * 60_000;
export const MAX_RECHECK_ATTEMPTS = 3;

/** A lease: `JOB_LEASE_MS` when set (tests), else `fallback`. */
export function recheckLeaseMs(deps: Deps, fallback: number): number {
  return deps.config.jobLeaseMs ?? fallback;
}

const OPEN: RecheckStatus[] = ["queued", "running"];

/** The re-check's place in the one job lifecycle; several may run for one project at once. */
export const RECHECK_JOB: JobSpec<RecheckRecord> = {
  kind: "recheck",
  ownerKey: keys.recheckOwner,
  recordKey: keys.recheck,
  // Re-checks are never sandbox-funded (refused at creation): no trial budget to give back.
  unit: "audits",
  open: (r) => OPEN.includes(r.status),
  queued: (r) => r.status === "queued",
  held: (r, now) => r.status === "running" && r.inStep && r.leaseUntil > now,
  // Between steps a re-check is released (inStep false): the next step is no new attempt.
  newAttempt: (r) => r.status === "queued" || r.inStep,
  maxAttempts: MAX_RECHECK_ATTEMPTS,
  leaseMs: (deps) => recheckLeaseMs(deps, RECHECK_LEASE_MS),
  claimed: (r, c) => ({
    ...r,
    status: "running",
    runningAt: r.runningAt ?? c.now,
    attempts: c.attempts,
    leaseUntil: c.leaseUntil,
    inStep: true,
    stepToken: c.token,
  }),
  interrupted: {
    code: "recheck_interrupted",
    message: "The re-check was interrupted too many times; the charge was refunded",
  },
  failed: (r, error, now) => ({ ...r, status: "failed", completedAt: now, error }),
};

/** A re-check of the account on the side `mode` sees, or 404. */
export async function getRecheck(
  deps: Deps,
  accountId: string,
  recheckId: string,
  mode: KeyMode,
): Promise<RecheckRecord> {
  const r = (await read(deps.kv, keys.recheck(accountId, recheckId))).value;
  if (!r || !(await projectVisibleTo(deps, accountId, r.projectId, mode))) {
    throw new ApiError("not_found", `No re-check '${recheckId}' on this account`);
  }
  return r;
}

/** A re-check's items in the order taken (at most RECHECK_MAX_URLS: one short prefix read). */
export async function listRecheckItems(deps: Deps, recheckId: string): Promise<RecheckItem[]> {
  const out: RecheckItem[] = [];
  for await (const e of list(deps.kv, { prefix: keys.recheckItems(recheckId) })) out.push(e.value);
  return out;
}
