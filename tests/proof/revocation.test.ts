/**
 * Revocation across processes on one KV file. Both children trust a cached key lookup for 60 s
 * (`AUTH_CACHE_TTL_MS=60000`), so when B refuses a key within a few seconds of its revocation,
 * only the revocation signal (or the strong re-read of sensitive writes) can explain it. No
 * timing is asserted beyond "well before the TTL"; `deno task bench` measures the propagation.
 */
import assert from "node:assert/strict";
import { hashKey } from "../../domain/identity/key_hash.ts";
import type { AccountRecord, ApiKeyRecord } from "../../domain/identity/types.ts";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode } from "../helpers/app.ts";
import { openTestKv } from "../helpers/kv.ts";
import { killAll, nextIp, type ServerProcess, startServer, tempKvPath } from "./process.ts";

const LONG_TTL = { AUTH_CACHE_TTL_MS: "60000" };
/** Far below the 60 s TTL: a refusal within this cannot be the cache expiring. */
const WELL_BEFORE_TTL_MS = 10_000;

async function withServers(
  count: number,
  fn: (servers: ServerProcess[], kvPath: string) => Promise<void>,
): Promise<void> {
  const kvFile = await tempKvPath();
  const servers: ServerProcess[] = [];
  try {
    // One after the other: the first creates the file, the next open it.
    for (let i = 0; i < count; i++) servers.push(await startServer(kvFile.path, LONG_TTL));
    await fn(servers, kvFile.path);
  } catch (err) {
    servers.forEach((s, i) => console.error(`process ${i}:\n${s.logs()}`));
    throw err;
  } finally {
    await killAll(...servers);
    await kvFile.remove();
  }
}

async function signup(server: ServerProcess): Promise<{ key: string; accountId: string }> {
  const res = await server.req("POST", "/v1/accounts", {
    body: { email: `revoke-${crypto.randomUUID()}@example.com` },
    ip: nextIp(),
  });
  assert.equal(res.status, 201, res.text);
  return { key: res.body.api_key, accountId: res.body.account_id };
}

Deno.test("two processes, 60 s key cache: a key revoked on A is refused by B within seconds", async () => {
  await withServers(2, async ([a, b]) => {
    const { key } = await signup(a);
    const minted = await a.req("POST", "/v1/api-keys", { key, body: { name: "successor" } });
    assert.equal(minted.status, 201, minted.text);
    const successor = minted.body.api_key as string;
    const listed = await a.req("GET", "/v1/api-keys", { key });
    const oldId = listed.body.keys.find((k: { id: string }) => k.id !== minted.body.id).id;

    // B has the key cached, trusted for a minute.
    assert.equal((await b.req("GET", "/v1/account", { key })).status, 200);

    const revoked = await a.req("DELETE", `/v1/api-keys/${oldId}`, { key: successor });
    assert.equal(revoked.status, 200, revoked.text);
    const started = Date.now();
    assert.equal((await a.req("GET", "/v1/account", { key })).status, 401, "A refuses at once");

    let refusedAfter: number | null = null;
    while (refusedAfter === null && Date.now() - started < WELL_BEFORE_TTL_MS) {
      const res = await b.req("GET", "/v1/account", { key });
      if (res.status === 401) {
        assert.equal(errorCode(res), "key_revoked");
        refusedAfter = Date.now() - started;
      } else {
        assert.equal(res.status, 200, res.text);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    assert.ok(
      refusedAfter !== null,
      `B still answered 200 for the revoked key ${WELL_BEFORE_TTL_MS} ms after the revocation`,
    );
    console.log(`  B refused the revoked key ${refusedAfter} ms after A's 200 (HTTP polling)`);
    // The account's other key still works on B.
    assert.equal((await b.req("GET", "/v1/account", { key: successor })).status, 200);
  });
});

Deno.test("a key revoked behind B's back (no signal): B still reads from its cache, but refuses minting a key with it", async () => {
  await withServers(1, async ([b], kvPath) => {
    const { key, accountId } = await signup(b);
    assert.equal((await b.req("GET", "/v1/account", { key })).status, 200);

    // Revoked straight in the file, without the revocation signal: as if the signal were late.
    const kv = withBusyRetry(await openTestKv(kvPath));
    try {
      const entry = await kv.get<ApiKeyRecord>(keys.apiKey(hashKey(key)));
      await kv.set(entry.key, { ...entry.value!, revokedAt: Date.now() });
    } finally {
      kv.close();
    }

    const cached = await b.req("GET", "/v1/account", { key });
    assert.equal(cached.status, 200, "the cached lookup is trusted (60 s TTL, no signal)");
    const mint = await b.req("POST", "/v1/api-keys", { key, body: { name: "escape" } });
    assert.equal(mint.status, 401, mint.text);
    assert.equal(errorCode(mint), "key_revoked");
    assert.equal((await b.req("GET", "/v1/account", { key })).status, 401, "cache refreshed");

    const check = withBusyRetry(await openTestKv(kvPath));
    try {
      const account = (await check.get<AccountRecord>(keys.account(accountId))).value!;
      assert.equal(account.activeKeys, 1, "no key was minted");
    } finally {
      check.close();
    }
  });
});
