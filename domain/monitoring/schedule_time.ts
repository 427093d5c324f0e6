/**
 * When a schedule is due: pure time arithmetic in UTC, no KV. A schedule's slots are the hours it
 * names (every day, one weekday or one day of the month at `hourUtc`); each project starts its run
 * a fixed offset into that hour (its jitter), so thousands of projects on one cadence and hour
 * start spread over the hour instead of all at once.
 *
 * @module
 */
import type { ScheduleSpec, Weekday } from "./types.ts";

export const WEEKDAYS = [
  "sunday",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
] as const satisfies readonly Weekday[];
export type { Weekday };

export type { ScheduleSpec };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The project's fixed offset into its hour, in whole seconds below one hour: FNV-1a of the id.
 * Deterministic, so every process computes the same run time and a project keeps its minute.
 *
 * @example
 * ```ts
 * jitterMs("proj_0abc"); // e.g. 2_231_000 (37 min 11 s)
 * ```
 */
export function jitterMs(projectId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < projectId.length; i++) {
    h ^= projectId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 3600) * 1000;
}

/** The first slot (start of a due hour) at or after `t`. */
export function slotAtOrAfter(spec: ScheduleSpec, t: number): number {
  const d = new Date(t);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  if (spec.cadence === "monthly") {
    const dom = spec.dayOfMonth ?? 1;
    let slot = Date.UTC(y, m, dom, spec.hourUtc);
    if (slot < t) slot = Date.UTC(y, m + 1, dom, spec.hourUtc);
    return slot;
  }
  let slot = Date.UTC(y, m, day, spec.hourUtc);
  if (slot < t) slot += DAY;
  if (spec.cadence === "weekly") {
    const want = WEEKDAYS.indexOf(spec.dayOfWeek ?? "monday");
    const have = new Date(slot).getUTCDay();
    slot += ((want - have + 7) % 7) * DAY;
  }
  return slot;
}

/**
 * The next slot to run and when its run starts: the first slot after `afterSlot` (the one just
 * run, if any) whose run time lies after `now`. Slots missed while no process ran are skipped, so
 * a schedule catches up once, never once per missed slot.
 *
 * @example
 * ```ts
 * const spec = { cadence: "daily", hourUtc: 6, dayOfWeek: null, dayOfMonth: null } as const;
 * nextRun(spec, "proj_0abc", null, Date.parse("2026-11-23T12:00:00Z"));
 * // { dueAt: 2026-11-24T06:00Z, runAt: dueAt + jitterMs("proj_0abc") }
 * ```
 */
export function nextRun(
  spec: ScheduleSpec,
  projectId: string,
  afterSlot: number | null,
  now: number,
): { dueAt: number; runAt: number } {
  const jitter = jitterMs(projectId);
  const from = Math.max(now - jitter + 1, afterSlot === null ? -Infinity : afterSlot + 1);
  const dueAt = slotAtOrAfter(spec, from);
  return { dueAt, runAt: dueAt + jitter };
}
