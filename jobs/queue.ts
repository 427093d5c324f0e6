import type { JobMessage, JobQueue } from "../domain/platform/mod.ts";

/**
 * The JobQueue port over Deno KV's native queue. Messages only name a record ("look at audit X"),
 * so a duplicate or lost message is harmless: handlers re-read the record, and the sweep cron
 * finds work whose message was lost.
 */
export function kvQueue(kv: Deno.Kv): JobQueue {
  return {
    async enqueue(message: JobMessage, delayMs = 0) {
      await kv.enqueue(message, { delay: Math.max(0, Math.floor(delayMs)) });
    },
    enqueueIn(op: Deno.AtomicOperation, message: JobMessage, delayMs = 0) {
      op.enqueue(message, { delay: Math.max(0, Math.floor(delayMs)) });
    },
  };
}

/** Type guard for messages from the queue (anything else is ignored, not retried). */
export function isJobMessage(value: unknown): value is JobMessage {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === "string" &&
    (v.type === "audit" || v.type === "article" || v.type === "outbox" || v.type === "delivery" ||
      v.type === "schedule" || v.type === "recheck" || v.type === "mail" ||
      v.type === "crawl_slice");
}
