/**
 * Revocation everywhere at once, inside one test process: the revocation signal written with each
 * revocation, the caches that follow it (two apps on one KV, whose hand-moved clocks never let a
 * cached key expire, so only the signal can explain a refusal), the ring that falls back to a full
 * flush, and the strong re-read (`KeyResolver.confirm`) that guards every sensitive write even
 * when no signal arrives. The cross-process proof is tests/proof/revocation.test.ts.
 */
import assert from "node:assert/strict";
import { hashKey } from "../../domain/key_hash.ts";
import {
  KeyResolver,
  REVOCATION_RING,
  type RevocationSignal,
  signalAuthChange,
} from "../../domain/auth.ts";
import { loadConfig } from "../../domain/config.ts";
import type { ApiKeyRecord } from "../../domain/records.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, startTestApp, type TestApp, withApp } from "../helpers/app.ts";
import { openTestKv } from "../helpers/kv.ts";
import { callError, connectMcp } from "../mcp/helpers.ts";

/** Sets a key's `revokedAt` straight in KV, without the revocation signal. */
async function setRevoked(kv: Deno.Kv, raw: string, revokedAt: number | null): Promise<void> {
  const entry = await kv.get<ApiKeyRecord>(keys.apiKey(hashKey(raw)));
  assert.ok(entry.value, "the key exists");
  await kv.set(entry.key, { ...entry.value, revokedAt });
}

/** The same KV handle, except that `close` does nothing (the app that owns it closes it). */
function borrowed(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      if (prop === "close") return () => {};
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

Deno.test("two apps on one KV: a key revoked on A is refused by B at once, though B's cache would trust it forever", async () => {
  const a = await startTestApp();
  let b: TestApp | null = null;
  try {
    // B is a web process: it runs no queue listener on the shared handle.
    b = await startTestApp({ kv: borrowed(a.kv), env: { SERVICE_ROLE: "web" } });
    const { key } = await a.signup();
    const other = await a.req("POST", "/v1/api-keys", { key });
    assert.equal(other.status, 201, other.text);
    const list = await a.req("GET", "/v1/api-keys", { key });
    const oldId = list.body.keys.find((k: { api_key?: string; id: string }) =>
      k.id !== other.body.id
    ).id;

    // B caches the key; its clock never moves, so only the signal can make it ask KV again.
    assert.equal((await b.req("GET", "/v1/account", { key })).status, 200);
    const revoked = await a.req("DELETE", `/v1/api-keys/${oldId}`, { key: other.body.api_key });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(revoked.body.key.id, oldId);

    let refused = null;
    for (let i = 0; i < 100 && !refused; i++) {
      const res = await b.req("GET", "/v1/account", { key });
      if (res.status === 401) refused = res;
      else await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(refused, "B keeps answering 200 for a revoked key");
    assert.equal(errorCode(refused), "key_revoked");
    // The other key of the account still works on B.
    assert.equal((await b.req("GET", "/v1/account", { key: other.body.api_key })).status, 200);

    const signal = (await a.kv.get<RevocationSignal>(keys.authRevocations())).value;
    assert.ok(signal && signal.seq >= 1);
    const last = signal.recent.at(-1)!;
    assert.equal(last.seq, signal.seq);
    assert.equal(last.keyId, oldId);
  } finally {
    await b?.close();
    await a.close();
  }
});

Deno.test("a key revoked without the signal: reads still answer from the cache, every sensitive write re-reads it (REST and MCP)", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const project = await app.req("POST", "/v1/projects", { key, body: { url: "https://a.test" } });
    assert.equal(project.status, 201, project.text);
    const pid = project.body.project_id;
    const second = await app.req("POST", "/v1/api-keys", { key });
    assert.equal(second.status, 201);

    /** Leaves `key` cached as usable and revoked in KV (no signal): a revocation not yet seen. */
    const staleCache = async () => {
      await setRevoked(app.kv, key, null);
      app.clock.advance(app.service.services.deps.config.authCacheTtlMs + 1);
      assert.equal((await app.req("GET", "/v1/account", { key })).status, 200);
      await setRevoked(app.kv, key, app.clock.now());
      const cached = await app.req("GET", "/v1/account", { key });
      assert.equal(cached.status, 200, "reads trust the cache until the signal or the TTL");
    };

    const rest: [string, string, unknown?][] = [
      ["POST", "/v1/api-keys", {}],
      ["DELETE", `/v1/api-keys/${second.body.id}`],
      ["POST", "/v1/webhooks", { url: "https://hooks.example.com/in" }],
      ["POST", "/v1/credits/purchases", { pack_id: "pack_500" }],
      ["POST", "/v1/subscriptions", { project_id: pid, plan_id: "basic" }],
      ["PUT", `/v1/projects/${pid}/schedule`, { cadence: "weekly", hour_utc: 3 }],
      ["DELETE", `/v1/projects/${pid}/schedule`],
    ];
    for (const [method, path, body] of rest) {
      await staleCache();
      const res = await app.req(method, path, { key, body });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
      assert.equal(errorCode(res), "key_revoked", `${method} ${path}`);
      // The re-read refreshed the cache: the next read is refused too.
      assert.equal((await app.req("GET", "/v1/account", { key })).status, 401);
    }

    const mcp: [string, Record<string, unknown>][] = [
      ["api_keys", { action: "create" }],
      ["api_keys", { action: "revoke", key_id: second.body.id }],
      ["webhooks", { action: "create", url: "https://hooks.example.com/in" }],
      ["billing", { action: "buy_credits", pack_id: "pack_500" }],
      ["billing", { action: "subscribe", project_id: pid, plan_id: "basic" }],
      ["schedule", { action: "set", project_id: pid, cadence: "weekly", hour_utc: 3 }],
      ["schedule", { action: "delete", project_id: pid }],
    ];
    for (const [tool, args] of mcp) {
      await staleCache();
      const client = await connectMcp(app, { key });
      try {
        const e = await callError(client, tool, args);
        assert.equal(e.code, "key_revoked", `${tool} ${args.action}: ${e.text}`);
      } finally {
        await client.close();
      }
    }
  }));

Deno.test("the revocation ring: a process drops the named accounts, or everything when it missed more than the ring holds", () =>
  withApp(async (app) => {
    const x = await app.signup();
    const y = await app.signup();
    const resolver = new KeyResolver(app.service.services.deps);
    const cached = (raw: string) => !(resolver.resolve(raw) instanceof Promise);
    const warm = async () => {
      await resolver.resolve(x.key);
      await resolver.resolve(y.key);
      assert.ok(cached(x.key) && cached(y.key));
    };
    const stamp = (n: number) => n.toString(16).padStart(20, "0");
    const entry = (seq: number, accounts: string[], vs: number) => ({
      key: keys.authRevocations(),
      value: {
        seq,
        recent: accounts.map((accountId, i) => ({
          seq: seq - accounts.length + 1 + i,
          accountId,
          keyId: null,
          at: 0,
        })),
      },
      versionstamp: stamp(vs),
    });

    // The first look flushes (whatever was cached before it is of unknown age).
    await warm();
    resolver.observe(entry(10, ["acct_a"], 10));
    assert.ok(!cached(x.key) && !cached(y.key));

    // Nothing new: nothing dropped. One change naming x: only x dropped.
    await warm();
    resolver.observe(entry(10, ["acct_a"], 10));
    assert.ok(cached(x.key) && cached(y.key));
    resolver.observe(entry(11, ["acct_a", x.accountId], 11));
    assert.ok(!cached(x.key) && cached(y.key));

    // A read older than the one applied (the watch and the poll race) changes nothing.
    await warm();
    resolver.observe(entry(12, [y.accountId], 9));
    assert.ok(cached(x.key) && cached(y.key));

    // More changes than the ring holds since the last look: the whole cache goes.
    const names = Array.from({ length: REVOCATION_RING }, (_, i) => `acct_other${i}`);
    resolver.observe(entry(11 + REVOCATION_RING + 1, names, 12));
    assert.ok(!cached(x.key) && !cached(y.key));

    // Exactly the ring's worth of changes is still read change by change.
    await warm();
    const seq = 11 + REVOCATION_RING + 1;
    resolver.observe(entry(seq + REVOCATION_RING, names, 13));
    assert.ok(cached(x.key) && cached(y.key));
  }));

Deno.test("signalAuthChange keeps the last REVOCATION_RING changes with consecutive sequence numbers", async () => {
  const kv = await openTestKv();
  try {
    for (let i = 0; i < REVOCATION_RING + 6; i++) {
      const entry = await kv.get<RevocationSignal>(keys.authRevocations());
      const op = signalAuthChange(kv.atomic(), entry, {
        accountId: `acct_${i}`,
        keyId: null,
        at: i,
      });
      assert.ok((await op.commit()).ok);
    }
    const signal = (await kv.get<RevocationSignal>(keys.authRevocations())).value!;
    assert.equal(signal.seq, REVOCATION_RING + 6);
    assert.equal(signal.recent.length, REVOCATION_RING);
    assert.deepEqual(
      signal.recent.map((c) => c.seq),
      Array.from({ length: REVOCATION_RING }, (_, i) => i + 7),
    );
    // A stale read conflicts instead of losing a change.
    const stale = await kv.get<RevocationSignal>(keys.authRevocations());
    assert.ok(
      (await signalAuthChange(kv.atomic(), stale, { accountId: "a", keyId: null, at: 0 })
        .commit()).ok,
    );
    assert.equal(
      (await signalAuthChange(kv.atomic(), stale, { accountId: "b", keyId: null, at: 0 }).commit())
        .ok,
      false,
    );
  } finally {
    kv.close();
  }
});

Deno.test("AUTH_REVOCATION_POLL_MS: 50 ms on a local KV file, off where kv.watch sees every writer", () => {
  const poll = (env: Record<string, string>) => loadConfig(env).authRevocationPollMs;
  assert.equal(poll({ KV_PATH: "./data/kv.sqlite" }), 50);
  assert.equal(poll({ KV_PATH: ":memory:" }), 0);
  assert.equal(poll({ KV_PATH: "https://kv.example.com/db" }), 0);
  assert.equal(poll({ DENO_DEPLOYMENT_ID: "x" }), 0);
  assert.equal(poll({ KV_PATH: "./data/kv.sqlite", AUTH_REVOCATION_POLL_MS: "0" }), 0);
  assert.equal(poll({ KV_PATH: ":memory:", AUTH_REVOCATION_POLL_MS: "20" }), 20);
});
