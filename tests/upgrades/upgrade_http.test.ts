/**
 * Upgrades over HTTP on a real KV with the fake Stripe on loopback: the agent's start and poll,
 * the human's pages (as forms, the browser test drives them in Chromium), the signed webhook,
 * the one claim of the live key, and every refusal: expired and replayed codes, wrong codes past
 * the limit, another account's id, forged forms, a live key, no Stripe.
 */
import assert from "node:assert/strict";
import { newId } from "../../domain/platform/ids.ts";
import { keys } from "../../kv/keys.ts";
import type { UpgradeRecord } from "../../domain/upgrades/types.ts";
import type { AccountRecord } from "../../domain/identity/types.ts";
import type { ProjectRecord } from "../../domain/projects/types.ts";
import { errorCode, freshIp, type TestApp } from "../helpers/app.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { startReceiver } from "../webhooks/helpers.ts";
import { paidInvoice, stripeEnv, stripeEvent } from "../billing/fake_stripe.ts";
import { newProject, postStripeEvent, START, withBilling } from "../billing/helpers.ts";
import {
  completeCheckout,
  humanChooses,
  local,
  PageClient,
  paidLastSession,
  startUpgrade,
} from "./helpers.ts";

/** A sandbox account with its project, a completed audit on it and a share link of the report. */
async function trialWithHistory(app: TestApp) {
  const trial = await app.signup();
  const projectId = await newProject(app, trial.key);
  const auditId = newId("aud", app.clock.now());
  await seedCompletedAudit(app.kv, {
    accountId: trial.accountId,
    projectId,
    auditId,
    pages: 5,
    completedAt: app.clock.now(),
  });
  const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key: trial.key, body: {} });
  assert.equal(share.status, 201, share.text);
  return { ...trial, projectId, auditId, shareUrl: share.body.url as string };
}

Deno.test("POST /v1/upgrades: a code and its link; again: the same upgrade, a new code; replays; refusals", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const first = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(first.status, 201, first.text);
    assert.deepEqual(Object.keys(first.body).sort(), [
      "expires_at",
      "interval",
      "note",
      "poll",
      "status",
      "upgrade_id",
      "user_code",
      "verification_uri",
      "verification_uri_complete",
    ]);
    assert.equal(first.body.status, "pending");
    assert.match(first.body.user_code, /^[A-HJKMNP-TV-Z2-9]{4}-[A-HJKMNP-TV-Z2-9]{4}$/);
    assert.equal(first.body.verification_uri, "http://localhost:8000/upgrade");
    assert.equal(
      first.body.verification_uri_complete,
      `http://localhost:8000/upgrade?code=${first.body.user_code}`,
    );
    assert.equal(first.body.poll, `/v1/upgrades/${first.body.upgrade_id}`);
    assert.equal(first.body.interval, 5);
    assert.equal(Date.parse(first.body.expires_at), START + 30 * 60_000);
    assert.equal(first.headers.get("cache-control"), "no-store");
    // Only a digest of the code is stored.
    const stored = await app.kv.get<UpgradeRecord>(
      keys.upgrade(trial.accountId, first.body.upgrade_id),
    );
    assert.ok(stored.value && !JSON.stringify(stored.value).includes(first.body.user_code));

    // Asking again while it is pending: the same upgrade, 200, a new code; the old code is dead.
    const again = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.upgrade_id, first.body.upgrade_id);
    assert.notEqual(again.body.user_code, first.body.user_code);
    const human = new PageClient(app.url);
    const page = await human.get("/upgrade");
    const old = await human.submit(page, "/upgrade", { code: first.body.user_code });
    assert.equal(old.status, 400);
    const fresh = await human.submit(page, "/upgrade", { code: again.body.user_code });
    assert.equal(fresh.status, 303);

    // An Idempotency-Key replays the stored answer verbatim.
    const a = await app.req("POST", "/v1/upgrades", {
      key: trial.key,
      headers: { "idempotency-key": "upgrade-1" },
    });
    const b = await app.req("POST", "/v1/upgrades", {
      key: trial.key,
      headers: { "idempotency-key": "upgrade-1" },
    });
    assert.equal(b.headers.get("idempotent-replayed"), "true");
    assert.equal(b.text, a.text);

    // A live key: 409 already_live, with a message that says why.
    const live = await app.liveKey((await app.signup()).accountId);
    const refused = await app.req("POST", "/v1/upgrades", { key: live });
    assert.equal(refused.status, 409);
    assert.equal(errorCode(refused), "already_live");
    assert.match(refused.body.error.message, /live key/);
    assert.equal(fake.sessionCreates().length, 0, "starting an upgrade calls no Stripe");
  }));

Deno.test("POST /v1/upgrades without Stripe: 503 billing_not_configured", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    const res = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(res.status, 503);
    assert.equal(errorCode(res), "billing_not_configured");
  }, (fake) => stripeEnv(fake, { STRIPE_SECRET_KEY: "" })));

Deno.test("the whole upgrade over HTTP: code, choice, Checkout, webhook; the project goes live with its history; the agent claims the key once", () =>
  withBilling(async (app, fake) => {
    const trial = await trialWithHistory(app);
    const receiver = startReceiver();
    try {
      const hook = await app.req("POST", "/v1/webhooks", {
        key: trial.key,
        body: { url: receiver.url, events: ["account.upgraded"] },
      });
      assert.equal(hook.status, 201, hook.text);
      const started = await startUpgrade(app, trial.key);
      const { client, upgradeId, checkoutUrl } = await humanChooses(
        app,
        started.user_code,
        { [`fund_${trial.projectId}`]: "basic", pack: "pack_500" },
      );
      assert.equal(upgradeId, started.upgrade_id);
      assert.match(checkoutUrl, /^https:\/\/checkout\.stripe\.test\/c\/pay\/cs_test_/);

      // One subscription-mode session: the plan and the pack's one-time price, as the customer.
      const [customer] = fake.customerCreates();
      assert.equal(customer.form["metadata[account_id]"], trial.accountId);
      const [call] = fake.sessionCreates();
      assert.equal(call.form.mode, "subscription");
      assert.equal(call.form["line_items[0][price]"], "price_basic");
      assert.equal(call.form["line_items[1][price]"], "price_pack_500");
      assert.match(call.form.customer, /^cus_test_/);
      for (const prefix of ["metadata", "subscription_data[metadata]"]) {
        assert.equal(call.form[`${prefix}[kind]`], "upgrade");
        assert.equal(call.form[`${prefix}[upgrade_id]`], upgradeId);
        assert.equal(call.form[`${prefix}[project_id]`], trial.projectId);
        assert.equal(call.form[`${prefix}[plan_id]`], "basic");
        assert.equal(call.form[`${prefix}[pack_id]`], "pack_500");
      }
      assert.equal(Number(call.form.expires_at), Math.floor((START + 3_600_000) / 1000));
      assert.equal(
        call.form.success_url,
        `http://localhost:8000/upgrade/${upgradeId}/done?session_id={CHECKOUT_SESSION_ID}`,
      );

      // Before payment: pending; the success page waits.
      const before = await app.req("GET", started.poll, { key: trial.key });
      assert.equal(before.body.status, "pending");
      assert.equal(before.body.api_key, undefined);
      const waiting = await client.get(`/upgrade/${upgradeId}/done`);
      assert.match(waiting.text, /Confirming your payment/);

      // Stripe reports the paid session: one commit moves the account.
      const session = paidLastSession(fake, checkoutUrl);
      const paid = await completeCheckout(app, session);
      assert.equal(paid.status, 200, paid.text);
      assert.equal(paid.body.outcome, "upgraded");
      const replay = await completeCheckout(app, session, paid.body.event_id);
      assert.equal(replay.body.outcome, "duplicate_event");

      const account = (await app.kv.get<AccountRecord>(keys.account(trial.accountId))).value!;
      assert.equal(account.sandboxProjects, 0);
      assert.equal(account.projectsCount, 1);
      assert.equal(account.upgradedAt, app.clock.now());
      assert.equal(account.stripeCustomerId, call.form.customer);
      const project = (await app.kv.get<ProjectRecord>(
        keys.project(trial.accountId, trial.projectId),
      )).value!;
      assert.equal(project.sandbox, false);

      // The agent's next poll claims the live key; the answer after that never shows it.
      const claim = await app.req("GET", started.poll, { key: trial.key });
      assert.equal(claim.status, 200, claim.text);
      assert.equal(claim.body.status, "claimed");
      assert.match(claim.body.api_key, /^sk_live_[A-Za-z0-9]{40}$/);
      assert.equal(claim.body.claimed_by, "agent");
      assert.deepEqual(claim.body.project_ids, [trial.projectId]);
      assert.equal(claim.body.plan, "basic");
      assert.equal(claim.body.pack_id, "pack_500");
      assert.equal(claim.body.credits_added, 500);
      assert.equal(claim.headers.get("cache-control"), "no-store");
      const second = await app.req("GET", started.poll, { key: trial.key });
      assert.equal(second.body.status, "claimed");
      assert.equal(second.body.api_key, undefined);
      assert.equal(second.body.claimed_at, claim.body.claimed_at);
      assert.match(second.body.note, /handed out once/);

      // The live key sees the project live, subscribed, with its history; credits landed.
      const live = claim.body.api_key;
      assert.equal((await app.req("GET", "/v1/account", { key: live })).body.mode, "live");
      const detail = await app.req("GET", `/v1/projects/${trial.projectId}`, { key: live });
      assert.equal(detail.body.sandbox, false);
      assert.equal(detail.body.access, "active");
      const sub = await app.req("GET", `/v1/subscription?project_id=${trial.projectId}`, {
        key: live,
      });
      assert.equal(sub.body.status, "active");
      assert.equal(sub.body.plan, "basic");
      assert.equal((await app.req("GET", "/v1/credits", { key: live })).body.balance_credits, 500);
      const audit = await app.req("GET", `/v1/audits/${trial.auditId}`, { key: live });
      assert.equal(audit.status, 200, audit.text);
      assert.equal(audit.body.status, "completed");
      // The trial's share link still opens its (now live) report.
      const shared = await fetch(app.url + local(trial.shareUrl), {
        headers: { "x-forwarded-for": freshIp() },
      });
      assert.equal(shared.status, 200, await shared.text());
      // The sandbox key no longer sees the moved project, and opens no new one.
      const sandboxView = await app.req("GET", `/v1/projects/${trial.projectId}`, {
        key: trial.key,
      });
      assert.equal(sandboxView.status, 404);
      const more = await app.req("POST", "/v1/projects", {
        key: trial.key,
        body: { url: "https://another.example" },
      });
      assert.equal(errorCode(more), "sandbox_limit_reached");
      const restart = await app.req("POST", "/v1/upgrades", { key: trial.key });
      assert.equal(errorCode(restart), "already_live");

      // account.upgraded reached the endpoint the sandbox key registered.
      const [delivery] = await receiver.waitFor(1, 15_000);
      assert.equal(delivery.body.event, "account.upgraded");
      assert.equal(delivery.body.data.upgrade_id, upgradeId);
      assert.deepEqual(delivery.body.data.project_ids, [trial.projectId]);
      assert.equal(delivery.body.data.claim, `GET /v1/upgrades/${upgradeId}`);

      // The human's success page says the agent has the key.
      const done = await client.get(`/upgrade/${upgradeId}/done`);
      assert.equal(done.status, 200);
      assert.match(done.text, /Your account is live/);
      assert.match(done.text, /id="claimed"/);
      assert.doesNotMatch(done.text, /id="reveal"/);
    } finally {
      await receiver.close();
    }
  }));

Deno.test("two parallel claims: exactly one gets the live key", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    await newProject(app, trial.key);
    const started = await startUpgrade(app, trial.key);
    const { checkoutUrl } = await humanChooses(app, started.user_code, { pack: "pack_500" });
    assert.equal(fake.sessionCreates()[0].form.mode, "payment");
    const paid = await completeCheckout(app, paidLastSession(fake, checkoutUrl));
    assert.equal(paid.body.outcome, "upgraded");
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => app.req("GET", started.poll, { key: trial.key })),
    );
    for (const a of answers) assert.equal(a.status, 200, a.text);
    const keysGiven = answers.filter((a) => a.body.api_key);
    assert.equal(keysGiven.length, 1, "one answer carries the key");
    const claimedAt = new Set(answers.map((a) => a.body.claimed_at));
    assert.equal(claimedAt.size, 1);
    assert.ok(answers.every((a) => a.body.status === "claimed"));
    const listed = await app.req("GET", "/v1/api-keys", { key: keysGiven[0].body.api_key });
    assert.equal(
      listed.body.keys.filter((k: { mode: string }) => k.mode === "live").length,
      1,
      "one live key was minted",
    );
  }));

Deno.test("another account's upgrade id, or an unknown one, is not_found", () =>
  withBilling(async (app) => {
    const mine = await app.signup();
    const other = await app.signup();
    const started = await startUpgrade(app, mine.key);
    for (const path of [started.poll, "/v1/upgrades/upg_0000000000000000000000"]) {
      const res = await app.req("GET", path, { key: other.key });
      assert.equal(res.status, 404, path);
      assert.equal(errorCode(res), "not_found");
    }
    // Another key of the same account reads it.
    const rotated = await app.req("POST", "/v1/api-keys", { key: mine.key, body: {} });
    const read = await app.req("GET", started.poll, { key: rotated.body.api_key });
    assert.equal(read.body.status, "pending");
  }));

Deno.test("codes: an expired code and one replayed after payment open nothing; the page answers only its browser", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    await newProject(app, trial.key);
    const expiring = await startUpgrade(app, trial.key);
    app.clock.advance(30 * 60_000);
    const human = new PageClient(app.url);
    const page = await human.get("/upgrade");
    const late = await human.submit(page, "/upgrade", { code: expiring.user_code });
    assert.equal(late.status, 400);
    assert.match(late.text, /expired/);
    const status = await app.req("GET", expiring.poll, { key: trial.key });
    assert.equal(status.body.status, "expired");

    // A new upgrade after expiry: paid, then its code is replayed.
    const started = await startUpgrade(app, trial.key);
    assert.notEqual(started.upgrade_id, expiring.upgrade_id);
    const { upgradeId, checkoutUrl } = await humanChooses(app, started.user_code, {
      pack: "pack_500",
    });
    // Another browser (no cookie of this upgrade) cannot open its pages.
    const stranger = new PageClient(app.url);
    assert.equal((await stranger.get(`/upgrade/${upgradeId}`)).status, 404);
    assert.equal((await stranger.get(`/upgrade/${upgradeId}/done`)).status, 404);
    await completeCheckout(app, paidLastSession(fake, checkoutUrl));
    const replayer = new PageClient(app.url);
    const again = await replayer.get("/upgrade");
    const replayed = await replayer.submit(again, "/upgrade", { code: started.user_code });
    assert.equal(replayed.status, 400);
    assert.match(replayed.text, /already used/);
  }));

Deno.test("ten wrong codes from one address: the next try is 429, even with the right code", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    const started = await startUpgrade(app, trial.key);
    const human = new PageClient(app.url, "203.0.113.77");
    const page = await human.get("/upgrade");
    for (let i = 0; i < 10; i++) {
      const wrong = await human.submit(page, "/upgrade", { code: `ABCD-EF${i}${i}`.slice(0, 9) });
      assert.equal(wrong.status, 400, `wrong code ${i + 1}`);
    }
    const limited = await human.submit(page, "/upgrade", { code: started.user_code });
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
    assert.match(limited.text, /Too many wrong codes/);
    assert.equal(limited.headers.get("x-robots-tag"), "noindex, nofollow");
    // Another address (outside the block) goes on; the window ends.
    const elsewhere = new PageClient(app.url, "198.18.5.9");
    const ok = await elsewhere.submit(await elsewhere.get("/upgrade"), "/upgrade", {
      code: started.user_code,
    });
    assert.equal(ok.status, 303);
    app.clock.advance(15 * 60_000);
    const after = await human.submit(page, "/upgrade", { code: "ZZZZ-ZZZZ" });
    assert.equal(after.status, 400);
  }));

Deno.test("an expired sandbox key starts and polls an upgrade; elsewhere it is key_expired with the way out", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    app.clock.advance(14 * 86_400_000 + 1000);
    const refused = await app.req("GET", "/v1/projects", { key: trial.key });
    assert.equal(refused.status, 401);
    assert.equal(errorCode(refused), "key_expired");
    assert.equal(refused.body.upgrade_url, "http://localhost:8000/upgrade");
    assert.match(refused.body.upgrade, /^POST \/v1\/upgrades/);
    const started = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(started.status, 201, started.text);
    const polled = await app.req("GET", started.body.poll, { key: trial.key });
    assert.equal(polled.status, 200, polled.text);
    assert.equal(polled.body.status, "pending");
    // A revoked key is not admitted.
    const other = await app.signup();
    const spare = await app.req("POST", "/v1/api-keys", { key: other.key, body: {} });
    await app.req("DELETE", `/v1/api-keys/${spare.body.id}`, { key: other.key });
    const revoked = await app.req("POST", "/v1/upgrades", { key: spare.body.api_key });
    assert.equal(errorCode(revoked), "key_revoked");
  }));

Deno.test("trial-ending errors carry upgrade_url and name POST /v1/upgrades", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    await newProject(app, trial.key);
    const second = await app.req("POST", "/v1/projects", {
      key: trial.key,
      body: { url: "https://second.example" },
    });
    assert.equal(errorCode(second), "sandbox_limit_reached");
    assert.equal(second.body.upgrade_url, "http://localhost:8000/upgrade");
    assert.match(second.body.upgrade, /POST \/v1\/upgrades/);
    // Other errors carry neither.
    const missing = await app.req("GET", "/v1/projects/proj_nope", { key: trial.key });
    assert.equal(missing.body.upgrade_url, undefined);
  }));

Deno.test("the human reveals the live key once when the agent has not; the agent then reads who had it", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const started = await startUpgrade(app, trial.key);
    const { client, upgradeId, checkoutUrl } = await humanChooses(app, started.user_code, {
      pack: "pack_2000",
    });
    await completeCheckout(app, paidLastSession(fake, checkoutUrl));
    const done = await client.get(`/upgrade/${upgradeId}/done`);
    assert.match(done.text, /id="reveal"/);
    const revealed = await client.submit(done, `/upgrade/${upgradeId}/reveal`);
    assert.equal(revealed.status, 200);
    const key = /id="live-key">(sk_live_[A-Za-z0-9]{40})</.exec(revealed.text)?.[1];
    assert.ok(key, "the page shows the key");
    assert.equal(revealed.headers.get("cache-control"), "no-store");
    const twice = await client.submit(done, `/upgrade/${upgradeId}/reveal`);
    assert.equal(twice.status, 409);
    assert.doesNotMatch(twice.text, /sk_live_/);
    const agent = await app.req("GET", started.poll, { key: trial.key });
    assert.equal(agent.body.status, "claimed");
    assert.equal(agent.body.claimed_by, "human");
    assert.equal(agent.body.api_key, undefined);
    assert.equal((await app.req("GET", "/v1/credits", { key })).body.balance_credits, 2200);
  }));

Deno.test("forms: without the page's token, or sent from another site, nothing happens (403)", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    const started = await startUpgrade(app, trial.key);
    const human = new PageClient(app.url);
    const page = await human.get("/upgrade");
    const noToken = await human.post("/upgrade", { code: started.user_code });
    assert.equal(noToken.status, 403);
    const crossSite = await human.post("/upgrade", {
      code: started.user_code,
      csrf: /name="csrf" value="([0-9a-f]{64})"/.exec(page.text)![1],
    }, { "sec-fetch-site": "cross-site" });
    assert.equal(crossSite.status, 403);
    const noCookie = await new PageClient(app.url).post("/upgrade", {
      code: started.user_code,
      csrf: "0".repeat(64),
    });
    assert.equal(noCookie.status, 403);
    // The page's headers: the report pages' rules, forms to this server only.
    const csp = page.headers.get("content-security-policy")!;
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    assert.equal(page.headers.get("x-robots-tag"), "noindex, nofollow");
    assert.equal(page.headers.get("x-frame-options"), "DENY");
    assert.match(page.headers.get("set-cookie") ?? "", /HttpOnly; SameSite=Lax/);
  }));

Deno.test("the webhook: an upgrade session whose amount differs from the catalogue grants nothing", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    await newProject(app, trial.key);
    const started = await startUpgrade(app, trial.key);
    const { checkoutUrl } = await humanChooses(app, started.user_code, { pack: "pack_500" });
    const cheap = paidLastSession(fake, checkoutUrl, { amount_subtotal: 100, amount_total: 100 });
    const res = await completeCheckout(app, cheap);
    assert.equal(res.body.outcome, "unknown_checkout");
    const status = await app.req("GET", started.poll, { key: trial.key });
    assert.equal(status.body.status, "pending");
  }));

Deno.test("POST /v1/billing-portal: 403 sandbox, 409 before any payment, the account's customer after", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const sandbox = await app.req("POST", "/v1/billing-portal", { key: trial.key });
    assert.equal(errorCode(sandbox), "sandbox_not_billable");
    const live = await app.liveKey(trial.accountId);
    const none = await app.req("POST", "/v1/billing-portal", { key: live });
    assert.equal(none.status, 409);
    assert.equal(errorCode(none), "no_billing_customer");
    assert.equal(fake.portalCreates().length, 0);

    // The first checkout creates the customer and keeps it; later ones reuse it.
    await app.req("POST", "/v1/credits/purchases", { key: live, body: { pack_id: "pack_500" } });
    await app.req("POST", "/v1/credits/purchases", { key: live, body: { pack_id: "pack_2000" } });
    assert.equal(fake.customerCreates().length, 1);
    const customer = fake.sessionCreates()[0].form.customer;
    assert.equal(fake.sessionCreates()[1].form.customer, customer);

    const portal = await app.req("POST", "/v1/billing-portal", { key: live });
    assert.equal(portal.status, 201, portal.text);
    assert.match(portal.body.url, /^https:\/\/billing\.stripe\.test\/p\/session\//);
    const [call] = fake.portalCreates();
    assert.equal(call.form.customer, customer);
    assert.equal(call.form.return_url, "http://localhost:8000/billing/returned");
    const back = await fetch(`${app.url}/billing/returned`);
    assert.equal(back.status, 200);
    assert.match(await back.text(), /Back from billing/);
  }));

Deno.test("POST /v1/billing-portal without Stripe: 503 billing_not_configured", () =>
  withBilling(async (app) => {
    const trial = await app.signup();
    const live = await app.liveKey(trial.accountId);
    const res = await app.req("POST", "/v1/billing-portal", { key: live });
    assert.equal(res.status, 503);
    assert.equal(errorCode(res), "billing_not_configured");
  }, (fake) => stripeEnv(fake, { STRIPE_SECRET_KEY: "" })));

Deno.test("the success page opens the Billing Portal for the account's customer", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const started = await startUpgrade(app, trial.key);
    const { client, upgradeId, checkoutUrl } = await humanChooses(app, started.user_code, {
      pack: "pack_500",
    });
    await completeCheckout(app, paidLastSession(fake, checkoutUrl));
    const done = await client.get(`/upgrade/${upgradeId}/done`);
    const leaving = await client.submit(done, `/upgrade/${upgradeId}/portal`);
    assert.equal(leaving.status, 200, leaving.text);
    assert.match(leaving.text, /url=https:\/\/billing\.stripe\.test\/p\/session\//);
    assert.equal(fake.portalCreates()[0].form.customer, fake.sessionCreates()[0].form.customer);
  }));

Deno.test("an upgrade's subscription: its first invoice before or after the session adds nothing; renewals renew it", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const projectId = await newProject(app, trial.key);
    const started = await startUpgrade(app, trial.key);
    const { checkoutUrl } = await humanChooses(app, started.user_code, {
      [`fund_${projectId}`]: "pro",
    });
    const session = paidLastSession(fake, checkoutUrl);
    const metadata = session.metadata as Record<string, string>;
    const invoice = (reason: "subscription_create" | "subscription_cycle", endMs: number) =>
      stripeEvent(
        "invoice.paid",
        paidInvoice({
          subscription: session.subscription as string,
          metadata,
          billingReason: reason,
          periodStartMs: START,
          periodEndMs: endMs,
        }),
      );
    // Stripe may send the first invoice before the session: it is not the upgrade's payment.
    const early = await postStripeEvent(
      app,
      invoice("subscription_create", START + 30 * 86_400_000),
    );
    assert.equal(early.body.outcome, "ignored");
    assert.equal((await completeCheckout(app, session)).body.outcome, "upgraded");
    const late = await postStripeEvent(
      app,
      invoice("subscription_create", START + 30 * 86_400_000),
    );
    assert.equal(late.body.outcome, "first_period_already_applied");
    const renewal = await postStripeEvent(
      app,
      invoice("subscription_cycle", START + 61 * 86_400_000),
    );
    assert.equal(renewal.body.outcome, "renewed");
    const live = (await app.req("GET", started.poll, { key: trial.key })).body.api_key;
    const sub = await app.req("GET", `/v1/subscription?project_id=${projectId}`, { key: live });
    assert.equal(sub.body.plan, "pro");
    assert.equal(Date.parse(sub.body.paid_until), START + 61 * 86_400_000);
  }));
