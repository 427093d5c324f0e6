/**
 * Expiry (issue 8, soak): what a bounded soak run cannot wait for, shown with the manual clock.
 * Idempotency records are treated as gone after 24 hours and rate-limit windows reset; and every
 * KV row either writes carries an expiry (`expireIn`), so KV does not grow with old records. The
 * expiry itself is Deno KV's (deletion happens at or after `expireIn`; the code never relies on
 * it happening promptly, it checks ages itself), so the test asserts the write options, observed
 * through a recording proxy around the real KV.
 */
import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { IDEMPOTENCY_TTL_MS } from "../../kv/idempotency_store.ts";
import { errorCode, freshIp, startTestApp } from "../helpers/app.ts";

interface Write {
  key: Deno.KvKey;
  expireIn?: number;
}

/** A Deno.Kv whose atomic `set`s are recorded with their options. */
function recordingKv(kv: Deno.Kv, writes: Write[]): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          const proxy: Deno.AtomicOperation = new Proxy(op, {
            get(o, p) {
              if (p === "set") {
                return (key: Deno.KvKey, value: unknown, options?: { expireIn?: number }) => {
                  writes.push({ key, expireIn: options?.expireIn });
                  o.set(key, value, options);
                  return proxy;
                };
              }
              const v = Reflect.get(o, p, o);
              return typeof v === "function"
                ? (...args: unknown[]) => {
                  const r = v.apply(o, args);
                  return r === o ? proxy : r;
                }
                : v;
            },
          });
          return proxy;
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

Deno.test("idempotency records live 24 h: replayed just before, re-executed after, written with expireIn", async () => {
  const writes: Write[] = [];
  const raw = await openTestKv();
  const app = await startTestApp({ kv: recordingKv(raw, writes) });
  try {
    const { accountId } = await app.signup();
    const key = await app.liveKey(accountId);
    const headers = { "idempotency-key": "soak-1" };
    const first = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://e.example" },
      headers,
    });
    assert.equal(first.status, 201);
    app.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    const replay = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://e.example" },
      headers,
    });
    assert.equal(replay.headers.get("idempotent-replayed"), "true");
    assert.equal(replay.body.project_id, first.body.project_id);
    app.clock.advance(2000);
    const fresh = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://e.example" },
      headers,
    });
    assert.equal(fresh.status, 201);
    assert.equal(fresh.headers.get("idempotent-replayed"), null);
    assert.notEqual(fresh.body.project_id, first.body.project_id);
    // A stale record on another endpoint is no longer a conflict either.
    app.clock.advance(IDEMPOTENCY_TTL_MS + 1000);
    const other = await app.req("POST", "/v1/api-keys", { key, body: {}, headers });
    assert.equal(other.status, 201, other.text);

    const idem = writes.filter((w) => w.key[0] === "idempotency");
    assert.ok(idem.length >= 4);
    for (const w of idem) assert.equal(w.expireIn, IDEMPOTENCY_TTL_MS, JSON.stringify(w.key));
  } finally {
    await app.close(); // closes the KV too
  }
});

Deno.test("rate-limit windows reset with the clock and their KV rows expire after two windows", async () => {
  const writes: Write[] = [];
  const raw = await openTestKv();
  const app = await startTestApp({
    kv: recordingKv(raw, writes),
    env: { RATE_LIMIT_PER_MINUTE: "5" },
  });
  try {
    const { key } = await app.signup();
    const remaining: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await app.req("GET", "/v1/account", { key });
      remaining.push(`${res.status}:${res.headers.get("x-ratelimit-remaining")}`);
    }
    assert.deepEqual(remaining, ["200:4", "200:3", "200:2", "200:1", "200:0", "429:0"]);
    await app.service.services.limits.key.flush();
    // The next window starts from zero.
    app.clock.advance(60_000);
    const next = await app.req("GET", "/v1/account", { key });
    assert.equal(next.status, 200);
    assert.equal(next.headers.get("x-ratelimit-remaining"), "4");
    await app.service.services.limits.key.flush();

    // Signups: 5 per hour per IP, strict; the hour resets too.
    const ip = freshIp();
    for (let i = 0; i < 5; i++) {
      const r = await app.req("POST", "/v1/accounts", { body: { email: `e${i}@x.io` }, ip });
      assert.equal(r.status, 201);
    }
    const limited = await app.req("POST", "/v1/accounts", { body: { email: "e9@x.io" }, ip });
    assert.equal(limited.status, 429);
    assert.equal(errorCode(limited), "rate_limited");
    app.clock.advance(3_600_000);
    assert.equal(
      (await app.req("POST", "/v1/accounts", { body: { email: "e10@x.io" }, ip })).status,
      201,
    );

    const rl = writes.filter((w) => w.key[0] === "rate_limits");
    assert.ok(rl.some((w) => String(w.key[1]).startsWith("key:")), "per-key windows reach KV");
    assert.ok(rl.some((w) => String(w.key[1]).startsWith("signup:")));
    for (const w of rl) {
      const windowMs = /^signup(_global)?:/.test(String(w.key[1])) ? 3_600_000 : 60_000;
      assert.equal(w.expireIn, 2 * windowMs, JSON.stringify(w.key));
    }
    // Rows are keyed by window start, so an old window is never rewritten once it has passed.
    assert.deepEqual(keys.rateLimit("key:k", 60_000), ["rate_limits", "key:k", 60_000]);
  } finally {
    await app.close(); // closes the KV too
  }
});
