/**
 * The audit's place in the one job lifecycle (domain/jobs/lifecycle.ts): its leases, attempts and
 * how claiming, failing and finishing change the record. Its own module because creation, the
 * step runner and completion all need it, and none of them should import another for it.
 *
 * @module
 */
import { type Deps, keys } from "../platform/mod.ts";
import { markForPruning } from "../audit_engine/mod.ts";
import type { JobSpec } from "../jobs/mod.ts";
import type { AuditRecord, AuditStatus } from "./record.ts";

/** How long a queued message may take to be picked up, and a worker may hold a run. */
export const QUEUE_GRACE_MS = 2 * 60_000;
/**
 * Short, renewed every third of it while the step runs (domain/jobs/lifecycle.ts `keepLease`):
 * a worker that vanished is noticed by the next sweep after its lease ran out, so a crawl moves
 * again within about 25 s of its worker's death (docs/operators.md, "Recovery").
 */
export const AUDIT_LEASE_MS = 20_000;
export const MAX_AUDIT_ATTEMPTS = 3;

/** The lease of a run and the grace of a queued audit: `JOB_LEASE_MS` when set, else the above. */
export function leaseMs(deps: Deps, fallback: number): number {
  return deps.config.jobLeaseMs ?? fallback;
}

const OPEN: AuditStatus[] = ["queued", "running"];

/** The audit's place in the one job lifecycle (domain/jobs/lifecycle.ts). */
export const AUDIT_JOB: JobSpec<AuditRecord> = {
  kind: "audit",
  ownerKey: keys.auditOwner,
  recordKey: keys.audit,
  activeKey: keys.activeAudit,
  unit: "audits",
  open: (a) => OPEN.includes(a.status),
  queued: (a) => a.status === "queued",
  held: (a, now) => a.status === "running" && a.inStep !== false && a.leaseUntil > now,
  // Between steps a running audit is released (inStep false): taking the next step is no new
  // attempt. A claim that finds a step never released starts one (its worker died).
  newAttempt: (a) => a.status === "queued" || a.inStep !== false,
  maxAttempts: MAX_AUDIT_ATTEMPTS,
  leaseMs: (deps) => leaseMs(deps, AUDIT_LEASE_MS),
  claimed: (a, c) => ({
    ...a,
    status: "running",
    runningAt: a.runningAt ?? c.now,
    attempts: c.attempts,
    leaseUntil: c.leaseUntil,
    inStep: true,
    stepToken: c.token,
  }),
  interrupted: { code: "audit_interrupted", message: "The audit was interrupted too many times" },
  failed: (a, error, now) => ({ ...a, status: "failed", completedAt: now, error }),
  // Every way an audit ends (completed, failed, out of attempts) queues its working state for
  // deletion in the same commit (domain/audit_engine/prune.ts), and deletes its staging credentials
  // there and then (site_access.ts): they never outlive the audit.
  onFinish: (op, { id, kind, now }) => {
    op.delete(keys.auditAuth(id));
    markForPruning(op, id, kind, now);
  },
};
