/**
 * The `/v1` rules hold on `/mcp`: auth failures, `not_found` for foreign ids, sandbox limits,
 * idempotent replays (shared with the Idempotency-Key of `/v1`), the shared rate-limit budget and
 * its headers, the registry entry, and the same bodies as the REST twins.
 */
import assert from "node:assert/strict";
import { freshIp, type TestApp, withApp } from "../helpers/app.ts";
import { call, callError, connectMcp, postMcp } from "./helpers.ts";
import repoServerJson from "../../server.json" with { type: "json" };

/** One JSON-RPC POST to /mcp in the 2025-11-25 era (stateless: no initialize needed). */
function rawMcp(
  app: TestApp,
  message: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  return postMcp(app, { jsonrpc: "2.0", id: 1, ...message }, {
    "mcp-protocol-version": "2025-11-25",
    ...headers,
  });
}

const toolCall = (name: string, args: Record<string, unknown> = {}) => ({
  method: "tools/call",
  params: { name, arguments: args },
});

Deno.test("auth: unknown, malformed, revoked and expired keys get 401 with their code and a Bearer challenge", () =>
  withApp(async (app) => {
    const unknown = await rawMcp(app, { method: "tools/list" }, {
      authorization: "Bearer sk_sandbox_doesnotexist000",
    });
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.error.code, "unauthorized");
    assert.match(unknown.headers.get("www-authenticate") ?? "", /^Bearer .*error="invalid_token"/);
    assert.equal(unknown.headers.get("x-ratelimit-limit"), "600");

    const malformed = await rawMcp(app, { method: "tools/list" }, { authorization: "Basic abc" });
    assert.equal(malformed.status, 401);
    assert.equal(malformed.body.error.code, "unauthorized");

    await assert.rejects(connectMcp(app, { key: "sk_sandbox_doesnotexist000" }), /401/);

    const { key } = await app.signup();
    const client = await connectMcp(app, { key });
    const second = await call(client, "api_keys", { action: "create", name: "rotated" });
    const keys = await call(client, "api_keys", { action: "list" });
    const first = keys.keys.find((k: { name: string }) => k.name === "Sandbox key");
    await client.close();
    const rotated = await connectMcp(app, { key: second.api_key });
    const revoked = await call(rotated, "api_keys", { action: "revoke", key_id: first.id });
    assert.ok(revoked.key.revoked_at);
    await rotated.close();
    const afterRevoke = await rawMcp(app, toolCall("account"), { authorization: `Bearer ${key}` });
    assert.equal(afterRevoke.status, 401);
    assert.equal(afterRevoke.body.error.code, "key_revoked");

    app.clock.advance(15 * 86_400_000);
    const expired = await rawMcp(app, toolCall("account"), {
      authorization: `Bearer ${second.api_key}`,
    });
    assert.equal(expired.status, 401);
    assert.equal(expired.body.error.code, "key_expired");

    // Without a credential a keyed tool is a 401 challenge (where an OAuth host starts signing
    // in); unknown tools stay the SDK's "not found".
    const anon = await rawMcp(app, toolCall("account"));
    assert.equal(anon.status, 401);
    assert.match(
      anon.headers.get("www-authenticate") ?? "",
      /^Bearer resource_metadata="[^"]+", scope="mcp"$/,
    );
    const keyless = await connectMcp(app);
    await assert.rejects(keyless.callTool({ name: "nope", arguments: {} }), /Tool nope not found/);
    await keyless.close();
  }));

Deno.test("foreign ids answer not_found through every tool, as on /v1", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const b = await app.signup();
    const ca = await connectMcp(app, { key: a.key });
    const cb = await connectMcp(app, { key: b.key });
    try {
      // A site nothing listens on: the audit finishes quickly and offline.
      const project = await call(ca, "projects", {
        action: "create",
        url: "http://127.0.0.1:9",
      });
      const audit = await call(ca, "audits", {
        action: "start",
        project_id: project.project_id,
      });
      const aKey = await call(ca, "api_keys", { action: "create" });

      for (
        const [tool, args] of [
          ["projects", { action: "get", project_id: project.project_id }],
          ["audits", { action: "start", project_id: project.project_id }],
          ["audits", { action: "get", audit_id: audit.audit_id }],
          ["articles", { action: "start", project_id: project.project_id, topic: "Shoes" }],
          ["articles", { action: "get", article_id: "art_nope" }],
          ["billing", { action: "subscription", project_id: project.project_id }],
          ["api_keys", { action: "revoke", key_id: aKey.id }],
          ["webhooks", { action: "delete", webhook_id: "wh_nope" }],
        ] as const
      ) {
        const e = await callError(cb, tool, args);
        assert.equal(e.code, "not_found", `${tool} ${JSON.stringify(args)}`);
      }
      await assert.rejects(cb.readResource({ uri: `serpwright://audits/${audit.audit_id}` }));
      const own = await ca.readResource({ uri: `serpwright://audits/${audit.audit_id}` });
      assert.equal(own.contents.length, 1);
      // Nothing was charged to A's trial by B's attempts.
      assert.deepEqual((await call(ca, "account")).sandbox_usage, { audits: 1, articles: 0 });
    } finally {
      await ca.close();
      await cb.close();
    }
  }));

Deno.test("sandbox limits and validation come back as tool errors with the API's codes", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const c = await connectMcp(app, { key });
    try {
      const project = await call(c, "projects", {
        action: "create",
        url: "http://127.0.0.1:9",
      });
      const second = await callError(c, "projects", { action: "create", url: "https://b.test" });
      assert.equal(second.code, "sandbox_limit_reached");
      assert.match(second.text, /upgrade_url/);
      await call(c, "audits", { action: "start", project_id: project.project_id, wait: 20 });
      const again = await callError(c, "audits", {
        action: "start",
        project_id: project.project_id,
      });
      assert.equal(again.code, "sandbox_limit_reached");
      const bad = await callError(c, "projects", { action: "create", url: "ftp://x" });
      assert.equal(bad.code, "invalid_request");
      assert.match(bad.body.error.message, /^url: /);
      const unknownField = await callError(c, "account", { verbose: true });
      assert.equal(unknownField.code, "invalid_request");
      const tooLong = await callError(c, "audits", { action: "get", audit_id: "x", wait: 61 });
      assert.match(tooLong.body.error.message, /^wait: /);
      const notBillable = await callError(c, "billing", {
        action: "subscribe",
        project_id: project.project_id,
        plan_id: "basic",
      });
      assert.equal(notBillable.code, "sandbox_not_billable");
    } finally {
      await c.close();
    }
  }));

Deno.test("idempotency keys replay across MCP and /v1, and conflict across operations", () =>
  withApp(async (app) => {
    const ip = freshIp();
    const anon = await connectMcp(app, { ip });
    const s1 = await call(anon, "signup", { email: "idem@example.com", idempotency_key: "su-1" });
    const s2 = await call(anon, "signup", { email: "idem@example.com", idempotency_key: "su-1" });
    await anon.close();
    assert.equal(s2.api_key, s1.api_key);
    assert.equal(s2.idempotent_replayed, true);
    assert.equal(s1.idempotent_replayed, undefined);

    const c = await connectMcp(app, { key: s1.api_key });
    try {
      const args = { action: "create", url: "https://example.com", idempotency_key: "p-1" };
      const first = await call(c, "projects", args);
      const replay = await call(c, "projects", args);
      assert.equal(replay.project_id, first.project_id);
      assert.equal(replay.idempotent_replayed, true);
      assert.equal((await call(c, "account")).projects_count, 1);

      // The REST twin with the same key replays the answer the tool stored.
      const rest = await app.req("POST", "/v1/projects", {
        key: s1.api_key,
        body: { url: "https://example.com" },
        headers: { "idempotency-key": "p-1" },
      });
      assert.equal(rest.status, 201);
      assert.equal(rest.headers.get("idempotent-replayed"), "true");
      assert.deepEqual(rest.body, first);

      const conflict = await callError(c, "audits", {
        action: "start",
        project_id: first.project_id,
        idempotency_key: "p-1",
      });
      assert.equal(conflict.code, "idempotency_conflict");

      const k1 = await call(c, "api_keys", { action: "create", idempotency_key: "k-1" });
      const k2 = await call(c, "api_keys", { action: "create", idempotency_key: "k-1" });
      assert.equal(k2.api_key, k1.api_key);
      assert.equal((await call(c, "api_keys", { action: "list" })).keys.length, 2);

      const long = await callError(c, "api_keys", {
        action: "create",
        idempotency_key: "x".repeat(201),
      });
      assert.equal(long.code, "invalid_request");
    } finally {
      await c.close();
    }
  }));

Deno.test("rate limits: /mcp spends the key's /v1 budget; tool calls past it are rate_limited tool errors", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const auth = { authorization: `Bearer ${key}` };
    for (let i = 0; i < 6; i++) {
      const res = await rawMcp(app, toolCall("account"), auth);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-ratelimit-limit"), "6");
      assert.equal(res.headers.get("x-ratelimit-remaining"), String(5 - i));
      assert.ok(Number(res.headers.get("x-ratelimit-reset")) > 0);
      assert.equal(res.body.result.isError, undefined);
    }
    const refused = await rawMcp(app, toolCall("account"), auth);
    assert.equal(refused.status, 200);
    assert.equal(refused.body.result.isError, true);
    const sc = refused.body.result._meta["com.serpwright/error"];
    assert.equal(sc.error.code, "rate_limited");
    assert.ok(sc.retry_after_seconds >= 1);
    assert.equal(refused.headers.get("retry-after"), String(sc.retry_after_seconds));
    assert.equal(refused.headers.get("x-ratelimit-remaining"), "0");

    const list = await rawMcp(app, { method: "tools/list" }, auth);
    assert.equal(list.status, 429);
    assert.equal(list.body.error.code, "rate_limited");
    assert.ok(list.headers.get("retry-after"));

    // One budget: the REST API is refused too.
    const rest = await app.req("GET", "/v1/account", { key });
    assert.equal(rest.status, 429);

    app.clock.advance(61_000);
    const next = await rawMcp(app, toolCall("account"), auth);
    assert.equal(next.body.result.isError, undefined);
    assert.equal(next.headers.get("x-ratelimit-remaining"), "5");
  }, { env: { RATE_LIMIT_PER_MINUTE: "6" } }));

Deno.test("tools answer the same bodies as their /v1 twins", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const c = await connectMcp(app, { key });
    try {
      const project = await call(c, "projects", {
        action: "create",
        url: "https://example.com",
      });
      assert.deepEqual(
        await call(c, "account"),
        (await app.req("GET", "/v1/account", { key })).body,
      );
      assert.deepEqual(
        await call(c, "projects", { action: "get", project_id: project.project_id }),
        (await app.req("GET", `/v1/projects/${project.project_id}`, { key })).body,
      );
      assert.deepEqual(
        (await call(c, "projects", { action: "list" })).projects,
        (await app.req("GET", "/v1/projects", { key })).body.projects,
      );
      assert.deepEqual(
        await call(c, "billing", { action: "plans" }),
        (await app.req("GET", "/v1/plans", { key })).body,
      );
      assert.deepEqual(
        (await call(c, "webhooks", { action: "list" })).webhooks,
        (await app.req("GET", "/v1/webhooks", { key })).body.webhooks,
      );
    } finally {
      await c.close();
    }
  }));

Deno.test("server.json: kept in the repo, served with this deployment's remote", () =>
  withApp(async (app) => {
    const res = await app.req("GET", "/server.json");
    assert.equal(res.status, 200);
    const base = app.service.services.deps.config.publicBaseUrl;
    const doc = res.body;
    assert.match(doc.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.ok(doc.description.length >= 1 && doc.description.length <= 100);
    // Two remotes on one URL: OAuth sign-in (no header to fill), and an API key header.
    assert.equal(doc.remotes.length, 2);
    for (const r of doc.remotes) {
      assert.equal(r.type, "streamable-http");
      assert.equal(r.url, `${base}/mcp`);
    }
    assert.equal(doc.remotes[0].headers, undefined);
    const auth = doc.remotes[1].headers.find((h: { name: string }) => h.name === "Authorization");
    assert.equal(auth.isSecret, true);
    assert.deepEqual(
      { ...doc, remotes: undefined, websiteUrl: undefined },
      { ...repoServerJson, remotes: undefined, websiteUrl: undefined },
    );
    assert.deepEqual(
      doc.remotes.map((r: { url?: string }) => ({ ...r, url: undefined })),
      repoServerJson.remotes.map((r) => ({ ...r, url: undefined })),
    );
  }));
