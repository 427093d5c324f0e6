/**
 * Jobs: the queue lifecycle (claim, lease, finish, cancel), stale-lease recovery, failure
 * classification, job tasks (MCP tasks over a job), and watching a job record. The public face of
 * the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import { JobFailure } from "./mod.ts";
 * const isExpected = (err: unknown) => err instanceof JobFailure;
 * ```
 *
 * @module
 */
export { classifyFailure, JobFailure } from "./failure.ts";
export { resendExpiredJobs, type RunningJobMarker } from "./leases.ts";
export {
  CANCELLED_ERROR,
  cancelQueuedJob,
  type Claim,
  claimJob,
  finishJob,
  type JobSpec,
  renewLease,
} from "./lifecycle.ts";
export {
  JOB_TASK_TTL_MS,
  type JobTaskKind,
  type JobTaskRecord,
  openJobTask,
  readJobTask,
} from "./tasks.ts";
export { type JobRef, watchJobRecord, watchMissesOtherProcesses } from "./watch.ts";
