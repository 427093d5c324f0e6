/**
 * The persisted shapes of upgrades (a leaf: the key table imports only this file).
 *
 * An upgrade has the shape of an OAuth device authorization (RFC 8628): an agent holding a
 * sandbox key starts it and gets a short user code; a human types the code (or opens the link
 * that carries it), chooses what to pay for and pays at Stripe Checkout; Stripe's webhook moves
 * the account to the live side; the agent's next poll claims the live key, once.
 *
 * @module
 */
import type { PlanId } from "../billing/types.ts";

/** What a sandbox project is funded with once live: a monthly plan, or credits per unit. */
export type ProjectFunding = "credits" | PlanId;

/** What the human chose to pay for: every sandbox project's funding, and an optional pack. */
export interface UpgradeChoice {
  projects: { projectId: string; funding: ProjectFunding }[];
  packId: string | null;
}

/** The stored state; `expired` is not stored, it is read from `expiresAt` (`upgradeStatus`). */
export type StoredUpgradeStatus = "pending" | "paid" | "claimed";

export interface UpgradeRecord {
  id: string;
  accountId: string;
  /** The key that started it (or last asked for a code). */
  startedBy: string;
  status: StoredUpgradeStatus;
  /** Keyed digest of the current user code (`codeDigest`); the code itself is never stored. */
  codeDigest: string;
  createdAt: number;
  /**
   * A pending upgrade ends here (30 minutes after its code was issued, pushed past the end of a
   * checkout the human opened). A payment that settles later still upgrades: Stripe took it.
   */
  expiresAt: number;
  /**
   * Digest of the page session that entered the code last (the human's browser cookie); the
   * choice, payment, success and reveal pages answer only that browser. Null before.
   */
  browserDigest: string | null;
  /** The Checkout Session the human opened, with what it pays for. */
  checkout: {
    sessionId: string;
    url: string;
    choice: UpgradeChoice;
    createdAt: number;
    expiresAt: number;
  } | null;
  paidAt: number | null;
  /** What the payment did, for the status, the success page and the event. */
  result: {
    /** Sandbox projects that became live projects. */
    projectIds: string[];
    planId: PlanId | null;
    planProjectId: string | null;
    packId: string | null;
    creditsAdded: number;
  } | null;
  claimedAt: number | null;
  /** `agent`: GET /v1/upgrades/{id}; `human`: the success page's reveal button. */
  claimedBy: "agent" | "human" | null;
  /** The live key the claim minted. */
  liveKeyId: string | null;
  /**
   * Set when the agent paid it itself (a credit pack, Machine Payments Protocol): the Stripe
   * PaymentIntent and the challenge it answered. Absent: a human paid at Checkout.
   */
  machinePayment?: { paymentIntentId: string; challengeId: string };
}

/** Where a user code leads. */
export interface UpgradeCodeTarget {
  accountId: string;
  upgradeId: string;
}
