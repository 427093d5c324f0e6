/**
 * What a settled machine payment (an agent paying a job's 402 itself, Machine Payments Protocol,
 * Stripe method) leaves in the books: its credits granted on the ledger (reason
 * `machine_payment`, ref the Stripe PaymentIntent) and the payment recorded as a pack payment
 * (`["stripe_payments", pi]`, pack id `machine_payment`), in one commit. The job it paid for then
 * debits those credits like any other, so a failed job is refunded to the credit balance, and a
 * refund or dispute of the PaymentIntent at Stripe takes credits back as it does for packs
 * (pack_reversals.ts).
 *
 * A PaymentIntent is granted once: the ledger's reference marker and the payment record are both
 * checked absent in the commit, so a credential that comes back (another request, another
 * process) finds them and grants nothing.
 */
import { atomically } from "../../kv/atomic.ts";
import { atomic, type Deps, keys, readMany } from "../platform/mod.ts";
import { addCredit } from "./credits.ts";
import { recordPackPayment } from "./pack_payment.ts";

/** The pack id machine payments are recorded under (`credits.updated` events name it too). */
export const MACHINE_PAYMENT = "machine_payment";

export interface MachinePaymentInput {
  accountId: string;
  /** The Stripe PaymentIntent the payment settled as (the receipt's reference). */
  paymentIntentId: string;
  /** The payment challenge it answered. */
  challengeId: string;
  /** Credits bought: the price of the unit it paid for (1 credit = 1 USD). */
  credits: number;
  /** What was paid, in the currency's minor unit. */
  amount: number;
  currency: string;
}

/**
 * Grants a settled machine payment's credits once per PaymentIntent. `applied: false` when that
 * PaymentIntent was granted before (nothing changes).
 */
export function grantMachinePayment(
  deps: Deps,
  input: MachinePaymentInput,
): Promise<{ applied: boolean; balance: number }> {
  const { kv, clock } = deps;
  return atomically<{ applied: boolean; balance: number }>(kv, async () => {
    const [balance, marker, payment] = await readMany(kv, [
      keys.balance(input.accountId),
      keys.ledgerRef(input.accountId, "grant", input.paymentIntentId),
      keys.stripePayment(input.paymentIntentId),
    ]);
    if (marker.value !== null || payment.value !== null) {
      return {
        op: kv.atomic().check(marker, payment),
        result: { applied: false, balance: balance.value?.credits ?? 0 },
      };
    }
    const now = clock.now();
    const op = atomic(kv).check(payment);
    const entry = addCredit(op, balance, "grant", {
      accountId: input.accountId,
      amount: input.credits,
      reason: MACHINE_PAYMENT,
      ref: input.paymentIntentId,
      now,
    });
    recordPackPayment(op, {
      paymentIntentId: input.paymentIntentId,
      accountId: input.accountId,
      sessionId: input.challengeId,
      packId: MACHINE_PAYMENT,
      credits: input.credits,
      amount: input.amount,
      currency: input.currency,
    }, now);
    return { op, result: { applied: true, balance: entry.balanceAfter } };
  });
}
