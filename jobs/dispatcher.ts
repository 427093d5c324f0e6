import type { JobMessage } from "../domain/platform/mod.ts";
import { isJobMessage } from "./queue.ts";
import { recordJobRunFailure, span } from "../telemetry/mod.ts";

/** One handler per message type; each must be idempotent (messages arrive at least once). */
export type JobHandlers = { [T in JobMessage["type"]]?: (id: string) => Promise<void> };

/** How this process runs jobs: what handlers of long work need to know. */
export interface JobRuntime {
  /**
   * Run a job's later steps inside its handler (the job table: the handler holds one of the
   * worker's slots for the whole job) rather than detached after it (KV's native queue, whose
   * handler should return soon).
   */
  inline: boolean;
  /** Aborts at shutdown: take no further step; the next step's message is already queued. */
  stopping: AbortSignal;
  /** Detached work is registered here, so shutdown waits for it before KV closes. */
  track: (work: Promise<unknown>) => void;
}

/**
 * The one queue dispatcher: routes a message to its handler by type. A throwing handler makes the
 * KV queue redeliver the message with backoff; unknown messages are logged and dropped.
 *
 * @example
 * ```ts
 * declare const kv: Deno.Kv, runAuditJob: (id: string) => Promise<void>;
 * kv.listenQueue(createDispatcher({ audit: (id) => runAuditJob(id) }));
 * ```
 */
export function createDispatcher(handlers: JobHandlers): (message: unknown) => Promise<void> {
  return async function dispatch(message: unknown) {
    if (!isJobMessage(message)) {
      console.warn(JSON.stringify({ level: "warn", msg: "unknown queue message dropped" }));
      return;
    }
    const handler = handlers[message.type];
    if (!handler) return;
    try {
      // One trace per message: its steps (audit_jobs.ts) are spans inside it.
      await span(
        `job ${message.type}`,
        { "job.kind": message.type, "job.id": message.id },
        () => handler(message.id),
      );
    } catch (err) {
      recordJobRunFailure(message.type);
      console.error(
        JSON.stringify({
          level: "error",
          msg: "job failed; the queue will redeliver",
          type: message.type,
          id: message.id,
          error: String((err as Error)?.message ?? err),
        }),
      );
      throw err;
    }
  };
}
