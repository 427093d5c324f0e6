/**
 * Running schedules: the cron tick finds due schedules through the `schedules_due` index (one
 * ordered `list`, read in batches, so memory does not grow with the number of schedules) and
 * sends each a queue message; the queue handler starts the audit through `createAudit`, the same
 * function `POST /v1/projects/{id}/audits` uses, so charging, refunds and events are identical.
 *
 * Exactly one audit per project per due slot, across processes and missed ticks:
 * - the tick moves a due index entry forward in a checked commit that also enqueues the message,
 *   so of several processes one sends it (a lost message is sent again once the entry is due);
 * - the handler claims the slot (`schedule_slots`, versionstamp-null check) in the very commit that
 *   creates the audit, and advances the schedule to its next slot after now (catching up once);
 * - a queued or running audit of the project is adopted for the slot, never doubled.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import {
  ApiError,
  type Atomic,
  atomic,
  type Deps,
  keys,
  list,
  read,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import { cadenceWithin, type WorkActor } from "../billing/mod.ts";
import { createAudit } from "../audits/mod.ts";
import { nextRun } from "./schedule_time.ts";
import {
  type PauseReason,
  scheduleFunding,
  type ScheduleRecord,
  type ScheduleRun,
} from "./schedules.ts";

/** Index entries read per KV round trip by the tick. */
export const DISPATCH_BATCH = 100;
/** Messages one tick sends at most; the rest stay due for the next tick (every 5 s in process). */
export const MAX_DISPATCH_PER_TICK = 1_000;
/** How long a sent message has to start its run before the tick sends it again. */
export const DISPATCH_RETRY_MS = 2 * 60_000;
/** Slot claims are kept this long (longer than any cadence), then KV expires them. */
export const SLOT_CLAIM_TTL_MS = 40 * 86_400_000;

/**
 * The cron tick: sends a `schedule` message for every schedule whose index time has come, moving
 * its index entry `DISPATCH_RETRY_MS` ahead in the same checked commit. Returns how many it sent.
 */
export async function dispatchDueSchedules(
  deps: Deps,
  options: { max?: number; batch?: number } = {},
): Promise<number> {
  const { kv, clock } = deps;
  const now = clock.now();
  const retryMs = deps.config.jobLeaseMs ?? DISPATCH_RETRY_MS;
  let sent = 0;
  const due = list(
    kv,
    { start: keys.scheduleDue(0, ""), end: keys.scheduleDue(now + 1, "") },
    { limit: options.max ?? MAX_DISPATCH_PER_TICK, batchSize: options.batch ?? DISPATCH_BATCH },
  );
  for await (const entry of due) {
    const [, at, projectId] = entry.key;
    const rec = await read(kv, keys.schedule(projectId));
    if (!rec.value || rec.value.indexAt !== at) {
      // Left behind by a change that raced this tick; the record names its own entry.
      await kv.atomic().check(entry).delete(entry.key).commit();
      continue;
    }
    const retryAt = now + retryMs;
    const op = atomic(kv).check(entry, rec)
      .delete(entry.key)
      .set(keys.scheduleDue(retryAt, projectId), projectId)
      .set(rec.key, { ...rec.value, indexAt: retryAt });
    deps.queue.enqueueIn(op, { type: "schedule", id: projectId });
    if ((await op.commit()).ok) sent++;
  }
  return sent;
}

/** What one schedule message did, for tests and logs. */
export type ScheduleOutcome = ScheduleRun["outcome"] | "not_due" | "slot_taken" | "removed";

/** Thrown inside the audit commit when the schedule changed under it: nothing is written. */
class ScheduleMoved extends Error {}

/**
 * The queue handler of a `schedule` message: runs the project's due slot once. Idempotent: a
 * repeated or late message finds the slot claimed (or the schedule advanced) and does nothing.
 */
export async function runDueSchedule(deps: Deps, projectId: string): Promise<ScheduleOutcome> {
  const { kv, clock } = deps;
  const entry = await read(kv, keys.schedule(projectId));
  const s = entry.value;
  const now = clock.now();
  if (!s || s.status !== "active" || s.nextDueAt === null || (s.nextRunAt ?? 0) > now) {
    return "not_due";
  }
  const dueAt = s.nextDueAt;
  const [account, project, sub, sealedAuth] = await readMany(kv, [
    keys.account(s.accountId),
    keys.project(s.accountId, projectId),
    keys.subscription(projectId),
    keys.scheduleAuth(projectId),
  ]);
  if (!account.value || !project.value) {
    await removeOrphan(deps, entry);
    return "removed";
  }
  const funding = scheduleFunding(sub.value, now, s.render);
  if (!cadenceWithin(s.cadence, funding.maxCadence)) {
    return await pause(deps, projectId, dueAt, "plan_limit", {
      plan: funding.plan,
      max_cadence: funding.maxCadence,
    });
  }
  try {
    const accepted = await createAudit(
      deps,
      scheduleActor(s),
      projectId,
      async (op, { audit, created }) => {
        const [cur, slot] = await readMany(kv, [
          keys.schedule(projectId),
          keys.scheduleSlot(projectId, dueAt),
        ]);
        if (!isAt(cur.value, dueAt) || slot.value !== null) throw new ScheduleMoved();
        const run: ScheduleRun = {
          dueAt,
          at: now,
          auditId: audit.id,
          outcome: created ? "started" : "audit_in_progress",
        };
        op.check(cur, slot).set(slot.key, run, { expireIn: SLOT_CLAIM_TTL_MS });
        advance(op, cur.value!, run, now);
      },
      // A running audit serves the slot whatever its options (as it always has). Each run gets
      // its own copy of the schedule's sealed credentials, deleted as it ends.
      {
        trigger: "schedule",
        render: s.render === true,
        audit: s.options,
        adoptAny: true,
        access: {
          ...(s.auth && sealedAuth.value ? { auth: { sealed: sealedAuth.value } } : {}),
          ...(s.maxRps !== undefined ? { maxRps: s.maxRps } : {}),
        },
      },
    );
    return accepted.created ? "started" : "audit_in_progress";
  } catch (err) {
    if (err instanceof ScheduleMoved) {
      await skipClaimedSlot(deps, projectId, dueAt);
      return "slot_taken";
    }
    if (
      err instanceof ApiError &&
      (err.code === "insufficient_credits" || err.code === "payment_required")
    ) {
      return await pause(deps, projectId, dueAt, "insufficient_credits", {
        required_credits: err.extra?.required_credits ?? funding.creditsPerRun,
        balance_credits: err.extra?.balance_credits ?? null,
      });
    }
    // A rendered schedule on a server that can no longer render (moved to Deno Deploy, rendering
    // switched off): retrying cannot cure it, and a raw audit is not what was asked for.
    if (err instanceof ApiError && err.code === "rendering_unavailable") {
      return await pause(deps, projectId, dueAt, "rendering_unavailable", {});
    }
    throw err; // the queue redelivers; the slot is still unclaimed
  }
}

/**
 * A schedule still waiting for a slot that is already claimed (only a clock that went back can
 * bring a run slot round again) moves on without a second run, so it never sticks there.
 */
async function skipClaimedSlot(deps: Deps, projectId: string, dueAt: number): Promise<void> {
  const { kv, clock } = deps;
  const [cur, slot] = await readMany(kv, [
    keys.schedule(projectId),
    keys.scheduleSlot(projectId, dueAt),
  ]);
  if (!isAt(cur.value, dueAt) || slot.value === null) return;
  const op = atomic(kv).check(cur, slot);
  advance(op, cur.value, slot.value, clock.now());
  await op.commit();
}

/** Still active and still waiting for this slot. */
function isAt(s: ScheduleRecord | null, dueAt: number): s is ScheduleRecord {
  return s !== null && s.status === "active" && s.nextDueAt === dueAt;
}

/** Moves the schedule to its next slot after `now` (missed slots skipped) and its index with it. */
function advance(op: Atomic, s: ScheduleRecord, run: ScheduleRun, now: number) {
  const next = nextRun(s, s.projectId, run.dueAt, now);
  if (s.indexAt !== null) op.delete(keys.scheduleDue(s.indexAt, s.projectId));
  op.set(keys.scheduleDue(next.runAt, s.projectId), s.projectId)
    .set(
      keys.schedule(s.projectId),
      {
        ...s,
        nextDueAt: next.dueAt,
        nextRunAt: next.runAt,
        indexAt: next.runAt,
        lastRun: run,
        runs: s.runs + 1,
        updatedAt: now,
      } satisfies ScheduleRecord,
    );
}

/**
 * Pauses the schedule at this slot (claimed, so it is not retried) with a `schedule.paused` event
 * in the same commit. A PUT of the schedule resumes it.
 */
function pause(
  deps: Deps,
  projectId: string,
  dueAt: number,
  reason: PauseReason,
  detail: Record<string, unknown>,
): Promise<ScheduleOutcome> {
  const { kv, clock } = deps;
  return atomically<ScheduleOutcome>(kv, async () => {
    const [cur, slot] = await readMany(kv, [
      keys.schedule(projectId),
      keys.scheduleSlot(projectId, dueAt),
    ]);
    if (!isAt(cur.value, dueAt) || slot.value !== null) {
      return { op: kv.atomic().check(cur), result: "slot_taken" };
    }
    const s = cur.value;
    const project = await read(kv, keys.project(s.accountId, projectId));
    const now = clock.now();
    const run: ScheduleRun = { dueAt, at: now, auditId: null, outcome: "paused" };
    const op = atomic(kv).check(cur, slot)
      .set(slot.key, run, { expireIn: SLOT_CLAIM_TTL_MS })
      .set(
        cur.key,
        {
          ...s,
          status: "paused",
          pausedReason: reason,
          pausedAt: now,
          nextDueAt: null,
          nextRunAt: null,
          indexAt: null,
          lastRun: run,
          runs: s.runs + 1,
          updatedAt: now,
        } satisfies ScheduleRecord,
      );
    if (s.indexAt !== null) op.delete(keys.scheduleDue(s.indexAt, projectId));
    recordEvent(op, deps.queue, {
      accountId: s.accountId,
      event: "schedule.paused",
      now,
      data: {
        project_id: projectId,
        project_name: project.value?.name ?? null,
        reason,
        due_at: new Date(dueAt).toISOString(),
        paused_at: new Date(now).toISOString(),
        resume: `PUT /v1/projects/${projectId}/schedule`,
        ...detail,
      },
    });
    return { op, result: "paused" };
  });
}

/** A schedule whose project or account is gone: removed with its index entry and credentials. */
async function removeOrphan(deps: Deps, entry: Deno.KvEntryMaybe<ScheduleRecord>): Promise<void> {
  const s = entry.value!;
  const op = deps.kv.atomic().check(entry).delete(entry.key).delete(keys.scheduleAuth(s.projectId));
  if (s.indexAt !== null) op.delete(keys.scheduleDue(s.indexAt, s.projectId));
  await op.commit();
}

/**
 * Who a scheduled audit runs for: the account itself, on its live side (no key is forged). A
 * schedule belongs to the project, not to the key that set it (keys rotate), and sandbox keys
 * cannot schedule; `createAudit` charges it exactly as an API audit by a live key (subscription,
 * else credits). The plain shape of the application layer's `scheduleActor` (app/actor.ts), which
 * the domain cannot import.
 */
function scheduleActor(s: ScheduleRecord): WorkActor {
  return { accountId: s.accountId, mode: "live" };
}
