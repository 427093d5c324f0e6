/**
 * The inbound Stripe webhook: verify the signature on the raw body, then apply each event exactly
 * once. Every state change is ONE atomic operation that checks `["stripe_events", id]` absent, makes
 * the change (subscription or ledger), writes the outbox event and marks the event id, so a
 * redelivery (even a concurrent one) finds the mark and changes nothing. A thrown error marks
 * nothing and answers 5xx, so Stripe retries; events the service does not handle answer 200.
 */
import { atomically } from "../../kv/atomic.ts";
import { keys } from "../../kv/keys.ts";
import { iso } from "../clock.ts";
import type { Deps } from "../deps.ts";
import { ApiError } from "../errors.ts";
import { recordEvent } from "../events.ts";
import type {
  AccountRecord,
  BalanceRecord,
  CheckoutRecord,
  PlanId,
  ProjectRecord,
  StripeEventRecord,
  SubscriptionRecord,
} from "../records.ts";
import { isActive } from "../subscription_state.ts";
import { findPack, PLAN_IDS } from "./catalog.ts";
import { METADATA_SERVICE } from "./checkout.ts";
import { addCredit } from "./credits.ts";
import { stripeWebhooks, subtleCrypto } from "./stripe_client.ts";

/** Stripe's own signature tolerance: a signed timestamp older than this is refused. */
export const SIGNATURE_TOLERANCE_S = 300;
/** Processed event ids are kept past Stripe's 3-day retry window and 30-day event history. */
const EVENT_MARK_TTL_MS = 90 * 86_400_000;

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
  | "credits_granted"
  | "pack_already_granted"
  | "unknown_project"
  | "unknown_account"
  | "duplicate_event"
  | "ignored";

/**
 * Verifies `Stripe-Signature` over the raw body (HMAC-SHA256 of `t.body`, 5 minutes tolerance
 * against the injected clock) and applies the event. 400 `invalid_request` on a missing, forged or
 * stale signature, before anything is read or written; 503 when no webhook secret is configured.
 */
export async function handleStripeWebhook(
  deps: Deps,
  rawBody: string,
  signature: string | null,
): Promise<{ eventId: string; type: string; outcome: EventOutcome }> {
  const secret = deps.config.stripe.webhookSecret;
  if (!secret) {
    throw new ApiError("billing_not_configured", 503, "STRIPE_WEBHOOK_SECRET is not configured");
  }
  if (!signature) throw new ApiError("invalid_request", 400, "Missing Stripe-Signature header");
  let event: StripeEventLike;
  try {
    event = await stripeWebhooks.constructEventAsync(
      rawBody,
      signature,
      secret,
      SIGNATURE_TOLERANCE_S,
      subtleCrypto,
      deps.clock.now(),
    ) as unknown as StripeEventLike;
  } catch (err) {
    throw new ApiError(
      "invalid_request",
      400,
      `Stripe-Signature verification failed: ${(err as Error).message}`,
    );
  }
  if (
    typeof event?.id !== "string" || typeof event.type !== "string" ||
    typeof event.data?.object !== "object" || event.data.object === null
  ) {
    throw new ApiError("invalid_request", 400, "The signed body is not a Stripe event");
  }
  const outcome = await applyStripeEvent(deps, event);
  return { eventId: event.id, type: event.type, outcome };
}

/** Applies a verified event (exported for tests and replay tooling). */
export function applyStripeEvent(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      return onCheckoutPaid(deps, event);
    case "invoice.paid":
      return onInvoicePaid(deps, event);
    default:
      return Promise.resolve("ignored");
  }
}

/** A paid checkout: activates the subscription or grants the pack's credits. */
function onCheckoutPaid(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const session = event.data.object;
  const meta = ourMetadata(session.metadata);
  // Unpaid (delayed payment methods) sessions wait for async_payment_succeeded; sessions of
  // other products on the same Stripe account are not ours.
  if (!meta || session.payment_status !== "paid") return Promise.resolve("ignored");
  const sessionId = str(session.id);
  if (meta.kind === "credit_pack" && meta.pack_id && meta.account_id && sessionId) {
    return applyPackPayment(deps, event, {
      accountId: meta.account_id,
      packId: meta.pack_id,
      sessionId,
    });
  }
  if (meta.kind === "subscription" && meta.account_id && meta.project_id) {
    return applySubscriptionPayment(deps, event, {
      accountId: meta.account_id,
      projectId: meta.project_id,
      plan: planOf(meta.plan_id),
      stripeSubscriptionId: idOf(session.subscription),
      customerId: idOf(session.customer),
      // The session does not carry the period; the invoice does (whichever arrives first wins).
      periodEnd: null,
      renewal: false,
      sessionId,
    });
  }
  return Promise.resolve("ignored");
}

/**
 * A paid invoice of one of our subscriptions. `subscription_create` is the first period, which
 * `checkout.session.completed` also reports: whichever arrives first activates, the other is a
 * no-op for that period. Any other billing reason (`subscription_cycle`, …) is a renewal.
 */
async function onInvoicePaid(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const invoice = event.data.object;
  const details = (invoice.parent as Record<string, unknown> | null | undefined)
    ?.subscription_details as Record<string, unknown> | null | undefined;
  const subscriptionId = idOf(details?.subscription) ?? idOf(invoice.subscription);
  if (!subscriptionId) return "ignored";
  let owner: { accountId: string; projectId: string } | null = null;
  let plan: PlanId | null = null;
  // Before 2025-03-31.basil the metadata sat at `invoice.subscription_details`.
  const legacy = invoice.subscription_details as Record<string, unknown> | null | undefined;
  const meta = ourMetadata(details?.metadata) ?? ourMetadata(legacy?.metadata);
  if (meta?.kind === "subscription" && meta.account_id && meta.project_id) {
    owner = { accountId: meta.account_id, projectId: meta.project_id };
    plan = planOf(meta.plan_id);
  } else {
    // Metadata can be missing on invoices Stripe built before it was set; our own index knows.
    owner = (await deps.kv.get<{ accountId: string; projectId: string }>(
      keys.stripeSubscription(subscriptionId),
    )).value;
  }
  if (!owner) return "ignored";
  const lines = (invoice.lines as { data?: { period?: { end?: unknown } }[] } | undefined)?.data;
  const end = lines?.[0]?.period?.end;
  return await applySubscriptionPayment(deps, event, {
    ...owner,
    plan,
    stripeSubscriptionId: subscriptionId,
    customerId: idOf(invoice.customer),
    periodEnd: typeof end === "number" && end > 0 ? end * 1000 : null,
    renewal: invoice.billing_reason !== "subscription_create",
    sessionId: null,
  });
}

interface SubscriptionPayment {
  accountId: string;
  projectId: string;
  plan: PlanId | null;
  stripeSubscriptionId: string | null;
  customerId: string | null;
  /** End of the paid period (ms), when the event says; else one calendar month from now. */
  periodEnd: number | null;
  renewal: boolean;
  sessionId: string | null;
}

/**
 * One commit: event mark + subscription record (+ index, pending checkout cleared, checkout
 * completed) + `subscription.updated` in the outbox. `paid_until` only ever moves forward.
 */
function applySubscriptionPayment(
  deps: Deps,
  event: StripeEventLike,
  p: SubscriptionPayment,
): Promise<EventOutcome> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const now = clock.now();
    const [mark, subEntry, projectEntry, checkoutEntry] = await kv.getMany<
      [StripeEventRecord, SubscriptionRecord, ProjectRecord, CheckoutRecord]
    >([
      keys.stripeEvent(event.id),
      keys.subscription(p.projectId),
      keys.project(p.accountId, p.projectId),
      // Invoices carry no session; the placeholder key simply reads null.
      keys.checkout(p.sessionId ?? "-"),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = kv.atomic().check(mark).check(subEntry);
    const finish = (outcome: EventOutcome) => {
      markEvent(op, event, outcome, now);
      return { op, result: outcome };
    };

    if (!projectEntry.value) {
      logAnomaly("paid for an unknown project", event, p);
      return finish("unknown_project");
    }
    const sub = subEntry.value;
    const sameSubscription = sub !== null && p.stripeSubscriptionId !== null &&
      sub.stripeSubscriptionId === p.stripeSubscriptionId;

    if (!sameSubscription) {
      if (sub && isActive(sub, now) && sub.stripeSubscriptionId) {
        // A second Stripe subscription paid for a covered project (two checkouts both paid):
        // keep the first, leave the refund to the operator, and do not stack periods.
        logAnomaly("second subscription paid for an active project; refund it", event, p);
        return finish("duplicate_subscription");
      }
      const paidUntil = Math.max(
        p.periodEnd ?? addMonthsUtc(now, 1),
        sub && isActive(sub, now) ? sub.paidUntil : 0,
      );
      const record: SubscriptionRecord = {
        projectId: p.projectId,
        accountId: p.accountId,
        plan: p.plan ?? sub?.plan ?? null,
        paidUntil,
        stripeSubscriptionId: p.stripeSubscriptionId,
        stripeCustomerId: p.customerId,
        activatedAt: now,
        updatedAt: now,
      };
      op.set(keys.subscription(p.projectId), record).delete(keys.pendingCheckout(p.projectId));
      if (p.stripeSubscriptionId) {
        op.set(keys.stripeSubscription(p.stripeSubscriptionId), {
          accountId: p.accountId,
          projectId: p.projectId,
        });
      }
      if (checkoutEntry.value) {
        op.set(checkoutEntry.key, { ...checkoutEntry.value, completedAt: now });
      }
      emitSubscriptionUpdated(deps, op, event, record, true, now);
      return finish("activated");
    }

    if (!p.renewal) return finish("first_period_already_applied");

    const paidUntil = p.periodEnd ?? addMonthsUtc(Math.max(sub.paidUntil, now), 1);
    if (paidUntil <= sub.paidUntil) return finish("stale_renewal");
    const record: SubscriptionRecord = {
      ...sub,
      plan: p.plan ?? sub.plan,
      paidUntil,
      stripeCustomerId: p.customerId ?? sub.stripeCustomerId,
      updatedAt: now,
    };
    op.set(keys.subscription(p.projectId), record);
    emitSubscriptionUpdated(deps, op, event, record, false, now);
    return finish("renewed");
  });
}

/**
 * One commit: event mark + the pack's credits (bonus included) on the balance with a ledger entry,
 * once per checkout session even if two event types report it + `credits.updated` in the outbox.
 */
function applyPackPayment(
  deps: Deps,
  event: StripeEventLike,
  p: { accountId: string; packId: string; sessionId: string },
): Promise<EventOutcome> {
  const { kv, clock } = deps;
  const pack = findPack(p.packId);
  if (!pack) {
    logAnomaly("paid for an unknown pack", event, p);
    return Promise.resolve("ignored");
  }
  return atomically(kv, async () => {
    const now = clock.now();
    const [mark, account, balance, granted, checkoutEntry] = await kv.getMany<
      [StripeEventRecord, AccountRecord, BalanceRecord, string, CheckoutRecord]
    >([
      keys.stripeEvent(event.id),
      keys.account(p.accountId),
      keys.balance(p.accountId),
      keys.ledgerRef(p.accountId, "grant", p.sessionId),
      keys.checkout(p.sessionId),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = kv.atomic().check(mark);
    const finish = (outcome: EventOutcome) => {
      markEvent(op, event, outcome, now);
      return { op, result: outcome };
    };
    if (!account.value) {
      logAnomaly("paid for an unknown account", event, p);
      return finish("unknown_account");
    }
    if (granted.value) return finish("pack_already_granted");

    const entry = addCredit(op, balance, "grant", {
      accountId: p.accountId,
      amount: pack.credits,
      reason: "credit_pack",
      ref: p.sessionId,
      now,
    });
    if (checkoutEntry.value) {
      op.set(checkoutEntry.key, { ...checkoutEntry.value, completedAt: now });
    }
    recordEvent(op, deps.queue, {
      accountId: p.accountId,
      event: "credits.updated",
      data: {
        pack_id: pack.id,
        credits_added: pack.credits,
        balance_credits: entry.balanceAfter,
      },
      now,
    });
    return finish("credits_granted");
  });
}

function emitSubscriptionUpdated(
  deps: Deps,
  op: Deno.AtomicOperation,
  event: StripeEventLike,
  record: SubscriptionRecord,
  firstActivation: boolean,
  now: number,
): void {
  recordEvent(op, deps.queue, {
    accountId: record.accountId,
    event: "subscription.updated",
    data: {
      project_id: record.projectId,
      status: "active",
      plan: record.plan,
      paid_until: iso(record.paidUntil),
      first_activation: firstActivation,
      stripe_event: event.type,
    },
    now,
  });
}

function markEvent(
  op: Deno.AtomicOperation,
  event: StripeEventLike,
  outcome: EventOutcome,
  now: number,
): void {
  const record: StripeEventRecord = { id: event.id, type: event.type, processedAt: now, outcome };
  op.set(keys.stripeEvent(event.id), record, { expireIn: EVENT_MARK_TTL_MS });
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

type OurMetadata = {
  kind?: string;
  account_id?: string;
  project_id?: string;
  plan_id?: string;
  pack_id?: string;
};

function ourMetadata(value: unknown): OurMetadata | null {
  if (typeof value !== "object" || value === null) return null;
  const m = value as Record<string, unknown>;
  if (m.service !== METADATA_SERVICE) return null;
  const out: OurMetadata = {};
  for (const k of ["kind", "account_id", "project_id", "plan_id", "pack_id"] as const) {
    if (typeof m[k] === "string" && m[k]) out[k] = m[k] as string;
  }
  return out;
}

function planOf(value: string | undefined): PlanId | null {
  return (PLAN_IDS as readonly string[]).includes(value ?? "") ? value as PlanId : null;
}

/** Stripe expandable fields are an id string or an object with `id`. */
function idOf(value: unknown): string | null {
  if (typeof value === "string" && value) return value;
  if (typeof value === "object" && value !== null) return str((value as { id?: unknown }).id);
  return null;
}

function str(value: unknown): string | null {
  return typeof value === "string" && value ? value : null;
}

function logAnomaly(msg: string, event: StripeEventLike, detail: object): void {
  console.error(JSON.stringify({
    level: "error",
    msg: `stripe webhook: ${msg}`,
    stripe_event_id: event.id,
    stripe_event: event.type,
    ...detail,
  }));
}
