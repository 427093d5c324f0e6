/**
 * Monitoring: an audit schedule per project and the dispatcher that starts the due ones. The
 * public face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getSchedule } from "./mod.ts";
 * const { schedule, funding } = await getSchedule(deps, accountId, "prj_123", "live");
 * ```
 *
 * @module
 */
export { dispatchDueSchedules, runDueSchedule } from "./dispatch.ts";
export { WEEKDAYS } from "./schedule_time.ts";
export {
  deleteSchedule,
  getSchedule,
  putSchedule,
  type ScheduleFunding,
  type ScheduleInput,
  type ScheduleRecord,
} from "./schedules.ts";
