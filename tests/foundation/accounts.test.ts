import assert from "node:assert/strict";
import { errorCode, freshIp, withApp } from "../helpers/app.ts";

Deno.test("POST /v1/accounts returns a sandbox key at once, normalising the email", () =>
  withApp(async (app) => {
    const res = await app.req("POST", "/v1/accounts", {
      body: { email: "  Agent.Smith@Example.COM ", company_name: "Acme", origin: "human" },
      ip: freshIp(),
    });
    assert.equal(res.status, 201);
    assert.match(res.body.api_key, /^sk_sandbox_[A-Za-z0-9]{40}$/);
    assert.match(res.body.account_id, /^acct_/);
    assert.equal(res.body.mode, "sandbox");
    assert.deepEqual(res.body.sandbox_limits, { audits: 1, articles: 2, expires_days: 14 });
    assert.match(res.body.upgrade_url, /\/pricing$/);
    assert.match(res.body.docs, /\/docs\/agents$/);

    const me = await app.req("GET", "/v1/account", { key: res.body.api_key });
    assert.equal(me.status, 200);
    assert.equal(me.body.email, "agent.smith@example.com");
    assert.equal(me.body.email_verified, false);
    assert.equal(me.body.mode, "sandbox");
    assert.equal(me.body.plan, null);
    assert.equal(me.body.projects_count, 0);
    assert.deepEqual(me.body.sandbox_usage, { audits: 0, articles: 0 });
    assert.deepEqual(me.body.sandbox_limits, { audits: 1, articles: 2, expires_days: 14 });
    assert.equal(me.body.created_at, "2026-11-23T12:00:00.000Z");
  }));

Deno.test("POST /v1/accounts refuses a registered email, in any case, with 409 account_exists", () =>
  withApp(async (app) => {
    await app.signup("dup@example.com");
    const res = await app.req("POST", "/v1/accounts", {
      body: { email: "DUP@example.com" },
      ip: freshIp(),
    });
    assert.equal(res.status, 409);
    assert.equal(errorCode(res), "account_exists");
  }));

Deno.test("POST /v1/accounts: concurrent signups for one email create exactly one account", () =>
  withApp(async (app) => {
    const results = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          app.req("POST", "/v1/accounts", { body: { email: "race@example.com" }, ip: freshIp() }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    assert.deepEqual(statuses, [201, 409, 409, 409, 409, 409, 409, 409]);
  }));

Deno.test("POST /v1/accounts validates every field and names it", () =>
  withApp(async (app) => {
    const cases: [unknown, RegExp][] = [
      [{}, /^email:/],
      [{ email: "not-an-email" }, /^email:/],
      [{ email: `${"a".repeat(315)}@x.com` }, /^email:/],
      [{ email: 42 }, /^email:/],
      [{ email: "a@b.co", company_name: "" }, /^company_name:/],
      [{ email: "a@b.co", company_name: "x".repeat(201) }, /^company_name:/],
      [{ email: "a@b.co", origin: "robot" }, /^origin:/],
      [{ email: "a@b.co", admin: true }, /admin/],
      [[], /./],
      ["a@b.co", /./],
    ];
    for (const [body, message] of cases) {
      const res = await app.req("POST", "/v1/accounts", { body, ip: freshIp() });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message, JSON.stringify(body));
    }
    // Nothing was created by any of them.
    const ok = await app.req("POST", "/v1/accounts", { body: { email: "a@b.co" }, ip: freshIp() });
    assert.equal(ok.status, 201);
  }));

Deno.test("POST /v1/accounts allows 5 signups per hour per IP, then 429 with Retry-After", () =>
  withApp(async (app) => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const res = await app.req("POST", "/v1/accounts", { body: { email: `s${i}@x.com` }, ip });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get("x-ratelimit-limit"), "5");
      assert.equal(res.headers.get("x-ratelimit-remaining"), String(4 - i));
    }
    const res = await app.req("POST", "/v1/accounts", { body: { email: "s5@x.com" }, ip });
    assert.equal(res.status, 429);
    assert.equal(errorCode(res), "rate_limited");
    const retry = Number(res.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 3600, `Retry-After ${retry}`);
    assert.equal(res.headers.get("x-ratelimit-remaining"), "0");
    // Another IP is unaffected; the next hour the first IP may sign up again.
    assert.equal(
      (await app.req("POST", "/v1/accounts", { body: { email: "o@x.com" }, ip: freshIp() }))
        .status,
      201,
    );
    app.clock.advance(3_600_000);
    assert.equal(
      (await app.req("POST", "/v1/accounts", { body: { email: "s6@x.com" }, ip })).status,
      201,
    );
  }));

Deno.test("signup replays with the same Idempotency-Key from the same IP, raw key included", () =>
  withApp(async (app) => {
    const ip = freshIp();
    const headers = { "idempotency-key": "signup-1" };
    const first = await app.req("POST", "/v1/accounts", {
      body: { email: "idem@example.com" },
      ip,
      headers,
    });
    assert.equal(first.status, 201);
    const again = await app.req("POST", "/v1/accounts", {
      body: { email: "idem@example.com" },
      ip,
      headers,
    });
    assert.equal(again.status, 201);
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.equal(again.text, first.text);
    // Scope is per IP: the same key from another IP is a new request, and the email is taken.
    const other = await app.req("POST", "/v1/accounts", {
      body: { email: "idem@example.com" },
      ip: freshIp(),
      headers,
    });
    assert.equal(other.status, 409);
    assert.equal(errorCode(other), "account_exists");
  }));

Deno.test("GET /v1/account maps every bad credential to its 401 code", () =>
  withApp(async (app) => {
    const cases: [Record<string, string>, string][] = [
      [{}, "unauthorized"],
      [{ authorization: "Basic abc" }, "unauthorized"],
      [{ authorization: "Bearer" }, "unauthorized"],
      [{ authorization: "Bearer sk_sandbox_unknownunknownunknown" }, "unauthorized"],
      [{ authorization: "Bearer sk_live_!!!!!!!!!" }, "unauthorized"],
    ];
    for (const [headers, code] of cases) {
      const res = await app.req("GET", "/v1/account", { headers });
      assert.equal(res.status, 401);
      assert.equal(errorCode(res), code);
      assert.ok(res.headers.get("x-ratelimit-limit"), "rate headers on 401");
    }
  }));

Deno.test("sandbox keys expire after 14 days with 401 key_expired (injected clock)", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    app.clock.advance(14 * 86_400_000 - 1000);
    assert.equal((await app.req("GET", "/v1/account", { key })).status, 200);
    // A key minted now inherits the same expiry.
    const minted = await app.req("POST", "/v1/api-keys", { key, body: { name: "rotated" } });
    assert.equal(minted.status, 201);
    app.clock.advance(2000);
    for (const k of [key, minted.body.api_key]) {
      const res = await app.req("GET", "/v1/account", { key: k });
      assert.equal(res.status, 401);
      assert.equal(errorCode(res), "key_expired");
    }
  }));
