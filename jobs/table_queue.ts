import {
  type JobMessage,
  type JobQueue,
  keys,
  list,
  type QueuedJob,
  randomPart,
  write,
} from "../domain/platform/mod.ts";
import { isJobMessage } from "./queue.ts";

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
  /**
   * Polls due jobs and runs up to `concurrency` at once until `signal` aborts; then takes no
   * more and resolves once the jobs it holds have finished.
   */
  listen(
    handler: (message: JobMessage) => Promise<void>,
    signal: AbortSignal,
    concurrency?: number,
  ): Promise<void>;
  /** Runs every due job once (the cron tick, and tests). */
  drain(handler: (message: JobMessage) => Promise<void>): Promise<number>;
} {
  const rowKey = (dueAt: number) =>
    keys.jobQueue(dueAt, `${Date.now().toString(36)}${randomPart(8)}`);
  /** Claims up to `limit` due jobs (deleting their rows in checked commits). */
  const claimDue = async (limit: number): Promise<QueuedJob[]> => {
    const out: QueuedJob[] = [];
    const due = list(kv, {
      start: keys.jobQueue(0, ""),
      end: keys.jobQueue(Date.now() + 1, ""),
    }, { limit: BATCH });
    for await (const row of due) {
      const claimed = await kv.atomic().check(row).delete(row.key).commit();
      if (!claimed.ok) continue; // another process took it
      if (!isJobMessage(row.value.message)) continue;
      out.push(row.value);
      if (out.length >= limit) break;
    }
    return out;
  };
  /** Runs one claimed job; a throwing handler gets the job back, later (its attempts counted). */
  const run = async (job: QueuedJob, handler: (message: JobMessage) => Promise<void>) => {
    try {
      await handler(job.message);
    } catch {
      if (job.attempts < BACKOFF_MS.length) {
        await write(kv, rowKey(Date.now() + BACKOFF_MS[job.attempts]), {
          message: job.message,
          attempts: job.attempts + 1,
        }).catch(() => {});
      }
    }
  };
  const drain = async (handler: (message: JobMessage) => Promise<void>) => {
    let ran = 0;
    for (const job of await claimDue(BATCH)) {
      ran++;
      await run(job, handler);
    }
    return ran;
  };
  return {
    async enqueue(message, delayMs = 0) {
      await write(kv, rowKey(Date.now() + Math.max(0, delayMs)), { message, attempts: 0 });
    },
    enqueueIn(op, message, delayMs = 0) {
      op.set(rowKey(Date.now() + Math.max(0, delayMs)), { message, attempts: 0 });
    },
    drain,
    async listen(handler, signal, concurrency = 1) {
      const inFlight = new Set<Promise<void>>();
      const pause = () =>
        new Promise<void>((resolve) => {
          const t = setTimeout(done, POLL_MS);
          function done() {
            clearTimeout(t);
            signal.removeEventListener("abort", done);
            resolve();
          }
          signal.addEventListener("abort", done);
        });
      while (!signal.aborted) {
        let claimed = 0;
        try {
          const room = concurrency - inFlight.size;
          if (room > 0) {
            for (const job of await claimDue(room)) {
              claimed++;
              const p: Promise<void> = run(job, handler).finally(() => inFlight.delete(p));
              inFlight.add(p);
            }
          }
        } catch (err) {
          if (signal.aborted) break;
          console.error(
            JSON.stringify({ level: "error", msg: "job table poll failed", error: String(err) }),
          );
        }
        if (inFlight.size >= concurrency) await Promise.race([...inFlight, pause()]);
        else if (claimed === 0) await pause();
      }
      // Shutdown: nothing new is taken; what this process holds finishes before KV closes.
      await Promise.all(inFlight);
    },
  };
}
