/**
 * Fan-out: turns one outbox event into one delivery record per matching active endpoint of the
 * account. The outbox entry is deleted in the same commit as the deliveries are created, and
 * delivery ids derive from event id + endpoint id, so a repeated or concurrent message for the
 * same event creates nothing new.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { atomically } from "../../kv/atomic.ts";
import { atomic, type Deps, iso, keys, list, read } from "../platform/mod.ts";
import type { OutboxEvent } from "./types.ts";
import { deliveryMessage } from "./messages.ts";
import { type DeliveryRecord, webhookGraceMs, type WebhookRecord } from "./types.ts";

/** Names accepted as filters that never produce deliveries (interface: Event catalog). */
export const RESERVED_EVENTS: ReadonlySet<string> = new Set([
  "article.generated",
  "usage.threshold_reached",
]);

/** The delivery id of an event at an endpoint: opaque, stable, the same however often computed. */
export function deliveryIdFor(eventId: string, webhookId: string): string {
  const digest = createHash("sha256").update(`${eventId}\n${webhookId}`).digest("hex");
  return `dlv_${digest.slice(0, 26)}`;
}

/** True when an endpoint wants this event. */
export function wants(hook: WebhookRecord, event: string): boolean {
  return hook.active && (hook.events.length === 0 || hook.events.includes(event));
}

/**
 * Drains one outbox entry. Returns the ids of the deliveries it created (none when the entry was
 * already drained). The caller makes the first attempts at once (saving a queue hop, ~60 ms on a
 * local KV); the same commit enqueues each first attempt as a fallback, delayed past the attempt
 * timeout, which finds the attempt done and does nothing unless the process died meanwhile.
 */
export function fanOutEvent(deps: Deps, eventId: string): Promise<string[]> {
  const { kv } = deps;
  return atomically(kv, async () => {
    const entry = await read(kv, keys.outbox(eventId));
    const event = entry.value;
    if (!event) return { op: kv.atomic(), result: [] };
    const op = atomic(kv).check(entry).delete(entry.key);
    if (RESERVED_EVENTS.has(event.event)) return { op, result: [] };

    const hooks: WebhookRecord[] = [];
    let liveSide: boolean | null = null; // read once, only if a sandbox endpoint wants it
    for await (const e of list(kv, { prefix: keys.webhooksOfAccount(event.accountId) })) {
      if (!wants(e.value, event.event)) continue;
      if (e.value.mode === "sandbox") {
        liveSide ??= await aboutLiveSide(deps, event);
        if (liveSide) continue;
      }
      hooks.push(e.value);
    }
    // No check on the endpoints: one deleted meanwhile gets a delivery that drops itself when
    // its attempt finds no endpoint, which keeps this commit at one check however many match.
    const now = deps.clock.now();
    const { sweepGraceMs, firstAttemptFallbackMs } = webhookGraceMs(deps.config);
    for (const hook of hooks) {
      const id = deliveryIdFor(event.id, hook.id);
      const sweepAt = now + sweepGraceMs;
      const record: DeliveryRecord = {
        id,
        accountId: event.accountId,
        webhookId: hook.id,
        eventId: event.id,
        event: event.event,
        body: JSON.stringify({
          id,
          event: event.event,
          created_at: iso(event.createdAt),
          data: event.data,
        }),
        eventAt: event.createdAt,
        createdAt: now,
        state: "pending",
        attempts: 0,
        nextAttemptAt: now,
        sweepAt,
        lastAttemptAt: null,
        lastStatus: null,
        lastError: null,
        deliveredAt: null,
      };
      op.set(keys.delivery(id), record)
        .set(keys.deliveriesOfWebhook(hook.id, id), true)
        .set(keys.deliveryDue(sweepAt, id), true);
      deps.queue.enqueueIn(op, deliveryMessage(id, 1), firstAttemptFallbackMs);
    }
    return { op, result: hooks.map((h) => deliveryIdFor(event.id, h.id)) };
  });
}

/**
 * Whether an event is about the account's live side, which a sandbox endpoint never hears of: the
 * credit balance, or a project that is not a sandbox project.
 */
async function aboutLiveSide(deps: Deps, event: OutboxEvent): Promise<boolean> {
  if (event.event === "credits.updated") return true;
  const projectId = (event.data as { project_id?: unknown }).project_id;
  if (typeof projectId !== "string") return false;
  const project = await read(deps.kv, keys.project(event.accountId, projectId));
  return project.value !== null && !project.value.sandbox;
}
