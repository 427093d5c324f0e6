import { openTestKv } from "../helpers/kv.ts";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import assert from "node:assert/strict";
import { errorCode, freshIp, withApp } from "../helpers/app.ts";

const RATE_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"];

function assertRateHeaders(headers: Headers, label: string): void {
  for (const h of RATE_HEADERS) {
    const v = headers.get(h);
    assert.ok(v !== null && /^\d+$/.test(v), `${label}: ${h}=${v}`);
  }
}

Deno.test("every /v1 response carries integer rate-limit headers, errors and public routes too", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const cases: [string, string, Record<string, unknown>][] = [
      ["GET", "/v1/account", { key }],
      ["GET", "/v1/account", {}],
      ["GET", "/v1/nope", { key }],
      ["GET", "/v1/nope", {}],
      ["DELETE", "/v1/account", { key }],
      ["POST", "/v1/projects", {
        key,
        rawBody: "{oops",
        headers: { "content-type": "application/json" },
      }],
      ["GET", "/v1/openapi.json", {}],
      ["POST", "/v1/accounts", { body: {}, ip: freshIp() }],
    ];
    for (const [method, path, opts] of cases) {
      const res = await app.req(method, path, opts);
      assertRateHeaders(res.headers, `${method} ${path} ${res.status}`);
      if (res.status >= 400) errorCode(res);
    }
  }));

Deno.test("unknown paths are 404 and wrong methods 405, in the error shape", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const nf = await app.req("GET", "/v1/does-not-exist", { key });
    assert.equal(nf.status, 404);
    assert.equal(errorCode(nf), "not_found");
    const root404 = await app.req("GET", "/nothing-here");
    assert.equal(root404.status, 404);
    assert.equal(errorCode(root404), "not_found");
    const wrong = await app.req("PATCH", "/v1/projects", { key, body: {} });
    assert.equal(wrong.status, 405);
    assert.equal(errorCode(wrong), "method_not_allowed");
    assert.equal(wrong.headers.get("allow"), "POST, GET");
  }));

Deno.test("malformed JSON, wrong content type, huge and deep bodies get 4xx in the error shape", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const json = { "content-type": "application/json" };
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ rawBody: "{not json", headers: json }, 400, /Malformed JSON/],
      [{ rawBody: '{"url": "https://a.b"', headers: json }, 400, /Malformed JSON/],
      [
        { rawBody: '{"url":"https://a.b"}', headers: { "content-type": "text/plain" } },
        400,
        /Content-Type/,
      ],
      [
        {
          rawBody: JSON.stringify({ url: "https://a.b", name: "x".repeat(70_000) }),
          headers: json,
        },
        413,
        /exceeds/,
      ],
      [{ rawBody: "[".repeat(5000) + "]".repeat(5000), headers: json }, 400, /nested/],
      [{ rawBody: "null", headers: json }, 400, /./],
      [{ rawBody: '"a string"', headers: json }, 400, /./],
    ];
    for (const [opts, status, message] of cases) {
      const res = await app.req("POST", "/v1/projects", { key, ...opts });
      assert.equal(res.status, status, `${String(opts.rawBody).slice(0, 30)} → ${res.text}`);
      errorCode(res);
      assert.match(res.body.error.message, message);
      assert.equal(res.text.includes("at "), false, "no stack trace");
    }
    assert.deepEqual((await app.req("GET", "/v1/projects", { key })).body.projects, []);
  }));

Deno.test("600 requests per minute per key, then 429 with Retry-After; other keys unaffected", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const other = await app.signup();
    let last = 0;
    for (let batch = 0; batch < 12; batch++) {
      const results = await Promise.all(
        Array.from({ length: 50 }, () => app.req("GET", "/v1/account", { key })),
      );
      for (const r of results) assert.equal(r.status, 200);
      last = Math.min(...results.map((r) => Number(r.headers.get("x-ratelimit-remaining"))));
    }
    assert.equal(last, 0);
    const limited = await app.req("GET", "/v1/account", { key });
    assert.equal(limited.status, 429);
    assert.equal(errorCode(limited), "rate_limited");
    assert.equal(limited.headers.get("x-ratelimit-limit"), "600");
    assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
    const retry = Number(limited.headers.get("retry-after"));
    assert.ok(retry >= 1 && retry <= 60);
    assert.equal(
      Number(limited.headers.get("x-ratelimit-reset")),
      Math.ceil((Math.floor(app.clock.now() / 60_000) + 1) * 60),
    );
    assert.equal((await app.req("GET", "/v1/account", { key: other.key })).status, 200);
    app.clock.advance(60_000);
    assert.equal((await app.req("GET", "/v1/account", { key })).status, 200);
  }));

Deno.test("rate limits hold across two app instances sharing one KV", async () => {
  const path = await Deno.makeTempFile({ suffix: ".sqlite" });
  const { startTestApp } = await import("../helpers/app.ts");
  // Wrapped as the service's openKv wraps them: two handles on one file meet SQLite's lock.
  const kvA = withBusyRetry(await openTestKv(path));
  const kvB = withBusyRetry(await openTestKv(path));
  const a = await startTestApp({ kv: kvA });
  const b = await startTestApp({ kv: kvB });
  try {
    const { key } = await a.signup();
    let ok = 0;
    let limited = 0;
    for (let i = 0; i < 14; i++) {
      const target = i % 2 === 0 ? a : b;
      const results = await Promise.all(
        Array.from({ length: 50 }, () => target.req("GET", "/v1/account", { key })),
      );
      ok += results.filter((r) => r.status === 200).length;
      limited += results.filter((r) => r.status === 429).length;
      // Let the in-memory counts reconcile, as they do every 250 ms in service: b pushes what
      // it served, then both learn the shared total.
      for (const app of [a, b, a]) await app.service.services.limits.key.flush();
    }
    assert.equal(ok + limited, 700);
    assert.equal(ok, 600, "the two processes together allow exactly the limit");
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("Idempotency-Key replays a project creation verbatim and conflicts across endpoints", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const key = await app.liveKey(accountId);
    const headers = { "idempotency-key": "proj-1" };
    const first = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://a.example" },
      headers,
    });
    assert.equal(first.status, 201);
    assert.equal(first.headers.get("idempotent-replayed"), null);
    const replay = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://a.example" },
      headers,
    });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(replay.text, first.text);
    assertRateHeaders(replay.headers, "replay");
    const list = await app.req("GET", "/v1/projects", { key });
    assert.equal(list.body.projects.length, 1);

    const conflict = await app.req("POST", "/v1/api-keys", { key, headers });
    assert.equal(conflict.status, 409);
    assert.equal(errorCode(conflict), "idempotency_conflict");

    const tooLong = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://b.example" },
      headers: { "idempotency-key": "k".repeat(201) },
    });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body.error.message, /Idempotency-Key/);

    // Keys are scoped per account: another account's identical key is independent.
    const other = await app.signup();
    const otherRes = await app.req("POST", "/v1/projects", {
      key: other.key,
      body: { url: "https://c.example" },
      headers,
    });
    assert.equal(otherRes.status, 201);
    assert.notEqual(otherRes.body.project_id, first.body.project_id);
  }));

Deno.test("concurrent requests with one Idempotency-Key execute once", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const key = await app.liveKey(accountId);
    const headers = { "idempotency-key": "parallel-1" };
    const results = await Promise.all(
      Array.from(
        { length: 10 },
        () => app.req("POST", "/v1/projects", { key, body: { url: "https://p.example" }, headers }),
      ),
    );
    for (const r of results) assert.equal(r.status, 201, r.text);
    assert.equal(new Set(results.map((r) => r.body.project_id)).size, 1);
    assert.equal(results.filter((r) => r.headers.get("idempotent-replayed") === "true").length, 9);
    assert.equal((await app.req("GET", "/v1/projects", { key })).body.projects.length, 1);
  }));

Deno.test("errors are not stored: a corrected retry with the same key executes", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const key = await app.liveKey(accountId);
    const headers = { "idempotency-key": "fix-and-retry" };
    const bad = await app.req("POST", "/v1/projects", { key, body: { url: "nope" }, headers });
    assert.equal(bad.status, 400);
    const good = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://ok.example" },
      headers,
    });
    assert.equal(good.status, 201);
    assert.equal(good.headers.get("idempotent-replayed"), null);
  }));

Deno.test("idempotency records expire after 24 hours", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const key = await app.liveKey(accountId);
    const headers = { "idempotency-key": "day-old" };
    const first = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://d.example" },
      headers,
    });
    app.clock.advance(24 * 3_600_000 + 1000);
    const later = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://d.example" },
      headers,
    });
    assert.equal(later.status, 201);
    assert.notEqual(later.body.project_id, first.body.project_id);
  }));
