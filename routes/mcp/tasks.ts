/**
 * The methods of the MCP tasks extension on a 2026-07-28 server: `tasks/get`, `tasks/cancel`
 * and `tasks/update` (there is no `tasks/list` or `tasks/result` in this revision of the
 * extension). Registered on the per-request server as custom methods, so the SDK applies its
 * whole 2026-07-28 ladder first (envelope, protocol version, `Mcp-Method`, and `Mcp-Name` against
 * `params.taskId`). Tasks are read from KV on every request: any process answers any task.
 *
 * - A request whose client did not declare the extension is refused with `-32021` (Missing
 *   Required Client Capability), as the extension requires.
 * - An unknown task, another account's, an expired one, one this key's mode cannot see, or any
 *   task asked for without a key is `-32602` "Task not found" (the extension's code for a
 *   nonexistent `taskId`). A keyless task request is not refused 401: the extension's answers
 *   (`-32021`, `-32602`, `-32601` for the removed `tasks/result` and `tasks/list`) stay observable.
 * - `tasks/get` answers the `DetailedTask`: `working` while the job is queued or running;
 *   `completed` once it ended, with `result` the very `CallToolResult` the poll tool (`audits` /
 *   `articles` action `get`) answers, `isError: true` when the job failed (the extension keeps
 *   `failed` for JSON-RPC errors: a failed audit is a tool-level outcome); `cancelled` after a
 *   cancel.
 * - `tasks/cancel` acknowledges every known task with the empty result, as the extension
 *   requires (cancelling is cooperative and may not take effect). A queued job is cancelled:
 *   failed `cancelled` and refunded as any failed job. A running or finished one is left alone;
 *   the acknowledgement says which under `_meta["com.serpwright/cancel"]`
 *   (`{cancelled, status, message}`), and `tasks/get` keeps showing the job's own course.
 * - `tasks/update` has nothing to deliver (these tasks never ask for input): a known task is
 *   acknowledged and the responses ignored, as the extension says for keys not outstanding.
 *
 * @module
 */
import {
  type McpServer,
  MissingRequiredClientCapabilityError,
  ProtocolError,
} from "@modelcontextprotocol/server";
import { z } from "zod";
import { keyActor } from "../../app/actor.ts";
import { cancelJobTask, getJobTask, type JobTaskState } from "../../app/jobs/tasks.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import type { Services } from "../env.ts";
import type { McpCaller } from "./caller.ts";
import { runAction, toolContext, toolResult } from "./kit.ts";
import { declaresTasks, TASKS_EXTENSION, wireTask } from "./task_wire.ts";
import { articlesTool, auditsTool } from "./tools/jobs.ts";

/** Where a cancel's outcome sits in its acknowledgement's `_meta`. */
export const CANCEL_META = "com.serpwright/cancel";

const TaskIdParams = z.object({ taskId: z.string() }).loose();

// deno-lint-ignore no-explicit-any
type SdkContext = any;

const NOT_FOUND = "Failed to retrieve task: Task not found";

/** Registers the task methods on a 2026-07-28 server built for `caller`. */
export function registerTaskMethods(
  server: McpServer,
  services: Services,
  caller: McpCaller,
): void {
  const s = server.server;
  s.setRequestHandler("tasks/get", { params: TaskIdParams }, async (params, sdk: SdkContext) => {
    const state = await find(sdk, params.taskId);
    return await detailedTask(services, caller, sdk, state);
  });
  s.setRequestHandler("tasks/cancel", { params: TaskIdParams }, async (params, sdk) => {
    const actor = actorOf(sdk);
    try {
      const { cancelled, state } = await cancelJobTask(services, actor, params.taskId);
      const message = cancelled
        ? "Cancelled before it started; the charge was refunded."
        : state.phase === "cancelled"
        ? "Already cancelled."
        : state.phase === "working"
        ? `The ${state.task.kind} is already ${state.jobStatus} and cannot be cancelled; it ` +
          "finishes and is charged as usual."
        : `The ${state.task.kind} already ended (${state.jobStatus}); nothing to cancel.`;
      return {
        _meta: {
          [CANCEL_META]: { cancelled, status: wireTask(services.deps, state).status, message },
        },
      };
    } catch (err) {
      throw notFound(err);
    }
  });
  // (The SDK lifts `inputResponses` off the params, as it does for a multi-round-trip retry.)
  s.setRequestHandler("tasks/update", { params: TaskIdParams }, async (params, sdk) => {
    await find(sdk, params.taskId);
    return {};
  });

  /** The caller's actor, once the request declared the extension and carries a key. */
  function actorOf(sdk: SdkContext) {
    if (!declaresTasks(sdk?.mcpReq?.envelope)) {
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      }, "Missing required client capability: the tasks extension (io.modelcontextprotocol/tasks)");
    }
    // Tasks belong to accounts: a caller without a key has none to find.
    if (!caller.principal) throw new ProtocolError(-32602, NOT_FOUND);
    return keyActor(caller.principal, caller.ip);
  }

  async function find(sdk: SdkContext, taskId: string): Promise<JobTaskState> {
    const actor = actorOf(sdk);
    try {
      return await getJobTask(services, actor, taskId);
    } catch (err) {
      throw notFound(err);
    }
  }
}

function notFound(err: unknown): unknown {
  return err instanceof ApiError && err.code === "not_found"
    ? new ProtocolError(-32602, NOT_FOUND)
    : err;
}

/**
 * The extension's `DetailedTask`: the task, and once it completed, the result the poll tool
 * answers for its job (read through the same tool action, for the same actor).
 */
async function detailedTask(
  services: Services,
  caller: McpCaller,
  sdk: SdkContext,
  state: JobTaskState,
) {
  const task = wireTask(services.deps, state);
  if (task.status !== "completed") return { ...task };
  const { ctx } = toolContext(services, caller, sdk);
  const answer = state.task.kind === "audit"
    ? await runAction(auditsTool.actions.get, { action: "get", audit_id: state.jobId }, ctx)
    : await runAction(articlesTool.actions.get, { action: "get", article_id: state.jobId }, ctx);
  // In the tools/call wire form of 2026-07-28 (a `resultType`), as the call would have answered.
  const result = {
    ...toolResult(answer),
    ...(state.error ? { isError: true } : {}),
    resultType: "complete",
  };
  return { ...task, statusMessage: answer.summary, result };
}
