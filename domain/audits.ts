import type { CapHit, CapName } from "./audit/crawl/caps.ts";
import { atomically } from "../kv/atomic.ts";
import { isTransientStoreError } from "../kv/busy_retry.ts";
import { keys } from "../kv/keys.ts";
import { ALL_CHECKS, CHECKS_BY_ID } from "./audit/checks/index.ts";
import { runCrawlStep } from "./audit/crawl/engine.ts";
import { markForPruning } from "./audit/prune.ts";
import type { CrawlInput, CrawlOutcome, CrawlState, StepLimits } from "./audit/crawl/state.ts";
import { type AuditReport, reportOf } from "./audit/run_audit.ts";
import type { Severity } from "./audit/types.ts";
import type { Principal } from "./auth.ts";
import { type CrawlAllowance, renderedAuditCharge, UNIT_PRICES } from "./billing/catalog.ts";
import { addDebit, readBalance } from "./billing/credits.ts";
import { isActive } from "./subscription_state.ts";
import type { RenderPlan } from "./audit/crawl/post_steps.ts";
import type { Deps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import { recordEvent } from "./events.ts";
import { chargeFor, type Funding } from "./funding.ts";
import { newId } from "./ids.ts";
import { claimJob, finishJob, type JobSpec, renewLease } from "./job_lifecycle.ts";
import type { RunningJobMarker } from "./job_leases.ts";
import type { KeyMode, ProjectRecord, SubscriptionRecord } from "./records.ts";
import { projectVisibleTo } from "./projects.ts";
import { regressionOf, startedBySchedule } from "./monitoring/regression_event.ts";

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
}

/** Pages a rendered audit rendered (lab: throttled, with LCP/CLS/TBT) and those that failed. */
export interface RenderStats {
  pages_rendered: number;
  lab_pages: number;
  pages_failed: number;
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
 * there, so a slot and its audit exist together or not at all); it may throw to abandon. A
 * rendered audit (`options.render`) is refused with 503 `rendering_unavailable` where nothing
 * renders, before anything is charged, and is charged by `renderedAuditCharge` (catalogue).
 */
export function createAudit(
  deps: Deps,
  caller: Principal,
  projectId: string,
  alongside?: (op: Deno.AtomicOperation, accepted: AuditAcceptance) => Promise<void>,
  options: { render?: boolean } = {},
): Promise<AuditAcceptance> {
  const { kv, clock } = deps;
  const render = options.render === true;
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
    if (render) requireRendering(deps, "start the audit without render. Nothing was charged");
    const now = clock.now();
    const id = newId("aud", now);
    const op = kv.atomic().check(projectEntry, activeEntry);
    const funding = render
      ? await chargeRendered(kv, op, caller, project, subEntry, id, now)
      : await chargeFor(kv, op, {
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
      inStep: false,
      stepToken: null,
      changes: null,
      ...(render ? { render: true, renderStats: null } : {}),
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

/**
 * Throws 503 `rendering_unavailable` where this process cannot render pages (rendering off, Deno
 * Deploy, or no permission to launch a browser); `instead` tells the caller what to do.
 */
export function requireRendering(deps: Pick<Deps, "render">, instead: string): void {
  if (deps.render?.enabled) return;
  throw new ApiError(
    "rendering_unavailable",
    503,
    "This server cannot render pages in a browser (rendering is off, on Deno Deploy, or the " +
      `process lacks the permissions to launch one); ${instead}`,
  );
}

/**
 * The charge of a rendered audit (catalogue `renderedAuditCharge`): `pro` included, a `basic`
 * subscription pays `rendering_addon` from credits, no subscription pays `rendered_audit`;
 * sandbox keys are refused (402 `payment_required`).
 */
async function chargeRendered(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  caller: Principal,
  project: ProjectRecord,
  subEntry: Deno.KvEntryMaybe<SubscriptionRecord>,
  ref: string,
  now: number,
): Promise<Funding> {
  const sub = subEntry.value;
  const plan = sub && isActive(sub, now) ? sub.plan : null;
  const charge = renderedAuditCharge(plan, caller.key.mode === "sandbox" ? "sandbox" : "live");
  if (charge.kind === "included") {
    op.check(subEntry);
    return { kind: "subscription" };
  }
  if (charge.kind === "refused") {
    throw new ApiError(
      "payment_required",
      402,
      "Rendered audits need the pro plan or a live key with credits; sandbox keys run raw " +
        "audits only (omit render)",
    );
  }
  // chargeFor checks the subscription entry itself: checked once per commit (at most 10 checks).
  if (plan === null) {
    return await chargeFor(kv, op, {
      caller,
      project,
      subscription: subEntry,
      unit: "audits",
      unitId: charge.unit,
      ref,
      now,
    });
  }
  op.check(subEntry);
  const amount = UNIT_PRICES[charge.unit];
  const balance = await readBalance(kv, caller.account.id);
  addDebit(op, balance, { accountId: caller.account.id, amount, reason: charge.unit, ref, now });
  return { kind: "credits", amount, unit: charge.unit };
}

/** An audit of the account, or 404. */
export async function getAudit(
  deps: Deps,
  accountId: string,
  auditId: string,
  mode: KeyMode,
): Promise<AuditRecord> {
  const audit = (await deps.kv.get<AuditRecord>(keys.audit(accountId, auditId))).value;
  if (!audit || !(await projectVisibleTo(deps, accountId, audit.projectId, mode))) {
    throw new ApiError("not_found", 404, `No audit '${auditId}' on this account`);
  }
  return audit;
}

/**
 * How the job layer runs an audit: the crawl input for an audit (the operator's and the plan's
 * budgets) and the size of one step. Injected so tests and benchmarks can change them.
 */
export interface AuditRunner {
  input: (audit: AuditRecord, project: ProjectRecord) => Promise<CrawlInput>;
  limits: StepLimits;
  /** How rendered audits render (absent: a rendered audit fails `rendering_unavailable`). */
  render?: RenderPlan;
}

/** Why the address guard refused a site, in words that name no resolved address. */
const REFUSAL_TEXT: Record<string, string> = {
  invalid_url: "not a valid URL",
  bad_scheme: "only http and https are allowed",
  https_required: "only https is allowed",
  userinfo: "URLs with credentials are not allowed",
  private_address: "the host is a loopback, private, link-local or other internal address",
  dns_failure: "the host name does not resolve",
};

const OPEN: AuditStatus[] = ["queued", "running"];

/** The audit's place in the one job lifecycle (domain/job_lifecycle.ts). */
export const AUDIT_JOB: JobSpec<AuditRecord> = {
  kind: "audit",
  ownerKey: keys.auditOwner,
  recordKey: keys.audit,
  activeKey: keys.activeAudit,
  unit: "audits",
  open: (a) => OPEN.includes(a.status),
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
  // deletion in the same commit (domain/audit/prune.ts).
  onFinish: (op, { id, kind, now }) => markForPruning(op, id, kind, now),
};

/**
 * The queue handler: takes ONE step of the audit's crawl. It claims the audit (a lease, renewed
 * while the step runs, so a live step is never started twice), runs the step, and in the step's
 * own commit releases the audit and enqueues the next step; the last step completes the audit
 * with its issues, changes and the `audit.completed` event. A step whose worker died is repeated
 * (not the crawl) by whichever process gets the next message or the stale-job sweep. Safe to
 * call any number of times. Returns "next" when a further step is due (already enqueued).
 */
export async function runAuditJob(
  deps: Deps,
  auditId: string,
  runner: AuditRunner,
): Promise<"next" | "idle"> {
  const { kv, clock } = deps;
  const claim = await claimJob(deps, AUDIT_JOB, auditId, (op, token) => {
    op.set(keys.auditStep(auditId), token);
  });
  if (!claim) return "idle";
  const audit = claim.record;
  const project = (await kv.get<ProjectRecord>(keys.project(claim.accountId, audit.projectId)))
    .value;
  if (!project) {
    await failAudit(deps, auditId, claim.token, {
      code: "project_missing",
      message: "The project no longer exists",
    });
    return "idle";
  }

  // Renew the lease while the step runs; stop when the audit is no longer ours.
  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const every = Math.max(50, Math.floor(AUDIT_JOB.leaseMs(deps) / 3));
  const heartbeat = setInterval(() => {
    renewing = renewing.then(async () => {
      if (!lost && !(await renewLease(deps, AUDIT_JOB, claim, auditId))) lost = true;
    }).catch(() => {});
  }, every);
  const stop = async () => {
    clearInterval(heartbeat);
    await renewing;
  };

  let outcome: CrawlOutcome | null = null;
  let next = false;
  try {
    const input = await runner.input(audit, project);
    const step = await runCrawlStep(kv, auditId, input, runner.limits, {
      now: () => clock.now(),
      render: runner.render,
      beforeCommit: async (op, done) => {
        await stop();
        // Only the owner of this step may count it.
        op.check({ key: keys.auditStep(auditId), versionstamp: claim.versionstamp });
        if (done) return;
        // Another claim would have rewritten the step key too, so the check above covers it.
        const entry = await kv.get<AuditRecord>(keys.audit(claim.accountId, auditId));
        const a = entry.value;
        if (!a) return;
        const leaseUntil = clock.now() + leaseMs(deps, QUEUE_GRACE_MS);
        op.check(entry)
          .set(entry.key, { ...a, inStep: false, leaseUntil } satisfies AuditRecord)
          .set(keys.runningJob("audit", auditId), {
            id: auditId,
            accountId: claim.accountId,
            leaseUntil,
          });
        deps.queue.enqueueIn(op, { type: "audit", id: auditId });
      },
    });
    if (step.committed && step.done) outcome = step.state!.result;
    next = step.committed && !step.done;
  } catch (err) {
    await stop();
    if (isTransientStoreError(err)) {
      // Not the audit's fault: hand the step back as an interrupted attempt (its lease ends now),
      // and come back to it; after MAX_AUDIT_ATTEMPTS the claim fails it as interrupted.
      console.warn(
        JSON.stringify({ level: "warn", msg: "audit step retried", auditId, error: String(err) }),
      );
      await handBack(deps, claim.accountId, auditId, claim.token).catch(() => {});
      return "idle";
    }
    const refused = (err as Error)?.name === "TargetRefusedError";
    const noBrowser = (err as Error)?.name === "RenderingUnavailableError";
    await failAudit(
      deps,
      auditId,
      claim.token,
      noBrowser
        ? {
          code: "rendering_unavailable",
          message: "The browser could not start on this server; the charge was refunded",
        }
        : refused
        ? {
          code: "target_refused",
          // Never echo resolved addresses: they would let a caller map internal DNS.
          message: `The site address is not allowed: ${
            REFUSAL_TEXT[(err as { reason?: string }).reason ?? ""] ?? "refused"
          }`,
        }
        : { code: "audit_failed", message: "The audit could not run; the charge was refunded" },
    );
    if (!refused && !noBrowser) {
      console.error(
        JSON.stringify({ level: "error", msg: "audit step failed", auditId, error: String(err) }),
      );
    }
    return "idle";
  } finally {
    await stop();
  }
  if (outcome) await completeAudit(deps, auditId, outcome);
  return next ? "next" : "idle";
}

/** Fails an audit, only while `token`'s claim still holds it (a worker that lost it writes nothing). */
function failAudit(
  deps: Deps,
  auditId: string,
  token: string | undefined,
  error: { code: string; message: string },
): Promise<void> {
  return finishJob(deps, AUDIT_JOB, auditId, ({ op, record, accountId, now }) => {
    op.set(keys.audit(accountId, auditId), AUDIT_JOB.failed(record, error, now));
    return Promise.resolve("failed");
  }, { token });
}

/**
 * Gives a claimed step back after a transient failure: the lease ends now (the next claim counts
 * a new attempt) and a message brings any process back to it shortly.
 */
async function handBack(deps: Deps, accountId: string, auditId: string, token: string) {
  const key = keys.audit(accountId, auditId);
  const entry = await deps.kv.get<AuditRecord>(key);
  const a = entry.value;
  if (!a || !AUDIT_JOB.open(a) || a.stepToken !== token) return;
  const now = deps.clock.now();
  const op = deps.kv.atomic().check(entry).set(key, { ...a, leaseUntil: now })
    .set(keys.runningJob("audit", auditId), { id: auditId, accountId, leaseUntil: now });
  deps.queue.enqueueIn(op, { type: "audit", id: auditId }, 1_000);
  await op.commit();
}

const MAX_FACT_PAGES = 60;
const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));
const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

export type IssueChange = "new" | "persisting" | "fixed";

/** One check of a finished audit, as stored under `auditIssues` (one small value per audit). */
export interface StoredIssue {
  check: string;
  /** Affected items (pages or URLs); 0 for a fixed check. */
  affected: number;
  /** Pages or URLs the check applied to. */
  eligible: number;
  /** Evidence items stored (at most the cap; `affected` stays the true count). */
  stored: number;
  change: IssueChange;
}

export interface StoredIssues {
  previousAuditId: string | null;
  issues: StoredIssue[];
}

/**
 * The issues of a finished crawl against the previous completed audit's: fired checks worst
 * first (severity, affected count, id), then the checks that no longer fire.
 */
export function compareIssues(
  tallies: Record<string, [number, number]>,
  stored: Record<string, number>,
  previous: StoredIssues | null,
  previousAuditId: string | null,
): { issues: StoredIssues; changes: AuditChanges } {
  const before = new Set(
    (previous?.issues ?? []).filter((i) => i.change !== "fixed").map((i) => i.check),
  );
  const fired: StoredIssue[] = [];
  for (const c of ALL_CHECKS) {
    const t = tallies[c.id];
    if (!t || t[1] <= 0) continue;
    fired.push({
      check: c.id,
      affected: t[1],
      eligible: t[0],
      stored: stored[c.id] ?? 0,
      change: before.has(c.id) ? "persisting" : "new",
    });
  }
  const rank = (id: string) => SEVERITY_RANK[CHECKS_BY_ID.get(id)?.severity ?? "info"];
  fired.sort((a, b) =>
    rank(a.check) - rank(b.check) || b.affected - a.affected ||
    (a.check < b.check ? -1 : a.check > b.check ? 1 : 0)
  );
  const now = new Set(fired.map((i) => i.check));
  const fixed: StoredIssue[] = [...before].filter((id) => !now.has(id) && CHECKS_BY_ID.has(id))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
    .map((check) => ({
      check,
      affected: 0,
      eligible: tallies[check]?.[0] ?? 0,
      stored: 0,
      change: "fixed" as const,
    }));
  const changes: AuditChanges = {
    previous_audit_id: previousAuditId,
    new: fired.filter((i) => i.change === "new").length,
    persisting: fired.filter((i) => i.change === "persisting").length,
    fixed: fixed.length,
  };
  return { issues: { previousAuditId, issues: [...fired, ...fixed] }, changes };
}

/**
 * Completes an audit in one commit: the record with score, summary and changes, its issues
 * (compared with the project's previous completed audit), the project's latest audit, the site
 * facts articles link to, and the `audit.completed` event.
 */
async function completeAudit(deps: Deps, auditId: string, outcome: CrawlOutcome): Promise<void> {
  const { kv } = deps;
  const report: AuditReport = await reportOf(kv, auditId, outcome);
  const state = (await kv.get<CrawlState>(keys.auditCrawl(auditId))).value;
  await finishJob(deps, AUDIT_JOB, auditId, async ({ op, record: audit, accountId, now }) => {
    const projectEntry = await kv.get<ProjectRecord>(keys.project(accountId, audit.projectId));
    op.check(projectEntry);
    const project = projectEntry.value;
    const prevId = project?.latestAudit?.audit_id && project.latestAudit.audit_id !== auditId
      ? project.latestAudit.audit_id
      : null;
    const previous = prevId ? (await kv.get<StoredIssues>(keys.auditIssues(prevId))).value : null;
    const { issues, changes } = compareIssues(
      outcome.tallies,
      state?.stored ?? {},
      previous,
      previous ? prevId : null,
    );
    op.set(keys.auditIssues(auditId), issues);
    const done: AuditRecord = {
      ...audit,
      status: "completed",
      completedAt: now,
      score: report.score,
      summary: report.summary,
      jobsCompleted: report.jobs_completed,
      jobsFailed: report.jobs_failed,
      inStep: false,
      changes,
      limitsHit: outcome.limitsHit ?? {},
      ...(audit.render && state?.post?.render
        ? {
          renderStats: {
            pages_rendered: state.post.render.rendered,
            lab_pages: state.post.render.lab,
            pages_failed: state.post.render.failed,
          },
        }
        : {}),
    };
    op.set(keys.audit(accountId, auditId), done);
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
      // The events carry `changes` extended with the regression comparison (score and category
      // deltas, new critical and warning issues, fixed issues); `audit.regressed` is the same
      // payload, sent as well when the audit regressed.
      const regression = regressionOf(project, changes.previous_audit_id, {
        auditId,
        score: report.score,
        categories: report.summary.categories,
      }, issues.issues);
      const data = {
        project_id: project.id,
        project_name: project.name,
        status: "completed",
        jobs_completed: report.jobs_completed,
        jobs_failed: report.jobs_failed,
        completed_at: new Date(now).toISOString(),
        audit_id: auditId,
        scheduled: await startedBySchedule(kv, project.id, auditId),
        changes: { ...changes, ...regression },
      };
      recordEvent(op, deps.queue, { accountId, event: "audit.completed", now, data });
      if (regression.regressed) {
        recordEvent(op, deps.queue, { accountId, event: "audit.regressed", now, data });
      }
    }
    return "completed";
  });
}

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
