/**
 * Issue 16: the payment events real merchants get, each against the fake Stripe over HTTP: a
 * forged or mismatching checkout grants nothing; a cancelled subscription stays active to its
 * paid period end; a failed renewal does not extend it; refunds and disputes of packs take back
 * what is unspent. Each event applies once, with its ledger entry and outbound event.
 */
import assert from "node:assert/strict";
import { debitCredits, listLedger } from "../../domain/billing/credits.ts";
import type { TestApp } from "../helpers/app.ts";
import { creditsShown } from "../helpers/credits.ts";
import { type Receiver, startReceiver } from "../webhooks/helpers.ts";
import {
  deletedSubscription,
  dispute,
  type FakeStripe,
  paidInvoice,
  paidSession,
  refundedCharge,
  stripeEvent,
} from "./fake_stripe.ts";
import { checkoutFor, liveAccount, newProject, postStripeEvent, withBilling } from "./helpers.ts";

const DAY = 86_400_000;

/** A receiver registered on the account, collecting what is delivered to it. */
async function listen(app: TestApp, key: string): Promise<Receiver> {
  const rx = startReceiver(() => new Response(null, { status: 204 }));
  const res = await app.req("POST", "/v1/webhooks", { key, body: { url: rx.url } });
  assert.equal(res.status, 201, res.text);
  return rx;
}

Deno.test("a signed checkout the service never created, or that does not match, grants nothing", () =>
  withBilling(async (app, fake) => {
    const { key, accountId } = await liveAccount(app);
    const meta = { service: "serpwright", kind: "credit_pack", account_id: accountId };
    // The review's forged event: unknown session, amount_total 1, pack_2000.
    const forged = paidSession({ ...meta, pack_id: "pack_2000" }, {
      amount_total: 1,
      amount_subtotal: 1,
    });
    const genuine = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
      pack_id: "pack_2000",
    });
    const variants = [
      forged,
      { ...genuine, amount_subtotal: 1, amount_total: 1 },
      { ...genuine, currency: "eur" },
      { ...genuine, metadata: { ...meta, pack_id: "pack_10000" } },
      { ...genuine, metadata: { ...meta, account_id: "acct_someone_else" } },
    ];
    for (const session of variants) {
      const res = await postStripeEvent(app, stripeEvent("checkout.session.completed", session));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.outcome, "unknown_checkout");
    }
    assert.equal(await creditsShown(app, key), 0);
    const ok = await postStripeEvent(app, stripeEvent("checkout.session.completed", genuine));
    assert.equal(ok.body.outcome, "credits_granted");
    assert.equal(await creditsShown(app, key), 2200);

    // An invoice of a subscription the service never activated, with copied metadata: nothing.
    const projectId = await newProject(app, key);
    const invoice = paidInvoice({
      subscription: "sub_forged",
      metadata: {
        service: "serpwright",
        kind: "subscription",
        account_id: accountId,
        project_id: projectId,
        plan_id: "pro",
      },
      billingReason: "subscription_create",
      periodStartMs: app.clock.now(),
      periodEndMs: app.clock.now() + 30 * DAY,
    });
    const res = await postStripeEvent(app, stripeEvent("invoice.paid", invoice));
    assert.equal(res.body.outcome, "unknown_checkout");
    const state = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key });
    assert.equal(state.body.status, "none");
  }));

/** A live project with a paid `basic` subscription, activated through the API and the webhook. */
async function activeSubscription(app: TestApp, fake: FakeStripe) {
  const { key } = await liveAccount(app);
  const projectId = await newProject(app, key);
  const rx = await listen(app, key);
  const session = await checkoutFor(app, fake, key, "/v1/subscriptions", {
    project_id: projectId,
    plan_id: "basic",
  });
  const res = await postStripeEvent(app, stripeEvent("checkout.session.completed", session));
  assert.equal(res.body.outcome, "activated");
  const path = `/v1/subscription?project_id=${projectId}`;
  const paidUntil = (await app.req("GET", path, { key })).body.paid_until as string;
  await rx.waitFor(1);
  return { key, projectId, rx, session, path, paidUntil };
}

Deno.test("customer.subscription.deleted: active to the paid period end, then none; applied once", () =>
  withBilling(async (app, fake) => {
    const { key, rx, session, path, paidUntil } = await activeSubscription(app, fake);
    try {
      app.clock.advance(3 * DAY);
      const subscriptionId = session.subscription as string;
      const event = stripeEvent(
        "customer.subscription.deleted",
        deletedSubscription(subscriptionId, session.metadata as Record<string, string>),
      );
      const res = await postStripeEvent(app, event);
      assert.equal(res.body.outcome, "canceled");
      assert.equal((await postStripeEvent(app, event)).body.outcome, "duplicate_event");

      const state = (await app.req("GET", path, { key })).body;
      assert.equal(state.status, "active");
      assert.equal(state.paid_until, paidUntil);
      const [, sent] = await rx.waitFor(2);
      assert.equal(sent.body.event, "subscription.updated");
      assert.deepEqual(
        { ...sent.body.data, project_id: undefined },
        {
          project_id: undefined,
          status: "active",
          plan: "basic",
          paid_until: paidUntil,
          first_activation: false,
          canceled: true,
          stripe_event: "customer.subscription.deleted",
        },
      );

      // A renewal invoice arriving after the deletion renews nothing.
      const renewal = paidInvoice({
        subscription: subscriptionId,
        metadata: session.metadata as Record<string, string>,
        billingReason: "subscription_cycle",
        periodStartMs: Date.parse(paidUntil),
        periodEndMs: Date.parse(paidUntil) + 31 * DAY,
      });
      const late = await postStripeEvent(app, stripeEvent("invoice.paid", renewal));
      assert.equal(late.body.outcome, "subscription_canceled");
      assert.equal((await app.req("GET", path, { key })).body.paid_until, paidUntil);

      app.clock.set(Date.parse(paidUntil));
      assert.deepEqual((await app.req("GET", path, { key })).body.status, "none");
    } finally {
      await rx.close();
    }
  }));

Deno.test("invoice.payment_failed: paid_until does not move; the project lapses at its end", () =>
  withBilling(async (app, fake) => {
    const { key, rx, session, path, paidUntil } = await activeSubscription(app, fake);
    try {
      app.clock.set(Date.parse(paidUntil) - DAY);
      const failed = paidInvoice({
        subscription: session.subscription as string,
        metadata: session.metadata as Record<string, string>,
        billingReason: "subscription_cycle",
        periodStartMs: Date.parse(paidUntil),
        periodEndMs: Date.parse(paidUntil) + 31 * DAY,
        status: "open",
      });
      const event = stripeEvent("invoice.payment_failed", failed);
      const res = await postStripeEvent(app, event);
      assert.equal(res.body.outcome, "payment_failed_recorded");
      assert.equal((await postStripeEvent(app, event)).body.outcome, "duplicate_event");
      assert.equal((await app.req("GET", path, { key })).body.paid_until, paidUntil);
      const [, sent] = await rx.waitFor(2);
      assert.equal(sent.body.data.payment_failed, true);
      assert.equal(sent.body.data.status, "active");
      assert.equal(sent.body.data.paid_until, paidUntil);
      assert.equal(rx.received.length, 2, "one event for one failure");

      app.clock.set(Date.parse(paidUntil) + 1);
      assert.equal((await app.req("GET", path, { key })).body.status, "none");
      // Stripe's retry succeeds later: the renewal applies as usual.
      const paid = { ...failed, id: "in_retry_paid", status: "paid" };
      const renewed = await postStripeEvent(app, stripeEvent("invoice.paid", paid));
      assert.equal(renewed.body.outcome, "renewed");
      assert.equal((await app.req("GET", path, { key })).body.status, "active");
    } finally {
      await rx.close();
    }
  }));

Deno.test("charge.refunded takes back the unspent credits in proportion, never below zero", () =>
  withBilling(async (app, fake) => {
    const { key, accountId } = await liveAccount(app);
    const rx = await listen(app, key);
    try {
      const session = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
        pack_id: "pack_500",
      });
      await postStripeEvent(app, stripeEvent("checkout.session.completed", session));
      const paymentIntent = session.payment_intent as string;
      await debitCredits(app.service.services.deps, {
        accountId,
        amount: 300,
        reason: "technical_audit",
        ref: "aud_spent",
      });
      assert.equal(await creditsShown(app, key), 200);

      // Half the money back: 250 credits owed, 200 on the balance: 200 taken, 50 written off.
      const half = stripeEvent(
        "charge.refunded",
        refundedCharge({ paymentIntent, amount: 50_000, amountRefunded: 25_000 }),
      );
      const res = await postStripeEvent(app, half);
      assert.equal(res.body.outcome, "credits_reversed");
      assert.equal((await postStripeEvent(app, half)).body.outcome, "duplicate_event");
      assert.equal(await creditsShown(app, key), 0);

      // The rest refunded (cumulative 500 USD): 250 more owed, nothing left to take.
      const full = stripeEvent(
        "charge.refunded",
        refundedCharge({ paymentIntent, amount: 50_000, amountRefunded: 50_000 }),
      );
      assert.equal((await postStripeEvent(app, full)).body.outcome, "credits_reversed");
      assert.equal(await creditsShown(app, key), 0);
      // A redelivered copy of the first refund under a new event id owes nothing more.
      const again = stripeEvent(
        "charge.refunded",
        refundedCharge({ paymentIntent, amount: 50_000, amountRefunded: 50_000 }),
      );
      assert.equal((await postStripeEvent(app, again)).body.outcome, "nothing_to_reverse");

      const ledger = await listLedger(app.kv, accountId);
      assert.deepEqual(
        ledger.map((e) => [e.kind, e.amount, e.reason, e.balanceAfter]),
        [
          ["grant", 500, "credit_pack", 500],
          ["debit", 300, "technical_audit", 200],
          ["debit", 200, "pack_refunded", 0],
        ],
      );
      const got = await rx.waitFor(3);
      // Deliveries are not ordered: pick the reversals, in the order they were applied.
      const reversals = got.map((r) => r.body.data)
        .filter((d) => d.stripe_event === "charge.refunded")
        .sort((a, b) => a.written_off - b.written_off);
      assert.deepEqual(reversals, [
        {
          pack_id: "pack_500",
          credits_added: -200,
          balance_credits: 0,
          written_off: 50,
          stripe_event: "charge.refunded",
        },
        {
          pack_id: "pack_500",
          credits_added: 0,
          balance_credits: 0,
          written_off: 250,
          stripe_event: "charge.refunded",
        },
      ]);
      // A charge the service sold nothing for is not its to reverse.
      const foreign = refundedCharge({
        paymentIntent: "pi_other",
        amount: 100,
        amountRefunded: 100,
      });
      assert.equal(
        (await postStripeEvent(app, stripeEvent("charge.refunded", foreign))).body.outcome,
        "ignored",
      );
    } finally {
      await rx.close();
    }
  }));

Deno.test("charge.dispute.created holds the disputed credits; won gives them back, lost keeps them", () =>
  withBilling(async (app, fake) => {
    const { key, accountId } = await liveAccount(app);
    const rx = await listen(app, key);
    try {
      const session = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
        pack_id: "pack_2000",
      });
      await postStripeEvent(app, stripeEvent("checkout.session.completed", session));
      const paymentIntent = session.payment_intent as string;
      assert.equal(await creditsShown(app, key), 2200);

      // A dispute of the whole payment holds all 2200 credits.
      const first = dispute({ paymentIntent, amount: 200_000, status: "needs_response" });
      const opened = stripeEvent("charge.dispute.created", first);
      assert.equal((await postStripeEvent(app, opened)).body.outcome, "credits_held");
      assert.equal((await postStripeEvent(app, opened)).body.outcome, "duplicate_event");
      assert.equal(await creditsShown(app, key), 0);
      const won = stripeEvent("charge.dispute.closed", { ...first, status: "won" });
      assert.equal((await postStripeEvent(app, won)).body.outcome, "credits_restored");
      assert.equal((await postStripeEvent(app, won)).body.outcome, "duplicate_event");
      assert.equal(await creditsShown(app, key), 2200);

      // A second dispute for half, lost: 1100 credits stay taken.
      const second = dispute({ paymentIntent, amount: 100_000, status: "needs_response" });
      await postStripeEvent(app, stripeEvent("charge.dispute.created", second));
      assert.equal(await creditsShown(app, key), 1100);
      const lost = stripeEvent("charge.dispute.closed", { ...second, status: "lost" });
      assert.equal((await postStripeEvent(app, lost)).body.outcome, "dispute_lost");
      assert.equal(await creditsShown(app, key), 1100);

      const ledger = await listLedger(app.kv, accountId);
      assert.deepEqual(ledger.map((e) => [e.kind, e.amount, e.reason]), [
        ["grant", 2200, "credit_pack"],
        ["debit", 2200, "pack_disputed"],
        ["grant", 2200, "dispute_won"],
        ["debit", 1100, "pack_disputed"],
      ]);
      const got = await rx.waitFor(4);
      // Deliveries are not ordered.
      assert.deepEqual(
        got.map((r) => r.body.data.credits_added).sort((a, b) => a - b),
        [-2200, -1100, 2200, 2200],
      );
    } finally {
      await rx.close();
    }
  }));
