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
import { freshIp, startTestApp } from "../helpers/app.ts";
import {
  authorizationUrl,
  consentOverHttp,
  discover,
  exchange,
  FakeHost,
  mcp,
  refreshTokens,
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
    const { location, consentPage } = await consentOverHttp(attempt.url, { key });
    assert.equal(await count(app.kv, ["oauth_requests"]), 1);
    // The page promises what the app can and cannot do, and when its access ends.
    assert.match(consentPage, /<ul id="can">[\s\S]*start checkouts, which a human must pay/);
    assert.match(consentPage, /<ul id="cannot">[\s\S]*create or revoke API keys/);
    assert.match(consentPage, /revoke the app[\s\S]*or when this key is revoked or\s+expires/);
    assert.doesNotMatch(consentPage, /lasts until/);
    const tokens = await exchange(d, client, new URL(location), attempt, host.redirectUri);
    assert.match(tokens.access_token, /^mcp_at_/);
  } finally {
    await host.close();
    await app.close();
  }
});

const DAY = 86_400_000;

Deno.test("a registered client ends with its grants: unused a day, used while it has a live grant and a day after", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const { key, accountId } = await app.signup();
    const dcr = await register(app.url, { redirect_uris: [host.redirectUri] }, freshIp());
    const clientId: string = dcr.body.client_id;
    const client = { client_id: clientId, token_endpoint_auth_method: "none" };
    const stored = async () => (await app.kv.get<Json>(["oauth_clients", clientId])).value;
    const t0 = app.clock.now();
    assert.equal((await stored()).expiresAt, t0 + DAY, "unused: a day");
    assert.equal((await stored()).usedAt, null);

    const connect = async () => {
      const attempt = await authorizationUrl(d, client, host.redirectUri);
      const { location } = await consentOverHttp(attempt.url, { key });
      return await exchange(d, client, new URL(location), attempt, host.redirectUri);
    };
    const first = await connect();
    const grants = async () => {
      const out: Json[] = [];
      for await (const e of app.kv.list<Json>({ prefix: ["oauth_grants", accountId] })) {
        out.push(e.value);
      }
      return out.sort((a, b) => a.createdAt - b.createdAt);
    };
    const [g1] = await grants();
    assert.ok((await stored()).usedAt !== null, "an approval used it");
    assert.equal((await stored()).expiresAt, g1.expiresAt + 2 * DAY, "kept past its grant");

    // A refresh moves the grant's end; the client is only rewritten when it would fall short.
    app.clock.advance(3_600_000);
    const before = await app.kv.get(["oauth_clients", clientId]);
    const refreshed = await refreshTokens(d, client, first.refresh_token!);
    assert.ok(refreshed.access_token);
    assert.equal((await app.kv.get(["oauth_clients", clientId])).versionstamp, before.versionstamp);

    // A second grant; the first revoked: the client lives a day past the second.
    app.clock.advance(3_600_000);
    await connect();
    const [, g2] = await grants();
    const del = await app.req("DELETE", `/v1/connected-apps/${g1.id}`, { key });
    assert.equal(del.status, 200);
    assert.equal((await stored()).expiresAt, g2.expiresAt + DAY);
    // The last one revoked: a day from now, and then it is gone.
    assert.equal((await app.req("DELETE", `/v1/connected-apps/${g2.id}`, { key })).status, 200);
    const ended = app.clock.now();
    assert.equal((await stored()).expiresAt, ended + DAY);
    assert.equal(await count(app.kv, ["oauth_client_grants"]), 0);
    app.clock.advance(DAY);
    const gone = await fetch((await authorizationUrl(d, client, host.redirectUri)).url, {
      redirect: "manual",
    });
    assert.equal(gone.status, 400);
    assert.match(await gone.text(), /invalid_client/);
    assert.equal(await stored(), null, "deleted once past its end");

    // A metadata-document client: the approval mark follows its grant the same way.
    const cimd = host.cimdClient();
    const attempt = await authorizationUrl(d, cimd, host.redirectUri);
    const { location } = await consentOverHttp(attempt.url, { key });
    await exchange(d, cimd, new URL(location), attempt, host.redirectUri);
    const marks: Json[] = [];
    for await (const e of app.kv.list<Json>({ prefix: ["oauth_client_uses"] })) marks.push(e.value);
    const g3 = (await grants()).at(-1);
    assert.deepEqual(marks.map((m) => [m.clientId, m.expiresAt]), [
      [cimd.client_id, g3.expiresAt + 2 * DAY],
    ]);
  } finally {
    await host.close();
    await app.close();
  }
});

Deno.test("an account has at most 50 connected apps: the page says so, the token endpoint holds it exactly, old ended ones are pruned past 100", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const { key, accountId } = await app.signup();
    const client = host.cimdClient();
    const approveCode = async () => {
      const attempt = await authorizationUrl(d, client, host.redirectUri);
      const { location, consentPage } = await consentOverHttp(attempt.url, { key });
      return { attempt, location: new URL(location), consentPage };
    };
    const redeem = async (a: Awaited<ReturnType<typeof approveCode>>) =>
      await exchange(d, client, a.location, a.attempt, host.redirectUri);
    const grantIds = async (state: "active" | "all" = "all") => {
      const out: Json[] = [];
      for await (const e of app.kv.list<Json>({ prefix: ["oauth_grants", accountId] })) {
        if (state === "all" || e.value.revokedAt === null) out.push(e.value);
      }
      return out.sort((a, b) => a.createdAt - b.createdAt).map((g) => g.id as string);
    };

    for (let i = 0; i < 49; i++) await redeem(await approveCode());
    // Two approvals while at 49: both get a code; only one can become a grant.
    const a = await approveCode();
    const b = await approveCode();
    await redeem(a);
    const over = await fetch(d.as.token_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code: b.location.searchParams.get("code")!,
        client_id: client.client_id,
        redirect_uri: host.redirectUri,
        code_verifier: b.attempt.verifier,
      }),
    });
    const body = await over.json();
    assert.deepEqual([over.status, body.error], [400, "invalid_grant"]);
    assert.match(body.error_description, /50 connected apps.*most it may have \(50\)/);
    assert.equal((await grantIds("active")).length, 50);

    // At the cap, the consent page explains instead of offering to approve.
    const attempt = await authorizationUrl(d, client, host.redirectUri);
    const page = await fetch(attempt.url, { redirect: "manual" });
    const html = await page.text();
    const cookie = (page.headers.get("set-cookie") ?? "").split(";")[0];
    const field = (n: string) => new RegExp(`name="${n}"\\s+value="([^"]+)"`).exec(html)![1];
    const post = (action: Record<string, string>) =>
      fetch(`${app.url}/oauth/authorize`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ request: field("request"), csrf: field("csrf"), ...action }),
      });
    const consent = await (await post({ action: "key", api_key: key })).text();
    assert.match(consent, /already has 50 connected apps/);
    assert.doesNotMatch(consent, /id="approve"/);
    const forced = await post({ action: "approve" });
    assert.equal(forced.status, 400);
    assert.match(await forced.text(), /already has 50 connected apps/);

    // Revoked apps free their place; ended ones past the 100 an account keeps are pruned.
    const active = await grantIds("active");
    for (const id of active) {
      assert.equal((await app.req("DELETE", `/v1/connected-apps/${id}`, { key })).status, 200);
    }
    for (let i = 0; i < 50; i++) await redeem(await approveCode());
    assert.equal((await grantIds()).length, 100);
    const oldest = (await grantIds())[0];
    const latest = await grantIds("active");
    await app.req("DELETE", `/v1/connected-apps/${latest[0]}`, { key });
    await redeem(await approveCode());
    const all = await grantIds();
    assert.equal(all.length, 100);
    assert.ok(!all.includes(oldest), "the oldest ended grant was pruned");
  } finally {
    await host.close();
    await app.close();
  }
});

Deno.test("no open redirect: an unapproved client's errors are a page, not a redirect; after one approval they redirect", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const { key } = await app.signup();
    const dcr = await register(app.url, { redirect_uris: [host.redirectUri] }, freshIp());
    const registered = { client_id: dcr.body.client_id, token_endpoint_auth_method: "none" };
    const bad: Record<string, string>[] = [
      { code_challenge_method: "plain" },
      { resource: "https://other.example/mcp" },
      { response_type: "token" },
      { code_challenge: "too-short" },
    ];
    for (const client of [registered, host.cimdClient()]) {
      for (const extra of bad) {
        const a = await authorizationUrl(d, client, host.redirectUri, extra);
        const res = await fetch(a.url, { redirect: "manual" });
        const html = await res.text();
        const label = `${client.client_id} ${JSON.stringify(extra)}`;
        assert.equal(res.status, 400, label);
        assert.equal(res.headers.get("location"), null, label);
        assert.match(res.headers.get("content-type")!, /^text\/html/);
        // The consent page's own headers: no script, no frame, forms to this server only.
        assert.match(res.headers.get("content-security-policy")!, /default-src 'none'/);
        assert.match(res.headers.get("content-security-policy")!, /form-action 'self';/);
        assert.equal(res.headers.get("x-frame-options"), "DENY");
        assert.match(html, /id="error-code">(invalid_request|invalid_target|unsupported_)/);
        assert.match(html, /has not been approved on this server yet/);
        assert.match(html, new RegExp(`sent to ${new URL(host.redirectUri).host}`));
      }
      // One approval (the human's, on the page) verifies the client.
      const ok = await authorizationUrl(d, client, host.redirectUri);
      await consentOverHttp(ok.url, { key });
      for (const extra of bad) {
        const a = await authorizationUrl(d, client, host.redirectUri, extra);
        const res = await fetch(a.url, { redirect: "manual" });
        await res.body?.cancel();
        assert.equal(res.status, 303);
        const to = new URL(res.headers.get("location")!);
        assert.equal(to.origin + to.pathname, host.redirectUri);
        assert.ok(to.searchParams.get("error"));
        assert.equal(to.searchParams.get("state"), a.state);
      }
    }
  } finally {
    await host.close();
    await app.close();
  }
});

Deno.test("client metadata documents are fetched at most 20 times per host per 10 minutes, however many URLs", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const open = async (clientId: string) => {
      const a = await authorizationUrl(d, {
        client_id: clientId,
        token_endpoint_auth_method: "none",
      }, host.redirectUri);
      const res = await fetch(a.url, { redirect: "manual" });
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    // The real document, fetched once and cached.
    assert.equal((await open(host.docUrl)).status, 200);
    const fetches = () => host.hits.filter((h) => h === "/client.json").length;
    assert.equal(fetches(), 1);

    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof open>> | null = null;
    for (let i = 0; i < 40; i++) {
      const r = await open(`${host.docUrl}?unique=${i}`);
      statuses.push(r.status);
      if (r.status === 429) refused ??= r;
    }
    assert.equal(fetches(), 20, "one budget for the host, whatever the query string");
    // Those fetched name another client_id (400); past the budget: 429, a clear page.
    assert.deepEqual(statuses, [...Array(19).fill(400), ...Array(21).fill(429)]);
    assert.match(refused!.text, /invalid_client/);
    assert.match(
      refused!.text,
      /too many fetched from 127\.0\.0\.1 \(at most 20 every 10 minutes\)/,
    );
    assert.ok(Number(refused!.headers.get("retry-after")) > 0);
    // A cached document still opens; the window over, the host is fetched again.
    assert.equal((await open(host.docUrl)).status, 200);
    app.clock.advance(10 * 60_000);
    assert.equal((await open(`${host.docUrl}?later=1`)).status, 400);
    assert.equal(fetches(), 21);
  } finally {
    await host.close();
    await app.close();
  }
});

Deno.test("the sign-in page: wrong keys are named by their own prefix, five end the request; an altered or answered ticket is refused", async () => {
  const app = await startOAuthApp();
  const host = await FakeHost.start();
  try {
    const d = await discover(`${app.url}/mcp`);
    const { key } = await app.signup();
    const attempt = await authorizationUrl(d, host.cimdClient(), host.redirectUri);
    const get = await fetch(attempt.url, { redirect: "manual" });
    let html = await get.text();
    const cookie = (get.headers.get("set-cookie") ?? "").split(";")[0];
    const field = (n: string) => new RegExp(`name="${n}"\\s+value="([^"]+)"`).exec(html)![1];
    const first = field("request");
    const post = async (fields: Record<string, string>, request = field("request")) => {
      const res = await fetch(`${app.url}/oauth/authorize`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie },
        body: new URLSearchParams({ request, csrf: field("csrf"), ...fields }),
      });
      const text = await res.text();
      if (res.status === 400 && /id="api_key"/.test(text)) html = text; // the next ticket
      return { status: res.status, text, location: res.headers.get("location") };
    };
    const message = (text: string) =>
      /<div class="box error" role="alert" id="error">\s*<p>([^<]*)<\/p>/.exec(text)?.[1];

    const cases: [string, RegExp][] = [
      ["sk_live_tooShort", /^That live key is incomplete .*: a key is sk_live_ followed by 40/],
      ["sk_sandbox_" + "x".repeat(41), /^That sandbox key is incomplete .*sk_sandbox_ followed/],
      ["mcp_at_" + "y".repeat(40), /^That is an OAuth token, not an API key/],
      ["hello", /^That is not a Serpwright API key: keys start with sk_sandbox_ or sk_live_\.$/],
      [
        "sk_live_" + "A".repeat(36) + "Zz09",
        /^That live key \(ending in Zz09\) cannot sign in: no such key exists on this server\.$/,
      ],
    ];
    for (const [raw, want] of cases) {
      const r = await post({ action: "key", api_key: raw });
      assert.equal(r.status, 400, raw);
      assert.match(message(r.text) ?? "", want, raw);
      assert.doesNotMatch(message(r.text) ?? "", /…/, "no ellipsis inside a prefix");
    }
    // A ticket altered by one character does not open.
    const altered = first.slice(0, 40) + (first[40] === "A" ? "B" : "A") + first.slice(41);
    const bad = await post({ action: "key", api_key: key }, altered);
    assert.equal(bad.status, 400);
    assert.match(bad.text, /expired or was already answered/);

    // Four more wrong (well-formed) keys: the fifth ends the request.
    for (let i = 0; i < 3; i++) {
      const r = await post({ action: "key", api_key: "sk_sandbox_" + "B".repeat(40) });
      assert.match(message(r.text) ?? "", /no such key/);
    }
    const fifth = await post({ action: "key", api_key: "sk_sandbox_" + "B".repeat(40) });
    assert.equal(fifth.status, 400);
    assert.match(fifth.text, /Too many wrong keys/);
    assert.equal(await count(app.kv, ["oauth_requests"]), 0, "wrong keys stored nothing");

    // A fresh page: approved once, its ticket cannot answer again.
    const again = await fetch(attempt.url, { redirect: "manual" });
    html = await again.text();
    const cookie2 = (again.headers.get("set-cookie") ?? "").split(";")[0];
    const post2 = (fields: Record<string, string>) =>
      fetch(`${app.url}/oauth/authorize`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: cookie2 },
        body: new URLSearchParams({ request: field("request"), csrf: field("csrf"), ...fields }),
      });
    assert.equal((await post2({ action: "key", api_key: key })).status, 200);
    assert.equal((await post2({ action: "approve" })).status, 303);
    const replay = await post2({ action: "key", api_key: key });
    assert.equal(replay.status, 400);
    assert.match(await replay.text(), /already answered/);
  } finally {
    await host.close();
    await app.close();
  }
});

Deno.test("without WEBHOOK_ENCRYPTION_KEY the ticket key comes from one secret the store keeps: a page opened on one process signs in on another", async () => {
  const a = await startOAuthApp({ WEBHOOK_ENCRYPTION_KEY: "" });
  const b = await startTestApp({
    kv: a.kv,
    env: { WEBHOOK_ENCRYPTION_KEY: "", PUBLIC_BASE_URL: a.url },
  });
  const host = await FakeHost.start();
  try {
    const d = await discover(`${a.url}/mcp`);
    const { key } = await a.signup();
    const attempt = await authorizationUrl(d, host.cimdClient(), host.redirectUri);
    const get = await fetch(attempt.url, { redirect: "manual" });
    const html = await get.text();
    assert.equal(get.status, 200);
    const secret = await a.kv.get<string>(["oauth_ticket_secret"]);
    assert.equal(atob(secret.value!).length, 32, "made once for the store");
    const field = (n: string) => new RegExp(`name="${n}"\\s+value="([^"]+)"`).exec(html)![1];
    const signed = await fetch(`${b.url}/oauth/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        cookie: (get.headers.get("set-cookie") ?? "").split(";")[0],
      },
      body: new URLSearchParams({
        request: field("request"),
        csrf: field("csrf"),
        action: "key",
        api_key: key,
      }),
    });
    assert.equal(signed.status, 200);
    assert.match(await signed.text(), /id="approve"/);
  } finally {
    await host.close();
    await b.service.close();
    await a.close();
    await b.service.finished;
  }
});
