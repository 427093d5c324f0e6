/**
 * OAuth access tokens revoked across processes on one KV file. Both children trust a cached
 * token (and key) lookup for 60 s (`AUTH_CACHE_TTL_MS=60000`), so when B refuses a token within
 * seconds of its revocation on A, only the revocation signal (`["auth_revocations"]`, written by
 * every grant's end and every key's revocation) can explain it. The three ways a token ends are
 * each proven: RFC 7009 `/oauth/revoke`, `DELETE /v1/connected-apps/{id}` and
 * `DELETE /v1/api-keys/{id}` of the approving key. A grant ended behind B's back (no signal) shows
 * the cache is real: B keeps answering from it. No timing is asserted beyond "well before the TTL".
 */
import assert from "node:assert/strict";
import { digest } from "../../domain/identity/oauth/secrets.ts";
import type { AccessTokenRecord, GrantRecord } from "../../domain/identity/oauth/types.ts";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import { keys } from "../../kv/keys.ts";
import { pollUntil } from "../helpers/jobs.ts";
import { openTestKv } from "../helpers/kv.ts";
import {
  authorizationUrl,
  consentOverHttp,
  discover,
  type Discovered,
  exchange,
  FakeHost,
  mcp,
  revoke,
  toolCall,
} from "../oauth/helpers.ts";
import { killAll, nextIp, type ServerProcess, startServer, tempKvPath } from "./process.ts";
import { freePort } from "../helpers/ports.ts";

/** Far below the 60 s TTL: a refusal within this cannot be the cache expiring. */
const WELL_BEFORE_TTL_MS = 5_000;

/** Signs in with `key` over HTTP on A's consent page and exchanges the code. */
async function connect(d: Discovered, host: FakeHost, key: string) {
  const client = host.cimdClient();
  const attempt = await authorizationUrl(d, client, host.redirectUri);
  const { location } = await consentOverHttp(attempt.url, { key });
  return await exchange(d, client, new URL(location), attempt, host.redirectUri);
}

/** The `account` tool with `token` on `server`: the HTTP status. */
async function accountStatus(server: ServerProcess, token: string): Promise<number> {
  return (await mcp(`${server.url}/mcp`, token, toolCall("account"))).status;
}

/** Waits (well before the TTL) until B answers 401 to `token` at `/mcp`. */
async function refusedBy(server: ServerProcess, token: string, what: string): Promise<void> {
  await pollUntil(() => accountStatus(server, token), (s) => s === 401, {
    timeoutMs: WELL_BEFORE_TTL_MS,
    intervalMs: 20,
    what: `B to refuse the token ${what}`,
  });
}

Deno.test("two processes, 60 s auth cache: a token ended on A (RFC 7009, connected app, approving key) is refused by B", async () => {
  const kvFile = await tempKvPath();
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  // Both children are one service: the same issuer and `/mcp` audience, A's address.
  const env = { AUTH_CACHE_TTL_MS: "60000", PUBLIC_BASE_URL: base };
  const servers: ServerProcess[] = [];
  const host = await FakeHost.start();
  try {
    const a = await startServer(
      kvFile.path,
      { ...env, PORT: String(port) },
      30_000,
      [],
      `${base}/v1/plans`,
    );
    servers.push(a);
    const b = await startServer(kvFile.path, env);
    servers.push(b);
    const d = await discover(`${a.url}/mcp`);

    const signup = await a.req("POST", "/v1/accounts", {
      body: { email: `tokrevoke-${crypto.randomUUID()}@example.com` },
      ip: nextIp(),
    });
    assert.equal(signup.status, 201, signup.text);
    const key = signup.body.api_key as string;
    const accountId = signup.body.account_id as string;
    const minted = await a.req("POST", "/v1/api-keys", { key, body: { name: "approver" } });
    assert.equal(minted.status, 201, minted.text);

    const stale = await connect(d, host, key);
    const byClient = await connect(d, host, key);
    const byApp = await connect(d, host, key);
    const byKey = await connect(d, host, minted.body.api_key);
    // B has every token (and its key) cached, trusted for a minute.
    for (const t of [stale, byClient, byApp, byKey]) {
      assert.equal(await accountStatus(b, t.access_token), 200);
    }

    // The cache is real: a grant ended straight in the file, without the signal, is not seen.
    await inFile(kvFile.path, async (kv) => {
      const key = keys.oauthGrant(accountId, await grantOf(kv, stale.access_token));
      const grant = (await kv.get<GrantRecord>(key)).value!;
      await kv.set(key, { ...grant, revokedAt: Date.now(), revokedReason: "user" });
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await accountStatus(b, stale.access_token), 200, "trusted from B's cache");

    // RFC 7009 by the client, on A.
    await revoke(d, host.cimdClient(), byClient.access_token);
    assert.equal(await accountStatus(a, byClient.access_token), 401, "A refuses at once");
    await refusedBy(b, byClient.access_token, "revoked at /oauth/revoke");
    assert.equal(await accountStatus(b, byApp.access_token), 200, "the other apps still work");

    // The human disconnects the app, on A.
    const apps = await a.req("GET", "/v1/connected-apps", { key });
    assert.equal(apps.status, 200, apps.text);
    const live = apps.body.apps.filter((x: { revoked_at: unknown }) => x.revoked_at === null);
    const appIds = new Set<string>(live.map((x: { id: string }) => x.id));
    const byAppGrant = await inFile(kvFile.path, (kv) => grantOf(kv, byApp.access_token));
    assert.ok(appIds.has(byAppGrant), `grant ${byAppGrant} is listed`);
    const del = await a.req("DELETE", `/v1/connected-apps/${byAppGrant}`, { key });
    assert.equal(del.status, 200, del.text);
    await refusedBy(b, byApp.access_token, "of a disconnected app");
    assert.equal(await accountStatus(b, byKey.access_token), 200);

    // The approving key is revoked, on A.
    const revoked = await a.req("DELETE", `/v1/api-keys/${minted.body.id}`, { key });
    assert.equal(revoked.status, 200, revoked.text);
    await refusedBy(b, byKey.access_token, "whose approving key was revoked");
    // By now the signal has dropped B's cache for the account: the stale grant is read again.
    assert.equal(await accountStatus(b, stale.access_token), 401);
  } catch (err) {
    servers.forEach((s, i) => console.error(`process ${i}:\n${s.logs()}`));
    throw err;
  } finally {
    await killAll(...servers);
    await host.close();
    await kvFile.remove();
  }
});

/** Runs `fn` on the children's KV file, opened beside them. */
async function inFile<T>(kvPath: string, fn: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = withBusyRetry(await openTestKv(kvPath));
  try {
    return await fn(kv);
  } finally {
    kv.close();
  }
}

/** The grant id of an access token, as stored. */
async function grantOf(kv: Deno.Kv, token: string): Promise<string> {
  return (await kv.get<AccessTokenRecord>(keys.oauthAccessToken(digest(token)))).value!.grantId;
}
