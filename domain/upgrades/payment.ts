/**
 * A settled upgrade payment (Stripe's `checkout.session.completed` or
 * `checkout.session.async_payment_succeeded` for an upgrade session the service created, matched
 * by domain/billing/stripe_events.ts), applied in ONE atomic commit:
 *
 * - every sandbox project of the account becomes a live project (`sandbox: false`): its audits,
 *   articles, re-checks, schedules and share links are keyed by account and project, so they
 *   stay where they are and are now on the live side; the account's `sandboxProjects` counter
 *   goes down by as many, and `upgradedAt` is set;
 * - the chosen plan activates that project's subscription as a subscription checkout does
 *   (`subscription.updated`, `first_activation: true`), and the Stripe subscription is indexed
 *   for its renewals;
 * - the chosen pack's credits land on the balance as a pack checkout does (`credits.updated`);
 * - the upgrade becomes `paid`; its user code and the account's pending marker are deleted;
 * - `account.upgraded` goes to the outbox; the Stripe event is marked applied.
 *
 * The trial allows one sandbox project, so the commit stays far below the store's 10 checks.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import {
  type Atomic,
  atomic,
  type Deps,
  iso,
  keys,
  list,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import type { AccountRecord } from "../identity/types.ts";
import type { CheckoutRecord, PlanId, SubscriptionRecord } from "../billing/types.ts";
import {
  addCredit,
  addMonthsUtc,
  emitSubscriptionUpdated,
  type EventOutcome,
  findPack,
  isActive,
  logAnomaly,
  markEvent,
  recordPackPayment,
  type StripeEventLike,
} from "../billing/mod.ts";
import type { UpgradeRecord } from "./types.ts";
import { UPGRADE_RECORD_TTL_MS } from "./upgrades.ts";

export interface UpgradePayment {
  checkout: CheckoutRecord;
  stripeSubscriptionId: string | null;
  customerId: string | null;
  /** Payment mode only (a pack alone): the payment its refunds and disputes are measured on. */
  paymentIntentId: string | null;
  amount: number;
}

/** Applies a matched, paid upgrade session once (module doc). */
export function applyUpgradePayment(
  deps: Deps,
  event: StripeEventLike,
  p: UpgradePayment,
): Promise<EventOutcome> {
  const { kv, clock } = deps;
  const c = p.checkout;
  const accountId = c.accountId;
  const upgradeId = c.upgradeId ?? "-";
  return atomically(kv, async () => {
    const now = clock.now();
    const [mark, upgradeEntry, accountEntry, subEntry, balance, granted, checkoutEntry] =
      await readMany(kv, [
        keys.stripeEvent(event.id),
        keys.upgrade(accountId, upgradeId),
        keys.account(accountId),
        keys.subscription(c.projectId ?? "-"),
        keys.balance(accountId),
        keys.ledgerRef(accountId, "grant", c.sessionId),
        keys.checkout(c.sessionId),
      ]);
    if (mark.value) return { op: kv.atomic().check(mark), result: "duplicate_event" as const };
    const op = atomic(kv).check(mark);
    const finish = (outcome: EventOutcome) => {
      markEvent(op, event, outcome, now);
      return { op, result: outcome };
    };
    const upgrade = upgradeEntry.value;
    const account = accountEntry.value;
    if (!upgrade || !account) {
      logAnomaly("paid for an unknown upgrade or account", event, { upgrade_id: upgradeId });
      return finish("unknown_account");
    }
    if (upgrade.status !== "pending") {
      // Two sessions of one upgrade both paid (a choice changed while the first was open and its
      // expiry at Stripe failed): the first one upgraded; this money goes back by hand.
      logAnomaly("second payment of an upgrade; refund it", event, {
        upgrade_id: upgradeId,
        session_id: c.sessionId,
      });
      return finish("upgrade_already_paid");
    }

    let planApplied = false;
    if (c.planId && c.projectId) {
      const sub = subEntry.value;
      op.check(subEntry);
      if (sub && isActive(sub, now) && sub.stripeSubscriptionId !== p.stripeSubscriptionId) {
        logAnomaly("upgrade plan paid for a project already subscribed; refund it", event, {
          project_id: c.projectId,
        });
      } else {
        const record: SubscriptionRecord = {
          projectId: c.projectId,
          accountId,
          plan: c.planId,
          paidUntil: Math.max(addMonthsUtc(now, 1), sub && isActive(sub, now) ? sub.paidUntil : 0),
          stripeSubscriptionId: p.stripeSubscriptionId,
          stripeCustomerId: p.customerId,
          activatedAt: now,
          updatedAt: now,
        };
        op.set(keys.subscription(c.projectId), record).delete(keys.pendingCheckout(c.projectId));
        if (p.stripeSubscriptionId) {
          op.set(keys.stripeSubscription(p.stripeSubscriptionId), {
            accountId,
            projectId: c.projectId,
          });
        }
        emitSubscriptionUpdated(deps, op, event, record, true, now);
        planApplied = true;
      }
    }

    let creditsAdded = 0;
    const pack = c.packId ? findPack(c.packId) : undefined;
    if (pack && !granted.value) {
      const entry = addCredit(op, balance, "grant", {
        accountId,
        amount: pack.credits,
        reason: "credit_pack",
        ref: c.sessionId,
        now,
      });
      creditsAdded = pack.credits;
      if (p.paymentIntentId) {
        op.check({ key: keys.stripePayment(p.paymentIntentId), versionstamp: null });
        recordPackPayment(op, {
          paymentIntentId: p.paymentIntentId,
          accountId,
          sessionId: c.sessionId,
          packId: pack.id,
          credits: pack.credits,
          amount: p.amount,
          currency: "usd",
        }, now);
      }
      recordEvent(op, deps.queue, {
        accountId,
        event: "credits.updated",
        data: {
          pack_id: pack.id,
          credits_added: pack.credits,
          balance_credits: entry.balanceAfter,
        },
        now,
      });
    }

    await completeUpgrade(deps, op, {
      upgradeEntry: upgradeEntry as Deno.KvEntry<UpgradeRecord>,
      accountEntry: accountEntry as Deno.KvEntry<AccountRecord>,
      customerId: p.customerId,
      planId: planApplied ? c.planId : null,
      planProjectId: planApplied ? c.projectId : null,
      packId: pack ? pack.id : null,
      creditsAdded,
      now,
    });
    if (checkoutEntry.value) {
      op.set(checkoutEntry.key, { ...checkoutEntry.value, completedAt: now });
    }
    return finish("upgraded");
  });
}

/** An upgrade as read (or, `versionstamp: null`, one this commit creates). */
export interface StoredUpgrade {
  key: Deno.KvKey;
  value: UpgradeRecord;
  versionstamp: string | null;
}

/** What a paid upgrade did besides moving the account, for its record and `account.upgraded`. */
export interface UpgradeCompletion {
  upgradeEntry: StoredUpgrade;
  accountEntry: Deno.KvEntry<AccountRecord>;
  /** The Stripe customer that paid (a Checkout), or null (a machine payment has none of ours). */
  customerId: string | null;
  planId: PlanId | null;
  planProjectId: string | null;
  packId: string | null;
  creditsAdded: number;
  /** The machine payment that paid it, when an agent paid (app/operations/upgrades.ts). */
  machinePayment?: { paymentIntentId: string; challengeId: string };
  now: number;
}

/**
 * THE completion of a paid upgrade, added to the caller's commit (the webhook's Checkout session,
 * or an agent's machine payment for a pack): every sandbox project becomes a live project (history
 * kept), the account is marked upgraded, the upgrade becomes `paid` (its user code and the
 * account's pending marker deleted) and `account.upgraded` goes to the outbox. The upgrade and the
 * account entries are checked, and so is each moved project (a project created meanwhile makes
 * the commit fail and retry with it). Returns the paid upgrade.
 */
export async function completeUpgrade(
  deps: Deps,
  op: Atomic,
  c: UpgradeCompletion,
): Promise<UpgradeRecord> {
  const { kv } = deps;
  const { upgradeEntry, accountEntry, now } = c;
  const upgrade = upgradeEntry.value;
  const account = accountEntry.value;
  const accountId = account.id;
  op.check(upgradeEntry, accountEntry);
  // Every sandbox project moves to the live side (the account entry is checked, so a project
  // created meanwhile makes this commit fail and retry with it).
  const moved: string[] = [];
  for await (const e of list(kv, { prefix: keys.projectsOfAccount(accountId) })) {
    if (!e.value.sandbox) continue;
    op.check(e).set(e.key, { ...e.value, sandbox: false });
    moved.push(e.value.id);
  }
  op.set(accountEntry.key, {
    ...account,
    sandboxProjects: Math.max(0, account.sandboxProjects - moved.length),
    upgradedAt: account.upgradedAt ?? now,
    stripeCustomerId: account.stripeCustomerId ?? c.customerId,
  });

  const paid: UpgradeRecord = {
    ...upgrade,
    status: "paid",
    paidAt: now,
    result: {
      projectIds: moved,
      planId: c.planId,
      planProjectId: c.planProjectId,
      packId: c.packId,
      creditsAdded: c.creditsAdded,
    },
    ...(c.machinePayment ? { machinePayment: c.machinePayment } : {}),
  };
  op.set(upgradeEntry.key, paid, { expireIn: UPGRADE_RECORD_TTL_MS })
    .delete(keys.upgradePending(accountId));
  if (upgrade.codeDigest) op.delete(keys.upgradeCode(upgrade.codeDigest));
  recordEvent(op, deps.queue, {
    accountId,
    event: "account.upgraded",
    data: {
      upgrade_id: upgrade.id,
      status: "paid",
      project_ids: moved,
      plan: c.planId,
      plan_project_id: c.planProjectId,
      pack_id: c.packId,
      credits_added: c.creditsAdded,
      paid_at: iso(now),
      claim: `GET /v1/upgrades/${upgrade.id}`,
    },
    now,
  });
  return paid;
}
