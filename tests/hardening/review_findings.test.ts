/**
 * Issue 16, section 1: each finding of the security review, reproduced against the running app.
 * Every test here failed before its fix.
 */
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../config.ts";
import type { Resolver } from "../../domain/net/address_guard.ts";
import { setWebhookNetOverrides } from "../../domain/webhooks/target.ts";
import { forwardedClient } from "../../routes/middleware/request_id.ts";
import { ADMIN_TOKEN, errorCode, freshIp, startTestApp, withApp } from "../helpers/app.ts";
import { grantCredits } from "../helpers/credits.ts";

const VICTIM_IP = "203.0.113.7";

Deno.test("signup replay: a spoofed X-Forwarded-For and another body never get the victim's key", () =>
  withApp(async (app) => {
    const idem = { "idempotency-key": "signup-1" };
    const victim = await app.req("POST", "/v1/accounts", {
      body: { email: "victim@example.com" },
      ip: VICTIM_IP,
      headers: idem,
    });
    assert.equal(victim.status, 201);

    // The attacker writes the victim's address first; the trusted proxy appends the real one.
    const spoofed = await app.req("POST", "/v1/accounts", {
      body: { email: "attacker@example.com" },
      ip: `${VICTIM_IP}, 198.51.100.9`,
      headers: idem,
    });
    assert.equal(spoofed.status, 201, spoofed.text);
    assert.equal(spoofed.headers.get("idempotent-replayed"), null);
    assert.notEqual(spoofed.body.api_key, victim.body.api_key);
    assert.notEqual(spoofed.body.account_id, victim.body.account_id);

    // Behind one NAT (same address), same key, other email: a conflict that says why.
    const nat = await app.req("POST", "/v1/accounts", {
      body: { email: "neighbour@example.com" },
      ip: VICTIM_IP,
      headers: idem,
    });
    assert.equal(nat.status, 409);
    assert.equal(errorCode(nat), "idempotency_conflict");
    assert.match(nat.body.error.message, /different request body/);
    assert.ok(!nat.text.includes(victim.body.api_key));

    // The victim's own retry (same body; key order and spacing do not matter) still replays.
    const retry = await app.req("POST", "/v1/accounts", {
      rawBody: '{ "email" : "victim@example.com" }',
      headers: { ...idem, "content-type": "application/json" },
      ip: VICTIM_IP,
    });
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get("idempotent-replayed"), "true");
    assert.equal(retry.text, victim.text);
    assert.equal(retry.headers.get("cache-control"), "no-store");
  }));

Deno.test("client address: the right-most hop behind TRUST_PROXY=n, never a client-written entry", () => {
  assert.equal(forwardedClient("1.1.1.1, 2.2.2.2, 3.3.3.3", 1), "3.3.3.3");
  assert.equal(forwardedClient("1.1.1.1, 2.2.2.2, 3.3.3.3", 2), "2.2.2.2");
  assert.equal(forwardedClient("3.3.3.3", 2), null);
  assert.equal(forwardedClient(undefined, 1), null);
  assert.equal(loadConfig({ TRUST_PROXY: "1" }).trustProxyHops, 1);
  assert.equal(loadConfig({ TRUST_PROXY: "true" }).trustProxyHops, 1);
  assert.equal(loadConfig({}).trustProxyHops, 0);
  assert.throws(() => loadConfig({ TRUST_PROXY: "yes" }), ConfigError);
  assert.throws(() => loadConfig({ CLIENT_IP_HEADER: "bad header" }), /CLIENT_IP_HEADER/);
});

Deno.test("client address: a spoofed first entry does not buy more signups; CLIENT_IP_HEADER wins", async () => {
  const app = await startTestApp();
  try {
    const real = "198.51.100.77";
    const codes: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await app.req("POST", "/v1/accounts", {
        body: { email: `spoof${i}@example.com` },
        ip: `10.0.0.${i}, ${real}`,
      });
      codes.push(res.status);
    }
    assert.deepEqual(codes, [201, 201, 201, 201, 201, 429, 429]);
  } finally {
    await app.close();
  }
  const behindCdn = await startTestApp({ env: { CLIENT_IP_HEADER: "cf-connecting-ip" } });
  try {
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await behindCdn.req("POST", "/v1/accounts", {
        body: { email: `cdn${i}@example.com` },
        ip: freshIp(), // ignored: the CDN's header names the client
        headers: { "cf-connecting-ip": "192.0.2.44" },
      });
      codes.push(res.status);
    }
    assert.deepEqual(codes, [201, 201, 201, 201, 201, 429]);
  } finally {
    await behindCdn.close();
  }
});

Deno.test("a sandbox key never replays a live key's answer; another live key gets a conflict", () =>
  withApp(async (app) => {
    const { key: sandbox, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const idem = { "idempotency-key": "rotate-2026-11" };
    const minted = await app.req("POST", "/v1/api-keys", {
      key: live,
      body: { name: "rotated" },
      headers: idem,
    });
    assert.equal(minted.status, 201);
    assert.match(minted.body.api_key, /^sk_live_/);

    const fromSandbox = await app.req("POST", "/v1/api-keys", {
      key: sandbox,
      body: { name: "rotated" },
      headers: idem,
    });
    assert.equal(fromSandbox.status, 201, fromSandbox.text);
    assert.equal(fromSandbox.headers.get("idempotent-replayed"), null);
    assert.match(fromSandbox.body.api_key, /^sk_sandbox_/);
    assert.ok(!fromSandbox.text.includes("sk_live_"));

    const otherLive = minted.body.api_key as string;
    const fromOtherLive = await app.req("POST", "/v1/api-keys", {
      key: otherLive,
      body: { name: "rotated" },
      headers: idem,
    });
    assert.equal(fromOtherLive.status, 409);
    assert.equal(errorCode(fromOtherLive), "idempotency_conflict");
    assert.match(fromOtherLive.body.error.message, /another API key/);

    // The key that sent it still gets its replay.
    const again = await app.req("POST", "/v1/api-keys", {
      key: live,
      body: { name: "rotated" },
      headers: idem,
    });
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.body.api_key, otherLive);
  }));

Deno.test("raw keys are not at rest: idempotency records hold neither the key nor the Idempotency-Key", () =>
  withApp(async (app) => {
    const idemSignup = "signup-at-rest";
    const signup = await app.req("POST", "/v1/accounts", {
      body: { email: "rest@example.com" },
      ip: freshIp(),
      headers: { "idempotency-key": idemSignup },
    });
    const sandbox = signup.body.api_key as string;
    const live = await app.liveKey(signup.body.account_id);
    const minted = await app.req("POST", "/v1/api-keys", {
      key: live,
      body: {},
      headers: { "idempotency-key": "mint-at-rest" },
    });
    const secrets = [sandbox, live, minted.body.api_key as string];
    let records = 0;
    for await (const e of app.kv.list({ prefix: [] })) {
      const text = JSON.stringify([e.key, e.value], (_k, v) => typeof v === "bigint" ? `${v}` : v);
      for (const s of secrets) assert.ok(!text.includes(s), `raw key in ${JSON.stringify(e.key)}`);
      if (e.key[0] === "idempotency") {
        records++;
        assert.ok(!text.includes(idemSignup) && !text.includes("mint-at-rest"), text);
      }
    }
    assert.equal(records, 2);
  }));

Deno.test("a sandbox key sees only the sandbox side: no live keys, live projects or balance", () =>
  withApp(async (app) => {
    const { key: sandbox, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const liveKeyId = (await app.req("GET", "/v1/api-keys", { key: live })).body.keys
      .find((k: { mode: string }) => k.mode === "live").id;
    const liveProject = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://shop.example.com" },
    });
    const sandboxProject = await app.req("POST", "/v1/projects", {
      key: sandbox,
      body: { url: "https://trial.example.com" },
    });
    await grantCredits(app, accountId, 500, { reason: "credit_pack", ref: "cs_test_scope" });

    const keys = (await app.req("GET", "/v1/api-keys", { key: sandbox })).body.keys;
    assert.deepEqual(keys.map((k: { mode: string }) => k.mode), ["sandbox"]);
    const revoke = await app.req("DELETE", `/v1/api-keys/${liveKeyId}`, { key: sandbox });
    assert.equal(revoke.status, 404);
    assert.equal(errorCode(revoke), "not_found");
    assert.equal((await app.req("GET", "/v1/account", { key: live })).status, 200);

    const projects = (await app.req("GET", "/v1/projects", { key: sandbox })).body.projects;
    assert.deepEqual(projects.map((p: { project_id: string }) => p.project_id), [
      sandboxProject.body.project_id,
    ]);
    const id = liveProject.body.project_id;
    assert.equal((await app.req("GET", `/v1/projects/${id}`, { key: sandbox })).status, 404);
    assert.equal(
      (await app.req("GET", `/v1/subscription?project_id=${id}`, { key: sandbox })).status,
      404,
    );
    assert.equal((await app.req("GET", "/v1/account", { key: sandbox })).body.projects_count, 1);
    const credits = await app.req("GET", "/v1/credits", { key: sandbox });
    assert.equal(credits.body.balance_credits, 0);
    assert.ok(credits.body.notes.some((n: string) => /Sandbox keys do not see/.test(n)));

    // A live key sees it all, sandbox side included.
    assert.equal((await app.req("GET", "/v1/credits", { key: live })).body.balance_credits, 500);
    assert.equal((await app.req("GET", "/v1/projects", { key: live })).body.projects.length, 2);
    assert.equal((await app.req("GET", "/v1/api-keys", { key: live })).body.keys.length, 2);
  }));

Deno.test("a sandbox key cannot read the live side's audits, findings or articles by id", () =>
  withApp(async (app) => {
    const { key: sandbox, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const project = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://shop.example.com" },
    });
    await grantCredits(app, accountId, 500, { reason: "credit_pack", ref: "cs_test_scope_work" });
    const id = project.body.project_id;
    const audit = await app.req("POST", `/v1/projects/${id}/audits`, { key: live });
    assert.equal(audit.status, 202, audit.text);
    const article = await app.req("POST", `/v1/projects/${id}/articles`, {
      key: live,
      body: { topic: "Choosing a shop theme" },
    });
    assert.equal(article.status, 202, article.text);
    const paths = [
      `/v1/audits/${audit.body.audit_id}`,
      `/v1/audits/${audit.body.audit_id}/issues`,
      `/v1/audits/${audit.body.audit_id}/issues/title_missing`,
      `/v1/audits/${audit.body.audit_id}/pages`,
      `/v1/articles/${article.body.article_id}`,
    ];
    for (const path of paths) {
      const res = await app.req("GET", path, { key: sandbox });
      assert.equal(res.status, 404, `${path}: ${res.text}`);
      assert.equal(errorCode(res), "not_found", path);
    }
    // The live key reads the same ids (findings listings answer 200 or 409 while running).
    for (const path of [paths[0], paths[4]]) {
      assert.equal((await app.req("GET", path, { key: live })).status, 200, path);
    }
    assert.notEqual((await app.req("GET", paths[1], { key: live })).status, 404);
  }));

Deno.test("operator surface: the token is checked before the body, and failed tokens are throttled", () =>
  withApp(async (app) => {
    const ip = freshIp();
    // A malformed body with a wrong token: 401 from the token check, never a JSON parse error.
    const early = await app.req("POST", "/admin/accounts/acct_x/live-keys", {
      rawBody: "{not json",
      headers: {
        authorization: "Bearer wrong-token-0000000000",
        "content-type": "application/json",
      },
      ip,
    });
    assert.equal(early.status, 401);
    assert.equal(errorCode(early), "unauthorized");

    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const res = await app.req("GET", "/admin/health", {
        headers: { authorization: `Bearer guess-${i}-000000000000` },
        ip,
      });
      statuses.push(res.status);
    }
    // The early attempt counted too: 9 more 401s, then 429s.
    assert.deepEqual(statuses, [...Array(9).fill(401), 429, 429]);
    const blocked = await app.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ip,
    });
    assert.equal(blocked.status, 429, "right token from a throttled address: still 429");
    assert.match(blocked.headers.get("retry-after") ?? "", /^\d+$/);
    const elsewhere = await app.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ip: freshIp(),
    });
    assert.equal(elsewhere.status, 200);
    app.clock.advance(10 * 60_000);
    const later = await app.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      ip,
    });
    assert.equal(later.status, 200);
  }));

Deno.test("an account-wide ceiling: more keys do not buy more requests", async () => {
  const app = await startTestApp({ env: { ACCOUNT_RATE_LIMIT_PER_MINUTE: "5" } });
  try {
    const { key: first } = await app.signup();
    const second = (await app.req("POST", "/v1/api-keys", { key: first, body: {} })).body.api_key;
    const statuses: number[] = [];
    for (const key of [first, second, first, second, first, second]) {
      statuses.push((await app.req("GET", "/v1/account", { key })).status);
    }
    // The mint was request 1 of 5.
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
    const refused = await app.req("GET", "/v1/account", { key: second });
    assert.equal(errorCode(refused), "rate_limited");
    assert.equal(refused.headers.get("x-ratelimit-limit"), "5");
    assert.equal(refused.headers.get("x-ratelimit-remaining"), "0");
  } finally {
    await app.close();
  }
});

/** DNS for the tests below: names to addresses; anything else does not resolve. */
function fakeDns(table: Record<string, string[]>): Resolver {
  return (host) => Promise.resolve(table[host] ?? []);
}

const DNS = fakeDns({
  "shop.example.com": ["93.184.215.14"],
  "intranet.corp.example": ["10.0.0.5"],
  "metadata.corp.example": ["169.254.169.254"],
});

Deno.test("project URLs pointing at internal addresses are refused at creation, slot unspent", async () => {
  const app = await startTestApp({ env: { ALLOW_PRIVATE_TARGETS: "0" } });
  try {
    app.service.services.deps.resolver = DNS;
    const { key } = await app.signup();
    const refused = [
      "http://169.254.169.254/latest/meta-data/",
      "http://127.0.0.1:8080/",
      "http://[::1]/",
      "http://2130706433/",
      "https://intranet.corp.example/",
      "https://metadata.corp.example/",
      "https://does-not-exist.corp.example/",
    ];
    const messages = new Set<string>();
    for (const url of refused) {
      const res = await app.req("POST", "/v1/projects", { key, body: { url } });
      assert.equal(res.status, 400, `${url}: ${res.text}`);
      assert.equal(errorCode(res), "invalid_request");
      messages.add(res.body.error.message);
    }
    // One text for "internal" and "does not resolve": no probing of internal names.
    assert.equal(messages.size, 1, [...messages].join(" | "));
    const ok = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://shop.example.com" },
    });
    assert.equal(ok.status, 201, "the sandbox's one project slot was not spent by refusals");
  } finally {
    await app.close();
  }
});

Deno.test("webhook registration says the same for a name that does not resolve and an internal one", async () => {
  const app = await startTestApp({ env: { ALLOW_PRIVATE_TARGETS: "0" } });
  try {
    setWebhookNetOverrides(app.service.services.deps, { resolver: DNS });
    const { key } = await app.signup();
    const internal = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: "https://intranet.corp.example/hook" },
    });
    const missing = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: "https://does-not-exist.corp.example/hook" },
    });
    assert.equal(internal.status, 400);
    assert.equal(missing.status, 400);
    assert.equal(internal.body.error.message, missing.body.error.message);
  } finally {
    await app.close();
  }
});

Deno.test("small leaks: no-store on secrets, nosniff on JSON, a 404 that echoes nothing", () =>
  withApp(async (app) => {
    const signup = await app.req("POST", "/v1/accounts", {
      body: { email: "leaks@example.com" },
      ip: freshIp(),
    });
    assert.equal(signup.headers.get("cache-control"), "no-store");
    assert.equal(signup.headers.get("x-content-type-options"), "nosniff");
    const key = signup.body.api_key;
    const minted = await app.req("POST", "/v1/api-keys", { key, body: {} });
    assert.equal(minted.headers.get("cache-control"), "no-store");
    const live = await app.req("POST", `/admin/accounts/${signup.body.account_id}/live-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(live.headers.get("cache-control"), "no-store");
    const hook = await app.req("POST", "/v1/webhooks", {
      key,
      body: { url: "http://127.0.0.1:9/hook" },
    });
    assert.equal(hook.status, 201);
    assert.equal(hook.headers.get("cache-control"), "no-store");
    // The public price list stays cacheable.
    const plans = await app.req("GET", "/v1/plans");
    assert.equal(plans.headers.get("cache-control"), "public, max-age=300");
    assert.equal(plans.headers.get("x-content-type-options"), "nosniff");

    const probe = "/v1/%3Cscript%3Ealert(1)%3C%2Fscript%3E";
    const notFound = await app.req("GET", probe, { key });
    assert.equal(notFound.status, 404);
    assert.equal(notFound.headers.get("x-content-type-options"), "nosniff");
    assert.ok(!/script|alert/i.test(notFound.text), notFound.text);
  }));

Deno.test("slow clients: a body that trickles in is cut off with 408, on /v1 and /webhooks/stripe", async () => {
  const app = await startTestApp({
    env: { REQUEST_BODY_TIMEOUT_MS: "300", STRIPE_WEBHOOK_SECRET: "whsec_test" },
  });
  try {
    const { key } = await app.signup();
    const port = Number(new URL(app.url).port);
    for (
      const head of [
        `POST /v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`,
        `POST /webhooks/stripe HTTP/1.1\r\nHost: x\r\nStripe-Signature: t=1,v1=00\r\n`,
      ]
    ) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      const started = performance.now();
      await conn.write(
        new TextEncoder().encode(
          `${head}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"url":`,
        ),
      );
      const buf = new Uint8Array(4096);
      const n = await conn.read(buf);
      const elapsed = performance.now() - started;
      conn.close();
      const text = new TextDecoder().decode(buf.subarray(0, n ?? 0));
      assert.match(text, /^HTTP\/1\.1 408/, text);
      assert.match(text, /request_timeout/);
      assert.ok(elapsed < 5_000, `answered after ${elapsed} ms`);
    }
  } finally {
    await app.close();
  }
});
