/**
 * An agent with its own wallet upgrades its account without a human (Machine Payments Protocol,
 * `mppx`'s own client, the fake Stripe on loopback, over HTTP on a real KV): `POST /v1/upgrades`
 * with `pack_id` answers 402 with a challenge for exactly the pack's price; the paid retry makes
 * the account live in one commit (projects moved with their history, the pack's credits granted
 * once per PaymentIntent, `account.upgraded`), and the live key is claimed once by the GET; a
 * replay never charges twice, the credential never pays again, a declined card changes nothing,
 * and with machine payments off `pack_id` is refused.
 */
import assert from "node:assert/strict";
import { Challenge, Receipt } from "mppx";
import { McpClient } from "mppx/mcp/client";
import { listLedger } from "../../domain/billing/credits.ts";
import { keys } from "../../kv/keys.ts";
import type { UpgradeRecord } from "../../domain/upgrades/types.ts";
import type { AccountRecord } from "../../domain/identity/types.ts";
import type { ProjectRecord } from "../../domain/projects/types.ts";
import { errorCode, type TestApp } from "../helpers/app.ts";
import { startReceiver } from "../webhooks/helpers.ts";
import { type FakeStripe, stripeEnv } from "../billing/fake_stripe.ts";
import { newProject, withBilling } from "../billing/helpers.ts";
import { agentWallet, walletMethod } from "../billing/wallet.ts";
import { callError, connectMcp } from "../mcp/helpers.ts";
import { PageClient } from "./helpers.ts";

const MPP_ON = (fake: FakeStripe) => stripeEnv(fake, { MPP_ENABLED: "true" });

/** POST /v1/upgrades with the key, a body, and optionally an Idempotency-Key and a credential. */
function upgrade(app: TestApp, key: string, opts: {
  body?: unknown;
  idempotencyKey?: string;
  credential?: string;
} = {}) {
  return fetch(app.url + "/v1/upgrades", {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}),
      ...(opts.credential ? { "payment-authorization": opts.credential } : {}),
    },
    body: JSON.stringify(opts.body ?? { pack_id: "pack_500" }),
  });
}

async function account(app: TestApp, accountId: string) {
  return (await app.kv.get<AccountRecord>(keys.account(accountId))).value!;
}

Deno.test("MPP on: pack_id answers 402 payment_required with a challenge for exactly the pack's price; a live key is 409", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const res = await upgrade(app, trial.key, { body: { pack_id: "pack_2000" } });
    assert.equal(res.status, 402);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.ok(res.headers.get("x-ratelimit-limit"));
    const challenge = Challenge.deserialize(res.headers.get("www-authenticate")!);
    assert.equal(challenge.method, "stripe");
    assert.equal(challenge.intent, "charge");
    assert.equal(challenge.request.amount, "200000", "2000 USD in cents (2200 credits)");
    assert.equal(challenge.request.currency, "usd");
    assert.equal(challenge.header, "Payment-Authorization");
    const body = await res.json();
    assert.equal(body.error.code, "payment_required");
    assert.deepEqual([body.pack_id, body.price_usd, body.credits], ["pack_2000", 2000, 2200]);
    assert.equal(fake.paymentIntentCreates().length, 0);
    assert.equal((await account(app, trial.accountId)).upgradedAt ?? null, null);

    const live = await app.liveKey(trial.accountId);
    const refused = await upgrade(app, live);
    assert.equal(refused.status, 409);
    assert.equal((await refused.json()).error.code, "already_live");
    const unknown = await upgrade(app, trial.key, { body: { pack_id: "pack_1" } });
    assert.equal(unknown.status, 400);
    await unknown.body?.cancel();
  }, MPP_ON));

Deno.test("paid with the library's client: the account is live in one commit, the pack granted once, the live key claimed once; no second charge", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const projectId = await newProject(app, trial.key);
    const receiver = startReceiver();
    try {
      const hook = await app.req("POST", "/v1/webhooks", {
        key: trial.key,
        body: { url: receiver.url, events: ["account.upgraded"] },
      });
      assert.equal(hook.status, 201, hook.text);
      const wallet = agentWallet(fake);
      const first = await upgrade(app, trial.key, { idempotencyKey: "upg-1" });
      assert.equal(first.status, 402);
      const credential = await wallet.createCredential(first);

      const paid = await upgrade(app, trial.key, { idempotencyKey: "upg-1", credential });
      const body = await paid.json();
      assert.equal(paid.status, 201, JSON.stringify(body));
      assert.equal(body.status, "paid");
      assert.equal(body.api_key, undefined, "the key is claimed by the GET, not here");
      assert.equal(body.pack_id, "pack_500");
      assert.equal(body.credits_added, 500);
      assert.deepEqual(body.project_ids, [projectId]);
      assert.equal(body.poll, `/v1/upgrades/${body.upgrade_id}`);
      const receipt = Receipt.deserialize(paid.headers.get("payment-receipt")!);
      assert.equal(receipt.status, "success");
      assert.match(receipt.reference, /^pi_/);
      const [create] = fake.paymentIntentCreates();
      assert.equal(create.form.amount, "50000");
      assert.equal(create.form["metadata[operation]"], "upgrades.create");
      assert.equal(create.form["metadata[item]"], "pack_500");

      // One commit: the account upgraded, the project live, the pack on the ledger once.
      const acct = await account(app, trial.accountId);
      assert.equal(acct.upgradedAt, app.clock.now());
      assert.equal(acct.sandboxProjects, 0);
      const project = (await app.kv.get<ProjectRecord>(keys.project(trial.accountId, projectId)))
        .value!;
      assert.equal(project.sandbox, false);
      assert.deepEqual(
        (await listLedger(app.kv, trial.accountId)).map((e) => [e.kind, e.amount, e.reason, e.ref]),
        [["grant", 500, "machine_payment", receipt.reference]],
      );
      const payment = (await app.kv.get<{ packId: string; amount: number }>(
        keys.stripePayment(receipt.reference),
      )).value;
      assert.equal(payment?.packId, "pack_500");
      assert.equal(payment?.amount, 50000);
      const stored = (await app.kv.get<UpgradeRecord>(
        keys.upgrade(trial.accountId, body.upgrade_id),
      )).value!;
      assert.equal(stored.machinePayment?.paymentIntentId, receipt.reference);

      // A replay: the stored answer and its receipt, nothing charged.
      const replay = await upgrade(app, trial.key, { idempotencyKey: "upg-1", credential });
      assert.equal(replay.status, 201);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.equal((await replay.json()).upgrade_id, body.upgrade_id);
      assert.equal(replay.headers.get("payment-receipt"), paid.headers.get("payment-receipt"));

      // The same credential under another key: the account is live, refused before Stripe.
      const again = await upgrade(app, trial.key, { idempotencyKey: "upg-2", credential });
      assert.equal(again.status, 409);
      const refusal = await again.json();
      assert.equal(refusal.error.code, "already_live");
      assert.equal(refusal.upgrade_id, body.upgrade_id);
      // …and by another account: bound to this one, the library refuses it.
      const other = await app.signup();
      const stolen = await upgrade(app, other.key, { credential });
      assert.equal(stolen.status, 402);
      assert.ok((await stolen.json()).payment_refused);
      assert.equal((await account(app, other.accountId)).upgradedAt ?? null, null);
      assert.equal(fake.paymentIntentCreates().length, 1, "one PaymentIntent in all");
      assert.equal(fake.paymentIntents.size, 1);
      assert.equal((await listLedger(app.kv, trial.accountId)).length, 1);

      // The live key, exactly once, by the GET; the live side sees the project and the credits.
      const claim = await app.req("GET", body.poll, { key: trial.key });
      assert.equal(claim.status, 200, claim.text);
      assert.equal(claim.body.status, "claimed");
      assert.match(claim.body.api_key, /^sk_live_/);
      const second = await app.req("GET", body.poll, { key: trial.key });
      assert.equal(second.body.status, "claimed");
      assert.equal(second.body.api_key, undefined);
      const live = claim.body.api_key;
      assert.equal((await app.req("GET", "/v1/account", { key: live })).body.mode, "live");
      assert.equal((await app.req("GET", "/v1/credits", { key: live })).body.balance_credits, 500);
      const detail = await app.req("GET", `/v1/projects/${projectId}`, { key: live });
      assert.equal(detail.body.sandbox, false);

      const [delivery] = await receiver.waitFor(1, 15_000);
      assert.equal(delivery.body.event, "account.upgraded");
      assert.equal(delivery.body.data.upgrade_id, body.upgrade_id);
      assert.equal(delivery.body.data.pack_id, "pack_500");
    } finally {
      await receiver.close();
    }
  }, MPP_ON));

Deno.test("the pending upgrade a human was handed is the one the agent pays (200); its code stops working", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const started = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(started.status, 201, started.text);
    const wallet = agentWallet(fake);
    const res = await wallet.fetch(app.url + "/v1/upgrades", {
      method: "POST",
      headers: { authorization: `Bearer ${trial.key}`, "content-type": "application/json" },
      body: JSON.stringify({ pack_id: "pack_500" }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.upgrade_id, started.body.upgrade_id);
    assert.equal(body.status, "paid");
    const human = new PageClient(app.url);
    const page = await human.get(`/upgrade?code=${started.body.user_code}`);
    const entered = await human.submit(page, "/upgrade", { code: started.body.user_code });
    assert.equal(entered.status, 400, "the code opens nothing any more");
    assert.match(entered.text, /does not open an upgrade/);
  }, MPP_ON));

Deno.test("a declined payment changes nothing: 402 again with what was refused", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const projectId = await newProject(app, trial.key);
    const first = await upgrade(app, trial.key);
    const credential = await agentWallet(fake, "pm_card_chargeDeclined").createCredential(first);
    const declined = await upgrade(app, trial.key, { credential });
    assert.equal(declined.status, 402);
    assert.ok(declined.headers.get("www-authenticate"));
    const body = await declined.json();
    assert.equal(body.error.code, "payment_required");
    assert.match(body.payment_refused, /declined/i);
    assert.equal((await account(app, trial.accountId)).upgradedAt ?? null, null);
    assert.deepEqual(await listLedger(app.kv, trial.accountId), []);
    const project = (await app.kv.get<ProjectRecord>(keys.project(trial.accountId, projectId)))
      .value!;
    assert.equal(project.sandbox, true);
    const upgrades = await Array.fromAsync(
      app.kv.list({ prefix: keys.upgradesOfAccount(trial.accountId) }),
    );
    assert.equal(upgrades.length, 0);
  }, MPP_ON));

Deno.test("MPP off: pack_id is a 400 naming it; without it the upgrade starts as for a human", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const res = await upgrade(app, trial.key);
    assert.equal(res.status, 400);
    assert.equal(res.headers.get("www-authenticate"), null);
    const body = await res.json();
    assert.equal(body.error.code, "invalid_request");
    assert.match(body.error.message, /^pack_id: machine payments are not enabled/);
    const human = await app.req("POST", "/v1/upgrades", { key: trial.key });
    assert.equal(human.status, 201, human.text);
    assert.equal(human.body.status, "pending");
    const refused = await app.req("POST", "/v1/upgrades", {
      key: trial.key,
      body: { pack_id: "pack_500" },
      headers: { "payment-authorization": "Payment abc" },
    });
    assert.equal(errorCode(refused), "invalid_request");
    assert.equal(fake.paymentIntentCreates().length, 0);
  }));

Deno.test("MCP: billing upgrade with pack_id carries the challenge; mppx's MCP client pays it; upgrade_status claims the key once", () =>
  withBilling(async (app, fake) => {
    const trial = await app.signup();
    const client = await connectMcp(app, { key: trial.key });
    try {
      const args = { action: "upgrade", pack_id: "pack_500", idempotency_key: "mcp-upg-1" };
      const refused = await callError(client, "billing", args);
      assert.equal(refused.code, "payment_required");
      const [challenge] = refused.body.machine_payment.challenges;
      assert.equal(challenge.request.amount, "50000");
      McpClient.wrap(client, { methods: [walletMethod(fake, "pm_card_visa")] });
      const paid = await client.callTool({ name: "billing", arguments: args });
      assert.notEqual(paid.isError, true, JSON.stringify(paid.content));
      // deno-lint-ignore no-explicit-any
      const upgraded = paid.structuredContent as any;
      assert.equal(upgraded.status, "paid");
      // deno-lint-ignore no-explicit-any
      assert.equal((paid._meta as any)?.["org.paymentauth/receipt"]?.status, "success");
      const claim = await client.callTool({
        name: "billing",
        arguments: { action: "upgrade_status", upgrade_id: upgraded.upgrade_id },
      });
      // deno-lint-ignore no-explicit-any
      assert.match((claim.structuredContent as any).api_key, /^sk_live_/);
      assert.equal(fake.paymentIntents.size, 1);
    } finally {
      await client.close();
    }
  }, MPP_ON));
