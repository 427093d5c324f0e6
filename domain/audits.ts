import { atomically } from "../kv/atomic.ts";
import { keys } from "../kv/keys.ts";
import type { AuditReport } from "./audit/run_audit.ts";
import type { Principal } from "./auth.ts";
import type { Deps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import { recordEvent } from "./events.ts";
import { addRefund, chargeFor, type Funding } from "./funding.ts";
import { newId } from "./ids.ts";
import type { RunningJobMarker } from "./job_leases.ts";
import type { ProjectRecord, SubscriptionRecord } from "./records.ts";
import {
  addRegressionEvent,
  compareTopIssues,
  type SummaryLike,
} from "./monitoring/regression_event.ts";

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
}

/** How long a queued message may take to be picked up, and a worker may hold a run. */
export const QUEUE_GRACE_MS = 2 * 60_000;
export const AUDIT_LEASE_MS = 15 * 60_000;
export const MAX_AUDIT_ATTEMPTS = 3;

/** The lease of a run and the grace of a queued audit: `JOB_LEASE_MS` when set, else the above. */
function leaseMs(deps: Deps, fallback: number): number {
  return deps.config.jobLeaseMs ?? fallback;
}

/** What `createAudit` accepted: a new audit, or the project's queued or running one. */
export interface AuditAcceptance {
  audit: AuditRecord;
  created: boolean;
}

/**
 * Accepts an audit: returns the project's queued or running audit if there is one (nothing
 * charged), else charges it (subscription, sandbox budget or 25 credits) and creates it in one
 * commit with the project's active-audit marker, the count and the queue message. `alongside`
 * lets a caller add its own checks and writes to that same commit (a schedule claims its due slot
 * there, so a slot and its audit exist together or not at all); it may throw to abandon.
 */
export function createAudit(
  deps: Deps,
  caller: Principal,
  projectId: string,
  alongside?: (op: Deno.AtomicOperation, accepted: AuditAcceptance) => Promise<void>,
): Promise<AuditAcceptance> {
  const { kv, clock } = deps;
  return atomically<AuditAcceptance>(kv, async () => {
    const [projectEntry, activeEntry, subEntry] = await kv.getMany<
      [ProjectRecord, string, SubscriptionRecord]
    >([
      keys.project(caller.account.id, projectId),
      keys.activeAudit(projectId),
      keys.subscription(projectId),
    ]);
    const project = projectEntry.value;
    if (!project) throw new ApiError("not_found", 404, `No project '${projectId}' on this account`);
    if (activeEntry.value) {
      const current = await kv.get<AuditRecord>(keys.audit(caller.account.id, activeEntry.value));
      if (
        current.value && (current.value.status === "queued" || current.value.status === "running")
      ) {
        const op = kv.atomic().check(activeEntry, current);
        const result = { audit: current.value, created: false };
        await alongside?.(op, result);
        return { op, result };
      }
    }
    const now = clock.now();
    const id = newId("aud", now);
    const op = kv.atomic().check(projectEntry, activeEntry);
    const funding = await chargeFor(kv, op, {
      caller,
      project,
      subscription: subEntry,
      unit: "audits",
      ref: id,
      now,
    });
    const audit: AuditRecord = {
      id,
      accountId: caller.account.id,
      projectId,
      status: "queued",
      funding,
      createdAt: now,
      runningAt: null,
      completedAt: null,
      score: null,
      summary: null,
      error: null,
      attempts: 0,
      leaseUntil: now + leaseMs(deps, QUEUE_GRACE_MS),
      jobsCompleted: 0,
      jobsFailed: 0,
    };
    const marker: RunningJobMarker = {
      id,
      accountId: caller.account.id,
      leaseUntil: audit.leaseUntil,
    };
    op
      .check({ key: keys.audit(caller.account.id, id), versionstamp: null })
      .set(keys.audit(caller.account.id, id), audit)
      .set(keys.auditOwner(id), caller.account.id)
      .set(keys.activeAudit(projectId), id)
      .set(keys.runningJob("audit", id), marker)
      .set(projectEntry.key, {
        ...project,
        status: "running",
        counts: { ...project.counts, audits: project.counts.audits + 1 },
      });
    deps.queue.enqueueIn(op, { type: "audit", id });
    await alongside?.(op, { audit, created: true });
    return { op, result: { audit, created: true } };
  });
}

/** An audit of the account, or 404. */
export async function getAudit(
  deps: Deps,
  accountId: string,
  auditId: string,
): Promise<AuditRecord> {
  const audit = (await deps.kv.get<AuditRecord>(keys.audit(accountId, auditId))).value;
  if (!audit) throw new ApiError("not_found", 404, `No audit '${auditId}' on this account`);
  return audit;
}

/**
 * What running an audit needs from the outside: the engine, injected so tests can swap it.
 * `depth` is the crawl allowance: `pro` subscriptions crawl deeper than everything else.
 */
export type AuditEngine = (
  input: { startUrl: string; depth: "standard" | "pro" },
) => Promise<AuditReport>;

/** Why the address guard refused a site, in words that name no resolved address. */
const REFUSAL_TEXT: Record<string, string> = {
  invalid_url: "not a valid URL",
  bad_scheme: "only http and https are allowed",
  https_required: "only https is allowed",
  userinfo: "URLs with credentials are not allowed",
  private_address: "the host is a loopback, private, link-local or other internal address",
  dns_failure: "the host name does not resolve",
};

/**
 * The queue handler: claims the audit (a lease, so a duplicate message or a second process does
 * nothing), runs the engine, then completes or fails it in one commit with the project update,
 * the refund on failure and the `audit.completed` event. Safe to call any number of times.
 */
export async function runAuditJob(deps: Deps, auditId: string, engine: AuditEngine): Promise<void> {
  const { kv, clock } = deps;
  const accountId = (await kv.get<string>(keys.auditOwner(auditId))).value;
  if (!accountId) return;
  const key = keys.audit(accountId, auditId);

  // Claim.
  const entry = await kv.get<AuditRecord>(key);
  const audit = entry.value;
  if (!audit || audit.status === "completed" || audit.status === "failed") return;
  const now = clock.now();
  if (audit.status === "running" && audit.leaseUntil > now) return; // another worker owns it
  if (audit.attempts >= MAX_AUDIT_ATTEMPTS) {
    await finishAudit(deps, auditId, {
      kind: "failed",
      error: { code: "audit_interrupted", message: "The audit was interrupted too many times" },
    });
    return;
  }
  const claimed: AuditRecord = {
    ...audit,
    status: "running",
    runningAt: audit.runningAt ?? now,
    attempts: audit.attempts + 1,
    leaseUntil: now + leaseMs(deps, AUDIT_LEASE_MS),
  };
  const claim = await kv.atomic().check(entry).set(key, claimed)
    .set(keys.runningJob("audit", auditId), {
      id: auditId,
      accountId,
      leaseUntil: claimed.leaseUntil,
    })
    .commit();
  if (!claim.ok) return;

  const project = (await kv.get<ProjectRecord>(keys.project(accountId, audit.projectId))).value;
  if (!project) {
    await finishAudit(deps, auditId, {
      kind: "failed",
      error: { code: "project_missing", message: "The project no longer exists" },
    });
    return;
  }
  let report: AuditReport;
  try {
    report = await engine({ startUrl: project.url, depth: await crawlDepth(deps, audit) });
  } catch (err) {
    const refused = (err as Error)?.name === "TargetRefusedError";
    await finishAudit(deps, auditId, {
      kind: "failed",
      error: refused
        ? {
          code: "target_refused",
          // Never echo resolved addresses: they would let a caller map internal DNS.
          message: `The site address is not allowed: ${
            REFUSAL_TEXT[(err as { reason?: string }).reason ?? ""] ?? "refused"
          }`,
        }
        : { code: "audit_failed", message: "The audit could not run; the charge was refunded" },
    });
    if (!refused) {
      console.error(
        JSON.stringify({ level: "error", msg: "audit engine failed", auditId, error: String(err) }),
      );
    }
    return;
  }
  await finishAudit(deps, auditId, { kind: "completed", report });
}

type Outcome =
  | { kind: "completed"; report: AuditReport }
  | { kind: "failed"; error: { code: string; message: string } };

const MAX_FACT_PAGES = 60;
const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

async function finishAudit(deps: Deps, auditId: string, outcome: Outcome): Promise<void> {
  const { kv, clock } = deps;
  await atomically(kv, async () => {
    const accountId = (await kv.get<string>(keys.auditOwner(auditId))).value!;
    const entry = await kv.get<AuditRecord>(keys.audit(accountId, auditId));
    const audit = entry.value;
    if (!audit || audit.status === "completed" || audit.status === "failed") {
      return { op: kv.atomic().check(entry), result: undefined };
    }
    const projectEntry = await kv.get<ProjectRecord>(keys.project(accountId, audit.projectId));
    const now = clock.now();
    const op = kv.atomic().check(entry, projectEntry)
      .delete(keys.runningJob("audit", auditId));
    const active = await kv.get<string>(keys.activeAudit(audit.projectId));
    if (active.value === auditId) op.check(active).delete(active.key);

    if (outcome.kind === "completed") {
      const { report } = outcome;
      const done: AuditRecord = {
        ...audit,
        status: "completed",
        completedAt: now,
        score: report.score,
        summary: report.summary,
        jobsCompleted: report.jobs_completed,
        jobsFailed: report.jobs_failed,
      };
      op.set(entry.key, done);
      const project = projectEntry.value;
      if (project) {
        op.set(projectEntry.key, {
          ...project,
          latestAudit: {
            audit_id: auditId,
            status: "completed",
            completed_at: new Date(now).toISOString(),
            score: report.score,
            summary: report.summary,
          },
        });
        op.set(keys.siteFacts(project.id), {
          host: report.site.host,
          language: report.site.language,
          pages: report.site.pages.slice(0, MAX_FACT_PAGES).map((p) => ({
            url: p.url.slice(0, 300),
            title: clip(p.title, 120),
            h1: clip(p.h1, 120),
            description: clip(p.description, 200),
          })),
        });
        recordEvent(op, deps.queue, {
          accountId,
          event: "audit.completed",
          now,
          data: {
            project_id: project.id,
            project_name: project.name,
            status: "completed",
            jobs_completed: report.jobs_completed,
            jobs_failed: report.jobs_failed,
            completed_at: new Date(now).toISOString(),
          },
        });
        await addRegressionEvent(kv, op, deps.queue, {
          accountId,
          project,
          auditId,
          score: report.score,
          summary: report.summary,
          issues: compareTopIssues(project.latestAudit?.summary as SummaryLike, report.summary),
          now,
        });
      }
    } else {
      op.set(entry.key, { ...audit, status: "failed", completedAt: now, error: outcome.error });
      await addRefund(kv, op, {
        accountId,
        funding: audit.funding,
        unit: "audits",
        ref: auditId,
        now,
      });
    }
    return { op, result: undefined };
  });
}

/** A `pro` subscription's audits crawl deeper; the plan is read when the audit runs. */
async function crawlDepth(deps: Deps, audit: AuditRecord): Promise<"standard" | "pro"> {
  if (audit.funding.kind !== "subscription") return "standard";
  const sub = (await deps.kv.get<SubscriptionRecord>(keys.subscription(audit.projectId))).value;
  return sub?.plan === "pro" ? "pro" : "standard";
}
