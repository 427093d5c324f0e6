/**
 * The OAuth 2.1 authorization server over plain HTTP (the browser's part is in
 * browser.test.ts): discovery from a 401, both registrations, the code flow with PKCE, refresh
 * rotation, revocation, connected apps, and every refusal with the RFC's error and nothing issued.
 * The client side is `oauth4webapi` acting for a fake host on loopback (helpers.ts).
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { freshIp, startTestApp, type TestApp } from "../helpers/app.ts";
import {
  authorizationUrl,
  consentOverHttp,
  discover,
  type Discovered,
  exchange,
  FakeHost,
  mcp,
  refreshTokens,
  registerDcr,
  revoke,
  startOAuthApp,
  tokenRequest,
  toolCall,
} from "./helpers.ts";

/** Runs `fn` with an app whose issuer is its real address and a fake host, both closed after. */
async function withOAuth(
  fn: (app: TestApp, host: FakeHost, d: Discovered) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const app = await startOAuthApp(env);
  const host = await FakeHost.start();
  try {
    await fn(app, host, await discover(`${app.url}/mcp`));
  } finally {
    await host.close();
    await app.close();
  }
}

/** How many access tokens the store holds (nothing issued means this does not move). */
async function accessTokens(app: TestApp): Promise<number> {
  let n = 0;
  for await (const _ of app.kv.list({ prefix: ["oauth_access_tokens"] })) n++;
  return n;
}

/** Signs in with `key` over HTTP and exchanges the code: the tokens of a fresh grant. */
async function connect(d: Discovered, host: FakeHost, key: string, client = host.cimdClient()) {
  const attempt = await authorizationUrl(d, client, host.redirectUri);
  const { location } = await consentOverHttp(attempt.url, { key });
  return await exchange(d, client, new URL(location), attempt, host.redirectUri);
}

// deno-lint-ignore no-explicit-any
const text = (r: { body: any }) => r.body.result?.content?.[0]?.text as string;

Deno.test("discovery: both metadata documents, and a 401 challenge only where a credential is needed", () =>
  withOAuth(async (app, _host, d) => {
    const base = app.url;
    const root = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
    const suffixed = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json();
    assert.deepEqual(root, suffixed);
    assert.equal(root.resource, `${base}/mcp`);
    assert.deepEqual(root.authorization_servers, [base]);
    assert.deepEqual(root.scopes_supported, ["mcp"]);

    assert.equal(d.as.issuer, base);
    assert.deepEqual(d.as.code_challenge_methods_supported, ["S256"]);
    assert.equal(d.as.client_id_metadata_document_supported, true);
    assert.equal(d.as.authorization_response_iss_parameter_supported, true);
    assert.equal(d.as.registration_endpoint, `${base}/oauth/register`);
    assert.equal(d.as.revocation_endpoint, `${base}/oauth/revoke`);
    assert.equal(d.challenge.resource_metadata, `${base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(d.scope, "mcp");

    // Public tools stay reachable without any credential.
    const list = await mcp(
      `${base}/mcp`,
      null,
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
      }),
    );
    assert.equal(list.status, 200);
    // deno-lint-ignore no-explicit-any
    const names = (list.body.result as any).tools.map((t: { name: string }) => t.name);
    assert.ok(names.includes("signup") && names.includes("docs") && !names.includes("account"));
    const docs = await mcp(`${base}/mcp`, null, toolCall("docs", { topic: "connect" }));
    assert.equal(docs.status, 200);
    // A keyed tool without a credential: 401 and the challenge.
    const keyed = await mcp(`${base}/mcp`, null, toolCall("projects", { action: "list" }));
    assert.equal(keyed.status, 401);
    assert.equal(
      keyed.headers.get("www-authenticate"),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
    );
  }));

Deno.test("flow over HTTP: CIMD and DCR clients call tools with tokens, refresh, are listed, revoked", () =>
  withOAuth(async (app, host, d) => {
    const { key, accountId } = await app.signup();
    const mcpUrl = `${app.url}/mcp`;
    const dcr = await registerDcr(d.as, host.redirectUri);
    assert.match(dcr.client_id, /^mcp_client_/);
    const viaDoc = await connect(d, host, key);
    const viaDcr = await connect(d, host, key, dcr);
    assert.ok(host.hits.includes("/client.json"), "the metadata document was fetched");
    for (const t of [viaDoc, viaDcr]) {
      assert.match(t.access_token, /^mcp_at_/);
      assert.equal(t.expires_in, 3600);
      assert.equal(t.scope, "mcp");
      const account = await mcp(mcpUrl, t.access_token, toolCall("account"));
      assert.equal(account.status, 200);
      assert.match(text(account), new RegExp(`Account ${accountId} .*sandbox key`));
    }
    const project = await mcp(
      mcpUrl,
      viaDoc.access_token,
      toolCall("projects", { action: "create", url: "https://oauth.example.com" }),
    );
    assert.match(text(project), /Project proj_/);
    // The project is the key's: the API key sees what the token created.
    const projects = await app.req("GET", "/v1/projects", { key });
    assert.equal(projects.body.projects.length, 1);

    // Tokens are for /mcp only.
    const onV1 = await app.req("GET", "/v1/account", { key: viaDoc.access_token });
    assert.equal(onV1.status, 401);
    assert.match(onV1.body.error.message, /only at \/mcp/);

    // Listed beside the API keys, over /v1 and MCP alike.
    const apps = await app.req("GET", "/v1/connected-apps", { key });
    assert.equal(apps.status, 200);
    assert.deepEqual(
      apps.body.apps.map((a: { client_name: string }) => a.client_name).sort(),
      ["Fake Host", "Fake Host (registered)"],
    );
    assert.ok(apps.body.apps.every((a: { mode: string }) => a.mode === "sandbox"));
    const overMcp = await mcp(mcpUrl, key, toolCall("api_keys", { action: "list_apps" }));
    assert.match(text(overMcp), /2 connected app\(s\)/);

    // Refresh rotates; the new access token works.
    const rotated = await refreshTokens(d, host.cimdClient(), viaDoc.refresh_token!);
    assert.notEqual(rotated.refresh_token, viaDoc.refresh_token);
    assert.equal((await mcp(mcpUrl, rotated.access_token, toolCall("account"))).status, 200);

    // RFC 7009 by the client ends the app; DELETE /v1/connected-apps by the human ends the other.
    await revoke(d, host.cimdClient(), rotated.access_token);
    for (const t of [viaDoc.access_token, rotated.access_token]) {
      const r = await mcp(mcpUrl, t, toolCall("account"));
      assert.equal(r.status, 401);
      assert.match(r.headers.get("www-authenticate")!, /error="invalid_token"/);
    }
    const dcrApp = apps.body.apps.find((a: { client_id: string }) => a.client_id === dcr.client_id);
    const del = await app.req("DELETE", `/v1/connected-apps/${dcrApp.id}`, { key });
    assert.equal(del.status, 200);
    assert.equal(del.body.app.revoked_reason, "user");
    assert.equal((await mcp(mcpUrl, viaDcr.access_token, toolCall("account"))).status, 401);
    const refused = await tokenRequest(d, {
      grant_type: "refresh_token",
      refresh_token: viaDcr.refresh_token!,
      client_id: dcr.client_id,
    });
    assert.deepEqual([refused.status, refused.body.error], [400, "invalid_grant"]);
  }));

Deno.test("revoking the approving key ends its apps; a sandbox sign-up yields sandbox access only", () =>
  withOAuth(async (app, host, d) => {
    const mcpUrl = `${app.url}/mcp`;
    const { key, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const viaLive = await connect(d, host, live);
    const account = await mcp(mcpUrl, viaLive.access_token, toolCall("account"));
    assert.match(text(account), /live key/);
    // A sandbox key does not see the live key's app.
    assert.equal((await app.req("GET", "/v1/connected-apps", { key })).body.apps.length, 0);
    const liveKeys = await app.req("GET", "/v1/api-keys", { key: live });
    const liveId = liveKeys.body.keys.find((k: { mode: string }) => k.mode === "live").id;
    const revoked = await app.req("DELETE", `/v1/api-keys/${liveId}`, { key: live });
    assert.equal(revoked.status, 200);
    const after = await mcp(mcpUrl, viaLive.access_token, toolCall("account"));
    assert.equal(after.status, 401);
    assert.match((after.body as { error: { message: string } }).error.message, /revoked/);
    const apps = await app.req("GET", "/v1/connected-apps", { key: live });
    assert.equal(apps.status, 401, "the revoked key itself is refused");
    const stored = [];
    for await (const e of app.kv.list({ prefix: keys.oauthGrantsOfAccount(accountId) })) {
      stored.push(e.value as { revokedReason: string });
    }
    assert.deepEqual(stored.map((g) => g.revokedReason), ["key_revoked"]);

    // Signing up on the page: a new sandbox account, its key shown once, sandbox access.
    const attempt = await authorizationUrl(d, host.cimdClient(), host.redirectUri);
    const email = `page-${crypto.randomUUID()}@example.com`;
    const { location, consentPage } = await consentOverHttp(attempt.url, { email });
    assert.match(consentPage, /sk_sandbox_[A-Za-z0-9]{40}/);
    const t = await exchange(d, host.cimdClient(), new URL(location), attempt, host.redirectUri);
    const who = await mcp(mcpUrl, t.access_token, toolCall("account"));
    assert.match(text(who), new RegExp(`\\(${email}\\), sandbox key`));
  }));

Deno.test("token endpoint refusals: each with its RFC error and nothing issued; a reused code revokes", () =>
  withOAuth(async (app, host, d) => {
    const { key } = await app.signup();
    const client = host.cimdClient();
    const attempt = await authorizationUrl(d, client, host.redirectUri);
    const { location } = await consentOverHttp(attempt.url, { key });
    const code = new URL(location).searchParams.get("code")!;
    assert.equal(new URL(location).searchParams.get("iss"), app.url);
    assert.equal(new URL(location).searchParams.get("state"), attempt.state);
    const good = {
      grant_type: "authorization_code",
      code,
      client_id: client.client_id,
      redirect_uri: host.redirectUri,
      code_verifier: attempt.verifier,
      resource: d.resource,
    };
    const before = await accessTokens(app);
    const refusals: [Record<string, string>, number, string][] = [
      [{ code_verifier: "x".repeat(43) }, 400, "invalid_grant"],
      [{ code_verifier: "" }, 400, "invalid_request"],
      [{ client_id: "https://other.example/client.json" }, 400, "invalid_grant"],
      [{ redirect_uri: `${host.origin}/elsewhere` }, 400, "invalid_grant"],
      [{ resource: "https://other.example/mcp" }, 400, "invalid_target"],
      [{ grant_type: "password" }, 400, "unsupported_grant_type"],
      [{ grant_type: "" }, 400, "invalid_request"],
      [{ code: "mcp_ac_doesnotexist" }, 400, "invalid_grant"],
      [{ client_secret: "s3cret" }, 401, "invalid_client"],
    ];
    for (const [change, status, error] of refusals) {
      const params = { ...good, ...change };
      if (change.grant_type === "") delete (params as Record<string, string>).grant_type;
      const r = await tokenRequest(d, params);
      assert.deepEqual([r.status, r.body.error], [status, error], JSON.stringify(change));
      assert.equal(r.body.access_token, undefined);
    }
    assert.equal(await accessTokens(app), before, "nothing issued");

    const first = await tokenRequest(d, good);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(
      (await mcp(`${app.url}/mcp`, first.body.access_token, toolCall("account"))).status,
      200,
    );
    const again = await tokenRequest(d, good);
    assert.deepEqual([again.status, again.body.error], [400, "invalid_grant"]);
    assert.equal(
      (await mcp(`${app.url}/mcp`, first.body.access_token, toolCall("account"))).status,
      401,
    );
    const refreshed = await tokenRequest(d, {
      grant_type: "refresh_token",
      refresh_token: first.body.refresh_token,
      client_id: client.client_id,
    });
    assert.deepEqual([refreshed.status, refreshed.body.error], [400, "invalid_grant"]);

    // An expired code.
    const late = await authorizationUrl(d, client, host.redirectUri);
    const lateCode = new URL((await consentOverHttp(late.url, { key })).location);
    app.clock.advance(61_000);
    const expired = await tokenRequest(d, {
      ...good,
      code: lateCode.searchParams.get("code")!,
      code_verifier: late.verifier,
    });
    assert.deepEqual([expired.status, expired.body.error], [400, "invalid_grant"]);
  }));

Deno.test("authorization endpoint refusals: a page for client and redirect problems, a redirect for the rest once approved", () =>
  withOAuth(async (app, host, d) => {
    const client = host.cimdClient();
    const open = (url: string) => fetch(url, { redirect: "manual" });
    // A foreign redirect URI: never redirected to.
    const foreign = await authorizationUrl(d, client, "https://evil.example/callback");
    const page = await open(foreign.url);
    assert.equal(page.status, 400);
    assert.equal(page.headers.get("location"), null);
    assert.match(await page.text(), /invalid_request.*[\s\S]*registered redirect URIs/);
    const unknown = await open(
      (await authorizationUrl(d, {
        client_id: "mcp_client_unknown",
        token_endpoint_auth_method: "none",
      }, host.redirectUri)).url,
    );
    assert.equal(unknown.status, 400);
    assert.match(await unknown.text(), /invalid_client/);

    const redirected: [Record<string, string>, string][] = [
      [{ code_challenge_method: "plain" }, "invalid_request"],
      [{ resource: "https://other.example/mcp" }, "invalid_target"],
      [{ response_type: "token" }, "unsupported_response_type"],
    ];
    // A client no approval has used: its errors are shown here, not redirected (abuse.test.ts).
    const unverified = await open(
      (await authorizationUrl(d, client, host.redirectUri, {
        code_challenge_method: "plain",
      })).url,
    );
    assert.deepEqual([unverified.status, unverified.headers.get("location")], [400, null]);
    await unverified.body?.cancel();
    const { key } = await app.signup();
    await consentOverHttp((await authorizationUrl(d, client, host.redirectUri)).url, { key });
    for (const [extra, error] of redirected) {
      const a = await authorizationUrl(d, client, host.redirectUri, extra);
      const r = await open(a.url);
      await r.body?.cancel();
      assert.equal(r.status, 303, JSON.stringify(extra));
      const to = new URL(r.headers.get("location")!);
      assert.equal(to.origin + to.pathname, host.redirectUri);
      assert.equal(to.searchParams.get("error"), error);
      assert.equal(to.searchParams.get("state"), a.state);
      assert.equal(to.searchParams.get("iss"), app.url);
    }
    const noResource = new URL((await authorizationUrl(d, client, host.redirectUri)).url);
    noResource.searchParams.delete("resource");
    const r = await open(noResource.href);
    await r.body?.cancel();
    assert.equal(new URL(r.headers.get("location")!).searchParams.get("error"), "invalid_target");

    // The human denies.
    const a = await authorizationUrl(d, client, host.redirectUri);
    const denied = new URL((await consentOverHttp(a.url, { key }, "deny")).location);
    assert.equal(denied.searchParams.get("error"), "access_denied");
    assert.equal(denied.searchParams.get("state"), a.state);

    // A form without the page's cookie, or with another CSRF token: 403, nothing issued.
    const b = await authorizationUrl(d, client, host.redirectUri);
    const get = await open(b.url);
    const html = await get.text();
    const cookie = (get.headers.get("set-cookie") ?? "").split(";")[0];
    const field = (n: string) => new RegExp(`name="${n}"\\s+value="([^"]+)"`).exec(html)![1];
    assert.match(get.headers.get("content-security-policy")!, /frame-ancestors 'none'/);
    assert.doesNotMatch(get.headers.get("content-security-policy")!, /script-src/);
    assert.equal(get.headers.get("x-frame-options"), "DENY");
    const post = (headers: Record<string, string>, csrf: string) =>
      fetch(`${app.url}/oauth/authorize`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ request: field("request"), csrf, action: "key", api_key: key }),
      });
    for (const [headers, csrf] of [[{}, field("csrf")], [{ cookie }, "forged"]] as const) {
      const res = await post(headers, csrf);
      assert.equal(res.status, 403);
      await res.body?.cancel();
    }
    const ok = await post({ cookie }, field("csrf"));
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /id="approve"/);

    // RFC 8252 §7.3: a loopback redirect registered without a port matches any port.
    const dcr = await registerDcr(d.as, "http://127.0.0.1/callback");
    const port = await open(
      (await authorizationUrl(d, dcr, "http://127.0.0.1:54321/callback")).url,
    );
    assert.equal(port.status, 200);
    await port.body?.cancel();
    const path = await open((await authorizationUrl(d, dcr, "http://127.0.0.1:54321/other")).url);
    assert.equal(path.status, 400);
    await path.body?.cancel();
  }));

Deno.test("client metadata documents: private address without ALLOW_PRIVATE_TARGETS, oversized, misnamed", async () => {
  const host = await FakeHost.start();
  const big = await FakeHost.start({ docBody: JSON.stringify({ pad: "x".repeat(6_000) }) });
  const misnamed = await FakeHost.start({
    docBody: JSON.stringify({
      client_id: "https://someone.else/client.json",
      client_name: "Impostor",
      redirect_uris: ["http://127.0.0.1/callback"],
    }),
  });
  const strict = await startOAuthApp({ ALLOW_PRIVATE_TARGETS: "0" });
  const lax = await startOAuthApp();
  try {
    const authorize = async (app: TestApp, clientId: string, redirectUri: string) => {
      const d = await discover(`${app.url}/mcp`);
      const a = await authorizationUrl(d, {
        client_id: clientId,
        token_endpoint_auth_method: "none",
      }, redirectUri);
      const res = await fetch(a.url, { redirect: "manual" });
      return { status: res.status, text: await res.text() };
    };
    const privateDoc = `https://127.0.0.1:${new URL(host.origin).port}/client.json`;
    for (const id of [privateDoc, host.docUrl]) {
      const r = await authorize(strict, id, host.redirectUri);
      assert.equal(r.status, 400);
      assert.match(r.text, /invalid_client/);
    }
    assert.deepEqual(host.hits, [], "nothing was fetched from the private address");

    const oversized = await authorize(lax, big.docUrl, big.redirectUri);
    assert.equal(oversized.status, 400);
    assert.match(oversized.text, /invalid_client[\s\S]*larger than 5120 bytes/);
    const wrongId = await authorize(lax, misnamed.docUrl, "http://127.0.0.1/callback");
    assert.equal(wrongId.status, 400);
    assert.match(wrongId.text, /client_id is not exactly its own URL/);
    let cached = 0;
    for await (const _ of lax.kv.list({ prefix: ["oauth_client_docs"] })) cached++;
    assert.equal(cached, 0, "no refused document is cached");
  } finally {
    await Promise.all([host.close(), big.close(), misnamed.close()]);
    await strict.close();
    await lax.close();
  }
});

Deno.test("refresh reuse ends the family; expired tokens and tokens for another audience are refused", async () => {
  const kvHolder = await startOAuthApp();
  const host = await FakeHost.start();
  // A second deployment on the same store under another public URL: another audience.
  const other = await startTestApp({
    kv: kvHolder.kv,
    env: { PUBLIC_BASE_URL: "https://elsewhere.example" },
  });
  try {
    const app = kvHolder;
    const d = await discover(`${app.url}/mcp`);
    const { key } = await app.signup();
    const client = host.cimdClient();
    const t1 = await connect(d, host, key);
    const t2 = await refreshTokens(d, client, t1.refresh_token!);
    const reuse = await tokenRequest(d, {
      grant_type: "refresh_token",
      refresh_token: t1.refresh_token!,
      client_id: client.client_id,
    });
    assert.deepEqual([reuse.status, reuse.body.error], [400, "invalid_grant"]);
    assert.equal((await mcp(`${app.url}/mcp`, t2.access_token, toolCall("account"))).status, 401);
    const t2refresh = await tokenRequest(d, {
      grant_type: "refresh_token",
      refresh_token: t2.refresh_token!,
      client_id: client.client_id,
    });
    assert.equal(t2refresh.body.error, "invalid_grant");

    const t3 = await connect(d, host, key);
    const foreign = await fetch(`${other.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${t3.access_token}`,
        "x-forwarded-for": freshIp(),
      },
      body: toolCall("account"),
    });
    assert.equal(foreign.status, 401);
    assert.match((await foreign.json()).error.message, /issued for another resource/);

    app.clock.advance(3_600_001);
    const expired = await mcp(`${app.url}/mcp`, t3.access_token, toolCall("account"));
    assert.equal(expired.status, 401);
    assert.match((expired.body as { error: { message: string } }).error.message, /expired/);
    const t4 = await refreshTokens(d, client, t3.refresh_token!);
    assert.equal((await mcp(`${app.url}/mcp`, t4.access_token, toolCall("account"))).status, 200);
  } finally {
    await host.close();
    await other.service.close();
    // Its queue listener ends when the shared KV closes.
    await kvHolder.close();
    await other.service.finished;
  }
});

Deno.test("dynamic registration: application_type optional (inferred), loopback only for native, limited per network", () =>
  withOAuth(async (app) => {
    const register = (body: unknown, ip = "203.0.113.9") =>
      fetch(`${app.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, body: await r.json() }));
    const loopback = ["http://127.0.0.1/cb"];
    const unknownType = await register({ application_type: "desktop", redirect_uris: loopback });
    assert.deepEqual([unknownType.status, unknownType.body.error], [
      400,
      "invalid_client_metadata",
    ]);
    const web = await register({ application_type: "web", redirect_uris: loopback });
    assert.deepEqual([web.status, web.body.error], [400, "invalid_redirect_uri"]);
    const plain = await register({ redirect_uris: ["http://host.example/cb"] });
    assert.equal(plain.body.error, "invalid_redirect_uri");
    // RFC 7591 has no application_type: left out, loopback redirects make a native client.
    const ok = await register({ redirect_uris: loopback });
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.application_type, "native");
    assert.equal(ok.body.token_endpoint_auth_method, "none");
    // An unused registration expires in KV.
    const stored = await app.kv.get(keys.oauthClient(ok.body.client_id));
    assert.ok(stored.value);
    const limited = await register({ application_type: "native", redirect_uris: loopback });
    assert.deepEqual([limited.status, limited.body.error], [429, "temporarily_unavailable"]);
    // Another address of the same /24 shares the budget; another network has its own.
    const sameBlock = await register({ redirect_uris: loopback }, "203.0.113.200");
    assert.equal(sameBlock.status, 429);
    const elsewhere = await register({ redirect_uris: ["https://web.example/cb"] }, "198.51.100.7");
    assert.equal(elsewhere.status, 201);
    assert.equal(elsewhere.body.application_type, "web");
    // Unused for a day: gone.
    app.clock.advance(86_400_001);
    const d = await discover(`${app.url}/mcp`);
    const stale = await fetch(
      (await authorizationUrl(d, {
        client_id: elsewhere.body.client_id,
        token_endpoint_auth_method: "none",
      }, "https://web.example/cb")).url,
      { redirect: "manual" },
    );
    assert.equal(stale.status, 400);
    assert.match(await stale.text(), /invalid_client/);
  }, { OAUTH_REGISTRATIONS_PER_BLOCK_PER_HOUR: "4" }));
