/**
 * Job tasks for an account actor: open a handle on an audit or article it just started, read
 * where the job stands, and cancel it while no worker has claimed it. The MCP tasks extension
 * (routes/mcp/tasks.ts) is the adapter; this module decides what a task is in the service's
 * terms. Visibility is the job's own: a task is found only under the actor's account, and only
 * while the actor may see the job (`getAudit` / `getArticle`: a sandbox key never sees live work),
 * so another account's task id, or a malformed one, is `not_found`.
 *
 * @module
 */
import { ARTICLE_JOB, getArticle } from "../../domain/articles/mod.ts";
import { AUDIT_JOB, getAudit } from "../../domain/audits/mod.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import {
  CANCELLED_ERROR,
  cancelQueuedJob,
  type JobTaskKind,
  type JobTaskRecord,
  openJobTask,
  readJobTask,
} from "../../domain/jobs/mod.ts";
import { articlePollSeconds, auditPages, auditPollSeconds, queueDepth } from "./poll_hint.ts";
import type { AccountActor } from "../actor.ts";
import type { Services } from "../services.ts";

/** Where a task's job stands, in the task's terms. */
export type JobTaskPhase = "working" | "completed" | "cancelled";

export interface JobTaskState {
  task: JobTaskRecord;
  /** The job's id (the task id). */
  jobId: string;
  /** `working` while queued or running; `completed` once it ended (even failed); `cancelled`. */
  phase: JobTaskPhase;
  /** The job's `/v1` status (`queued`, `running`, `completed`, `failed`, `generating`, …). */
  jobStatus: string;
  /** The job's error once it failed (a cancelled job's is `CANCELLED_ERROR`). */
  error: { code: string; message: string } | null;
  /** When the job last changed state (epoch ms). */
  updatedAt: number;
  /** When to poll again, as the job's 202 estimates it (app/jobs/poll_hint.ts). */
  pollAfterSeconds: number;
}

/** Task ids are job ids: anything else is no task (and never reaches a KV key). */
const TASK_ID = /^(aud|art)_[0-9a-z]{1,64}$/;

const FINISHED_ARTICLE = ["ready", "published", "failed"];

/** The job behind a task, as `actor` may see it; `not_found` otherwise. */
async function jobState(
  services: Services,
  actor: AccountActor,
  task: JobTaskRecord,
): Promise<JobTaskState> {
  const { deps } = services;
  const queued = await queueDepth(deps);
  const base = { task, jobId: task.taskId };
  if (task.kind === "audit") {
    const a = await getAudit(deps, actor.accountId, task.taskId, actor.mode);
    const pollAfterSeconds = auditPollSeconds(await auditPages(deps, a), queued);
    const ended = a.status === "completed" || a.status === "failed";
    return {
      ...base,
      phase: phaseOf(ended, a.error),
      jobStatus: a.status,
      error: a.status === "failed" ? a.error : null,
      updatedAt: a.completedAt ?? a.runningAt ?? a.createdAt,
      pollAfterSeconds,
    };
  }
  const a = await getArticle(deps, actor.accountId, task.taskId, actor.mode);
  return {
    ...base,
    phase: phaseOf(FINISHED_ARTICLE.includes(a.status), a.error),
    jobStatus: a.status,
    error: a.status === "failed" ? a.error : null,
    updatedAt: a.updatedAt,
    pollAfterSeconds: articlePollSeconds(deps, queued),
  };
}

function phaseOf(ended: boolean, error: { code: string } | null): JobTaskPhase {
  if (!ended) return "working";
  return error?.code === CANCELLED_ERROR.code ? "cancelled" : "completed";
}

/**
 * Opens the actor's task on a job it just started (the start operation has committed it) and
 * answers where the job stands. Idempotent: the same job gives the same task.
 */
export async function startJobTask(
  services: Services,
  actor: AccountActor,
  kind: JobTaskKind,
  jobId: string,
): Promise<JobTaskState> {
  const task = await openJobTask(services.deps, {
    accountId: actor.accountId,
    kind,
    jobId,
    keyId: actor.keyId,
  });
  return await jobState(services, actor, task);
}

/** The actor's task `taskId` and where its job stands; `not_found` when it has no such task. */
export async function getJobTask(
  services: Services,
  actor: AccountActor,
  taskId: string,
): Promise<JobTaskState> {
  const task = TASK_ID.test(taskId)
    ? await readJobTask(services.deps, actor.accountId, taskId)
    : null;
  if (!task) throw new ApiError("not_found", `No task '${taskId}' on this account`);
  return await jobState(services, actor, task);
}

/**
 * Cancels the actor's task `taskId` while its job is queued: the job fails `cancelled` and is
 * refunded as a failed job is. A job already running or finished is left as it is
 * (`cancelled: false`); `state` is where the job stands after the attempt.
 */
export async function cancelJobTask(
  services: Services,
  actor: AccountActor,
  taskId: string,
): Promise<{ cancelled: boolean; state: JobTaskState }> {
  const before = await getJobTask(services, actor, taskId);
  if (before.phase !== "working") return { cancelled: false, state: before };
  const cancelled = before.task.kind === "audit"
    ? await cancelQueuedJob(services.deps, AUDIT_JOB, taskId)
    : await cancelQueuedJob(services.deps, ARTICLE_JOB, taskId);
  // A refunded sandbox job moves the trial usage the cached keys show.
  if (cancelled) services.resolver.invalidateAccount(actor.accountId);
  return { cancelled, state: await jobState(services, actor, before.task) };
}
