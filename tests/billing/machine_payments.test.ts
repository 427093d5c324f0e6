/**
 * Agents that pay for a job themselves (Machine Payments Protocol, `mppx`, Stripe method), over
 * HTTP on a real KV with the fake Stripe on loopback: a 402 on a chargeable start carries a
 * challenge for exactly the unit's price only when the operator enables it; a payment made with
 * the library's own client starts the job once, answers a receipt and leaves the payment and the
 * debit on the ledger; the same credential again never starts or charges a second time; a failed
 * machine-paid job is refunded to the credit balance.
 */
import assert from "node:assert/strict";
import { Challenge, Receipt } from "mppx";
import { McpClient } from "mppx/mcp/client";
import { listLedger } from "../../domain/billing/credits.ts";
import { ConfigError, loadConfig } from "../../config.ts";
import { keys, read } from "../../domain/platform/store.ts";
import { errorCode, type TestApp } from "../helpers/app.ts";
import { balanceOf, grantCredits } from "../helpers/credits.ts";
import { waitForArticle, waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { startFakeOpenAI } from "../writing/fake_openai.ts";
import { callError, connectMcp } from "../mcp/helpers.ts";
import { type FakeStripe, stripeEnv } from "./fake_stripe.ts";
import { liveAccount, newProject, withBilling } from "./helpers.ts";
import { agentWallet, walletMethod } from "./wallet.ts";

const MPP_ON = (fake: FakeStripe) => stripeEnv(fake, { MPP_ENABLED: "true" });

/** A raw request carrying the API key and, when given, a payment credential. */
function post(app: TestApp, path: string, key: string, opts: {
  body?: unknown;
  idempotencyKey?: string;
  credential?: string;
} = {}) {
  return fetch(app.url + path, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      ...(opts.idempotencyKey ? { "idempotency-key": opts.idempotencyKey } : {}),
      ...(opts.credential ? { "payment-authorization": opts.credential } : {}),
    },
    body: JSON.stringify(opts.body ?? {}),
  });
}

/** The challenge of a 402, parsed by the library. */
function challengeOf(res: Response) {
  const header = res.headers.get("www-authenticate");
  assert.ok(header, "a WWW-Authenticate challenge");
  return Challenge.deserialize(header);
}

async function auditCount(app: TestApp, accountId: string, projectId: string) {
  return (await read(app.kv, keys.project(accountId, projectId))).value!.counts.audits;
}

Deno.test("MPP_ENABLED needs Stripe and a long enough challenge key; it is off by default", () => {
  assert.equal(loadConfig({}).mpp.enabled, false);
  assert.throws(
    () => loadConfig({ MPP_ENABLED: "true" }),
    (e: unknown) => e instanceof ConfigError && e.variable === "MPP_ENABLED",
  );
  assert.throws(
    () => loadConfig({ MPP_ENABLED: "true", STRIPE_SECRET_KEY: "sk_test_x", MPP_SECRET_KEY: "x" }),
    (e: unknown) => e instanceof ConfigError && e.variable === "MPP_SECRET_KEY",
  );
  const on = loadConfig({ MPP_ENABLED: "1", STRIPE_SECRET_KEY: "sk_test_x" });
  assert.deepEqual(on.mpp, { enabled: true, secretKey: null, networkId: "internal" });
});

Deno.test("MPP off: a live key's 402 insufficient_credits carries no payment challenge", () =>
  withBilling(async (app) => {
    const { key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const res = await post(app, `/v1/projects/${projectId}/audits`, key);
    assert.equal(res.status, 402);
    assert.equal(res.headers.get("www-authenticate"), null);
    const body = await res.json();
    assert.equal(body.error.code, "insufficient_credits");
    assert.equal(body.payment_refused, undefined);
  }));

Deno.test("MPP on: the 402 carries a Payment challenge for exactly the unit's price; the error shape and rate-limit headers stay", () =>
  withBilling(
    async (app, fake) => {
      const { key } = await liveAccount(app);
      const projectId = await newProject(app, key);
      const res = await post(app, `/v1/projects/${projectId}/audits`, key);
      assert.equal(res.status, 402);
      assert.ok(res.headers.get("x-ratelimit-limit"));
      assert.equal(res.headers.get("cache-control"), "no-store");
      assert.match(res.headers.get("www-authenticate")!, /^Payment /);
      const challenge = challengeOf(res);
      assert.equal(challenge.method, "stripe");
      assert.equal(challenge.intent, "charge");
      // 25 credits = 25 USD, in cents; the credential goes beside the API key's Authorization.
      assert.equal(challenge.request.amount, "2500");
      assert.equal(challenge.request.currency, "usd");
      assert.equal(challenge.header, "Payment-Authorization");
      assert.ok(challenge.expires);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), [
        "balance_credits",
        "error",
        "purchase",
        "required_credits",
        "subscription_alternative",
      ]);
      assert.equal(body.error.code, "insufficient_credits");
      assert.equal(body.required_credits, 25);

      // An article is priced as its own unit (15 credits with a model configured).
      const art = await post(app, `/v1/projects/${projectId}/articles`, key, {
        body: { topic: "Paid by the agent" },
      });
      assert.equal(art.status, 402);
      assert.equal(challengeOf(art).request.amount, "1500");
      await art.body?.cancel();

      assert.equal(fake.paymentIntentCreates().length, 0);
    },
    (fake) => ({
      ...MPP_ON(fake),
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    }),
  ));

Deno.test("a payment made with the library's client starts the job once, answers a receipt and is on the ledger; its credential never pays twice", () =>
  withBilling(async (app, fake) => {
    const { accountId, key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const path = `/v1/projects/${projectId}/audits`;
    const wallet = agentWallet(fake);

    const first = await post(app, path, key, { idempotencyKey: "audit-1" });
    assert.equal(first.status, 402);
    const credential = await wallet.createCredential(first);
    assert.match(credential, /^Payment /);
    assert.equal(fake.paymentIntentCreates().length, 0, "nothing charged before the retry");

    const paid = await post(app, path, key, { idempotencyKey: "audit-1", credential });
    const started = await paid.json();
    assert.equal(paid.status, 202, JSON.stringify(started));
    const receipt = Receipt.deserialize(paid.headers.get("payment-receipt")!);
    assert.equal(receipt.status, "success");
    assert.equal(receipt.method, "stripe");
    assert.match(receipt.reference, /^pi_/);

    // Stripe: one PaymentIntent of 25 USD, confirmed with the agent's shared payment token.
    const [create] = fake.paymentIntentCreates();
    assert.equal(create.form.amount, "2500");
    assert.equal(create.form.currency, "usd");
    assert.equal(create.form.confirm, "true");
    assert.match(create.form.shared_payment_granted_token, /^spt_test_/);
    assert.equal(create.form["metadata[account_id]"], accountId);
    assert.equal(create.form["metadata[operation]"], "audits.start");
    assert.match(create.headers.get("stripe-version") ?? "", /\.preview$/);
    assert.equal(fake.paymentIntents.get(receipt.reference)?.status, "succeeded");

    // The ledger: the payment's credits granted, then the audit's debit; the balance is back.
    const ledger = await listLedger(app.kv, accountId);
    assert.deepEqual(
      ledger.map((e) => [e.kind, e.amount, e.reason, e.ref]),
      [
        ["grant", 25, "machine_payment", receipt.reference],
        ["debit", 25, "technical_audit", started.audit_id],
      ],
    );
    assert.equal(await balanceOf(app, accountId), 0);
    const payment = (await read(app.kv, keys.stripePayment(receipt.reference))).value;
    assert.equal(payment?.amount, 2500);
    assert.equal(payment?.currency, "usd");
    assert.equal(payment?.packId, "machine_payment");
    assert.equal(payment?.accountId, accountId);

    // The same request again (same Idempotency-Key): the stored answer and its receipt.
    const replay = await post(app, path, key, { idempotencyKey: "audit-1", credential });
    assert.equal(replay.status, 202);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal((await replay.json()).audit_id, started.audit_id);
    assert.equal(replay.headers.get("payment-receipt"), paid.headers.get("payment-receipt"));
    assert.equal(fake.paymentIntentCreates().length, 1, "a replay does not reach Stripe");

    // The audit ends; the credential once more, under a new key: Stripe replays its idempotent
    // create, the library refuses it, nothing is granted or started.
    await waitForAudit(app, key, started.audit_id);
    const again = await post(app, path, key, { idempotencyKey: "audit-2", credential });
    assert.equal(again.status, 402);
    assert.ok(challengeOf(again).id !== challengeOf(first).id, "a fresh challenge");
    const refused = await again.json();
    assert.equal(refused.error.code, "insufficient_credits");
    assert.match(refused.payment_refused, /already/i);
    assert.equal(fake.paymentIntents.size, 1, "no second PaymentIntent");
    assert.equal(await auditCount(app, accountId, projectId), 1, "one audit");
    assert.equal((await listLedger(app.kv, accountId)).length, 2);
  }, MPP_ON));

Deno.test("a credential for another price, route or account is refused; a declined card starts nothing", () =>
  withBilling(
    async (app, fake) => {
      const a = await liveAccount(app);
      const b = await liveAccount(app);
      const projectA = await newProject(app, a.key);
      const projectB = await newProject(app, b.key);
      const wallet = agentWallet(fake);

      // Paid for A's audit (25 USD): not for A's article (15 USD), nor for B's audit.
      const challengeRes = await post(app, `/v1/projects/${projectA}/audits`, a.key);
      const credential = await wallet.createCredential(challengeRes);
      const article = await post(app, `/v1/projects/${projectA}/articles`, a.key, {
        body: { topic: "Not what was paid for" },
        credential,
      });
      assert.equal(article.status, 402);
      assert.ok((await article.json()).payment_refused);
      const other = await post(app, `/v1/projects/${projectB}/audits`, b.key, { credential });
      assert.equal(other.status, 402);
      assert.ok((await other.json()).payment_refused);
      assert.equal(fake.paymentIntentCreates().length, 0, "refused before Stripe");

      // A declined card: 402 again with a fresh challenge; no audit, no ledger line.
      const declining = agentWallet(fake, "pm_card_chargeDeclined");
      const retry = await post(app, `/v1/projects/${projectA}/audits`, a.key);
      const declined = await post(app, `/v1/projects/${projectA}/audits`, a.key, {
        credential: await declining.createCredential(retry),
      });
      assert.equal(declined.status, 402);
      assert.ok(declined.headers.get("www-authenticate"));
      assert.match((await declined.json()).payment_refused, /declined/i);
      assert.equal(await auditCount(app, a.accountId, projectA), 0);
      assert.deepEqual(await listLedger(app.kv, a.accountId), []);
    },
    (fake) => ({
      ...MPP_ON(fake),
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
    }),
  ));

Deno.test("a machine-paid article that fails is refunded to the account's credit balance", async () => {
  // A model that refuses (401 is not retried): the article fails.
  const model = startFakeOpenAI(() => ({ status: 401, body: { error: { message: "bad key" } } }));
  try {
    await withBilling(
      async (app, fake) => {
        const { accountId, key } = await liveAccount(app);
        const projectId = await newProject(app, key);
        // The library's fetch pays the 402 and retries by itself.
        const wallet = agentWallet(fake);
        const res = await wallet.fetch(`${app.url}/v1/projects/${projectId}/articles`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ topic: "Paid, then failed" }),
        });
        const started = await res.json();
        assert.equal(res.status, 202, JSON.stringify(started));
        assert.ok(res.headers.get("payment-receipt"));
        const failed = await waitForArticle(app, key, started.article_id);
        assert.equal(failed.body.status, "failed");
        assert.equal(await balanceOf(app, accountId), 15, "refunded as credits");
        assert.deepEqual(
          (await listLedger(app.kv, accountId)).map((e) => [e.kind, e.amount, e.reason]),
          [
            ["grant", 15, "machine_payment"],
            ["debit", 15, "article_generated"],
            ["refund", 15, "refund_article_generated"],
          ],
        );
        assert.equal(fake.paymentIntents.size, 1);
      },
      (fake) => ({ ...MPP_ON(fake), OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: model.baseURL }),
    );
  } finally {
    await model.close();
  }
});

/** Audits `url` with `key` to completion; returns the audit id. */
async function completedAudit(app: TestApp, key: string, url: string) {
  const projectId = await newProject(app, key, url);
  const audit = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
  assert.equal(audit.status, 202, audit.text);
  const done = await waitForAudit(app, key, audit.body.audit_id);
  assert.equal(done.body.status, "completed", done.text);
  return audit.body.audit_id as string;
}

Deno.test("a re-check's challenge asks its per-URL price; a sandbox key's 402 payment_required has none", () =>
  withBilling(async (app) => {
    const site = serveSite((p) => p === "/" ? html(page({ title: null, links: [] })) : undefined);
    try {
      const { accountId, key, sandboxKey } = await liveAccount(app);
      await grantCredits(app, accountId, 25);
      const auditId = await completedAudit(app, key, site.origin);
      const res = await app.req("POST", `/v1/audits/${auditId}/issues/title_missing/recheck`, {
        key,
      });
      assert.equal(res.status, 402, res.text);
      assert.equal(errorCode(res), "insufficient_credits");
      assert.equal(res.body.required_credits, 1);
      assert.equal(
        Challenge.deserialize(res.headers.get("www-authenticate")!).request.amount,
        "100",
      );

      // The trial's audit, then its re-check: 402 payment_required without a challenge (a
      // sandbox key never pays per job; an agent with its own wallet upgrades the account).
      const sandboxAudit = await completedAudit(app, sandboxKey, site.origin);
      const sb = await app.req("POST", `/v1/audits/${sandboxAudit}/issues/title_missing/recheck`, {
        key: sandboxKey,
      });
      assert.equal(sb.status, 402, sb.text);
      assert.equal(errorCode(sb), "payment_required");
      assert.equal(sb.headers.get("www-authenticate"), null);
    } finally {
      await site.close();
    }
  }, MPP_ON));

Deno.test("MCP: the 402 tool error carries the challenge; mppx's MCP client pays it, the result carries the receipt", () =>
  withBilling(async (app, fake) => {
    const { accountId, key } = await liveAccount(app);
    const projectId = await newProject(app, key);
    const client = await connectMcp(app, { key });
    try {
      const start = { action: "start", project_id: projectId, idempotency_key: "mcp-audit-1" };
      const refused = await callError(client, "audits", start);
      assert.equal(refused.code, "insufficient_credits");
      const [challenge] = refused.body.machine_payment.challenges;
      assert.equal(challenge.method, "stripe");
      assert.equal(challenge.request.amount, "2500");
      assert.match(refused.text, /org\.paymentauth\/credential/);

      // The library's MCP client answers the challenge and repeats the call with the credential.
      McpClient.wrap(client, { methods: [walletMethod(fake, "pm_card_visa")] });
      const paid = await client.callTool({ name: "audits", arguments: start });
      assert.notEqual(paid.isError, true, JSON.stringify(paid.content));
      // deno-lint-ignore no-explicit-any
      const structured = paid.structuredContent as any;
      assert.match(structured.audit_id, /^aud_/);
      // deno-lint-ignore no-explicit-any
      const receipt = (paid._meta as any)?.["org.paymentauth/receipt"];
      assert.equal(receipt?.status, "success");
      assert.match(receipt?.reference, /^pi_/);
      assert.equal(typeof receipt?.challengeId, "string");
      assert.deepEqual(
        (await listLedger(app.kv, accountId)).map((e) => [e.kind, e.amount, e.reason]),
        [["grant", 25, "machine_payment"], ["debit", 25, "technical_audit"]],
      );
      assert.equal(fake.paymentIntents.size, 1);
    } finally {
      await client.close();
    }
  }, MPP_ON));
