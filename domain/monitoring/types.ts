/**
 * Persisted shapes of monitoring: schedules and their runs.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { Cadence } from "../billing/types.ts";
import type { AuditOptions } from "../audits/types.ts";
import type { MaskedSiteAuth } from "../audit_engine/types.ts";

export interface ScheduleRecord extends ScheduleSpec {
  projectId: string;
  accountId: string;
  status: ScheduleStatus;
  pausedReason: PauseReason | null;
  pausedAt: number | null;
  /** The slot the next run belongs to; null while paused. */
  nextDueAt: number | null;
  /** When that run starts: `nextDueAt` plus the project's jitter; null while paused. */
  nextRunAt: number | null;
  /** Time of the record's one `schedules_due` entry (its run, or a dispatch retry); null if none. */
  indexAt: number | null;
  lastRun: ScheduleRun | null;
  /** Slots handled so far. */
  runs: number;
  /** Each run is a rendered audit (`{"render": true}`); absent on raw schedules. */
  render?: boolean;
  /** The audit options of each run (audits/options.ts); absent: none, the whole site. */
  options?: AuditOptions;
  /**
   * Each run carries staging credentials: only their mask is here; the sealed copy is the
   * schedule's own (`schedule_auth/<projectId>`), copied into each audit it starts.
   */
  auth?: MaskedSiteAuth;
  /** Each run's per-host rate cap (`max_rps`). */
  maxRps?: number;
  createdAt: number;
  updatedAt: number;
}

/** What became of one due slot. */
export interface ScheduleRun {
  /** The slot (start of its due hour). */
  dueAt: number;
  /** When the dispatcher handled it. */
  at: number;
  /** The audit started, or the queued/running one that made a second unnecessary. */
  auditId: string | null;
  outcome: "started" | "audit_in_progress" | "paused";
}

/**
 * Why a schedule stopped running: the balance could not pay a run, the plan's cadence, or a
 * rendered schedule on a server that can no longer render.
 */
export type PauseReason = "insufficient_credits" | "plan_limit" | "rendering_unavailable";

export type ScheduleStatus = "active" | "paused";

/** What a schedule says about time. */
export interface ScheduleSpec {
  cadence: Cadence;
  /** 0–23. */
  hourUtc: number;
  /** Weekly schedules only. */
  dayOfWeek: Weekday | null;
  /** Monthly schedules only: 1–28, so every month has the day. */
  dayOfMonth: number | null;
}

export type Weekday =
  | "sunday"
  | "monday"
  | "tuesday"
  | "wednesday"
  | "thursday"
  | "friday"
  | "saturday";
