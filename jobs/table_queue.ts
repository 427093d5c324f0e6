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
  /**
   * Runs due jobs once (the cron tick, and tests): while this process listens, only as many as
   * its concurrency leaves room for.
   */
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
  // The jobs this process runs, the listener's and the drain's: one count against one limit,
  // so a drain (the maintenance tick's) never runs a job past the worker's concurrency. Slots
  // are reserved before the claim's round trip, so two claims at once cannot both take the last.
  const inFlight = new Set<Promise<void>>();
  let maxInFlight = Infinity;
  let reserved = 0;
  /** Claims up to `want` due jobs within the free slots; each runs held in a slot. */
  const claimHeld = async (
    want: number,
    handler: (message: JobMessage) => Promise<void>,
  ): Promise<Promise<void>[]> => {
    const room = Math.min(want, maxInFlight - inFlight.size - reserved);
    if (room <= 0) return [];
    reserved += room;
    let jobs: QueuedJob[] = [];
    try {
      jobs = await claimDue(room);
    } finally {
      reserved -= room;
    }
    return jobs.map((job) => {
      const held: Promise<void> = run(job, handler).finally(() => inFlight.delete(held));
      inFlight.add(held);
      return held;
    });
  };
  const drain = async (handler: (message: JobMessage) => Promise<void>) => {
    let ran = 0;
    // One at a time: a drain takes one slot, and gives it back before the next job.
    while (ran < BATCH) {
      const [held] = await claimHeld(1, handler);
      if (!held) break;
      ran++;
      await held;
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
      maxInFlight = concurrency;
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
          claimed = (await claimHeld(concurrency, handler)).length;
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
