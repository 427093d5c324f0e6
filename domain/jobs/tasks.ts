/**
 * Job tasks: the durable handle a client holds on one of its account's audits or articles (an
 * MCP task, `io.modelcontextprotocol/tasks`). The job record stays the truth of the work; the task
 * record only says that this account opened a handle on that job, when, and until when it may
 * be polled. The task id is the job's id, so opening a handle twice on one job (a retried call
 * with the same idempotency key, or a start that adopted the project's open audit) yields the
 * same task.
 *
 * @module
 */
import type { JobTaskKind, JobTaskRecord } from "./types.ts";
import { atomically } from "../../kv/atomic.ts";
import { atomic, type Deps, keys, read } from "../platform/mod.ts";

export type { JobTaskKind };

export type { JobTaskRecord };

/**
 * How long a task may be polled after it was opened (its `ttlMs`): long past any job, short
 * enough that the records of handles nobody polls go away on their own (KV `expireIn`).
 */
export const JOB_TASK_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The account's task on `jobId`, opened now unless it exists: committed before this resolves, so
 * a read of it on any process finds it.
 */
export function openJobTask(
  deps: Deps,
  input: { accountId: string; kind: JobTaskKind; jobId: string; keyId: string | null },
): Promise<JobTaskRecord> {
  const { kv, clock } = deps;
  const key = keys.jobTask(input.accountId, input.jobId);
  return atomically(kv, async () => {
    const entry = await read(kv, key);
    if (entry.value && live(entry.value, clock.now())) {
      return { op: atomic(kv).check(entry), result: entry.value };
    }
    const record: JobTaskRecord = {
      taskId: input.jobId,
      accountId: input.accountId,
      kind: input.kind,
      createdAt: clock.now(),
      keyId: input.keyId,
    };
    const op = atomic(kv).check(entry).set(key, record, { expireIn: JOB_TASK_TTL_MS });
    return { op, result: record };
  });
}

/** The account's task `taskId`, or null when it has none (never opened, another's, or expired). */
export async function readJobTask(
  deps: Deps,
  accountId: string,
  taskId: string,
): Promise<JobTaskRecord | null> {
  const task = (await read(deps.kv, keys.jobTask(accountId, taskId))).value;
  return task && live(task, deps.clock.now()) ? task : null;
}

/** KV's `expireIn` deletes late (and runs on the wall clock): the TTL is checked on read too. */
function live(task: JobTaskRecord, now: number): boolean {
  return now < task.createdAt + JOB_TASK_TTL_MS;
}
