/**
 * The inbound Stripe webhook: verify the signature on the raw body, then apply each event exactly
 * once. A signed event is still checked against what the service stored: a checkout is granted
 * only when its session is one the service created, for the same account, project, plan or pack,
 * amount and currency; invoices only for subscriptions the service activated (or the checkout it
 * opened); refunds and disputes only for packs it granted. Every state change is ONE atomic operation that checks `["stripe_events", id]` absent, makes
 * the change (subscription or ledger), writes the outbox event and marks the event id, so a
 * redelivery (even a concurrent one) finds the mark and changes nothing. A thrown error marks
 * nothing and answers 5xx, so Stripe retries; events the service does not handle answer 200.
 */
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, read, readMany, recordEvent } from "../platform/mod.ts";
import type { CheckoutRecord, PlanId, SubscriptionRecord } from "./types.ts";
import { isActive } from "./subscription_state.ts";
import { CURRENCY, findPack, findPlan, PLAN_IDS } from "./catalog.ts";
import { METADATA_SERVICE } from "./checkout.ts";
import { addCredit } from "./credits.ts";
import { applyChargeRefunded, applyDisputeClosed, applyDisputeCreated } from "./pack_reversals.ts";
import { applyUpgradePayment } from "../upgrades/mod.ts";
import {
  addMonthsUtc,
  count,
  emitSubscriptionUpdated,
  type EventOutcome,
  idOf,
  logAnomaly,
  markEvent,
  str,
  type StripeEventLike,
} from "./stripe_common.ts";
import { stripeWebhooks, subtleCrypto } from "./stripe_client.ts";
import { recordPackPayment } from "./pack_payment.ts";

export type { EventOutcome, StripeEventLike } from "./stripe_common.ts";
export { addMonthsUtc } from "./stripe_common.ts";

/** Stripe's own signature tolerance: a signed timestamp older than this is refused. */
export const SIGNATURE_TOLERANCE_S = 300;

/**
 * Verifies `Stripe-Signature` over the raw body (HMAC-SHA256 of `t.body`, 5 minutes tolerance
 * against the injected clock) and answers the signed event, for `applyStripeEvent` (the
 * application layer's app/billing/stripe_webhook.ts applies it). 400 `invalid_request` on a
 * missing, forged or stale signature, before anything is read or written; 503 when no webhook
 * secret is configured.
 */
export async function verifyStripeEvent(
  deps: Deps,
  rawBody: string,
  signature: string | null,
): Promise<StripeEventLike> {
  const secret = deps.config.stripe.webhookSecret;
  if (!secret) {
    throw new ApiError("billing_not_configured", "STRIPE_WEBHOOK_SECRET is not configured");
  }
  if (!signature) throw new ApiError("invalid_request", "Missing Stripe-Signature header");
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
      `Stripe-Signature verification failed: ${(err as Error).message}`,
    );
  }
  if (
    typeof event?.id !== "string" || typeof event.type !== "string" ||
    typeof event.data?.object !== "object" || event.data.object === null
  ) {
    throw new ApiError("invalid_request", "The signed body is not a Stripe event");
  }
  return event;
}

/** Applies a verified event (app/billing/stripe_webhook.ts; tests and replay tooling too). */
export function applyStripeEvent(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  switch (event.type) {
    case "checkout.session.completed":
    case "checkout.session.async_payment_succeeded":
      return onCheckoutPaid(deps, event);
    case "invoice.paid":
      return onInvoicePaid(deps, event);
    case "invoice.payment_failed":
      return onInvoicePaymentFailed(deps, event);
    case "customer.subscription.deleted":
      return onSubscriptionDeleted(deps, event);
    case "charge.refunded":
      return applyChargeRefunded(deps, event);
    case "charge.dispute.created":
      return applyDisputeCreated(deps, event);
    case "charge.dispute.closed":
      return applyDisputeClosed(deps, event);
    default:
      return Promise.resolve("ignored");
  }
}

/**
 * A paid checkout: activates the subscription or grants the pack's credits, but only for a
 * session the service created, with the account, project, plan or pack it stored, and the
 * catalogue's price in USD (`amount_subtotal`, before discounts and tax). Anything else is logged
 * and marked `unknown_checkout`, changing nothing: a valid signature alone grants nothing.
 */
async function onCheckoutPaid(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const session = event.data.object;
  const meta = ourMetadata(session.metadata);
  // Unpaid (delayed payment methods) sessions wait for async_payment_succeeded; sessions of
  // other products on the same Stripe account are not ours.
  if (!meta || session.payment_status !== "paid") return "ignored";
  const sessionId = str(session.id);
  if (!sessionId) return "ignored";
  const checkout = (await read(deps.kv, keys.checkout(sessionId))).value;
  const mismatch = checkoutMismatch(checkout, meta, session);
  if (mismatch || !checkout) {
    logAnomaly(`paid session not granted: ${mismatch}`, event, { session_id: sessionId });
    return await markOnly(deps, event, "unknown_checkout");
  }
  if (checkout.kind === "upgrade") {
    return await applyUpgradePayment(deps, event, {
      checkout,
      stripeSubscriptionId: idOf(session.subscription),
      customerId: idOf(session.customer),
      paymentIntentId: idOf(session.payment_intent),
      amount: amountOf(session)!,
    });
  }
  if (checkout.kind === "credit_pack") {
    return await applyPackPayment(deps, event, {
      accountId: checkout.accountId,
      packId: checkout.packId!,
      sessionId,
      paymentIntentId: idOf(session.payment_intent),
      amount: amountOf(session)!,
      currency: CURRENCY.toLowerCase(),
    });
  }
  return await applySubscriptionPayment(deps, event, {
    accountId: checkout.accountId,
    projectId: checkout.projectId!,
    plan: checkout.planId,
    stripeSubscriptionId: idOf(session.subscription),
    customerId: idOf(session.customer),
    // The session does not carry the period; the invoice does (whichever arrives first wins).
    periodEnd: null,
    renewal: false,
    sessionId,
  });
}

/** What the session paid, before discounts and tax, in minor units. */
function amountOf(session: Record<string, unknown>): number | null {
  return count(session.amount_subtotal) ?? count(session.amount_total);
}

/** Why a paid session does not match the checkout the service stored, or null when it does. */
function checkoutMismatch(
  checkout: CheckoutRecord | null,
  meta: OurMetadata,
  session: Record<string, unknown>,
): string | null {
  if (!checkout) return "no checkout was created for this session";
  if (checkout.kind !== meta.kind) return "kind differs from the stored checkout";
  if (checkout.accountId !== meta.account_id) return "account differs from the stored checkout";
  let price: number | undefined;
  if (checkout.kind === "upgrade") {
    if (checkout.upgradeId !== meta.upgrade_id) return "upgrade differs from the stored checkout";
    if (
      (checkout.projectId ?? undefined) !== meta.project_id ||
      (checkout.planId ?? undefined) !== meta.plan_id ||
      (checkout.packId ?? undefined) !== meta.pack_id
    ) {
      return "project, plan or pack differs from the stored checkout";
    }
    const plan = checkout.planId ? findPlan(checkout.planId)?.monthlyPrice : 0;
    const pack = checkout.packId ? findPack(checkout.packId)?.usd : 0;
    price = plan === undefined || pack === undefined ? undefined : plan + pack;
  } else if (checkout.kind === "credit_pack") {
    if (checkout.packId !== meta.pack_id) return "pack differs from the stored checkout";
    price = findPack(checkout.packId ?? "")?.usd;
  } else {
    if (checkout.projectId !== meta.project_id || checkout.planId !== meta.plan_id) {
      return "project or plan differs from the stored checkout";
    }
    price = findPlan(checkout.planId ?? "")?.monthlyPrice;
  }
  if (price === undefined) return "the stored checkout names nothing in the catalogue";
  if (str(session.currency)?.toUpperCase() !== CURRENCY) return "currency is not USD";
  if (amountOf(session) !== price * 100) {
    return `amount ${amountOf(session)} is not the catalogue price ${price * 100}`;
  }
  return null;
}

/** Marks an event applied with an outcome that changed nothing (so a redelivery is a no-op). */
function markOnly(deps: Deps, event: StripeEventLike, outcome: EventOutcome) {
  const { kv, clock } = deps;
  return atomically<EventOutcome>(kv, async () => {
    const mark = await read(kv, keys.stripeEvent(event.id));
    const op = atomic(kv).check(mark);
    if (mark.value) return { op, result: "duplicate_event" };
    markEvent(op, event, outcome, clock.now());
    return { op, result: outcome };
  });
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
  // Before 2025-03-31.basil the metadata sat at `invoice.subscription_details`.
  const legacy = invoice.subscription_details as Record<string, unknown> | null | undefined;
  const meta = ourMetadata(details?.metadata) ?? ourMetadata(legacy?.metadata);
  const found = await invoiceOwner(deps, event, subscriptionId, meta, invoice.billing_reason);
  if (found === "unknown_checkout") return await markOnly(deps, event, "unknown_checkout");
  if (!found) return "ignored";
  const { owner, plan } = found;
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

/**
 * Whose subscription an invoice is. The index of Stripe subscriptions the service activated
 * decides (metadata can be missing on invoices Stripe built before it was set, and is not trusted
 * over the index); before activation, only the first invoice (`subscription_create`) of a
 * checkout the service opened for that project, account and plan counts.
 */
async function invoiceOwner(
  deps: Deps,
  event: StripeEventLike,
  subscriptionId: string,
  meta: OurMetadata | null,
  billingReason: unknown,
): Promise<
  | { owner: { accountId: string; projectId: string }; plan: PlanId | null }
  | null
  | "unknown_checkout"
> {
  const { kv } = deps;
  const indexed = (await read(kv, keys.stripeSubscription(subscriptionId))).value;
  if (indexed) {
    const plan = meta?.project_id === indexed.projectId ? planOf(meta.plan_id) : null;
    return { owner: indexed, plan };
  }
  if (meta?.kind !== "subscription" || !meta.account_id || !meta.project_id) return null;
  if (billingReason !== "subscription_create") {
    logAnomaly("invoice of a subscription never activated here", event, {
      subscription: subscriptionId,
    });
    return "unknown_checkout";
  }
  const pending = (await read(kv, keys.pendingCheckout(meta.project_id))).value;
  const checkout = pending ? (await read(kv, keys.checkout(pending.sessionId))).value : null;
  if (
    !checkout || checkout.kind !== "subscription" || checkout.accountId !== meta.account_id ||
    checkout.projectId !== meta.project_id || checkout.planId !== meta.plan_id
  ) {
    logAnomaly("first invoice without a matching checkout", event, {
      subscription: subscriptionId,
    });
    return "unknown_checkout";
  }
  return {
    owner: { accountId: checkout.accountId, projectId: meta.project_id },
    plan: checkout.planId,
  };
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
    const [mark, subEntry, projectEntry, checkoutEntry] = await readMany(kv, [
      keys.stripeEvent(event.id),
      keys.subscription(p.projectId),
      keys.project(p.accountId, p.projectId),
      // Invoices carry no session; the placeholder key simply reads null.
      keys.checkout(p.sessionId ?? "-"),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = atomic(kv).check(mark).check(subEntry);
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
    if (sub.canceledAt) {
      logAnomaly("paid invoice of a deleted subscription; refund it", event, p);
      return finish("subscription_canceled");
    }

    const paidUntil = p.periodEnd ?? addMonthsUtc(Math.max(sub.paidUntil, now), 1);
    if (paidUntil <= sub.paidUntil) return finish("stale_renewal");
    const record: SubscriptionRecord = {
      ...sub,
      plan: p.plan ?? sub.plan,
      paidUntil,
      stripeCustomerId: p.customerId ?? sub.stripeCustomerId,
      paymentFailedAt: null,
      updatedAt: now,
    };
    op.set(keys.subscription(p.projectId), record);
    emitSubscriptionUpdated(deps, op, event, record, false, now);
    return finish("renewed");
  });
}

/**
 * A Stripe subscription the service activated, found through its index, with the project's
 * subscription record it is (or was) the payer of; null when the event is not ours.
 */
async function ownSubscription(deps: Deps, subscriptionId: string | null) {
  if (!subscriptionId) return null;
  return (await read(deps.kv, keys.stripeSubscription(subscriptionId))).value;
}

/**
 * Applies a change to the subscription record of the Stripe subscription an event names, in one
 * commit with the event mark and `subscription.updated`. `change` returns the new record and the
 * extra event fields, or an outcome when nothing changes.
 */
async function changeSubscription(
  deps: Deps,
  event: StripeEventLike,
  subscriptionId: string | null,
  change: (
    sub: SubscriptionRecord,
    now: number,
  ) =>
    | { record: SubscriptionRecord; extra: Record<string, unknown>; outcome: EventOutcome }
    | EventOutcome,
): Promise<EventOutcome> {
  const owner = await ownSubscription(deps, subscriptionId);
  if (!owner) return "ignored";
  const { kv, clock } = deps;
  return await atomically(kv, async () => {
    const now = clock.now();
    const [mark, subEntry] = await readMany(kv, [
      keys.stripeEvent(event.id),
      keys.subscription(owner.projectId),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = atomic(kv).check(mark, subEntry);
    const finish = (outcome: EventOutcome) => {
      markEvent(op, event, outcome, now);
      return { op, result: outcome };
    };
    const sub = subEntry.value;
    // A subscription replaced by a newer one on the project: its events no longer apply.
    if (!sub || sub.stripeSubscriptionId !== subscriptionId) return finish("stale_subscription");
    const result = change(sub, now);
    if (typeof result === "string") return finish(result);
    op.set(subEntry.key, result.record);
    emitSubscriptionUpdated(deps, op, event, result.record, false, now, result.extra);
    return finish(result.outcome);
  });
}

/**
 * `customer.subscription.deleted`: the customer (or Stripe, after failed retries) ended it. The
 * period already paid stays active to `paid_until`, then the project reads `none`; later invoices
 * of this subscription renew nothing.
 */
function onSubscriptionDeleted(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const subscription = event.data.object;
  return changeSubscription(deps, event, str(subscription.id), (sub, now) => {
    if (sub.canceledAt) return "already_canceled";
    return {
      record: { ...sub, canceledAt: now, updatedAt: now },
      extra: { canceled: true },
      outcome: "canceled",
    };
  });
}

/**
 * `invoice.payment_failed` for a subscription the service activated: `paid_until` does not move
 * (the project lapses when it passes unless a later retry is paid); the failure is recorded and
 * sent as `subscription.updated` with `payment_failed: true`, so the agent can tell its human.
 */
function onInvoicePaymentFailed(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const invoice = event.data.object;
  const details = (invoice.parent as Record<string, unknown> | null | undefined)
    ?.subscription_details as Record<string, unknown> | null | undefined;
  const subscriptionId = idOf(details?.subscription) ?? idOf(invoice.subscription);
  return changeSubscription(deps, event, subscriptionId, (sub, now) => ({
    record: { ...sub, paymentFailedAt: now, updatedAt: now },
    extra: { payment_failed: true },
    outcome: "payment_failed_recorded",
  }));
}

/**
 * One commit: event mark + the pack's credits (bonus included) on the balance with a ledger entry,
 * once per checkout session even if two event types report it + `credits.updated` in the outbox,
 * + the pack payment record its refunds and disputes are measured against.
 */
function applyPackPayment(
  deps: Deps,
  event: StripeEventLike,
  p: {
    accountId: string;
    packId: string;
    sessionId: string;
    paymentIntentId: string | null;
    amount: number;
    currency: string;
  },
): Promise<EventOutcome> {
  const { kv, clock } = deps;
  const pack = findPack(p.packId);
  if (!pack) {
    logAnomaly("paid for an unknown pack", event, p);
    return Promise.resolve("ignored");
  }
  return atomically(kv, async () => {
    const now = clock.now();
    const [mark, account, balance, granted, checkoutEntry] = await readMany(kv, [
      keys.stripeEvent(event.id),
      keys.account(p.accountId),
      keys.balance(p.accountId),
      keys.ledgerRef(p.accountId, "grant", p.sessionId),
      keys.checkout(p.sessionId),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = atomic(kv).check(mark);
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
    if (p.paymentIntentId) {
      op.check({ key: keys.stripePayment(p.paymentIntentId), versionstamp: null });
      recordPackPayment(op, {
        paymentIntentId: p.paymentIntentId,
        accountId: p.accountId,
        sessionId: p.sessionId,
        packId: pack.id,
        credits: pack.credits,
        amount: p.amount,
        currency: p.currency,
      }, now);
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

type OurMetadata = {
  kind?: string;
  upgrade_id?: string;
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
  for (
    const k of ["kind", "account_id", "project_id", "plan_id", "pack_id", "upgrade_id"] as const
  ) {
    if (typeof m[k] === "string" && m[k]) out[k] = m[k] as string;
  }
  return out;
}

function planOf(value: string | undefined): PlanId | null {
  return (PLAN_IDS as readonly string[]).includes(value ?? "") ? value as PlanId : null;
}
