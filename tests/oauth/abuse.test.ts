/**
 * The OAuth server against the abuse a public, unauthenticated authorization server invites
 * (security review, issue 28), over HTTP against the real app on an in-memory KV: anonymous
 * storage growth (registrations per network, the sign-in page's state carried in the page,
 * clients that end with their grants, a cap of grants per account), no redirect to an unverified
 * client's URI, fetches of client metadata documents limited per host; and interop with the
 * stock MCP SDK's registration.
 */
import assert from "node:assert/strict";
import {
  discoverAuthorizationServerMetadata,
  registerClient as sdkRegisterClient,
} from "@modelcontextprotocol/client";
import { freshIp } from "../helpers/app.ts";
import {
  authorizationUrl,
  consentOverHttp,
  discover,
  exchange,
  FakeHost,
  mcp,
  startOAuthApp,
  toolCall,
} from "./helpers.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

/** Registers a client from `ip` (X-Forwarded-For: the test app trusts one proxy). */
function register(base: string, body: unknown, ip: string) {
  return fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, headers: r.headers, body: await r.json() as Json }));
}

/** How many entries the store holds under a prefix. */
async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

Deno.test("registration is limited per network: 40 addresses of one IPv6 /64 share one /48 budget, refused ones store nothing", async () => {
  const app = await startOAuthApp();
  try {
    const statuses: number[] = [];
    let refusal: { status: number; headers: Headers; body: Json } | null = null;
    for (let i = 1; i <= 40; i++) {
      // One /64 (2001:db8:28:1::/64), a different interface id each time.
      const ip = `2001:db8:28:1:${((i * 7919) % 0xffff).toString(16)}:${i.toString(16)}:0:${i}`;
      const r = await register(app.url, { redirect_uris: ["http://127.0.0.1/cb"] }, ip);
      statuses.push(r.status);
      if (r.status !== 201) refusal ??= r;
    }
    assert.deepEqual(statuses, [...Array(20).fill(201), ...Array(20).fill(429)]);
    // The OAuth endpoints' error shape (RFC 7591 §3.2.2), with Retry-After.
    assert.equal(refusal!.body.error, "temporarily_unavailable");
    assert.match(refusal!.body.error_description, /20 registrations per hour.*2001:db8:28::\/48/);
    assert.ok(Number(refusal!.headers.get("retry-after")) > 0);
    assert.equal(await count(app.kv, ["oauth_clients"]), 20, "nothing stored for a refusal");
    // Another /48 is another budget.
    const other = await register(
      app.url,
      { redirect_uris: ["http://127.0.0.1/cb"] },
      "2001:db8:29::1",
    );
    assert.equal(other.status, 201);
  } finally {
    await app.close();
  }
});

Deno.test("the stock MCP SDK registers without application_type, and the client completes the flow", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const metadata = await discoverAuthorizationServerMetadata(app.url);
    assert.ok(metadata?.registration_endpoint);
    const info = await sdkRegisterClient(app.url, {
      metadata,
      clientMetadata: {
        client_name: "SDK Host",
        redirect_uris: [host.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
    });
    assert.match(info.client_id, /^mcp_client_/);
    assert.equal((info as Json).application_type, "native");

    const d = await discover(`${app.url}/mcp`);
    const client = { client_id: info.client_id, token_endpoint_auth_method: "none" };
    const { key } = await app.signup();
    const attempt = await authorizationUrl(d, client, host.redirectUri);
    const { location } = await consentOverHttp(attempt.url, { key });
    const tokens = await exchange(d, client, new URL(location), attempt, host.redirectUri);
    const account = await mcp(`${app.url}/mcp`, tokens.access_token, toolCall("account"));
    assert.equal(account.status, 200);
  } finally {
    await host.close();
    await app.close();
  }
});

/** Every key in the store with its versionstamp: what a request wrote shows as a difference. */
async function snapshot(kv: Deno.Kv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of kv.list({ prefix: [] })) out.set(JSON.stringify(e.key), e.versionstamp);
  return out;
}

function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

Deno.test("GET /oauth/authorize stores nothing; the request is stored once a key signs in", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const { key } = await app.signup();
    const dcr = await register(app.url, { redirect_uris: [host.redirectUri] }, freshIp());
    const client = { client_id: dcr.body.client_id, token_endpoint_auth_method: "none" };
    const get = (url: string) =>
      fetch(url, { redirect: "manual", headers: { "x-forwarded-for": freshIp() } });

    const before = await snapshot(app.kv);
    const attempt = await authorizationUrl(d, client, host.redirectUri);
    const res = await get(attempt.url);
    const page = await res.text();
    assert.equal(res.status, 200);
    assert.match(page, /name="request"\s+value="[A-Za-z0-9_-]{100,}"/);
    assert.deepEqual(changed(before, await snapshot(app.kv)), [], "the GET wrote nothing");

    // A metadata-document client: its first GET caches the document (one entry per URL, shared
    // by every request for it); later GETs store nothing.
    const cimd = host.cimdClient();
    await (await get((await authorizationUrl(d, cimd, host.redirectUri)).url)).body?.cancel();
    const cached = await snapshot(app.kv);
    const again = await get((await authorizationUrl(d, cimd, host.redirectUri)).url);
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.deepEqual(changed(cached, await snapshot(app.kv)), [], "the second GET wrote nothing");

    // Signing in with a key stores the request; the whole flow still ends in tokens.
    assert.equal(await count(app.kv, ["oauth_requests"]), 0);
    const { location } = await consentOverHttp(attempt.url, { key });
    assert.equal(await count(app.kv, ["oauth_requests"]), 1);
    const tokens = await exchange(d, client, new URL(location), attempt, host.redirectUri);
    assert.match(tokens.access_token, /^mcp_at_/);
  } finally {
    await host.close();
    await app.close();
  }
});
