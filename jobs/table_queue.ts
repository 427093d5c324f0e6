import type { JobMessage, JobQueue } from "../domain/deps.ts";
import { randomPart } from "../domain/ids.ts";
import { keys } from "../kv/keys.ts";
import { isJobMessage } from "./queue.ts";

interface QueuedJob {
  message: JobMessage;
  attempts: number;
}

/** Retry delays of a job whose handler threw, as the native queue's default schedule. */
const BACKOFF_MS = [1_000, 5_000, 30_000, 60_000, 300_000];
const POLL_MS = 200;
const BATCH = 50;

/**
 * The JobQueue port over a KV job table, for stores without native queues (a KV Connect URL to a
 * self-hosted denokv, today's Deno Deploy): `["job_queue", dueAt, id]` rows, claimed by deleting
 * them in a checked commit, so of several processes polling one KV exactly one takes each job.
 * Like the native queue it is at-least-once: a process that dies after claiming loses the message,
 * and the stale-job sweeps (which look at the records, the truth) send it again.
 */
export function tableQueue(kv: Deno.Kv): JobQueue & {
  /** Polls due jobs until `signal` aborts; resolves then. */
  listen(handler: (message: JobMessage) => Promise<void>, signal: AbortSignal): Promise<void>;
  /** Runs every due job once (the cron tick, and tests). */
  drain(handler: (message: JobMessage) => Promise<void>): Promise<number>;
} {
  const rowKey = (dueAt: number) =>
    keys.jobQueue(dueAt, `${Date.now().toString(36)}${randomPart(8)}`);
  const drain = async (handler: (message: JobMessage) => Promise<void>) => {
    let ran = 0;
    const due = kv.list<QueuedJob>({
      start: keys.jobQueue(0, ""),
      end: keys.jobQueue(Date.now() + 1, ""),
    }, {
      limit: BATCH,
    });
    for await (const row of due) {
      const claimed = await kv.atomic().check(row).delete(row.key).commit();
      if (!claimed.ok) continue; // another process took it
      const { message, attempts } = row.value;
      if (!isJobMessage(message)) continue;
      ran++;
      try {
        await handler(message);
      } catch {
        if (attempts < BACKOFF_MS.length) {
          await kv.set(rowKey(Date.now() + BACKOFF_MS[attempts]), {
            message,
            attempts: attempts + 1,
          });
        }
      }
    }
    return ran;
  };
  return {
    async enqueue(message, delayMs = 0) {
      await kv.set(rowKey(Date.now() + Math.max(0, delayMs)), { message, attempts: 0 });
    },
    enqueueIn(op, message, delayMs = 0) {
      op.set(rowKey(Date.now() + Math.max(0, delayMs)), { message, attempts: 0 });
    },
    drain,
    async listen(handler, signal) {
      while (!signal.aborted) {
        let ran = 0;
        try {
          ran = await drain(handler);
        } catch (err) {
          if (signal.aborted) break;
          console.error(
            JSON.stringify({ level: "error", msg: "job table poll failed", error: String(err) }),
          );
        }
        if (ran === 0) await new Promise((r) => setTimeout(r, POLL_MS));
      }
    },
  };
}
