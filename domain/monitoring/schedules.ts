/**
 * A project's audit schedule: the resource behind `PUT|GET|DELETE /v1/projects/{id}/schedule`.
 * Who may schedule and how often comes from the one catalogue: a subscribed project includes its
 * plan's cadence (`basic` weekly, `pro` daily), a project without a subscription pays each run in
 * credits like an API audit, and sandbox keys cannot schedule.
 *
 * A schedule is live-side work: only a live key sets one, and its runs are paid as a live key's
 * audits (`domain/monitoring/dispatch.ts`). So a sandbox key sees no schedule, not even one a live
 * key set on the sandbox project (it can neither read nor remove it), and on a project it cannot
 * see (a live one) it gets the 404 of any unknown project before any other answer. The checks run
 * in the one order: visibility → limits (sandbox keys, rendering, cadence) → effect.
 *
 * The record and its `schedules_due` index entry (keyed by the time the dispatcher should next
 * look at it) are always written in one commit, so the dispatcher finds due schedules with one
 * ordered `list` and never holds more than a page of them.
 *
 * @module
 */
import type { PauseReason, ScheduleRecord, ScheduleRun, ScheduleStatus } from "./types.ts";
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, read, readMany } from "../platform/mod.ts";
import { canSee } from "../identity/mod.ts";
import {
  type Cadence,
  cadenceWithin,
  CREDIT_SCHEDULE,
  findPlan,
  isActive,
  renderedAuditCharge,
  UNIT_PRICES,
} from "../billing/mod.ts";
import {
  type AuditOptions,
  normalizeAuditOptions,
  requireRendering,
  sameAuditOptions,
  sealAuditAuth,
} from "../audits/mod.ts";
import type { SiteAuth } from "../audit_engine/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import type { SubscriptionRecord } from "../billing/types.ts";
import { nextRun, type ScheduleSpec, type Weekday } from "./schedule_time.ts";

export type { PauseReason, ScheduleStatus };

export type { ScheduleRecord, ScheduleRun };

/** The body of a PUT, already validated for shape by the route. */
export interface ScheduleInput {
  cadence: Cadence;
  hourUtc: number;
  dayOfWeek?: Weekday;
  dayOfMonth?: number;
  render?: boolean;
  /** The audit options each run is started with (validated against the project on PUT). */
  options?: AuditOptions;
  /** Staging credentials for every run (sealed here; a PUT without them removes them). */
  auth?: SiteAuth;
  maxRps?: number;
}

/** How the project's scheduled runs are paid right now, and how often they may run. */
export interface ScheduleFunding {
  kind: "subscription" | "credits";
  plan: string | null;
  maxCadence: Cadence;
  /** Credits each run costs (0 when included). */
  creditsPerRun: number;
}

/**
 * The funding a run at `now` gets: the plan's when subscribed, else credits. A rendered run is
 * priced as a rendered API audit (`renderedAuditCharge`: pro included, basic the add-on, credits
 * the rendered audit).
 */
export function scheduleFunding(
  sub: SubscriptionRecord | null,
  now: number,
  render = false,
): ScheduleFunding {
  const subscribed = sub !== null && isActive(sub, now);
  const plan = subscribed ? findPlan(sub.plan ?? "basic") ?? findPlan("basic")! : null;
  let creditsPerRun = plan ? 0 : UNIT_PRICES[CREDIT_SCHEDULE.unit];
  if (render) {
    const charge = renderedAuditCharge(plan?.id ?? null, "live");
    creditsPerRun = charge.kind === "credits" ? UNIT_PRICES[charge.unit] : 0;
  }
  return plan
    ? { kind: "subscription", plan: plan.id, maxCadence: plan.scheduleMaxCadence, creditsPerRun }
    : { kind: "credits", plan: null, maxCadence: CREDIT_SCHEDULE.maxCadence, creditsPerRun };
}

/** The 403 for a cadence the funding does not include, naming what would. */
export function cadenceRefusal(cadence: Cadence, funding: ScheduleFunding): ApiError {
  const who = funding.kind === "subscription"
    ? `The ${funding.plan} plan includes`
    : "A project paying per audit in credits may schedule";
  const hint = funding.kind === "subscription" && funding.maxCadence !== "daily"
    ? " (the pro plan includes daily)"
    : "";
  return new ApiError(
    "schedule_not_allowed",
    `${who} ${funding.maxCadence} schedules at most${hint}; '${cadence}' is more frequent`,
  );
}

function specOf(input: ScheduleInput): ScheduleSpec {
  if (input.dayOfWeek !== undefined && input.cadence !== "weekly") {
    throw new ApiError("invalid_request", "day_of_week: only for the weekly cadence");
  }
  if (input.dayOfMonth !== undefined && input.cadence !== "monthly") {
    throw new ApiError("invalid_request", "day_of_month: only for the monthly cadence");
  }
  return {
    cadence: input.cadence,
    hourUtc: input.hourUtc,
    dayOfWeek: input.cadence === "weekly" ? input.dayOfWeek ?? "monday" : null,
    dayOfMonth: input.cadence === "monthly" ? input.dayOfMonth ?? 1 : null,
  };
}

/** What each run carries besides its timing: the credentials' mask and the rate cap. */
const accessOf = (s: ScheduleRecord) => ({
  ...(s.auth ? { auth: s.auth } : {}),
  ...(s.maxRps !== undefined ? { maxRps: s.maxRps } : {}),
});

const sameSpec = (a: ScheduleSpec, b: ScheduleSpec) =>
  a.cadence === b.cadence && a.hourUtc === b.hourUtc && a.dayOfWeek === b.dayOfWeek &&
  a.dayOfMonth === b.dayOfMonth;

/**
 * The project of the account with its subscription, or 404 (also a live project to a sandbox
 * caller, as `getProject`: a sandbox key neither reads nor removes the live side's schedules).
 */
async function projectOf(deps: Deps, accountId: string, projectId: string, mode: KeyMode) {
  const [project, sub] = await readMany(deps.kv, [
    keys.project(accountId, projectId),
    keys.subscription(projectId),
  ]);
  if (!project.value || !canSee(mode, project.value.sandbox)) {
    throw new ApiError("not_found", `No project '${projectId}' on this account`);
  }
  return { project, sub };
}

/**
 * Whether a caller of `mode` sees a project's schedule: schedules are live-side (only a live key
 * sets one; its runs are paid as a live key's audits), so a sandbox key sees none.
 */
function scheduleVisibleTo(mode: KeyMode): boolean {
  return canSee(mode, false);
}

/** The 404 of a project without a schedule (or with one the caller does not see). */
function noSchedule(projectId: string): ApiError {
  return new ApiError("not_found", `Project '${projectId}' has no audit schedule`);
}

/**
 * Creates or replaces a project's schedule (a PUT: repeating it changes nothing). An unchanged
 * active schedule keeps its next run; a changed or paused one is (re)started from now, which is
 * how a paused schedule resumes. After the shape of the input: visibility (404 for a project the
 * caller cannot see, so a sandbox key learns nothing of the live side), then the limits (sandbox
 * keys, rendering, the funding's cadence), then the write. Staging credentials (`auth`) are
 * sealed into the schedule's own copy in the same commit; a PUT without them deletes that copy
 * (a PUT is the whole schedule). They cannot go with a rendered schedule (400).
 */
export async function putSchedule(
  deps: Deps,
  caller: { accountId: string; mode: KeyMode },
  projectId: string,
  input: ScheduleInput,
): Promise<{ schedule: ScheduleRecord; funding: ScheduleFunding; created: boolean }> {
  const { kv, clock } = deps;
  const spec = specOf(input);
  const render = input.render === true;
  if (render && input.auth) {
    throw new ApiError(
      "invalid_request",
      "auth: staging credentials work with raw audits only; omit render or auth",
    );
  }
  return await atomically(kv, async () => {
    const { project, sub } = await projectOf(deps, caller.accountId, projectId, caller.mode);
    const options = normalizeAuditOptions(input.options, project.value!.url);
    if (caller.mode === "sandbox") {
      throw new ApiError(
        "schedule_not_allowed",
        "Sandbox keys cannot schedule audits; use a live key (hand a human the upgrade_url)",
      );
    }
    if (render) requireRendering(deps, "schedule raw audits (omit render)");
    const now = clock.now();
    const funding = scheduleFunding(sub.value, now, render);
    if (!cadenceWithin(spec.cadence, funding.maxCadence)) {
      throw cadenceRefusal(spec.cadence, funding);
    }
    const sealed = input.auth
      ? await sealAuditAuth(deps, { accountId: caller.accountId, projectId }, input.auth)
      : null;
    const [entry, authEntry] = await readMany(kv, [
      keys.schedule(projectId),
      keys.scheduleAuth(projectId),
    ]);
    const old = entry.value;
    const op = atomic(kv).check(entry, project, sub, authEntry);
    if (sealed) op.set(authEntry.key, sealed);
    else if (authEntry.value) op.delete(authEntry.key);
    const access = {
      ...(sealed ? { auth: sealed.mask } : {}),
      ...(input.maxRps !== undefined ? { maxRps: input.maxRps } : {}),
    };
    let schedule: ScheduleRecord;
    if (
      old && old.status === "active" && sameSpec(old, spec) && (old.render === true) === render &&
      sameAuditOptions(old.options, options)
    ) {
      // Same timing: the next run stays; only what each run carries may change.
      const { auth: _a, maxRps: _m, ...rest } = old;
      schedule = { ...rest, ...access };
      if (JSON.stringify(accessOf(old)) !== JSON.stringify(access)) {
        schedule.updatedAt = now;
        op.set(entry.key, schedule);
      }
    } else {
      const next = nextRun(spec, projectId, null, now);
      schedule = {
        ...spec,
        projectId,
        accountId: caller.accountId,
        status: "active",
        pausedReason: null,
        pausedAt: null,
        nextDueAt: next.dueAt,
        nextRunAt: next.runAt,
        indexAt: next.runAt,
        lastRun: old?.lastRun ?? null,
        runs: old?.runs ?? 0,
        createdAt: old?.createdAt ?? now,
        updatedAt: now,
        ...(render ? { render: true } : {}),
        ...(options ? { options } : {}),
        ...access,
      };
      if (old?.indexAt != null) op.delete(keys.scheduleDue(old.indexAt, projectId));
      op.set(entry.key, schedule).set(keys.scheduleDue(next.runAt, projectId), projectId);
    }
    return { op, result: { schedule, funding, created: old === null } };
  });
}

/**
 * The project's schedule with its funding now, or 404 (no project the caller sees, or no schedule
 * it sees: a sandbox key sees none).
 */
export async function getSchedule(
  deps: Deps,
  accountId: string,
  projectId: string,
  mode: KeyMode,
): Promise<{ schedule: ScheduleRecord; funding: ScheduleFunding }> {
  const { sub } = await projectOf(deps, accountId, projectId, mode);
  const schedule = (await read(deps.kv, keys.schedule(projectId))).value;
  if (!schedule || !scheduleVisibleTo(mode)) throw noSchedule(projectId);
  return { schedule, funding: scheduleFunding(sub.value, deps.clock.now(), schedule.render) };
}

/**
 * Removes the schedule, its index entry and its sealed credentials in one commit. An audit it
 * already started runs to its end like any audit (with its own copy); no later slot runs (a dispatch in flight finds no record and stops).
 * 404 where `getSchedule` answers 404: a sandbox key removes nothing, not even a schedule a live
 * key set on the sandbox project.
 */
export async function deleteSchedule(
  deps: Deps,
  accountId: string,
  projectId: string,
  mode: KeyMode,
): Promise<void> {
  const { kv } = deps;
  await projectOf(deps, accountId, projectId, mode);
  await atomically(kv, async () => {
    const entry = await read(kv, keys.schedule(projectId));
    if (!entry.value || !scheduleVisibleTo(mode)) throw noSchedule(projectId);
    const op = kv.atomic().check(entry).delete(entry.key).delete(keys.scheduleAuth(projectId));
    if (entry.value.indexAt !== null) op.delete(keys.scheduleDue(entry.value.indexAt, projectId));
    return { op, result: undefined };
  });
}
