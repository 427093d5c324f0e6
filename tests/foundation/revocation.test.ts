/**
 * Revocation everywhere at once, inside one test process: the revocation signal written with each
 * revocation, the caches that follow it (two apps on one KV, whose hand-moved clocks never let a
 * cached key expire, so only the signal can explain a refusal), the ring that falls back to a full
 * flush, and the strong re-read (`KeyResolver.confirm`) that guards every sensitive write even
 * when no signal arrives. The cross-process proof is tests/proof/revocation.test.ts.
 */
import assert from "node:assert/strict";
import { hashKey } from "../../domain/identity/key_hash.ts";
import {
  KeyResolver,
  REVOCATION_RING,
  REVOCATION_SHARDS,
  revocationKeys,
  revocationShard,
  type RevocationSignal,
  signalAuthChange,
} from "../../domain/identity/auth.ts";
import { loadConfig } from "../../config.ts";
import type { ApiKeyRecord } from "../../domain/identity/types.ts";
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
    const { key, accountId } = await a.signup();
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

    const signal = (await a.kv.get<RevocationSignal>(
      keys.authRevocations(revocationShard(accountId)),
    )).value;
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

/** Signs up until two accounts fall in different shards of the revocation signal. */
async function twoShards(app: TestApp) {
  const x = await app.signup();
  let y = await app.signup();
  while (revocationShard(y.accountId) === revocationShard(x.accountId)) y = await app.signup();
  return { x, y };
}

Deno.test("the revocation ring: a process drops the named accounts, or the shard's accounts when it missed more than the shard's ring holds", () =>
  withApp(async (app) => {
    const { x, y } = await twoShards(app);
    const xs = revocationShard(x.accountId);
    const resolver = new KeyResolver(app.service.services.deps);
    const cached = (raw: string) => !(resolver.resolve(raw) instanceof Promise);
    const warm = async () => {
      await resolver.resolve(x.key);
      await resolver.resolve(y.key);
      assert.ok(cached(x.key) && cached(y.key));
    };
    const stamp = (n: number) => n.toString(16).padStart(20, "0");
    const entry = (seq: number, accounts: string[], vs: number, shard = xs) => ({
      key: keys.authRevocations(shard),
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

    // The first look at a shard drops its accounts (cached before it, of unknown age).
    await warm();
    resolver.observe(entry(10, ["acct_a"], 10));
    assert.ok(!cached(x.key) && cached(y.key));

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

    // More changes in x's shard than its ring holds since the last look: x's shard goes, y stays.
    const names = Array.from({ length: REVOCATION_RING }, (_, i) => `acct_other${i}`);
    resolver.observe(entry(11 + REVOCATION_RING + 1, names, 12));
    assert.ok(!cached(x.key) && cached(y.key));

    // Exactly the ring's worth of changes is still read change by change.
    await warm();
    const seq = 11 + REVOCATION_RING + 1;
    resolver.observe(entry(seq + REVOCATION_RING, names, 13));
    assert.ok(cached(x.key) && cached(y.key));

    // A sequence that went back (a reset store) drops the shard's accounts too.
    resolver.observe(entry(3, [], 14));
    assert.ok(!cached(x.key) && cached(y.key));

    // `poll` reads every shard at once: a fresh resolver's first poll drops all it cached.
    const fresh = new KeyResolver(app.service.services.deps);
    await fresh.resolve(x.key);
    await fresh.resolve(y.key);
    await fresh.poll();
    const again = [fresh.resolve(x.key), fresh.resolve(y.key)];
    assert.ok(again.every((p) => p instanceof Promise), "read from KV again");
    await Promise.all(again);
  }));

Deno.test("65 revocations in 65 accounts between two polls: another process's cache keeps every other account and refuses each revoked key at once", () =>
  withApp(async (app) => {
    const deps = app.service.services.deps;
    // Process B: its own resolver on the same KV, its reads counted, its clock never moving (only
    // the signal can drop an entry).
    let reads = 0;
    const counted = new Proxy(app.kv, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "get" || prop === "getMany") reads++;
        return value.bind(target);
      },
    });
    const frozen = app.clock.now();
    const b = new KeyResolver({ ...deps, kv: counted, clock: { now: () => frozen } });
    await b.poll();

    const revoked = [];
    for (let i = 0; i < 65; i++) {
      const { key } = await app.signup();
      const second = await app.req("POST", "/v1/api-keys", { key });
      assert.equal(second.status, 201, second.text);
      revoked.push({ holder: key, id: second.body.id, raw: second.body.api_key });
    }
    const bystanders = await Promise.all(Array.from({ length: 20 }, () => app.signup()));
    for (const r of revoked) await b.resolve(r.raw);
    for (const s of bystanders) await b.resolve(s.key);

    // 65 revocations between two polls: more than one ring's worth, fewer than one per shard.
    for (const r of revoked) {
      const res = await app.req("DELETE", `/v1/api-keys/${r.id}`, { key: r.holder });
      assert.equal(res.status, 200, res.text);
    }
    const before = reads;
    await b.poll();
    assert.equal(reads - before, 1, "one poll is one getMany of every shard");

    // Every bystander is still served from B's cache: synchronously, with no KV read.
    const atPoll = reads;
    for (const s of bystanders) {
      assert.ok(!(b.resolve(s.key) instanceof Promise), "a bystander was flushed");
    }
    assert.equal(reads, atPoll);
    // Every revoked key is refused by B now, and by the process that revoked it.
    for (const r of revoked) {
      await assert.rejects(async () => await b.resolve(r.raw), { code: "key_revoked" });
      const res = await app.req("GET", "/v1/account", { key: r.raw });
      assert.equal(res.status, 401, res.text);
      assert.equal(errorCode(res), "key_revoked");
    }
    // The 65 changes sit in their accounts' shards, each within its ring.
    const shards = await app.kv.getMany<RevocationSignal[]>(revocationKeys());
    const total = shards.reduce((n, e) => n + (e.value?.seq ?? 0), 0);
    assert.equal(total, 65);
    assert.ok(shards.every((e) => (e.value?.seq ?? 0) <= REVOCATION_RING));
  }, { env: { SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "1000", RATE_LIMIT_PER_MINUTE: "100000" } }));

Deno.test("signalAuthChange keeps each shard's last REVOCATION_RING changes with consecutive sequence numbers", async () => {
  const kv = await openTestKv();
  try {
    // Accounts of one shard, and one of another.
    const shard = revocationShard("acct_0");
    const same = Array.from(
      { length: 10 * REVOCATION_SHARDS * REVOCATION_RING },
      (_, i) => `acct_${i}`,
    ).filter((id) => revocationShard(id) === shard);
    assert.ok(same.length >= REVOCATION_RING + 6);
    const key = keys.authRevocations(shard);
    for (let i = 0; i < REVOCATION_RING + 6; i++) {
      const entry = await kv.get<RevocationSignal>(key);
      const op = signalAuthChange(kv.atomic(), entry, {
        accountId: same[i],
        keyId: null,
        at: i,
      });
      assert.ok((await op.commit()).ok);
    }
    const signal = (await kv.get<RevocationSignal>(key)).value!;
    assert.equal(signal.seq, REVOCATION_RING + 6);
    assert.equal(signal.recent.length, REVOCATION_RING);
    assert.deepEqual(
      signal.recent.map((c) => c.seq),
      Array.from({ length: REVOCATION_RING }, (_, i) => i + 7),
    );
    // A stale read conflicts instead of losing a change.
    const stale = await kv.get<RevocationSignal>(key);
    assert.ok(
      (await signalAuthChange(kv.atomic(), stale, { accountId: same[0], keyId: null, at: 0 })
        .commit()).ok,
    );
    assert.equal(
      (await signalAuthChange(kv.atomic(), stale, { accountId: same[1], keyId: null, at: 0 })
        .commit()).ok,
      false,
    );
    // A change is written to its account's shard only: another shard's entry is refused.
    const elsewhere = Array.from({ length: 100 }, (_, i) => `acct_elsewhere${i}`)
      .find((id) => revocationShard(id) !== shard)!;
    assert.throws(
      () => signalAuthChange(kv.atomic(), stale, { accountId: elsewhere, keyId: null, at: 0 }),
      /belongs in shard/,
    );
    // The shards spread accounts: 800 ids land in every shard.
    const spread = new Set(Array.from({ length: 800 }, (_, i) => revocationShard(`acct_${i}`)));
    assert.equal(spread.size, REVOCATION_SHARDS);
    assert.ok(REVOCATION_SHARDS <= 10, "one getMany and one watch read every shard");
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
