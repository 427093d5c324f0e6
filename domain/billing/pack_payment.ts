/**
 * The record of a paid credit pack, by its Stripe PaymentIntent: written once when the pack's
 * credits are granted (a Checkout pack, an upgrade's pack, a machine payment), so a later refund
 * or dispute of that charge takes back what it granted (pack_reversals.ts). One writer for all of
 * them, so the record's shape and how long it is kept cannot drift apart.
 *
 * @example
 * ```ts
 * import { atomic, type Deps } from "../platform/mod.ts";
 * import { recordPackPayment } from "./pack_payment.ts";
 * declare const deps: Deps;
 * const op = atomic(deps.kv);
 * recordPackPayment(op, {
 *   paymentIntentId: "pi_123",
 *   accountId: "acct_1",
 *   sessionId: "cs_1",
 *   packId: "pack_500",
 *   credits: 500,
 *   amount: 50000,
 *   currency: "usd",
 * }, Date.now());
 * ```
 *
 * @module
 */
import { type Atomic, keys } from "../platform/mod.ts";
import type { PackPaymentRecord } from "./types.ts";

/** Refunds and disputes come within Stripe's windows (120 days for disputes, more for some). */
const PAYMENT_TTL_MS = 200 * 86_400_000;

/** What the caller knows of the payment; the reversal counters start at zero. */
export type PackPayment = Pick<
  PackPaymentRecord,
  "paymentIntentId" | "accountId" | "sessionId" | "packId" | "credits" | "amount" | "currency"
>;

/** Adds the payment's record to `op` (the same commit as the credits it granted). */
export function recordPackPayment(op: Atomic, payment: PackPayment, now: number): void {
  const record: PackPaymentRecord = {
    ...payment,
    refundDue: 0,
    disputes: {},
    taken: 0,
    writtenOff: 0,
    createdAt: now,
    updatedAt: now,
  };
  op.set(keys.stripePayment(payment.paymentIntentId), record, { expireIn: PAYMENT_TTL_MS });
}
