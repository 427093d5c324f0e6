/**
 * Agents find the service on their own (issue 33 item 4): the MCP Server Card (SEP-2127) at
 * `/.well-known/mcp/server-card.json`, in step with `/server.json`; the API catalog (RFC 9727) at
 * `/.well-known/api-catalog`; `/status`. The published schemas are not fetched (tests run
 * offline): the required fields and shapes they define are checked here.
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";

Deno.test("the MCP server card is served and agrees with server.json", () =>
  withApp(async (app) => {
    const base = app.service.services.deps.config.publicBaseUrl;
    const res = await app.req("GET", "/.well-known/mcp/server-card.json");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    const card = res.body;
    // SEP-2127's required fields.
    assert.equal(
      card.$schema,
      "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
    );
    assert.match(card.name, /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/);
    assert.match(card.version, /^\d+\.\d+\.\d+/);
    assert.equal(typeof card.capabilities, "object");
    assert.deepEqual(card.capabilities.tools, { listChanged: false });
    // In step with the registry entry: the same identity and remotes.
    const entry = (await app.req("GET", "/server.json")).body;
    for (const k of ["name", "title", "description", "version", "websiteUrl"]) {
      assert.equal(card[k], entry[k], k);
    }
    assert.equal(card.remotes.length, entry.remotes.length);
    card.remotes.forEach((r: Record<string, unknown>, i: number) => {
      const { supportedProtocolVersions, authentication, ...rest } = r;
      assert.deepEqual(rest, entry.remotes[i]);
      assert.equal(r.url, `${base}/mcp`);
      assert.ok((supportedProtocolVersions as string[]).includes("2026-07-28"));
      assert.deepEqual(authentication, { required: false, schemes: ["bearer", "oauth2"] });
    });
    const bare = await app.req("GET", "/.well-known/mcp/server-card");
    assert.deepEqual(bare.body, card);
    // The versions it lists are the ones /mcp negotiates.
    const init = await fetch(`${app.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "card", version: "1" },
        },
      }),
    });
    assert.match(await init.text(), /"protocolVersion":"2025-06-18"/);
  }));

Deno.test("the API catalog is an RFC 9727 linkset pointing at the OpenAPI document, docs and status", () =>
  withApp(async (app) => {
    const base = app.service.services.deps.config.publicBaseUrl;
    const res = await fetch(`${app.url}/.well-known/api-catalog`);
    assert.equal(res.status, 200);
    assert.equal(
      res.headers.get("content-type"),
      'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"',
    );
    assert.equal(res.headers.get("link"), `<${base}/.well-known/api-catalog>; rel="api-catalog"`);
    const doc = await res.json();
    assert.ok(Array.isArray(doc.linkset) && doc.linkset.length >= 1);
    for (const entry of doc.linkset) {
      assert.equal(typeof entry.anchor, "string");
      for (const [rel, targets] of Object.entries(entry)) {
        if (rel === "anchor") continue;
        assert.ok(Array.isArray(targets), rel);
        for (const t of targets as { href: string }[]) assert.match(t.href, /^https?:\/\//, rel);
      }
    }
    const api = doc.linkset.find((e: { anchor: string }) => e.anchor === `${base}/v1`);
    assert.equal(api["service-desc"][0].href, `${base}/v1/openapi.json`);
    assert.ok(api["service-doc"].some((l: { href: string }) => l.href === `${base}/docs/agents`));
    assert.equal(api.status[0].href, `${base}/status`);
    // Every link it names is served (on this app's own address).
    for (const entry of doc.linkset) {
      for (const [rel, targets] of Object.entries(entry)) {
        if (rel === "anchor") continue;
        for (const t of targets as { href: string }[]) {
          const path = t.href.slice(base.length).split("#")[0];
          const r = await fetch(`${app.url}${path}`);
          await r.body?.cancel();
          assert.equal(r.status, 200, t.href);
        }
      }
    }
    const head = await fetch(`${app.url}/.well-known/api-catalog`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get("link"), `<${base}/.well-known/api-catalog>; rel="api-catalog"`);
    const status = await app.req("GET", "/status");
    assert.equal(status.body.status, "ok");
  }));

Deno.test("Accept: text/markdown answers the docs pages as Markdown; HTML stays the default", () =>
  withApp(async (app) => {
    for (const path of ["/", "/pricing", "/docs/agents", "/docs/errors", "/docs/checks"]) {
      const md = await fetch(`${app.url}${path}`, {
        headers: { accept: "text/markdown, text/html;q=0.9" },
      });
      assert.equal(md.status, 200, path);
      assert.equal(md.headers.get("content-type"), "text/markdown; charset=utf-8", path);
      assert.equal(md.headers.get("vary"), "Accept", path);
      const text = await md.text();
      assert.match(text, /^# \S/, path);
      // No markup outside code.
      const prose = text.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
      assert.ok(!/(?<!\\)<\/?(p|div|a|li|ul|h\d|table|tr|td|code|main)\b/.test(prose), path);
      const html = await fetch(`${app.url}${path}`, { headers: { accept: "*/*" } });
      assert.equal(html.headers.get("content-type"), "text/html; charset=utf-8", path);
      assert.equal(html.headers.get("vary"), "Accept", path);
      await html.body?.cancel();
    }
    const agents = await (await fetch(`${app.url}/docs/agents`, {
      headers: { accept: "text/markdown" },
    })).text();
    for (
      const s of [
        "## 3. Run a technical audit and poll it",
        "`poll_after_seconds`",
        "### The report, and share links for a human",
        "### Re-checking a fix",
        "```\nexport IDEM=$(od -An -N16 -tx1 /dev/urandom",
        "[OpenAPI 3.1 document](",
      ]
    ) assert.ok(agents.includes(s), s);
    // A browser's usual Accept keeps the HTML.
    const browser = await fetch(`${app.url}/docs/agents`, {
      headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" },
    });
    assert.equal(browser.headers.get("content-type"), "text/html; charset=utf-8");
    await browser.body?.cancel();
  }));
