import assert from "node:assert/strict";
import { configNotices, loadConfig } from "../../config.ts";
import { keys } from "../../kv/keys.ts";
import type { Resolver } from "../../domain/net/address_guard.ts";
import { setWebhookNetOverrides } from "../../domain/webhooks/target.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { quiet } from "../helpers/jobs.ts";
import { emit, startReceiver } from "./helpers.ts";

const HOOK = "http://127.0.0.1:9/hook";

async function count(app: TestApp, accountId: string): Promise<number> {
  return (await app.kv.get<number>(keys.webhookCount(accountId))).value ?? 0;
}

Deno.test("POST /v1/webhooks returns the secret once with the signature scheme; GET masks it", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const res = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: HOOK, events: ["audit.completed", "audit.completed", "credits.updated"] },
    });
    assert.equal(res.status, 201);
    assert.match(res.body.webhook_id, /^wh_/);
    assert.equal(res.body.url, HOOK);
    assert.deepEqual(res.body.events, ["audit.completed", "credits.updated"]);
    assert.equal(res.body.active, true);
    assert.equal(res.body.created_at, "2026-11-23T12:00:00.000Z");
    assert.match(res.body.secret, /^[0-9a-f]{64}$/);
    assert.equal(res.body.signature_header, "X-Serpwright-Signature");
    assert.equal(res.body.signature_scheme, "hex(hmac_sha256(secret, raw_body))");
    // The v2 signature receivers should verify, named in the response (additive fields).
    assert.equal(res.body.signature_v2_header, "X-Serpwright-Signature-V2");
    assert.equal(
      res.body.signature_v2_scheme,
      "v2=hex(hmac_sha256(secret, delivery_id + '.' + timestamp + '.' + raw_body))",
    );
    assert.equal(res.body.timestamp_header, "X-Serpwright-Timestamp");
    assert.ok(res.headers.get("x-ratelimit-limit"));
    const secret: string = res.body.secret;

    const list = await app.req("GET", "/v1/webhooks", { key });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, {
      webhooks: [{
        webhook_id: res.body.webhook_id,
        url: HOOK,
        events: ["audit.completed", "credits.updated"],
        active: true,
        created_at: "2026-11-23T12:00:00.000Z",
        secret: `••••${secret.slice(-4)}`,
        failure_count: 0,
        last_success_at: null,
        last_failure_at: null,
      }],
    });
    assert.ok(!list.text.includes(secret));

    // Only ciphertext is stored: the raw secret appears nowhere in KV.
    for await (const e of app.kv.list({ prefix: [] })) {
      assert.ok(!JSON.stringify(e.value).includes(secret), `secret found under ${e.key}`);
    }
    assert.equal(await count(app, accountId), 1);
  }));

Deno.test("GET /v1/webhooks lists oldest first and only the caller's endpoints", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const b = await app.signup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      app.clock.advance(1000);
      const r = await app.req("POST", "/v1/webhooks", { key: a.key, body: { url: `${HOOK}${i}` } });
      ids.push(r.body.webhook_id);
    }
    await app.req("POST", "/v1/webhooks", { key: b.key, body: { url: HOOK } });
    const list = await app.req("GET", "/v1/webhooks", { key: a.key });
    assert.deepEqual(list.body.webhooks.map((w: { webhook_id: string }) => w.webhook_id), ids);
    assert.deepEqual(list.body.webhooks[0].events, []);
  }));

Deno.test("POST /v1/webhooks validates the body, names the field, and creates nothing", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const cases: [unknown, RegExp][] = [
      [{}, /^url:/],
      [{ url: 42 }, /^url:/],
      [{ url: "" }, /^url:/],
      [{ url: "not a url" }, /^url:/],
      [{ url: "ftp://example.com/x" }, /^url:/],
      [{ url: `https://example.com/${"a".repeat(2100)}` }, /^url:/],
      [{ url: HOOK, events: ["audit.done"] }, /^events/],
      [{ url: HOOK, events: "audit.completed" }, /^events/],
      [{ url: HOOK, events: [1] }, /^events/],
      [{ url: HOOK, secret: "mine" }, /secret/],
      [[], /./],
    ];
    for (const [body, message] of cases) {
      const res = await app.req("POST", "/v1/webhooks", { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    const bad = await app.req("POST", "/v1/webhooks", {
      key,
      rawBody: "{nope",
      headers: { "content-type": "application/json" },
    });
    assert.equal(errorCode(bad), "invalid_request");
    const list = await app.req("GET", "/v1/webhooks", { key });
    assert.deepEqual(list.body.webhooks, []);
    assert.equal(await count(app, accountId), 0);

    // The reserved names are accepted as filters.
    const ok = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: HOOK, events: ["article.generated", "usage.threshold_reached"] },
    });
    assert.equal(ok.status, 201);
  }));

Deno.test("POST /v1/webhooks needs a key", () =>
  withApp(async (app) => {
    const res = await app.req("POST", "/v1/webhooks", { body: { url: HOOK } });
    assert.equal(res.status, 401);
    assert.equal(errorCode(res), "unauthorized");
    assert.equal(errorCode(await app.req("GET", "/v1/webhooks")), "unauthorized");
    assert.equal(errorCode(await app.req("DELETE", "/v1/webhooks/wh_x")), "unauthorized");
  }));

Deno.test("at most 20 endpoints per account, enforced under concurrency (409 limit_reached)", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const results = await Promise.all(
      Array.from(
        { length: 26 },
        (_, i) => app.req("POST", "/v1/webhooks", { key, body: { url: `${HOOK}/${i}` } }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 409);
    assert.equal(created.length, 20);
    assert.equal(refused.length, 6);
    for (const r of refused) assert.equal(errorCode(r), "limit_reached");
    assert.equal(await count(app, accountId), 20);
    const list = await app.req("GET", "/v1/webhooks", { key });
    assert.equal(list.body.webhooks.length, 20);

    // Deleting one frees a slot; other accounts are unaffected.
    const del = await app.req("DELETE", `/v1/webhooks/${created[0].body.webhook_id}`, { key });
    assert.equal(del.status, 200);
    const again = await app.req("POST", "/v1/webhooks", { key, body: { url: HOOK } });
    assert.equal(again.status, 201);
    const other = await app.signup();
    assert.equal(
      (await app.req("POST", "/v1/webhooks", { key: other.key, body: { url: HOOK } })).status,
      201,
    );
  }));

Deno.test("POST /v1/webhooks has no Idempotency-Key: a repeat creates a second endpoint", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const headers = { "idempotency-key": "same-key" };
    const a = await app.req("POST", "/v1/webhooks", { key, body: { url: HOOK }, headers });
    const b = await app.req("POST", "/v1/webhooks", { key, body: { url: HOOK }, headers });
    assert.equal(a.status, 201);
    assert.equal(b.status, 201);
    assert.notEqual(a.body.webhook_id, b.body.webhook_id);
    assert.equal(b.headers.get("idempotent-replayed"), null);
  }));

Deno.test("DELETE /v1/webhooks/{id} removes it; missing and foreign ids are 404", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const b = await app.signup();
    const hook = await app.req("POST", "/v1/webhooks", { key: a.key, body: { url: HOOK } });
    const id = hook.body.webhook_id;

    const foreign = await app.req("DELETE", `/v1/webhooks/${id}`, { key: b.key });
    assert.equal(foreign.status, 404);
    assert.equal(errorCode(foreign), "not_found");

    const del = await app.req("DELETE", `/v1/webhooks/${id}`, { key: a.key });
    assert.equal(del.status, 200);
    assert.deepEqual(del.body, { deleted: true, webhook_id: id });
    const twice = await app.req("DELETE", `/v1/webhooks/${id}`, { key: a.key });
    assert.equal(errorCode(twice), "not_found");
    assert.deepEqual((await app.req("GET", "/v1/webhooks", { key: a.key })).body.webhooks, []);
    assert.equal(await count(app, a.accountId), 0);
  }));

Deno.test("without WEBHOOK_ENCRYPTION_KEY, POST /v1/webhooks answers 503 webhooks_not_configured and stores nothing", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const res = await app.req("POST", "/v1/webhooks", { key, body: { url: HOOK } });
    assert.equal(res.status, 503);
    assert.equal(errorCode(res), "webhooks_not_configured");
    assert.match(res.body.error.message, /WEBHOOK_ENCRYPTION_KEY/);
    assert.equal(await count(app, accountId), 0);
    assert.deepEqual((await app.req("GET", "/v1/webhooks", { key })).body.webhooks, []);
  }, { env: { WEBHOOK_ENCRYPTION_KEY: "" } }));

Deno.test("at start, the service names each unset variable that turns a feature off", () => {
  const bare = configNotices(loadConfig({}));
  for (const name of ["WEBHOOK_ENCRYPTION_KEY", "STRIPE_SECRET_KEY", "ADMIN_TOKEN", "SMTP_URL"]) {
    assert.ok(bare.some((n) => n.includes(name)), `${name} is named in ${bare.join(" | ")}`);
  }
  const full = configNotices(loadConfig({
    WEBHOOK_ENCRYPTION_KEY: btoa("k".repeat(32)),
    STRIPE_SECRET_KEY: "sk_test_x",
    STRIPE_WEBHOOK_SECRET: "whsec_x",
    STRIPE_PRICE_BASIC: "price_a",
    STRIPE_PRICE_PRO: "price_b",
    STRIPE_PRICE_PACK_500: "price_c",
    STRIPE_PRICE_PACK_2000: "price_d",
    STRIPE_PRICE_PACK_10000: "price_e",
    ADMIN_TOKEN: "t".repeat(20),
    OPENAI_API_KEY: "sk-x",
    SMTP_URL: "smtps://mailer:pw@mail.example:465",
    MAIL_FROM: "Serpwright <noreply@example.com>",
  }));
  assert.deepEqual(full, []);
});

/** A fake DNS: the names the refusal test uses, and one public name. */
const fakeDns: Resolver = (host) => {
  const table: Record<string, string[]> = {
    "hooks.example.com": ["93.184.216.34"],
    "internal.example.com": ["10.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "mixed.example.com": ["93.184.216.34", "192.168.0.10"],
    "v6local.example.com": ["2606:2800:220:1::1", "::1"],
    "localhost": ["127.0.0.1", "::1"],
  };
  return Promise.resolve(table[host] ?? []);
};

Deno.test("without ALLOW_PRIVATE_TARGETS every internal or non-https address form is refused", () =>
  withApp(async (app) => {
    setWebhookNetOverrides(app.service.services.deps, { resolver: fakeDns });
    const { key, accountId } = await app.signup();
    const refused = [
      "http://hooks.example.com/plain-http",
      "https://127.0.0.1/hook",
      "https://127.1.2.3/hook",
      "https://localhost/hook",
      "https://10.0.0.1/hook",
      "https://172.16.5.4/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest/meta-data/",
      "https://100.64.0.1/hook",
      "https://0.0.0.0/hook",
      "https://[::1]/hook",
      "https://[fe80::1]/hook",
      "https://[fd00:ec2::254]/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://[::ffff:a9fe:a9fe]/hook",
      "https://2130706433/hook",
      "https://0x7f.1/hook",
      "https://0177.0.0.1/hook",
      "https://224.0.0.1/hook",
      "https://internal.example.com/hook",
      "https://metadata.example.com/hook",
      "https://mixed.example.com/hook",
      "https://v6local.example.com/hook",
      "https://does-not-resolve.example.com/hook",
      "https://user:pass@hooks.example.com/hook",
    ];
    for (const url of refused) {
      const res = await app.req("POST", "/v1/webhooks", { key, body: { url } });
      assert.equal(res.status, 400, url);
      assert.equal(errorCode(res), "invalid_request", url);
      assert.match(res.body.error.message, /^url:/, url);
      // No resolved internal address is echoed back to the caller.
      assert.ok(!/10\.0\.0\.1|169\.254|192\.168/.test(res.body.error.message), url);
    }
    assert.equal(await count(app, accountId), 0);

    const ok = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: "https://hooks.example.com/serpwright#frag" },
    });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.url, "https://hooks.example.com/serpwright");
  }, { env: { ALLOW_PRIVATE_TARGETS: "0" } }));

Deno.test("webhook endpoints follow the key's side: a sandbox key's see only sandbox events", () =>
  withApp(async (app) => {
    const sandboxRx = startReceiver();
    const liveRx = startReceiver();
    try {
      const { key: sandbox, accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      const trial = await app.req("POST", "/v1/projects", {
        key: sandbox,
        body: { url: "https://trial.example.com" },
      });
      const shop = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: "https://shop.example.com" },
      });
      const mine = await app.req("POST", "/v1/webhooks", {
        key: sandbox,
        body: { url: sandboxRx.url },
      });
      const theirs = await app.req("POST", "/v1/webhooks", {
        key: live,
        body: { url: liveRx.url },
      });
      assert.equal(mine.status, 201, mine.text);
      assert.equal(theirs.status, 201, theirs.text);

      // Lists and deletes: the sandbox key sees its side only; the live key sees both.
      const sandboxList = (await app.req("GET", "/v1/webhooks", { key: sandbox })).body.webhooks;
      assert.deepEqual(sandboxList.map((w: { webhook_id: string }) => w.webhook_id), [
        mine.body.webhook_id,
      ]);
      assert.equal((await app.req("GET", "/v1/webhooks", { key: live })).body.webhooks.length, 2);
      const del = await app.req("DELETE", `/v1/webhooks/${theirs.body.webhook_id}`, {
        key: sandbox,
      });
      assert.equal(del.status, 404);
      assert.equal(errorCode(del), "not_found");

      // Events: the live side's (a live project, the credit balance) never reach the sandbox's
      // endpoint; the sandbox project's reach both.
      await emit(app, accountId, "audit.completed", { project_id: shop.body.project_id });
      await emit(app, accountId, "credits.updated", { pack_id: "pack_500", credits_added: 500 });
      await emit(app, accountId, "audit.completed", { project_id: trial.body.project_id });
      const toLive = await liveRx.waitFor(3);
      const toSandbox = await sandboxRx.waitFor(1);
      await quiet(300);
      assert.equal(sandboxRx.received.length, 1, "only the sandbox project's event");
      assert.equal(toSandbox[0].body.data.project_id, trial.body.project_id);
      assert.equal(toLive.length, 3);
    } finally {
      await sandboxRx.close();
      await liveRx.close();
    }
  }));
