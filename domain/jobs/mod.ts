/**
 * Jobs: the queue lifecycle (claim, lease, finish, cancel), stale-lease recovery, job tasks (MCP
 * tasks over a job), and watching a job record. The public face of the capability; the persisted
 * shapes are in `types.ts`; the failure type is the kernel's (platform/job_failure.ts).
 *
 * @example
 * ```ts
 * import { claimJob } from "./mod.ts";
 * console.log(typeof claimJob); // "function": claims a queued job record under a lease
 * ```
 *
 * @module
 */
export {
  countJobs,
  handBackJobsOf,
  type JobCounts,
  resendExpiredJobs,
  type RunningJobMarker,
} from "./leases.ts";
export {
  CANCELLED_ERROR,
  cancelQueuedJob,
  type Claim,
  claimJob,
  finishJob,
  type JobSpec,
  keepLease,
  type KnownRecord,
  noteOwner,
  noteRecord,
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
