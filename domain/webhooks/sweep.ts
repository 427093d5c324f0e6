/**
 * Recovery of webhook work whose queue message was lost (a handler that kept throwing past the
 * queue's retries, a queue adapter without delivery guarantees): outbox entries and pending
 * deliveries overdue by more than the grace period get a new message.
 *
 * Every re-send commits with a check on the entry it found, so when several processes sweep at
 * once only one of them re-sends each item; and a re-sent message that turns out to duplicate a
 * late original is harmless (outbox: drained once; delivery: the message names its attempt).
 *
 * @module
 */
import { atomic, type Deps, keys, list, read } from "../platform/mod.ts";
import { deliveryMessage } from "./messages.ts";
import { type DeliveryRecord, webhookGraceMs } from "./types.ts";

/** Items looked at per sweep; the next sweep continues. */
const BATCH = 500;

export async function sweepWebhooks(
  deps: Deps,
): Promise<{ outbox: number; deliveries: number }> {
  const now = deps.clock.now();
  return {
    outbox: await sweepOutbox(deps, now),
    deliveries: await sweepDeliveries(deps, now),
  };
}

async function sweepOutbox(deps: Deps, now: number): Promise<number> {
  const { kv } = deps;
  const grace = webhookGraceMs(deps.config).sweepGraceMs;
  let resent = 0;
  for await (const e of list(kv, { prefix: keys.outboxAll() }, { limit: BATCH })) {
    if (e.value.createdAt > now - grace) continue;
    // Rewriting the same value bumps the versionstamp: a concurrent sweeper's check then fails.
    const op = atomic(kv).check(e).set(e.key, e.value);
    deps.queue.enqueueIn(op, { type: "outbox", id: e.value.id });
    if ((await op.commit()).ok) resent++;
  }
  return resent;
}

async function sweepDeliveries(deps: Deps, now: number): Promise<number> {
  const { kv } = deps;
  let resent = 0;
  const overdue = list(
    kv,
    { prefix: keys.deliveriesDue(), end: keys.deliveryDue(now, "") },
    { limit: BATCH },
  );
  for await (const due of overdue) {
    const sweepAt = due.key[1];
    const id = due.key[2];
    const entry = await read(kv, keys.delivery(id));
    const d = entry.value;
    if (!d || d.state !== "pending" || d.sweepAt !== sweepAt) {
      // An index entry its record no longer points at (removed endpoint, crash mid-cleanup).
      await kv.atomic().check(due).check(entry).delete(due.key).commit();
      continue;
    }
    const next = now + webhookGraceMs(deps.config).sweepGraceMs;
    const op = atomic(kv)
      .check(entry)
      .check(due)
      .delete(due.key)
      .set(entry.key, { ...d, sweepAt: next } satisfies DeliveryRecord)
      .set(keys.deliveryDue(next, id), true);
    deps.queue.enqueueIn(op, deliveryMessage(id, d.attempts + 1));
    if ((await op.commit()).ok) resent++;
  }
  return resent;
}
