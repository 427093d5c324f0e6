/**
 * What the Stripe event handlers share: the event shape they read, their outcomes, the event mark
 * that makes each event apply once, and readers for Stripe's loosely typed payloads.
 */
import { type Atomic, type Deps, iso, keys, recordEvent } from "../platform/mod.ts";
import type { StripeEventRecord, SubscriptionRecord } from "./types.ts";
import { isActive } from "./subscription_state.ts";

/** Processed event ids are kept past Stripe's 3-day retry window and 30-day event history. */
export const EVENT_MARK_TTL_MS = 90 * 86_400_000;

/** The parts of a Stripe event the handlers read; payloads are treated as untrusted shapes. */
export interface StripeEventLike {
  id: string;
  type: string;
  data: { object: Record<string, unknown> };
}

/** What became of an event, echoed in the 200 body and stored with the event mark. */
export type EventOutcome =
  | "activated"
  | "renewed"
  | "first_period_already_applied"
  | "stale_renewal"
  | "duplicate_subscription"
  | "subscription_canceled"
  | "canceled"
  | "already_canceled"
  | "stale_subscription"
  | "payment_failed_recorded"
  | "credits_granted"
  | "pack_already_granted"
  | "unknown_checkout"
  | "unknown_project"
  | "unknown_account"
  | "credits_reversed"
  | "nothing_to_reverse"
  | "credits_held"
  | "dispute_already_applied"
  | "credits_restored"
  | "dispute_lost"
  | "dispute_already_closed"
  | "upgraded"
  | "upgrade_already_paid"
  | "duplicate_event"
  | "ignored";

/** Adds the event mark (checked absent by the caller) to the commit that applies the event. */
export function markEvent(
  op: Atomic,
  event: StripeEventLike,
  outcome: EventOutcome,
  now: number,
): void {
  const record: StripeEventRecord = { id: event.id, type: event.type, processedAt: now, outcome };
  op.set(keys.stripeEvent(event.id), record, { expireIn: EVENT_MARK_TTL_MS });
}

/** Stripe expandable fields are an id string or an object with `id`. */
export function idOf(value: unknown): string | null {
  if (typeof value === "string" && value) return value;
  if (typeof value === "object" && value !== null) return str((value as { id?: unknown }).id);
  return null;
}

export function str(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

/** A non-negative whole number (amounts in minor units), else null. */
export function count(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

export function logAnomaly(msg: string, event: StripeEventLike, detail: object): void {
  console.error(JSON.stringify({
    level: "error",
    msg: `stripe webhook: ${msg}`,
    stripe_event_id: event.id,
    stripe_event: event.type,
    ...detail,
  }));
}

/** Adds `subscription.updated` for a project's subscription record to the event's commit. */
export function emitSubscriptionUpdated(
  deps: Deps,
  op: Deno.AtomicOperation,
  event: StripeEventLike,
  record: SubscriptionRecord,
  firstActivation: boolean,
  now: number,
  extra: Record<string, unknown> = {},
): void {
  recordEvent(op, deps.queue, {
    accountId: record.accountId,
    event: "subscription.updated",
    data: {
      project_id: record.projectId,
      // A cancelled or unpaid subscription stays active until its paid period ends.
      status: isActive(record, now) ? "active" : "none",
      plan: record.plan,
      paid_until: iso(record.paidUntil),
      first_activation: firstActivation,
      ...extra,
      stripe_event: event.type,
    },
    now,
  });
}

/**
 * One calendar month later in UTC, clamped to the month's last day (Jan 31 → Feb 28), as Stripe
 * bills. Used for `paid_until` when the event carries no period end (checkout.session.completed).
 */
export function addMonthsUtc(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d.getTime();
}
