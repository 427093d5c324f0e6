/** Stored shapes. Times are epoch milliseconds inside; the routes turn them into ISO strings. */

export type KeyMode = "sandbox" | "live";

export interface AccountRecord {
  id: string;
  email: string;
  emailVerified: boolean;
  companyName: string | null;
  origin: "agent" | "human";
  createdAt: number;
  projectsCount: number;
  sandboxProjects: number;
  /** Keys not revoked; capped at 5. */
  activeKeys: number;
  /**
   * When a paid upgrade moved the account to the live side (domain/upgrades/); absent or null
   * before. A sandbox key then opens no new sandbox project.
   */
  upgradedAt?: number | null;
  /**
   * The account's Stripe customer, created with its first checkout and kept, so every payment
   * and the Billing Portal (`POST /v1/billing-portal`) meet one customer.
   */
  stripeCustomerId?: string | null;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  hash: string;
  name: string;
  prefix: string;
  last4: string;
  mode: KeyMode;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

export interface SandboxUsage {
  audits: number;
  articles: number;
}

export type ProjectAccess = "sandbox" | "pending_payment" | "active";

export interface LatestAudit {
  audit_id: string;
  status: string;
  completed_at: string | null;
  score: number | null;
  summary: unknown;
}

export interface ProjectRecord {
  id: string;
  accountId: string;
  url: string;
  name: string;
  status: "setup" | "running";
  language: string;
  country: string;
  sandbox: boolean;
  createdAt: number;
  counts: { keywords: number; articles: number; audits: number };
  latestAudit: LatestAudit | null;
}

/** An event waiting in the outbox for fan-out to the account's webhook endpoints. */
export interface OutboxEvent {
  id: string;
  accountId: string;
  event: string;
  createdAt: number;
  data: Record<string, unknown>;
}

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
