/**
 * An upgrade the agent pays itself: a credit pack bought with a machine payment (Machine Payments
 * Protocol, Stripe method; app/operations/upgrades.ts settles it through app/machine_payments.ts)
 * completes the account's upgrade in ONE atomic commit, with no human:
 *
 * - the pack's credits are granted once per PaymentIntent (ledger `grant`, reason
 *   `machine_payment`, ref the PaymentIntent; its ref marker and the payment record
 *   `["stripe_payments", pi]` are checked absent, so the same payment never grants twice), the
 *   payment is recorded as a pack payment (refunds and disputes take credits back as for packs)
 *   and `credits.updated` is sent;
 * - the upgrade completes exactly as the webhook's does (`completeUpgrade`, payment.ts): sandbox
 *   projects become live projects with their history, the account is upgraded, the upgrade is
 *   `paid` (its live key is claimed once, by `GET /v1/upgrades/{id}`), `account.upgraded` is sent.
 *
 * The account's pending upgrade, if any, is the one paid (its user code stops working); else a
 * new upgrade is created already paid.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import {
  ApiError,
  atomic,
  type Deps,
  keys,
  newId,
  read,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import type { AccountRecord } from "../identity/types.ts";
import { addCredit, type CreditPack, MACHINE_PAYMENT, recordPackPayment } from "../billing/mod.ts";
import { completeUpgrade, type StoredUpgrade } from "./payment.ts";
import type { UpgradeRecord } from "./types.ts";
import { UPGRADE_RECORD_TTL_MS, upgradeStatus } from "./upgrades.ts";

export interface MachineUpgradeInput {
  accountId: string;
  /** The key that paid (recorded as the upgrade's `startedBy` when it creates one). */
  keyId: string | null;
  pack: CreditPack;
  /** The Stripe PaymentIntent the payment settled as (the receipt's reference). */
  paymentIntentId: string;
  challengeId: string;
}

export type MachineUpgradeOutcome =
  /** The account is upgraded; `created`: a new upgrade (else the pending one was paid). */
  | { kind: "upgraded"; upgrade: UpgradeRecord; created: boolean; openSessionId: string | null }
  /** This PaymentIntent was granted before: nothing changed. */
  | { kind: "used" }
  /** The account was upgraded meanwhile: the payment's credits were granted, nothing else. */
  | { kind: "credited"; balance: number };

/** Applies a settled machine payment for `pack` as the account's upgrade (module doc). */
export function upgradeByMachinePayment(
  deps: Deps,
  input: MachineUpgradeInput,
): Promise<MachineUpgradeOutcome> {
  const { kv, clock } = deps;
  const { accountId, pack, paymentIntentId } = input;
  return atomically<MachineUpgradeOutcome>(kv, async () => {
    const now = clock.now();
    const [accountEntry, pendingEntry, balance, marker, payment] = await readMany(kv, [
      keys.account(accountId),
      keys.upgradePending(accountId),
      keys.balance(accountId),
      keys.ledgerRef(accountId, "grant", paymentIntentId),
      keys.stripePayment(paymentIntentId),
    ]);
    const account = accountEntry.value;
    if (!account) throw new ApiError("unauthorized", "Unknown account");
    if (marker.value !== null || payment.value !== null) {
      return { op: atomic(kv).check(marker, payment), result: { kind: "used" } };
    }
    const op = atomic(kv).check(payment, pendingEntry);
    const entry = addCredit(op, balance, "grant", {
      accountId,
      amount: pack.credits,
      reason: MACHINE_PAYMENT,
      ref: paymentIntentId,
      now,
    });
    recordPackPayment(op, {
      paymentIntentId,
      accountId,
      sessionId: input.challengeId,
      packId: pack.id,
      credits: pack.credits,
      amount: pack.usd * 100,
      currency: "usd",
    }, now);
    recordEvent(op, deps.queue, {
      accountId,
      event: "credits.updated",
      data: { pack_id: pack.id, credits_added: pack.credits, balance_credits: entry.balanceAfter },
      now,
    });
    if (account.upgradedAt) {
      op.check(accountEntry);
      return { op, result: { kind: "credited", balance: entry.balanceAfter } };
    }

    // The pending upgrade, when there is one still open; else a new one.
    let upgradeEntry: StoredUpgrade | null = null;
    if (pendingEntry.value) {
      const pending = await read(kv, keys.upgrade(accountId, pendingEntry.value));
      if (pending.value && upgradeStatus(pending.value, now) === "pending") {
        upgradeEntry = pending as StoredUpgrade;
      }
    }
    const created = upgradeEntry === null;
    if (!upgradeEntry) {
      const upgrade: UpgradeRecord = {
        id: newId("upg", now),
        accountId,
        startedBy: input.keyId ?? "",
        status: "pending",
        codeDigest: "",
        createdAt: now,
        expiresAt: now,
        browserDigest: null,
        checkout: null,
        paidAt: null,
        result: null,
        claimedAt: null,
        claimedBy: null,
        liveKeyId: null,
      };
      op.set(keys.upgradeOwner(upgrade.id), accountId, { expireIn: UPGRADE_RECORD_TTL_MS });
      // Never stored as pending: `completeUpgrade` checks it absent and writes it paid.
      upgradeEntry = {
        key: keys.upgrade(accountId, upgrade.id),
        value: upgrade,
        versionstamp: null,
      };
    }
    const paid = await completeUpgrade(deps, op, {
      upgradeEntry,
      accountEntry: accountEntry as Deno.KvEntry<AccountRecord>,
      customerId: null,
      planId: null,
      planProjectId: null,
      packId: pack.id,
      creditsAdded: pack.credits,
      machinePayment: { paymentIntentId, challengeId: input.challengeId },
      now,
    });
    return {
      op,
      result: {
        kind: "upgraded",
        upgrade: paid,
        created,
        openSessionId: created ? null : upgradeEntry.value.checkout?.sessionId ?? null,
      },
    };
  });
}
