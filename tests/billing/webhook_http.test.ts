import assert from "node:assert/strict";
import { errorCode } from "../helpers/app.ts";
import { paidInvoice, paidSession, signPayload, stripeEnv, stripeEvent } from "./fake_stripe.ts";
import { checkoutFor, liveAccount, newProject, postStripeEvent, withBilling } from "./helpers.ts";

const DAY = 86_400_000;

Deno.test("a paid subscription checkout activates the project; a redelivery changes nothing", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const session = await checkoutFor(app, fake, key, "/v1/subscriptions", {
      project_id: projectId,
      plan_id: "basic",
    });
    app.clock.advance(10 * 60_000);
    const event = stripeEvent("checkout.session.completed", session);
    const res = await postStripeEvent(app, event);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.outcome, "activated");

    const path = `/v1/subscription?project_id=${projectId}`;
    const state = await app.req("GET", path, { key });
    assert.deepEqual(state.body, {
      project_id: projectId,
      plan: "basic",
      status: "active",
      // One calendar month after the payment was learned of.
      paid_until: "2026-12-23T12:10:00.000Z",
    });
    const project = await app.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.access, "active");
    const list = await app.req("GET", "/v1/projects", { key });
    assert.equal(list.body.projects[0].access, "active");

    const again = await postStripeEvent(app, event);
    assert.equal(again.status, 200);
    assert.equal(again.body.outcome, "duplicate_event");
    assert.deepEqual((await app.req("GET", path, { key })).body, state.body);

    const dup = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "pro" },
    });
    assert.equal(dup.status, 409);
    assert.equal(errorCode(dup), "already_subscribed");
    // The account's plan field stays null: plans are per project.
    assert.equal((await app.req("GET", "/v1/account", { key })).body.plan, null);
  }));

Deno.test("a paid pack checkout adds its credits with the bonus, once", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const session = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
      pack_id: "pack_10000",
    });
    const event = stripeEvent("checkout.session.completed", session);
    const res = await postStripeEvent(app, event);
    assert.equal(res.status, 200);
    assert.equal(res.body.outcome, "credits_granted");
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 12500);

    assert.equal((await postStripeEvent(app, event)).body.outcome, "duplicate_event");
    // Stripe's async-payment event for the same session is a different event id: still once.
    const late = stripeEvent("checkout.session.async_payment_succeeded", session);
    assert.equal((await postStripeEvent(app, late)).body.outcome, "pack_already_granted");
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 12500);
  }));

Deno.test("one event redelivered concurrently is applied exactly once", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const session = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
      pack_id: "pack_500",
    });
    const event = stripeEvent("checkout.session.completed", session);
    const results = await Promise.all(
      Array.from({ length: 12 }, () => postStripeEvent(app, event)),
    );
    assert.deepEqual(results.map((r) => r.status), Array(12).fill(200));
    const outcomes = results.map((r) => r.body.outcome).sort();
    assert.deepEqual(outcomes, ["credits_granted", ...Array(11).fill("duplicate_event")]);
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 500);
  }));

Deno.test("a forged, tampered, stale or missing signature answers 400 and changes nothing", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const pack = await checkoutFor(app, fake, key, "/v1/credits/purchases", {
      pack_id: "pack_500",
    });
    const sub = await checkoutFor(app, fake, key, "/v1/subscriptions", {
      project_id: projectId,
      plan_id: "pro",
    });
    const packEvent = stripeEvent("checkout.session.completed", pack);
    const subEvent = stripeEvent("checkout.session.completed", sub);
    const now = app.clock.now();
    const tampered = JSON.stringify({ ...packEvent, id: "evt_other" });

    const attempts = [
      await postStripeEvent(app, packEvent, { secret: "whsec_attacker" }),
      await postStripeEvent(app, subEvent, { secret: "whsec_attacker" }),
      await postStripeEvent(app, packEvent, { timestampMs: now - 301_000 }),
      await postStripeEvent(app, subEvent, { timestampMs: now - 3_600_000 }),
      await postStripeEvent(app, packEvent, { signature: null }),
      await postStripeEvent(app, packEvent, { signature: "garbage" }),
      await postStripeEvent(app, packEvent, {
        signature: await signPayload(tampered, now),
      }),
    ];
    for (const res of attempts) {
      assert.equal(res.status, 400, res.text);
      assert.equal(errorCode(res), "invalid_request");
    }
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 0);
    const state = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key });
    assert.equal(state.body.status, "pending_payment");

    // Within the 5-minute tolerance the very same events are accepted.
    const ok = await postStripeEvent(app, packEvent, { timestampMs: now - 299_000 });
    assert.equal(ok.status, 200);
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 500);
  }));

Deno.test("renewal moves paid_until forward, never backward", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const session = await checkoutFor(app, fake, key, "/v1/subscriptions", {
      project_id: projectId,
      plan_id: "pro",
    });
    await postStripeEvent(app, stripeEvent("checkout.session.completed", session));
    const path = `/v1/subscription?project_id=${projectId}`;
    const first = (await app.req("GET", path, { key })).body.paid_until;

    const metadata = session.metadata as Record<string, string>;
    const start = Date.parse(first);
    app.clock.set(start - 60_000);
    const renewal = paidInvoice({
      subscription: session.subscription as string,
      metadata,
      billingReason: "subscription_cycle",
      periodStartMs: start,
      periodEndMs: start + 31 * DAY,
    });
    const res = await postStripeEvent(app, stripeEvent("invoice.paid", renewal));
    assert.equal(res.body.outcome, "renewed");
    const renewed = (await app.req("GET", path, { key })).body;
    assert.equal(renewed.status, "active");
    assert.equal(renewed.paid_until, new Date(start + 31 * DAY).toISOString());

    // A late, older invoice does not pull the date back.
    const stale = paidInvoice({
      subscription: session.subscription as string,
      metadata,
      billingReason: "subscription_cycle",
      periodStartMs: start - 30 * DAY,
      periodEndMs: start,
    });
    const late = await postStripeEvent(app, stripeEvent("invoice.paid", stale));
    assert.equal(late.body.outcome, "stale_renewal");
    assert.equal((await app.req("GET", path, { key })).body.paid_until, renewed.paid_until);

    // Past paid_until without a renewal, the project lapses.
    app.clock.set(start + 31 * DAY);
    assert.equal((await app.req("GET", path, { key })).body.status, "none");
    const project = await app.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.access, "pending_payment");
  }));

Deno.test("events the service does not handle, or sessions it did not create, answer 200 and change nothing", () =>
  withBilling(async (app) => {
    const { key, accountId } = await liveAccount(app);
    const cases = [
      stripeEvent("customer.created", { id: "cus_1", object: "customer" }),
      stripeEvent("checkout.session.completed", paidSession({ order: "other-product" })),
      stripeEvent(
        "checkout.session.completed",
        paidSession({
          service: "serpwright",
          kind: "credit_pack",
          account_id: accountId,
          pack_id: "pack_500",
        }, { payment_status: "unpaid" }),
      ),
    ];
    for (const event of cases) {
      const res = await postStripeEvent(app, event);
      assert.equal(res.status, 200);
      assert.equal(res.body.outcome, "ignored");
    }
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 0);
  }));

Deno.test("without STRIPE_WEBHOOK_SECRET the webhook answers 503 so Stripe retries later", () =>
  withBilling(async (app) => {
    const res = await postStripeEvent(app, stripeEvent("customer.created", { id: "cus_1" }));
    assert.equal(res.status, 503);
    assert.equal(errorCode(res), "billing_not_configured");
  }, (fake) => stripeEnv(fake, { STRIPE_WEBHOOK_SECRET: "" })));
