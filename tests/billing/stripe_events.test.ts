/**
 * Event handling at the domain level, where the outbox can be read before any listener drains it:
 * which events are recorded for delivery, and the first-period rule in both arrival orders.
 */
import assert from "node:assert/strict";
import { getBalance } from "../../domain/billing/credits.ts";
import { addMonthsUtc, applyStripeEvent } from "../../domain/billing/stripe_events.ts";
import type { SubscriptionRecord } from "../../domain/billing/types.ts";
import { keys } from "../../kv/keys.ts";
import { paidInvoice, stripeEvent } from "./fake_stripe.ts";
import { harness, START } from "./helpers.ts";

const DAY = 86_400_000;

function subMeta(accountId: string, projectId: string, plan = "basic") {
  return {
    service: "serpwright",
    kind: "subscription",
    account_id: accountId,
    project_id: projectId,
    plan_id: plan,
  };
}

Deno.test("checkout first, then invoice.paid(subscription_create): one activation, one event", async () => {
  const h = await harness();
  try {
    const { accountId, projectId } = await h.liveProject();
    const session = await h.checkout(subMeta(accountId, projectId, "pro"), {
      subscription: "sub_A",
    });
    const outcome = await applyStripeEvent(
      h.deps,
      stripeEvent("checkout.session.completed", session),
    );
    assert.equal(outcome, "activated");
    const events = await h.outbox();
    assert.equal(events.length, 1);
    assert.equal(events[0].event, "subscription.updated");
    assert.equal(events[0].accountId, accountId);
    assert.deepEqual(events[0].data, {
      project_id: projectId,
      status: "active",
      plan: "pro",
      paid_until: new Date(addMonthsUtc(START, 1)).toISOString(),
      first_activation: true,
      stripe_event: "checkout.session.completed",
    });

    const invoice = paidInvoice({
      subscription: "sub_A",
      metadata: subMeta(accountId, projectId, "pro"),
      billingReason: "subscription_create",
      periodStartMs: START - 5000,
      periodEndMs: addMonthsUtc(START - 5000, 1),
    });
    assert.equal(
      await applyStripeEvent(h.deps, stripeEvent("invoice.paid", invoice)),
      "first_period_already_applied",
    );
    assert.equal((await h.outbox()).length, 1, "no second event for the first period");
    const sub = (await h.deps.kv.get<SubscriptionRecord>(keys.subscription(projectId))).value!;
    assert.equal(sub.paidUntil, addMonthsUtc(START, 1));
    assert.equal(sub.stripeSubscriptionId, "sub_A");

    // The renewal is reported with first_activation false and the Stripe event name.
    h.clock.advance(31 * DAY);
    const renewal = paidInvoice({
      subscription: "sub_A",
      metadata: subMeta(accountId, projectId, "pro"),
      billingReason: "subscription_cycle",
      periodStartMs: sub.paidUntil,
      periodEndMs: addMonthsUtc(sub.paidUntil, 1),
    });
    assert.equal(await applyStripeEvent(h.deps, stripeEvent("invoice.paid", renewal)), "renewed");
    const after = await h.outbox();
    assert.equal(after.length, 2);
    const renewed = after.find((e) => e.data.first_activation === false)!;
    assert.deepEqual(renewed.data, {
      project_id: projectId,
      status: "active",
      plan: "pro",
      paid_until: new Date(addMonthsUtc(sub.paidUntil, 1)).toISOString(),
      first_activation: false,
      stripe_event: "invoice.paid",
    });
  } finally {
    h.close();
  }
});

Deno.test("invoice.paid(subscription_create) first, then checkout: the invoice activates, checkout is a no-op", async () => {
  const h = await harness();
  try {
    const { accountId, projectId } = await h.liveProject();
    const session = await h.checkout(subMeta(accountId, projectId), { subscription: "sub_B" });
    const periodEnd = Date.parse("2026-12-23T11:59:00Z");
    const invoice = paidInvoice({
      subscription: "sub_B",
      metadata: subMeta(accountId, projectId),
      billingReason: "subscription_create",
      periodStartMs: START,
      periodEndMs: periodEnd,
    });
    assert.equal(await applyStripeEvent(h.deps, stripeEvent("invoice.paid", invoice)), "activated");
    assert.equal(
      await applyStripeEvent(h.deps, stripeEvent("checkout.session.completed", session)),
      "first_period_already_applied",
    );
    const events = await h.outbox();
    assert.equal(events.length, 1);
    assert.equal(events[0].data.first_activation, true);
    assert.equal(events[0].data.stripe_event, "invoice.paid");
    assert.equal(events[0].data.paid_until, new Date(periodEnd).toISOString());
    assert.equal(await h.deps.kv.get(keys.pendingCheckout(projectId)).then((e) => e.value), null);
  } finally {
    h.close();
  }
});

Deno.test("a pack payment records credits.updated with the credits added and the new balance", async () => {
  const h = await harness();
  try {
    const { accountId } = await h.liveProject();
    const meta = { service: "serpwright", kind: "credit_pack", account_id: accountId };
    await applyStripeEvent(
      h.deps,
      stripeEvent("checkout.session.completed", await h.checkout({ ...meta, pack_id: "pack_500" })),
    );
    h.clock.advance(1000); // outbox ids are time-ordered
    await applyStripeEvent(
      h.deps,
      stripeEvent(
        "checkout.session.completed",
        await h.checkout({ ...meta, pack_id: "pack_2000" }),
      ),
    );
    assert.equal(await getBalance(h.deps.kv, accountId), 2700);
    const events = (await h.outbox()).map((e) => [e.event, e.data]);
    assert.deepEqual(events, [
      ["credits.updated", { pack_id: "pack_500", credits_added: 500, balance_credits: 500 }],
      ["credits.updated", { pack_id: "pack_2000", credits_added: 2200, balance_credits: 2700 }],
    ]);
  } finally {
    h.close();
  }
});

Deno.test("concurrent redelivery of a subscription event: one activation, one outbox event", async () => {
  const h = await harness();
  try {
    const { accountId, projectId } = await h.liveProject();
    const event = stripeEvent(
      "checkout.session.completed",
      await h.checkout(subMeta(accountId, projectId), { subscription: "sub_C" }),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => applyStripeEvent(h.deps, event)),
    );
    assert.deepEqual(outcomes.sort(), ["activated", ...Array(9).fill("duplicate_event")]);
    assert.equal((await h.outbox()).length, 1);
  } finally {
    h.close();
  }
});

Deno.test("a renewal whose invoice lacks metadata is matched through the subscription index", async () => {
  const h = await harness();
  try {
    const { accountId, projectId } = await h.liveProject();
    await applyStripeEvent(
      h.deps,
      stripeEvent(
        "checkout.session.completed",
        await h.checkout(subMeta(accountId, projectId), { subscription: "sub_D" }),
      ),
    );
    const before = (await h.deps.kv.get<SubscriptionRecord>(keys.subscription(projectId))).value!;
    const renewal = paidInvoice({
      subscription: "sub_D",
      metadata: null,
      billingReason: "subscription_cycle",
      periodStartMs: before.paidUntil,
      periodEndMs: before.paidUntil + 30 * DAY,
    });
    assert.equal(await applyStripeEvent(h.deps, stripeEvent("invoice.paid", renewal)), "renewed");
    const after = (await h.deps.kv.get<SubscriptionRecord>(keys.subscription(projectId))).value!;
    assert.equal(after.paidUntil, before.paidUntil + 30 * DAY);
    // An invoice of a subscription the service never saw is not ours.
    const foreign = paidInvoice({
      subscription: "sub_unknown",
      metadata: null,
      billingReason: "subscription_cycle",
      periodStartMs: START,
      periodEndMs: START + 30 * DAY,
    });
    assert.equal(await applyStripeEvent(h.deps, stripeEvent("invoice.paid", foreign)), "ignored");
  } finally {
    h.close();
  }
});

Deno.test("a second subscription paid for an already active project does not stack periods", async () => {
  const h = await harness();
  try {
    const { accountId, projectId } = await h.liveProject();
    const meta = subMeta(accountId, projectId);
    await applyStripeEvent(
      h.deps,
      stripeEvent("checkout.session.completed", await h.checkout(meta, { subscription: "sub_E1" })),
    );
    const before = (await h.deps.kv.get<SubscriptionRecord>(keys.subscription(projectId))).value!;
    const outcome = await applyStripeEvent(
      h.deps,
      stripeEvent("checkout.session.completed", await h.checkout(meta, { subscription: "sub_E2" })),
    );
    assert.equal(outcome, "duplicate_subscription");
    const after = (await h.deps.kv.get<SubscriptionRecord>(keys.subscription(projectId))).value!;
    assert.deepEqual(after, before);
    assert.equal((await h.outbox()).length, 1);
  } finally {
    h.close();
  }
});

Deno.test("addMonthsUtc clamps to the month's last day as Stripe bills", () => {
  assert.equal(
    new Date(addMonthsUtc(Date.parse("2027-01-31T10:00:00Z"), 1)).toISOString(),
    "2027-02-28T10:00:00.000Z",
  );
  assert.equal(
    new Date(addMonthsUtc(Date.parse("2026-12-15T00:00:00Z"), 1)).toISOString(),
    "2027-01-15T00:00:00.000Z",
  );
});
