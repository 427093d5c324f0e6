/**
 * The one lifecycle of a leased background job (audits, articles and re-checks): claim (a lease, so a
 * repeated message or a second process does nothing while a worker holds it), attempts (a job
 * whose workers keep dying is failed after a few), and finish (one commit that records the
 * outcome, drops the running marker and the project's active marker, and refunds on failure).
 * The KV record is the truth; the queue message only says "look at this record".
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import {
  type Atomic,
  atomic,
  type Deps,
  type Key,
  keys,
  KvMemo,
  randomPart,
  read,
} from "../platform/mod.ts";
import { addRefund, type Funding } from "../billing/mod.ts";
import type { RunningJobMarker } from "./leases.ts";
import { recordJobFinished, recordJobTakenOver } from "../../telemetry/mod.ts";

/** What every leased job record has. */
export interface LeasedRecord {
  id: string;
  projectId: string;
  funding: Funding;
  attempts: number;
  leaseUntil: number;
  /** The claim that owns the current step, on jobs that run in steps (audits). */
  stepToken?: string | null;
}

export interface JobSpec<R extends LeasedRecord> {
  kind: "audit" | "article" | "recheck";
  ownerKey: (id: string) => Key<string>;
  recordKey: (accountId: string, id: string) => Key<R>;
  /** The project's "one running job" marker; absent for jobs a project may run several of. */
  activeKey?: (projectId: string) => Key<string>;
  /** What a refund on failure gives back to a sandbox trial (credits come back by `funding`). */
  unit: "audits" | "articles";
  /** Not finished yet. */
  open: (r: R) => boolean;
  /** Accepted and not yet claimed by any worker: nothing ran, so it may still be cancelled. */
  queued: (r: R) => boolean;
  /** A live worker holds it at `now`. */
  held: (r: R, now: number) => boolean;
  /** This claim starts an attempt: the first start, or a restart after a worker died. */
  newAttempt: (r: R) => boolean;
  maxAttempts: number;
  /** How long a claim holds the job (renewable). */
  leaseMs: (deps: Deps) => number;
  /** The record as the claim leaves it. */
  claimed: (r: R, c: { now: number; attempts: number; leaseUntil: number; token: string }) => R;
  /** The failure recorded when attempts run out. */
  interrupted: { code: string; message: string };
  /** The record of a failed job. */
  failed: (r: R, error: { code: string; message: string }, now: number) => R;
  /** Adds the job's own writes to its finishing commit, whatever the outcome (audits: pruning). */
  onFinish?: (op: Atomic, ctx: { id: string; kind: FinishKind; now: number }) => void;
}

export interface Claim<R> {
  accountId: string;
  record: R;
  /** Identifies this claim: renewals and the step's commit check it. */
  token: string;
  /** Versionstamp of the claim's commit (every key it wrote carries it). */
  versionstamp: string;
}

/** A job's record as this process last committed it, and that commit's versionstamp. */
export interface KnownRecord<R> {
  accountId: string;
  value: R;
  versionstamp: string;
}

/** Owners kept per KV (job kind and id → account), the most recently read. */
const OWNERS_KEPT = 1_024;
const owners = new KvMemo<string>(OWNERS_KEPT);

/**
 * Notes a job's owner as the process that created it wrote it: the job's first claim in this
 * process does not read it (a round trip on a remote KV). The owner never changes.
 */
export function noteOwner(kv: Deno.Kv, kind: string, id: string, accountId: string): void {
  owners.set(kv, `${kind}:${id}`, accountId);
}

/**
 * The account that owns a job. An owner is written once, with the job, and never changes, so the
 * ones this process read lately are kept: a job of many steps (an audit) reads its owner once,
 * not once per step (a round trip each on a remote KV). A job deleted since has no record, which
 * every caller reads next.
 */
async function ownerOf<R extends LeasedRecord>(
  kv: Deno.Kv,
  spec: JobSpec<R>,
  id: string,
): Promise<string | null> {
  const name = `${spec.kind}:${id}`;
  const known = owners.get(kv, name);
  if (known !== undefined) return known;
  const accountId = (await read(kv, spec.ownerKey(id))).value;
  if (accountId) owners.set(kv, name, accountId);
  return accountId;
}

/** Job records kept per KV (job kind and id), as this process last committed them. */
const RECORDS_KEPT = 256;
const written = new KvMemo<KnownRecord<LeasedRecord>>(RECORDS_KEPT);

/**
 * Notes a job's record as a commit of this process wrote it (its creation, a step's release):
 * the job's next claim in this process checks it instead of reading it (a round trip on a remote
 * KV), and reads it after all when it changed since. Taken by that claim, used once.
 */
export function noteRecord<R extends LeasedRecord>(
  kv: Deno.Kv,
  kind: JobSpec<R>["kind"],
  id: string,
  known: KnownRecord<R>,
): void {
  written.set(kv, `${kind}:${id}`, known);
}

/**
 * Claims a job, or returns null when it is finished, held by a live worker, taken by another
 * process in the meantime, or out of attempts (then it is failed and refunded). `extra` adds the
 * caller's own keys to the claim commit. `early` sees the open record before the claim commits,
 * so the caller can start its own reads while the commit is on its way (they may be wasted).
 * A record this process noted (`noteRecord`) is checked instead of read, and read after all when
 * it changed since.
 */
export async function claimJob<R extends LeasedRecord>(
  deps: Deps,
  spec: JobSpec<R>,
  id: string,
  extra?: (op: Atomic, token: string) => void,
  early?: (accountId: string, record: R) => void,
): Promise<Claim<R> | null> {
  const { kv, clock } = deps;
  const known = written.take(kv, `${spec.kind}:${id}`) as KnownRecord<R> | undefined;
  const accountId = known?.accountId ?? await ownerOf(kv, spec, id);
  if (!accountId) return null;
  const key = spec.recordKey(accountId, id);
  const entry = known
    ? { key, value: known.value, versionstamp: known.versionstamp }
    : await read(kv, key);
  const record = entry.value;
  if (!record || !spec.open(record)) return null;
  const now = clock.now();
  if (spec.held(record, now)) return null;
  const fresh = spec.newAttempt(record);
  if (fresh && record.attempts >= spec.maxAttempts) {
    // A free trial job whose workers kept dying (a site built to exhaust them) keeps its charge:
    // refunding it would make the attack free to repeat. Paid jobs are refunded.
    await finishJob(deps, spec, id, ({ op, record: r, now }) => {
      op.set(spec.recordKey(accountId, id), spec.failed(r, spec.interrupted, now));
      return Promise.resolve("failed");
    }, { refund: record.funding.kind !== "sandbox" });
    return null;
  }
  const token = randomPart(16);
  const leaseUntil = now + spec.leaseMs(deps);
  const claimed = spec.claimed(record, {
    now,
    attempts: record.attempts + (fresh ? 1 : 0),
    leaseUntil,
    token,
  });
  const op = atomic(kv).check(entry).set(entry.key, claimed)
    .set(keys.runningJob(spec.kind, id), marker(deps, id, accountId, leaseUntil));
  extra?.(op, token);
  early?.(accountId, record);
  const res = await op.commit();
  // A noted record that changed since: the claim reads it (nothing is noted any more).
  if (!res.ok) return known ? await claimJob(deps, spec, id, extra, early) : null;
  // A running job claimed afresh: its last worker left a run or step unfinished, which now runs
  // again. Said, because that work (its fetches, its model calls) is done twice.
  if (fresh && !spec.queued(record)) {
    recordJobTakenOver(spec.kind);
    console.warn(JSON.stringify({
      level: "warn",
      msg: "job taken over: its last worker died, handed it back or stopped renewing its lease",
      kind: spec.kind,
      id,
      attempt: record.attempts + 1,
      lease_overdue_ms: Math.max(0, now - record.leaseUntil),
    }));
  }
  return { accountId, record: claimed, token, versionstamp: res.versionstamp };
}

/**
 * Extends a claim's lease while its worker is alive. Returns false when the job is no longer
 * this claim's (finished, or taken over): the worker should stop.
 */
export async function renewLease<R extends LeasedRecord>(
  deps: Deps,
  spec: JobSpec<R>,
  claim: Claim<R>,
  id: string,
  /** Told the record as the renewal wrote it. */
  onRenewed?: (known: KnownRecord<R>) => void,
): Promise<boolean> {
  const { kv, clock } = deps;
  const key = spec.recordKey(claim.accountId, id);
  const entry = await read(kv, key);
  const r = entry.value;
  if (!r || !spec.open(r) || (r.stepToken !== undefined && r.stepToken !== claim.token)) {
    return false;
  }
  const leaseUntil = clock.now() + spec.leaseMs(deps);
  const renewed = { ...r, leaseUntil };
  const res = await atomic(kv).check(entry).set(key, renewed)
    .set(keys.runningJob(spec.kind, id), marker(deps, id, claim.accountId, leaseUntil))
    .commit();
  if (res.ok) {
    onRenewed?.({ accountId: claim.accountId, value: renewed, versionstamp: res.versionstamp });
  }
  return res.ok || renewLease(deps, spec, claim, id, onRenewed);
}

/** The running marker of a claim this process holds: it names the process, for a hand-back. */
function marker(deps: Deps, id: string, accountId: string, leaseUntil: number): RunningJobMarker {
  return deps.worker
    ? { id, accountId, leaseUntil, worker: deps.worker }
    : { id, accountId, leaseUntil };
}

/**
 * Renews a claim's lease every third of the lease while its worker works (a heartbeat), so a
 * lease can be short and a vanished worker is noticed within one lease. `lost()` turns true once
 * the job is no longer this claim's; `stop()` ends the heartbeat and waits for a renewal in flight;
 * `known()` is the record as the claim or its last renewal wrote it (null after a renewal that
 * failed: it may have been written all the same).
 */
export function keepLease<R extends LeasedRecord>(
  deps: Deps,
  spec: JobSpec<R>,
  claim: Claim<R>,
  id: string,
  /** The record as it is now, when an earlier heartbeat of the claim renewed it (or null). */
  from?: KnownRecord<R> | null,
): { lost: () => boolean; stop: () => Promise<void>; known: () => KnownRecord<R> | null } {
  let lost = false;
  let known: KnownRecord<R> | null = from !== undefined ? from : {
    accountId: claim.accountId,
    value: claim.record,
    versionstamp: claim.versionstamp,
  };
  let renewing: Promise<void> = Promise.resolve();
  const every = Math.max(50, Math.floor(spec.leaseMs(deps) / 3));
  const timer = setInterval(() => {
    renewing = renewing.then(async () => {
      if (!lost && !(await renewLease(deps, spec, claim, id, (k) => (known = k)))) lost = true;
    }).catch(() => {
      // A renewal that failed may still have been written: the record is not known any more.
      known = null;
    });
  }, every);
  return {
    lost: () => lost,
    known: () => known,
    async stop() {
      clearInterval(timer);
      await renewing;
    },
  };
}

export type FinishKind = "completed" | "failed";

/**
 * Finishes a job in one commit: the caller sets the outcome on `op` (returning "failed" refunds
 * the charge unless `guard.refund` is false), the running and active markers go. Does nothing
 * when the job already finished, or, with `guard.attempt` or `guard.token`, when the record has
 * moved on to another attempt or claim (a worker whose lease ran out and was taken over has
 * lost, and writes nothing), or, with `guard.when`, when the record fails it. Resolves true when
 * this call finished the job.
 */
export function finishJob<R extends LeasedRecord>(
  deps: Deps,
  spec: JobSpec<R>,
  id: string,
  outcome: (ctx: {
    op: Atomic;
    record: R;
    accountId: string;
    now: number;
  }) => Promise<FinishKind>,
  guard: {
    attempt?: number;
    token?: string;
    refund?: boolean;
    when?: (record: R) => boolean;
    /** The job's project, when the caller knows it: its active marker is read beside the record. */
    projectId?: string;
    /**
     * The record as this process's claim last wrote it (`keepLease`'s `known`): the first try
     * checks it instead of reading it (a round trip on a remote KV); one written since fails
     * that check, and the next try reads it.
     */
    known?: () => KnownRecord<R> | null;
    /**
     * The project's active marker, read already (with `projectId`): the first try checks it
     * instead of reading it; one written since fails that check, and the next try reads it.
     */
    active?: Promise<Deno.KvEntryMaybe<string>>;
  } = {},
): Promise<boolean> {
  const { kv, clock } = deps;
  let ended: FinishKind = "completed";
  const activeOf = (projectId: string) => read(kv, spec.activeKey!(projectId));
  let known = guard.known?.() ?? null;
  let active = guard.active;
  return atomically(kv, async () => {
    const accountId = known?.accountId ?? (await ownerOf(kv, spec, id))!;
    const early = spec.activeKey && guard.projectId !== undefined
      ? active ?? activeOf(guard.projectId)
      : undefined;
    active = undefined;
    early?.catch(() => {}); // awaited below unless the record says it is not needed
    const key = spec.recordKey(accountId, id);
    const entry = known
      ? { key, value: known.value, versionstamp: known.versionstamp }
      : await read(kv, key);
    known = null;
    const record = entry.value;
    if (
      !record || !spec.open(record) ||
      (guard.attempt !== undefined && record.attempts !== guard.attempt) ||
      (guard.token !== undefined && record.stepToken !== guard.token) ||
      (guard.when !== undefined && !guard.when(record))
    ) {
      return { op: atomic(kv).check(entry), result: false };
    }
    const now = clock.now();
    const op = atomic(kv).check(entry).delete(keys.runningJob(spec.kind, id));
    if (spec.activeKey) {
      const active =
        await (record.projectId === guard.projectId && early ? early : activeOf(record.projectId));
      if (active.value === id) op.check(active).delete(active.key);
    }
    const kind = ended = await outcome({ op, record, accountId, now });
    spec.onFinish?.(op, { id, kind, now });
    if (kind === "failed" && guard.refund !== false) {
      await addRefund(kv, op, {
        accountId,
        funding: record.funding,
        unit: spec.unit,
        ref: id,
        now,
      });
    }
    return { op, result: true };
  }).then((done) => {
    if (done) recordJobFinished(spec.kind, ended);
    return done;
  });
}

/** The error a cancelled job records (its `/v1` status is `failed`, like any job that ended unrun). */
export const CANCELLED_ERROR = {
  code: "cancelled",
  message: "Cancelled before it started; the charge was refunded",
};

/**
 * Cancels a job that no worker has claimed yet: it fails with `CANCELLED_ERROR` and is refunded
 * exactly as a failed job is, in the one finishing commit. A job already running or finished is
 * left alone (a claim committing first wins: this commit then re-reads and finds it running).
 * Resolves true when this call cancelled it.
 */
export function cancelQueuedJob<R extends LeasedRecord>(
  deps: Deps,
  spec: JobSpec<R>,
  id: string,
): Promise<boolean> {
  return finishJob(deps, spec, id, ({ op, record, accountId, now }) => {
    op.set(spec.recordKey(accountId, id), spec.failed(record, CANCELLED_ERROR, now));
    return Promise.resolve("failed");
  }, { when: spec.queued });
}
