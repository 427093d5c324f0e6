import assert from "node:assert/strict";
import { errorCode } from "../helpers/app.ts";
import { stripeEnv } from "./fake_stripe.ts";
import { liveAccount, newProject, withBilling } from "./helpers.ts";

Deno.test("POST /v1/subscriptions opens a subscription Checkout Session tied to account, project and plan", () =>
  withBilling(async (app, fake) => {
    const { accountId, key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const res = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "pro" },
      headers: { "idempotency-key": "sub-1" },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), [
      "checkout_url",
      "note",
      "plan",
      "project_id",
      "status",
    ]);
    assert.equal(res.body.status, "pending_payment");
    assert.equal(res.body.project_id, projectId);
    assert.equal(res.body.plan, "pro");
    assert.match(res.body.checkout_url, /^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);

    const [call] = fake.sessionCreates();
    assert.equal(call.headers.get("content-type"), "application/x-www-form-urlencoded");
    assert.equal(call.headers.get("authorization"), "Bearer sk_test_x");
    assert.match(call.headers.get("idempotency-key") ?? "", /^serpwright-[0-9a-f]{64}$/);
    assert.equal(call.form.mode, "subscription");
    assert.equal(call.form["line_items[0][price]"], "price_pro");
    assert.equal(call.form["line_items[0][quantity]"], "1");
    assert.equal(call.form.client_reference_id, accountId);
    for (const prefix of ["metadata", "subscription_data[metadata]"]) {
      assert.equal(call.form[`${prefix}[service]`], "serpwright");
      assert.equal(call.form[`${prefix}[kind]`], "subscription");
      assert.equal(call.form[`${prefix}[account_id]`], accountId);
      assert.equal(call.form[`${prefix}[project_id]`], projectId);
      assert.equal(call.form[`${prefix}[plan_id]`], "pro");
    }
    assert.match(call.form.success_url, /\{CHECKOUT_SESSION_ID\}/);
    assert.ok(call.form.cancel_url);

    // The project is pending; the replay with the same key does not call Stripe again.
    const state = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key });
    assert.deepEqual(state.body, { project_id: projectId, plan: "pro", status: "pending_payment" });
    const again = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "pro" },
      headers: { "idempotency-key": "sub-1" },
    });
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.text, res.text);
    assert.equal(fake.sessionCreates().length, 1);
  }));

Deno.test("POST /v1/subscriptions hands out the open checkout again instead of opening a second", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const first = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
    });
    const second = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
    });
    assert.equal(second.status, 201);
    assert.equal(second.body.checkout_url, first.body.checkout_url);
    assert.equal(fake.sessionCreates().length, 1);
    assert.equal(fake.sessionCreates()[0].form["line_items[0][price]"], "price_basic");

    // Another plan opens a new session and expires the old one at Stripe.
    const pro = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "pro" },
    });
    assert.equal(pro.status, 201);
    assert.notEqual(pro.body.checkout_url, first.body.checkout_url);
    const oldId = first.body.checkout_url.split("/").pop();
    assert.ok(fake.requests.some((r) => r.path === `/v1/checkout/sessions/${oldId}/expire`));
  }));

Deno.test("GET /v1/subscription: pending_payment only while the checkout is under 24 h old", () =>
  withBilling(async (app) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const path = `/v1/subscription?project_id=${projectId}`;
    assert.deepEqual((await app.req("GET", path, { key })).body, {
      project_id: projectId,
      plan: null,
      status: "none",
    });
    await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
    });
    app.clock.advance(24 * 3_600_000 - 1000);
    assert.equal((await app.req("GET", path, { key })).body.status, "pending_payment");
    app.clock.advance(1000);
    assert.deepEqual((await app.req("GET", path, { key })).body, {
      project_id: projectId,
      plan: null,
      status: "none",
    });
    // The project's access stays pending_payment: it is not paid.
    const project = await app.req("GET", `/v1/projects/${projectId}`, { key });
    assert.equal(project.body.access, "pending_payment");
  }));

Deno.test("GET /v1/subscription: 400 without project_id, 404 for foreign ids, none for sandbox projects", () =>
  withBilling(async (app) => {
    const { key, sandboxKey } = await liveAccount(app);
    const missing = await app.req("GET", "/v1/subscription", { key });
    assert.equal(missing.status, 400);
    assert.equal(errorCode(missing), "invalid_request");
    assert.match(missing.body.error.message, /project_id/);

    const other = await liveAccount(app);
    const foreign = await newProject(app, other.key);
    for (const id of [foreign, "proj_nope"]) {
      const res = await app.req("GET", `/v1/subscription?project_id=${id}`, { key });
      assert.equal(res.status, 404);
      assert.equal(errorCode(res), "not_found");
    }

    const sandboxProject = await newProject(app, sandboxKey);
    const res = await app.req("GET", `/v1/subscription?project_id=${sandboxProject}`, {
      key: sandboxKey,
    });
    assert.deepEqual(res.body, { project_id: sandboxProject, plan: null, status: "none" });
  }));

Deno.test("POST /v1/credits/purchases opens a payment Checkout Session for the pack", () =>
  withBilling(async (app, fake) => {
    const { accountId, key } = await liveAccount(app);
    const res = await app.req("POST", "/v1/credits/purchases", {
      key,
      body: { pack_id: "pack_2000" },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), [
      "bonus_credits",
      "checkout_url",
      "credits",
      "note",
      "pack_id",
      "status",
      "usd",
    ]);
    assert.equal(res.body.status, "pending_payment");
    assert.equal(res.body.pack_id, "pack_2000");
    assert.equal(res.body.usd, 2000);
    assert.equal(res.body.credits, 2200);
    assert.equal(res.body.bonus_credits, 200);
    assert.match(res.body.checkout_url, /^https:\/\/checkout\.stripe\.test\//);

    const [call] = fake.sessionCreates();
    assert.equal(call.form.mode, "payment");
    assert.equal(call.form["line_items[0][price]"], "price_pack_2000");
    assert.match(call.headers.get("idempotency-key") ?? "", /^[0-9a-f-]{36}$/);
    for (const prefix of ["metadata", "payment_intent_data[metadata]"]) {
      assert.equal(call.form[`${prefix}[kind]`], "credit_pack");
      assert.equal(call.form[`${prefix}[account_id]`], accountId);
      assert.equal(call.form[`${prefix}[pack_id]`], "pack_2000");
    }
    assert.equal(call.form["subscription_data[metadata][kind]"], undefined);
    // Nothing is credited before payment.
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 0);
  }));

Deno.test("billing POSTs refuse bad input with 400 and call Stripe for none of it", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const cases: [string, unknown, RegExp][] = [
      ["/v1/subscriptions", { project_id: projectId, plan_id: "gold" }, /^plan_id:/],
      ["/v1/subscriptions", { project_id: projectId }, /^plan_id:/],
      ["/v1/subscriptions", { plan_id: "basic" }, /^project_id:/],
      ["/v1/subscriptions", { project_id: "", plan_id: "basic" }, /^project_id:/],
      ["/v1/subscriptions", { project_id: projectId, plan_id: "basic", x: 1 }, /x/],
      ["/v1/credits/purchases", { pack_id: "pack_1" }, /^pack_id:/],
      ["/v1/credits/purchases", {}, /^pack_id:/],
      ["/v1/credits/purchases", { pack_id: 500 }, /^pack_id:/],
    ];
    for (const [path, body, message] of cases) {
      const res = await app.req("POST", path, { key, body });
      assert.equal(res.status, 400, `${path} ${JSON.stringify(body)}`);
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message);
    }
    const malformed = await app.req("POST", "/v1/credits/purchases", {
      key,
      rawBody: "{nope",
      headers: { "content-type": "application/json" },
    });
    assert.equal(malformed.status, 400);
    assert.equal(fake.requests.length, 0);
  }));

Deno.test("sandbox keys get 403 sandbox_not_billable on both purchases, after validation", () =>
  withBilling(async (app, fake) => {
    const { sandboxKey, key } = await liveAccount(app);
    const sandboxProject = await newProject(app, sandboxKey);
    const liveProject = await newProject(app, key);
    for (
      const [path, body] of [
        ["/v1/subscriptions", { project_id: sandboxProject, plan_id: "basic" }],
        ["/v1/subscriptions", { project_id: liveProject, plan_id: "basic" }],
        ["/v1/subscriptions", { project_id: "proj_missing", plan_id: "basic" }],
        ["/v1/credits/purchases", { pack_id: "pack_500" }],
      ] as const
    ) {
      const res = await app.req("POST", path, { key: sandboxKey, body });
      assert.equal(res.status, 403, path);
      assert.equal(errorCode(res), "sandbox_not_billable");
    }
    // Validation still comes first.
    const bad = await app.req("POST", "/v1/credits/purchases", {
      key: sandboxKey,
      body: { pack_id: "x" },
    });
    assert.equal(bad.status, 400);
    // A live key cannot subscribe the sandbox (trial) project either.
    const res = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: sandboxProject, plan_id: "basic" },
    });
    assert.equal(res.status, 403);
    assert.equal(errorCode(res), "sandbox_not_billable");
    assert.equal(fake.requests.length, 0);
  }));

Deno.test("POST /v1/subscriptions: 404 for foreign or missing projects", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const other = await liveAccount(app);
    const foreign = await newProject(app, other.key);
    for (const id of [foreign, "proj_missing"]) {
      const res = await app.req("POST", "/v1/subscriptions", {
        key,
        body: { project_id: id, plan_id: "basic" },
      });
      assert.equal(res.status, 404);
      assert.equal(errorCode(res), "not_found");
    }
    assert.equal(fake.requests.length, 0);
  }));

Deno.test("503 billing_not_configured without a secret key, or without the plan's or pack's price", async (t) => {
  await t.step("no secret key", () =>
    withBilling(async (app, fake) => {
      const { key } = await liveAccount(app);
      const projectId = await newProject(app, key);
      const sub = await app.req("POST", "/v1/subscriptions", {
        key,
        body: { project_id: projectId, plan_id: "basic" },
      });
      assert.equal(sub.status, 503);
      assert.equal(errorCode(sub), "billing_not_configured");
      const pack = await app.req("POST", "/v1/credits/purchases", {
        key,
        body: { pack_id: "pack_500" },
      });
      assert.equal(pack.status, 503);
      assert.equal(errorCode(pack), "billing_not_configured");
      assert.equal(fake.requests.length, 0);
    }, (fake) => stripeEnv(fake, { STRIPE_SECRET_KEY: "" })));

  await t.step("one price missing", () =>
    withBilling(async (app, fake) => {
      const { key } = await liveAccount(app);
      const projectId = await newProject(app, key);
      const pro = await app.req("POST", "/v1/subscriptions", {
        key,
        body: { project_id: projectId, plan_id: "pro" },
      });
      assert.equal(pro.status, 503);
      assert.equal(errorCode(pro), "billing_not_configured");
      const pack = await app.req("POST", "/v1/credits/purchases", {
        key,
        body: { pack_id: "pack_10000" },
      });
      assert.equal(pack.status, 503);
      assert.equal(fake.requests.length, 0);
      // The configured ones work, and the failed ones left no pending state.
      const state = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key });
      assert.equal(state.body.status, "none");
      const basic = await app.req("POST", "/v1/subscriptions", {
        key,
        body: { project_id: projectId, plan_id: "basic" },
      });
      assert.equal(basic.status, 201);
    }, (fake) => stripeEnv(fake, { STRIPE_PRICE_PRO: "", STRIPE_PRICE_PACK_10000: "" })));
});

Deno.test("Stripe refusing the configured price is 503; a Stripe outage is 500 and leaves nothing pending", () =>
  withBilling(async (app, fake) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    fake.failNext(400, {
      type: "invalid_request_error",
      code: "resource_missing",
      message: "No such price: 'price_basic'",
    });
    const refused = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
    });
    assert.equal(refused.status, 503);
    assert.equal(errorCode(refused), "billing_not_configured");

    fake.failNext(500, { type: "api_error", message: "boom" });
    const outage = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
      headers: { "idempotency-key": "retry-me" },
    });
    assert.equal(outage.status, 500);
    assert.equal(errorCode(outage), "internal_error");
    const state = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key });
    assert.equal(state.body.status, "none");

    // Retrying with the same key after internal_error works and reuses the Stripe key.
    const retry = await app.req("POST", "/v1/subscriptions", {
      key,
      body: { project_id: projectId, plan_id: "basic" },
      headers: { "idempotency-key": "retry-me" },
    });
    assert.equal(retry.status, 201);
    const creates = fake.sessionCreates();
    assert.equal(
      creates.at(-1)!.headers.get("idempotency-key"),
      creates.at(-2)!.headers.get("idempotency-key"),
    );
  }));
