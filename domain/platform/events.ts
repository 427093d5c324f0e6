import { type Atomic, keys } from "./store.ts";
import type { JobQueue } from "./deps.ts";
import { newId } from "./ids.ts";
import type { OutboxEvent } from "../webhooks/types.ts";

/** Every event name an endpoint may filter on; the reserved ones are accepted but never sent. */
export const EVENT_NAMES = [
  "audit.completed",
  "article.published",
  "subscription.updated",
  "credits.updated",
  "audit.regressed",
  "schedule.paused",
  "article.generated",
  "usage.threshold_reached",
  "recheck.completed",
  "account.upgraded",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Adds an event to the outbox inside the caller's atomic operation, so the event exists exactly
 * when the change that causes it commits. The queue message rides in the same commit.
 *
 * @example
 * ```ts
 * import type { JobQueue } from "./deps.ts";
 * declare const kv: Deno.Kv, queue: JobQueue, clock: { now(): number };
 * declare const accountId: string, auditKey: Deno.KvKey, done: unknown, data: Record<string, unknown>;
 * const op = kv.atomic().set(auditKey, done);
 * recordEvent(op, queue, { accountId, event: "audit.completed", data, now: clock.now() });
 * await op.commit();
 * ```
 */
export function recordEvent(
  op: Atomic,
  queue: JobQueue,
  input: { accountId: string; event: EventName; data: Record<string, unknown>; now: number },
): OutboxEvent {
  const event: OutboxEvent = {
    id: newId("evt", input.now),
    accountId: input.accountId,
    event: input.event,
    createdAt: input.now,
    data: input.data,
  };
  op.set(keys.outbox(event.id), event);
  queue.enqueueIn(op, { type: "outbox", id: event.id });
  return event;
}
