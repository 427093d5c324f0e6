/**
 * The wire of the MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663, the 2026-07-28
 * revision's home for long-running work): who may receive a task handle, and the `Task` a handle,
 * `tasks/get` and the start tools answer. What a task is in the service's terms lives in
 * app/jobs/tasks.ts; the methods that read and cancel tasks are in tasks.ts.
 *
 * Why not `@modelcontextprotocol/ext-tasks`: it is the requester side (a client session that
 * calls tools and polls their tasks) plus generated wire schemas; it has no server for the
 * 2026-07-28 tasks (its receiver serves 2025-11-25 tasks to clients). The server side is these few
 * shapes over our own KV records; the tests drive it with that package's client and check every
 * answer against its schemas.
 *
 * @module
 */
import { CLIENT_CAPABILITIES_META_KEY } from "@modelcontextprotocol/server";
import { type JobTaskState, startJobTask } from "../../app/jobs/tasks.ts";
import { JOB_TASK_TTL_MS, type JobTaskKind } from "../../domain/jobs/mod.ts";
import type { Deps } from "../../domain/platform/mod.ts";
import type { ToolAnswer, ToolContext } from "./kit.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The status of a task (the extension's `TaskStatus`; `input_required` never occurs here). */
export type WireTaskStatus = "working" | "completed" | "cancelled";

/** The extension's `Task`: a handle's fields and the common part of every `tasks/get` answer. */
export interface WireTask {
  taskId: string;
  status: WireTaskStatus;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Whether a request's envelope (`ctx.mcpReq.envelope` of a 2026-07-28 request, its `_meta`'s
 * reserved keys) declares the tasks extension among the client's capabilities. Nothing else
 * does: a capability is per request in 2026-07-28, and 2025-era requests carry none.
 */
export function declaresTasks(envelope: unknown): boolean {
  if (!isPlainObject(envelope)) return false;
  const caps = envelope[CLIENT_CAPABILITIES_META_KEY];
  const extensions = isPlainObject(caps) ? caps.extensions : undefined;
  return isPlainObject(extensions) && isPlainObject(extensions[TASKS_EXTENSION]);
}

const NOUN: Record<JobTaskKind, string> = { audit: "Audit", article: "Article" };

/** How often to poll a task (`MCP_TASK_POLL_MS`, else the start-and-poll tools' own hint). */
export function pollIntervalMs(deps: Deps, s: JobTaskState): number {
  return deps.config.mcpTaskPollMs ?? s.pollAfterSeconds * 1000;
}

/** One line on where the job stands, for the host to show (the task's `statusMessage`). */
function statusMessage(s: JobTaskState): string {
  const job = `${NOUN[s.task.kind]} ${s.jobId}`;
  if (s.phase === "cancelled") {
    return `${job} was cancelled before it started; the charge was refunded.`;
  }
  if (s.error) return `${job} failed: ${s.error.code}. ${s.error.message}`;
  return `${job} is ${s.jobStatus}.`;
}

/** The task as the extension's wire shows it. */
export function wireTask(deps: Deps, s: JobTaskState): WireTask {
  return {
    taskId: s.task.taskId,
    status: s.phase,
    statusMessage: statusMessage(s),
    createdAt: new Date(s.task.createdAt).toISOString(),
    // A handle opened on a job that was already under way was updated when it was opened.
    lastUpdatedAt: new Date(Math.max(s.updatedAt, s.task.createdAt)).toISOString(),
    ttlMs: JOB_TASK_TTL_MS,
    pollIntervalMs: pollIntervalMs(deps, s),
  };
}

/**
 * The answer of a start action for a client that takes task handles: the task on the job the
 * start operation just committed, opened (durably) before the handle is answered, so a
 * `tasks/get` on any process finds it. The ordinary answer rides along for the paths that cannot
 * answer a handle (`ToolContext.tasks`).
 */
export async function taskAnswer(
  ctx: ToolContext,
  kind: JobTaskKind,
  jobId: string,
  ordinary: () => Promise<ToolAnswer>,
): Promise<ToolAnswer> {
  if (!ctx.tasks || ctx.actor.kind !== "account") return await ordinary();
  const state = await startJobTask(ctx.services, ctx.actor, kind, jobId);
  const task = wireTask(ctx.services.deps, state);
  return {
    structured: { task_id: task.taskId },
    summary: task.statusMessage,
    task: { ...task },
  };
}
