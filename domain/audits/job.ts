/**
 * Running an audit: the queue handler takes one crawl step at a time under a renewed lease,
 * fails the audit (refunded) on an error of its own, hands a step back on a transient store
 * error, and completes it after the last step (complete.ts).
 *
 * @module
 */
import { isTransientStoreError } from "../../kv/busy_retry.ts";
import { atomic, classifyFailure, type Deps, keys, KvMemo, read } from "../platform/mod.ts";
import {
  callHelper,
  type CrawlInput,
  type CrawlState,
  holdHelperSlot,
  rangeSplits,
  readCrawlState,
  type RenderPlan,
  resourcesPending,
  runCrawlStep,
  runHelperStep,
  type StepLimits,
} from "../audit_engine/mod.ts";
import { claimJob, finishJob, keepLease, noteRecord } from "../jobs/mod.ts";
import type { ProjectRecord } from "../projects/types.ts";
import { completeAudit, type CompletionReads, readForCompletion } from "./complete.ts";
import { detectGroups, type GroupCounter, groupCounterOf } from "./groups.ts";
import { AUDIT_JOB, leaseMs, QUEUE_GRACE_MS } from "./lifecycle.ts";
import type { AuditRecord } from "./record.ts";
import type { PageGroupDef } from "./types.ts";
import { recordCrawlStep } from "../../telemetry/mod.ts";

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

/** Audits per KV whose detected page groups this process counts ahead, at most. */
const DETECTING_KEPT = 16;
/**
 * The detected page groups of audits in their site-wide passes, counted by this process while
 * the passes run (an audit that does not render has all its URLs once its crawl phase ends): the
 * passes' last one counts each record into them as it annotates it. The first finalize step a
 * process runs starts the detection; the step's last pass, or else the completion, takes it.
 */
const detecting = new KvMemo<Promise<PageGroupDef[]>>(DETECTING_KEPT);

function detectEarly(kv: Deno.Kv, auditId: string, splits: readonly string[]): void {
  if (detecting.get(kv, auditId)) return;
  const counting = detectGroups(kv, auditId, splits);
  counting.catch(() => {}); // a count that failed is made again at completion
  detecting.set(kv, auditId, counting);
}

function takeDetected(kv: Deno.Kv, auditId: string): Promise<PageGroupDef[]> | undefined {
  return detecting.take(kv, auditId)?.catch(() => detectGroups(kv, auditId));
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
  // Read together, while the claim commits (a round trip each on a remote KV): the project and
  // its reuse base. A claim that fails wastes them; one that succeeds did not change either.
  const incremental = deps.config.crawlIncremental !== false;
  const readBoth = (accountId: string, projectId: string) =>
    Promise.all([
      read(kv, keys.project(accountId, projectId)),
      incremental ? read(kv, keys.reuseBase(projectId)) : null,
    ]);
  // The crawl state too. A step committed by an earlier claim after this read either left the
  // audit open, and then rewrote the audit's record, so this claim's check of the record fails,
  // or was the last, and then this step's own commit fails its check of the state read: either
  // way nothing counts twice. No earlier claim's step commits after this claim (the step key).
  const early: {
    reads?: ReturnType<typeof readBoth>;
    state?: ReturnType<typeof readCrawlState>;
  } = {};
  const claim = await claimJob(deps, AUDIT_JOB, auditId, (op, token) => {
    op.set(keys.auditStep(auditId), token);
  }, (accountId, record) => {
    early.reads = readBoth(accountId, record.projectId);
    early.state = readCrawlState(kv, auditId);
    // Awaited below once the claim is this worker's.
    early.reads.catch(() => {});
    early.state.catch(() => {});
  });
  if (!claim) return "idle";
  const audit = claim.record;
  const [projectEntry, reuseEntry] = await (early.reads ??
    readBoth(claim.accountId, audit.projectId));
  const project = projectEntry.value;
  if (!project) {
    await failAudit(deps, auditId, claim.token, {
      code: "project_missing",
      message: "The project no longer exists",
    });
    return "idle";
  }

  // Renew the lease while the step runs (a heartbeat: the lease is short, so a dead worker's
  // step is taken over within seconds).
  const heartbeat = keepLease(deps, AUDIT_JOB, claim, auditId);
  // The site-wide passes are about to run: the page groups' count of the records' URLs runs
  // beside them (an audit's options never change; one that renders may still crawl), and the
  // completion's reads.
  let ahead: CompletionReads | undefined;
  if (!audit.render) {
    early.state?.then(({ entry }) => {
      if (entry.value?.phase !== "finalize") return;
      if (!audit.options?.groups?.length) detectEarly(kv, auditId, rangeSplits(entry.value));
      // Not in a step that checks resources: the site-wide checks come after it.
      if (!resourcesPending(entry.value)) {
        ahead = readForCompletion(kv, auditId, claim.accountId, audit.projectId);
      }
    }).catch(() => {});
  }
  const stop = heartbeat.stop;

  /** The crawl state the audit's last step committed (its outcome in `result`). */
  let finished: CrawlState | undefined;
  /** Where the records' keys are cut into ranges, as the site-wide passes told it. */
  let splits: readonly string[] = [];
  /** The page groups, counted by the site-wide checks' last pass (written with the step). */
  let groups: GroupCounter | undefined;
  let next = false;
  let releasedAs: AuditRecord | null = null;
  try {
    // Project audits are incremental (unless the operator turned it off): each reuses what the
    // project's latest audit with stored facts kept, when their options are compatible
    // (audit_engine crawl/reuse.ts).
    const input = await runner.input(audit, project);
    if (incremental) input.incremental ??= { previous: reuseEntry?.value ?? null };
    const step = await runCrawlStep(kv, auditId, input, runner.limits, {
      now: () => clock.now(),
      render: runner.render,
      holder: `${deps.worker ?? "local"}:${claim.token}`,
      leaseMs: deps.config.jobLeaseMs ?? undefined,
      state: early.state,
      finalRecords: async (cut) => {
        splits = cut;
        const custom = audit.options?.groups;
        return groups = await groupCounterOf(kv, auditId, custom, takeDetected(kv, auditId), cut);
      },
      beforeCommit: async (op, done, delayMs) => {
        await stop();
        // Only the owner of this step may count it.
        op.check({ key: keys.auditStep(auditId), versionstamp: claim.versionstamp });
        if (done) return;
        // Another claim would have rewritten the step key too, so the check above covers it.
        // The record is as this claim or its heartbeat last wrote it (a read is a round trip on a
        // remote KV), or read when a renewal failed: one written since by anyone else fails the
        // check, and the step with it (the writer, a hand-back, sends the audit on).
        const known = heartbeat.known();
        const key = keys.audit(claim.accountId, auditId);
        const entry = known
          ? { key, value: known.value, versionstamp: known.versionstamp }
          : await read(kv, key);
        const a = entry.value;
        if (!a) return;
        // A paused crawl (the error-rate stop) is released until its next step is due.
        const leaseUntil = clock.now() + delayMs + leaseMs(deps, QUEUE_GRACE_MS);
        releasedAs = { ...a, inStep: false, leaseUntil };
        op.check(entry)
          .set(entry.key, releasedAs)
          .set(keys.runningJob("audit", auditId), {
            id: auditId,
            accountId: claim.accountId,
            leaseUntil,
          });
        deps.queue.enqueueIn(op, { type: "audit", id: auditId }, delayMs);
      },
    });
    if (step.committed) recordCrawlStep(step.fetched);
    if (step.committed && step.state) await callHelpers(deps, auditId, step.state, runner);
    if (step.committed && step.done) finished = step.state!;
    // A delayed step is the queue's to deliver: the chain must not spin through the pause.
    next = step.committed && !step.done && step.delayMs === 0;
    // The next step, taken at once in this process (jobs/audit_jobs.ts), claims from the
    // record as this commit released it instead of reading it.
    if (next && releasedAs && step.versionstamp) {
      noteRecord(kv, AUDIT_JOB.kind, auditId, {
        accountId: claim.accountId,
        value: releasedAs,
        versionstamp: step.versionstamp,
      });
    }
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
    const { failure, expected } = classifyFailure(err, AUDIT_FAILURES, {
      code: "audit_failed",
      message: "The audit could not run; the charge was refunded",
    });
    await failAudit(deps, auditId, claim.token, failure);
    if (!expected) {
      console.error(
        JSON.stringify({ level: "error", msg: "audit step failed", auditId, error: String(err) }),
      );
    }
    return "idle";
  } finally {
    await stop();
  }
  const outcome = finished?.result;
  if (outcome) {
    // The site-wide passes of a large site outlast a short lease: the claim keeps it meanwhile,
    // from the record as the step's heartbeat left it.
    const finishing = keepLease(deps, AUDIT_JOB, claim, auditId, heartbeat.known());
    try {
      await completeAudit(deps, auditId, outcome, {
        accountId: claim.accountId,
        record: audit,
        detected: takeDetected(kv, auditId),
        splits,
        groupsStored: groups?.ended === true,
        latest: finishing.known,
        reads: ahead,
        state: finished,
      });
    } finally {
      await finishing.stop();
    }
  }
  return next ? "next" : "idle";
}

/** How long a helper with nothing to claim (every range in flight) waits before it ends. */
const HELPER_PATIENCE_MS = 5_000;

/**
 * A partitioned crawl with more queued than one step takes: calls its helpers (`CRAWL_PARTITIONS`
 * − 1 of them, fixed when the crawl started), each slot once until it runs or its call runs out.
 */
async function callHelpers(deps: Deps, auditId: string, state: CrawlState, runner: AuditRunner) {
  const parts = state.partitions ?? 1;
  if (parts <= 1 || state.phase !== "crawl" || state.tail - state.head <= runner.limits.pages) {
    return;
  }
  for (let k = 1; k < parts; k++) {
    await callHelper(deps.kv, auditId, k, (op) => {
      deps.queue.enqueueIn(op, { type: "crawl_slice", id: `${auditId}:${k}` });
    });
  }
}

/**
 * The queue handler of a partitioned crawl's helper (`<auditId>:<k>`): holds slot k and takes
 * slice steps (claim a range, fetch, record) while the audit is open and there is a range to
 * claim, then gives the slot back; the audit's own chain calls it again when there is more.
 * A helper that dies leaves its range and slot to run out (crawl/partition.ts leases). Safe to
 * call any number of times.
 */
export async function runCrawlHelper(
  deps: Deps,
  id: string,
  runner: AuditRunner,
  stopping?: AbortSignal,
): Promise<void> {
  const cut = id.lastIndexOf(":");
  const auditId = id.slice(0, cut);
  const k = Number(id.slice(cut + 1));
  if (cut <= 0 || !Number.isInteger(k) || k < 1) return;
  const accountId = (await read(deps.kv, keys.auditOwner(auditId))).value;
  if (!accountId) return;
  const holder = `${deps.worker ?? "local"}:${crypto.randomUUID()}`;
  const lease = deps.config.jobLeaseMs ?? undefined;
  const slot = await holdHelperSlot(deps.kv, auditId, k, holder, lease && 2 * lease);
  if (!slot) return;
  try {
    const audit = (await read(deps.kv, keys.audit(accountId, auditId))).value;
    if (!audit || !AUDIT_JOB.open(audit)) return;
    const project = (await read(deps.kv, keys.project(accountId, audit.projectId))).value;
    if (!project) return;
    const input = await runner.input(audit, project);
    let idleSince = Date.now();
    while (!stopping?.aborted && !slot.lost) {
      const a = (await read(deps.kv, keys.audit(accountId, auditId))).value;
      if (!a || !AUDIT_JOB.open(a)) return;
      const out = await runHelperStep(
        deps.kv,
        auditId,
        input,
        runner.limits,
        holder,
        () => deps.clock.now(),
        lease,
      );
      if (out.committed) recordCrawlStep(out.fetched);
      if (!out.idle) idleSince = Date.now();
      // Every range in flight: theirs are the links to claim next, a moment later.
      else if (out.waiting && Date.now() - idleSince < HELPER_PATIENCE_MS) {
        await new Promise((r) => setTimeout(r, out.delayMs));
      } else return;
    }
  } finally {
    await slot.stop();
  }
}

/** What a failed audit stores for each known failure code. */
const AUDIT_FAILURES: Parameters<typeof classifyFailure>[1] = {
  auth_unavailable: () => ({
    code: "auth_unavailable",
    message: "The audit's staging credentials could not be read (the server's encryption " +
      "key changed); the charge was refunded. Start it again with auth",
  }),
  rendering_unavailable: () => ({
    code: "rendering_unavailable",
    message: "The browser could not start on this server; the charge was refunded",
  }),
  target_refused: (err) => ({
    code: "target_refused",
    // Never echo resolved addresses: they would let a caller map internal DNS.
    message: `The site address is not allowed: ${
      REFUSAL_TEXT[(err as { reason?: string }).reason ?? ""] ?? "refused"
    }`,
  }),
};

/** Fails an audit, only while `token`'s claim still holds it (a worker that lost it writes nothing). */
function failAudit(
  deps: Deps,
  auditId: string,
  token: string | undefined,
  error: { code: string; message: string },
): Promise<boolean> {
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
  const entry = await read(deps.kv, key);
  const a = entry.value;
  if (!a || !AUDIT_JOB.open(a) || a.stepToken !== token) return;
  const now = deps.clock.now();
  const op = atomic(deps.kv).check(entry).set(key, { ...a, leaseUntil: now })
    .set(keys.runningJob("audit", auditId), { id: auditId, accountId, leaseUntil: now });
  deps.queue.enqueueIn(op, { type: "audit", id: auditId }, 1_000);
  await op.commit();
}
