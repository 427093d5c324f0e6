/**
 * Persisted shapes of billing: subscriptions, credit balances and their ledger, checkouts, pack payments and applied Stripe events.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */

export type PlanId = "basic" | "pro";

/** A project's paid subscription, written by the payment webhook. */
export interface SubscriptionRecord {
  projectId: string;
  accountId: string;
  plan: PlanId | null;
  /** Paid through this time; the subscription is active while it lies in the future. */
  paidUntil: number;
  stripeSubscriptionId: string | null;
  stripeCustomerId: string | null;
  activatedAt: number;
  updatedAt: number;
  /**
   * When Stripe reported the subscription deleted (`customer.subscription.deleted`): it stays
   * active to `paidUntil`, then reads `none`; no later invoice renews it.
   */
  canceledAt?: number | null;
  /** The last `invoice.payment_failed` since the last paid invoice (paidUntil did not move). */
  paymentFailedAt?: number | null;
}

/**
 * A paid credit pack, by Stripe PaymentIntent id: what refunds and disputes of its charge are
 * measured against. Credits are taken back in proportion to the money returned, only as far as
 * the balance has them (it never goes negative); the rest was spent and is written off.
 */
export interface PackPaymentRecord {
  paymentIntentId: string;
  accountId: string;
  sessionId: string;
  packId: string;
  /** Credits the pack granted, bonus included. */
  credits: number;
  /** What the customer paid, in the currency's minor unit. */
  amount: number;
  currency: string;
  /** Credits owed back by refunds so far (taken + written off), from the cumulative refund. */
  refundDue: number;
  /** Open or lost disputes: credits owed back by each, and how many were actually taken. */
  disputes: Record<string, { due: number; taken: number; status: "open" | "lost" | "won" }>;
  /** Credits taken back from the balance, all reasons. */
  taken: number;
  /** Credits owed back that had already been spent. */
  writtenOff: number;
  createdAt: number;
  updatedAt: number;
}

/** An account's prepaid credit balance; changed only by a checked read-modify-write with a ledger entry. */
export interface BalanceRecord {
  credits: number;
  /** Number of ledger entries so far; entry ids are this gapless sequence, so the ledger lists in order. */
  seq: number;
  updatedAt: number;
}

/** One movement of credits, written in the same commit as the balance it produced. */
export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: "grant" | "debit" | "refund";
  /** Always positive; `kind` gives the direction. */
  amount: number;
  balanceAfter: number;
  /** Why, e.g. `credit_pack`, `technical_audit`, `article_generated`. */
  reason: string;
  /** What it belongs to, e.g. a checkout session, audit or article id. */
  ref: string;
  /** The operator's own words for a grant (`operator_grant`: support, goodwill, development). */
  note?: string;
  createdAt: number;
}

/** A Stripe Checkout Session the service created, by session id. */
export interface CheckoutRecord {
  sessionId: string;
  /**
   * `upgrade`: the checkout of an upgrade a human finishes (domain/upgrades/): a plan for one of
   * the sandbox projects (`projectId`, `planId`) and/or a pack (`packId`), in one session.
   */
  kind: "subscription" | "credit_pack" | "upgrade";
  accountId: string;
  projectId: string | null;
  planId: PlanId | null;
  packId: string | null;
  url: string;
  createdAt: number;
  completedAt: number | null;
  /** The upgrade an `upgrade` checkout pays for. */
  upgradeId?: string;
}

/** The latest API-created subscription checkout of a project; reported as pending for 24 h. */
export interface PendingCheckoutRecord {
  sessionId: string;
  planId: PlanId;
  url: string;
  createdAt: number;
}

/** A Stripe event applied once; its presence makes a redelivery a no-op. */
export interface StripeEventRecord {
  id: string;
  type: string;
  processedAt: number;
  outcome: string;
}

/** What a job is paid with, kept on its record so a failure refunds exactly that. */
export type Funding =
  | { kind: "sandbox" }
  | { kind: "subscription" }
  | { kind: "credits"; amount: number; unit: string };

/** How often a scheduled audit may run (billing/catalog.ts `CADENCES`, most frequent first). */
export type Cadence = "daily" | "weekly" | "monthly";
