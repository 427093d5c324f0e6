/**
 * Refunds and disputes of paid credit packs (`charge.refunded`, `charge.dispute.created`,
 * `charge.dispute.closed`). A pack's charge is found through the PaymentIntent recorded when the
 * pack was granted (`PackPaymentRecord`); charges of anything else are not ours to reverse.
 *
 * The rule: money returned to the customer takes back credits in the same proportion (a full
 * refund, the whole pack; half the money, half the credits), but only what is still on the
 * balance: the balance never goes negative, and credits already spent on audits and articles are
 * written off (recorded on the payment record, in the `credits.updated` event and in the log for
 * the operator). A dispute holds its share back while open; won (or closed as a warning), it is
 * given back; lost, it stays taken. Each event commits once, together with its event mark, the
 * ledger entry and the outbound `credits.updated`.
 */
import { atomically } from "../../kv/atomic.ts";
import {
  type Atomic,
  atomic,
  type Deps,
  keys,
  read,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import type { PackPaymentRecord } from "./types.ts";
import { addCredit, addDebit } from "./credits.ts";
import {
  count,
  type EventOutcome,
  idOf,
  logAnomaly,
  markEvent,
  str,
  type StripeEventLike,
} from "./stripe_common.ts";

/** Credits owed back for `part` of a payment of `whole` (minor units), rounded to the nearest. */
export function creditsFor(pack: PackPaymentRecord, part: number): number {
  if (pack.amount <= 0) return part > 0 ? pack.credits : 0;
  return Math.round(pack.credits * Math.min(part, pack.amount) / pack.amount);
}

/** Credits already owed back by open or lost disputes. */
function disputeDue(pack: PackPaymentRecord): number {
  return Object.values(pack.disputes).reduce((n, d) => n + (d.status === "won" ? 0 : d.due), 0);
}

interface Reversal {
  /** Credits owed back by this event. */
  due: number;
  /** Of those, taken from the balance. */
  taken: number;
  /** Of those, already spent. */
  writtenOff: number;
}

/** `charge.refunded`: `amount_refunded` is cumulative, so partial refunds add up exactly. */
export function applyChargeRefunded(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const charge = event.data.object;
  const paymentIntentId = idOf(charge.payment_intent);
  const refunded = count(charge.amount_refunded);
  if (!paymentIntentId || refunded === null) return Promise.resolve("ignored");
  return reverse(deps, event, paymentIntentId, (pack) => {
    const owed = Math.min(creditsFor(pack, refunded), pack.credits - disputeDue(pack));
    const due = Math.max(0, owed - pack.refundDue);
    return {
      due,
      reason: "pack_refunded",
      update: (p, r) => ({ ...p, refundDue: p.refundDue + r.due }),
    };
  });
}

/** `charge.dispute.created`: the disputed share is held back while the dispute is open. */
export function applyDisputeCreated(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const dispute = event.data.object;
  const disputeId = str(dispute.id);
  const paymentIntentId = idOf(dispute.payment_intent);
  const amount = count(dispute.amount);
  if (!disputeId || !paymentIntentId || amount === null) return Promise.resolve("ignored");
  return reverse(deps, event, paymentIntentId, (pack) => {
    if (pack.disputes[disputeId]) return "dispute_already_applied";
    const room = pack.credits - pack.refundDue - disputeDue(pack);
    return {
      due: Math.max(0, Math.min(creditsFor(pack, amount), room)),
      reason: "pack_disputed",
      update: (p, r) => ({
        ...p,
        disputes: { ...p.disputes, [disputeId]: { due: r.due, taken: r.taken, status: "open" } },
      }),
    };
  });
}

/**
 * `charge.dispute.closed`: `won` (and `warning_closed`, an inquiry that never became a
 * chargeback) gives back what the dispute took; `lost` keeps it.
 */
export function applyDisputeClosed(deps: Deps, event: StripeEventLike): Promise<EventOutcome> {
  const dispute = event.data.object;
  const disputeId = str(dispute.id);
  const paymentIntentId = idOf(dispute.payment_intent);
  const status = str(dispute.status);
  if (!disputeId || !paymentIntentId || !status) return Promise.resolve("ignored");
  return onPackPayment(
    deps,
    event,
    paymentIntentId,
    async ({ op, pack, payEntry, now, finish }) => {
      const { kv } = deps;
      const held = pack.disputes[disputeId];
      if (!held) {
        logAnomaly("dispute closed that was never opened here", event, { dispute_id: disputeId });
        return finish("ignored");
      }
      if (held.status !== "open") return finish("dispute_already_closed");
      if (status === "lost") {
        op.set(payEntry.key, {
          ...pack,
          disputes: { ...pack.disputes, [disputeId]: { ...held, status: "lost" } },
          updatedAt: now,
        });
        return finish("dispute_lost");
      }
      const balance = await read(kv, keys.balance(pack.accountId));
      let balanceAfter = balance.value?.credits ?? 0;
      if (held.taken > 0) {
        balanceAfter = addCredit(op, balance, "grant", {
          accountId: pack.accountId,
          amount: held.taken,
          reason: "dispute_won",
          ref: `dispute:${disputeId}`,
          now,
        }).balanceAfter;
      }
      op.set(
        payEntry.key,
        {
          ...pack,
          disputes: { ...pack.disputes, [disputeId]: { ...held, status: "won" } },
          taken: pack.taken - held.taken,
          writtenOff: pack.writtenOff - (held.due - held.taken),
          updatedAt: now,
        } satisfies PackPaymentRecord,
      );
      recordEvent(op, deps.queue, {
        accountId: pack.accountId,
        event: "credits.updated",
        data: {
          pack_id: pack.packId,
          credits_added: held.taken,
          balance_credits: balanceAfter,
          stripe_event: event.type,
        },
        now,
      });
      return finish("credits_restored");
    },
  );
}

type Plan =
  | {
    due: number;
    reason: string;
    update: (pack: PackPaymentRecord, r: Reversal) => PackPaymentRecord;
  }
  | EventOutcome;

/**
 * One commit: event mark + as much of `due` as the balance holds taken back (a debit ledger
 * entry) + the payment record + `credits.updated` with the credits taken (negative) and written
 * off. A charge the service has no pack payment for is not ours: 200 `ignored`, nothing marked.
 */
function reverse(
  deps: Deps,
  event: StripeEventLike,
  paymentIntentId: string,
  plan: (pack: PackPaymentRecord) => Plan,
): Promise<EventOutcome> {
  return onPackPayment(
    deps,
    event,
    paymentIntentId,
    async ({ op, pack, payEntry, now, finish }) => {
      const { kv } = deps;
      const p = plan(pack);
      if (typeof p === "string") return finish(p);
      if (p.due === 0) return finish("nothing_to_reverse");

      const balance = await read(kv, keys.balance(pack.accountId));
      const available = balance.value?.credits ?? 0;
      const taken = Math.min(p.due, available);
      const r: Reversal = { due: p.due, taken, writtenOff: p.due - taken };
      const balanceAfter = taken > 0
        ? addDebit(op, balance, {
          accountId: pack.accountId,
          amount: taken,
          reason: p.reason,
          ref: event.id,
          now,
        }).balanceAfter
        : available;
      op.set(
        payEntry.key,
        {
          ...p.update(pack, r),
          taken: pack.taken + taken,
          writtenOff: pack.writtenOff + r.writtenOff,
          updatedAt: now,
        } satisfies PackPaymentRecord,
      );
      if (r.writtenOff > 0) {
        logAnomaly("credits already spent; written off", event, {
          account_id: pack.accountId,
          pack_id: pack.packId,
          written_off: r.writtenOff,
        });
      }
      recordEvent(op, deps.queue, {
        accountId: pack.accountId,
        event: "credits.updated",
        data: {
          pack_id: pack.packId,
          credits_added: taken === 0 ? 0 : -taken,
          balance_credits: balanceAfter,
          written_off: r.writtenOff,
          stripe_event: event.type,
        },
        now,
      });
      return finish(p.reason === "pack_refunded" ? "credits_reversed" : "credits_held");
    },
  );
}

interface PackPaymentCommit {
  op: Atomic;
  pack: PackPaymentRecord;
  payEntry: Deno.KvEntryMaybe<PackPaymentRecord>;
  now: number;
  /** Marks the event applied with `outcome` in the same commit and ends the attempt. */
  finish: (outcome: EventOutcome) => { op: Atomic; result: EventOutcome };
}

/**
 * The one read-check-commit of an event on a pack payment: the event's mark and the payment
 * record are read and checked together, a repeated event is `duplicate_event`, a charge the
 * service has no pack payment for is not ours (`ignored`, nothing marked); `apply` adds its
 * writes to the same commit and ends with `finish`.
 */
function onPackPayment(
  deps: Deps,
  event: StripeEventLike,
  paymentIntentId: string,
  apply: (c: PackPaymentCommit) => Promise<{ op: Deno.AtomicOperation; result: EventOutcome }>,
): Promise<EventOutcome> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const [mark, payEntry] = await readMany(kv, [
      keys.stripeEvent(event.id),
      keys.stripePayment(paymentIntentId),
    ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const pack = payEntry.value;
    if (!pack) return { op: kv.atomic().check(mark), result: "ignored" as const };
    const now = clock.now();
    const op = atomic(kv).check(mark, payEntry);
    const finish = (outcome: EventOutcome) => {
      markEvent(op, event, outcome, now);
      return { op, result: outcome };
    };
    return await apply({ op, pack, payEntry, now, finish });
  });
}
