/**
 * The `agents` category over HTTP (issue 32): a block only a request as one AI bot shows (403 to
 * GPTBot's token, 200 to a browser, robots.txt allowing everyone) is reported with its access
 * matrix and costs the category; its twin without the firewall reports nothing. A site with
 * every agent-facing defect (content signal against robots.txt, broken discovery documents, a
 * 402 page) fires each check, and its valid twin fires none of them. A pace that cannot fit every
 * probe into the step still answers for every class.
 */
import assert from "node:assert/strict";
import { type TestApp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, robotsRoute, type Route, serveSite } from "../helpers/sites.ts";
import { auditSite } from "./audit_site.ts";
import { base, basePage, json, type Routes } from "./check_cases.ts";

/** Audits the site the routes describe through the API; answers the audit, issues and site. */
async function auditOver(app: TestApp, routes: (o: string) => Routes) {
  let r: Routes | null = null;
  const site = serveSite((p) => {
    r ??= routes(site.origin);
    return r[p];
  });
  try {
    const { key } = await app.signup();
    const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
    assert.equal(proj.status, 201, proj.text);
    const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
    const auditId = started.body.audit_id;
    const audit = (await waitForAudit(app, key, auditId)).body;
    assert.equal(audit.status, "completed");
    const issues = await app.req("GET", `/v1/audits/${auditId}/issues?category=agents&limit=100`, {
      key,
    });
    assert.equal(issues.status, 200, issues.text);
    // deno-lint-ignore no-explicit-any
    const fired = new Set<string>(issues.body.data.map((i: any) => i.check));
    const items = async (check: string) => {
      const res = await app.req("GET", `/v1/audits/${auditId}/issues/${check}?limit=100`, { key });
      assert.equal(res.status, 200, res.text);
      // deno-lint-ignore no-explicit-any
      return res.body.data as any[];
    };
    return { audit, fired, items, origin: site.origin, hits: site.hits };
  } finally {
    await site.close();
  }
}

const firewalled = (token: string | null) => (o: string): Routes => {
  const r = base(o, {}, {
    "/robots.txt": robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${o}/sitemap.xml\n`),
  });
  if (token) { for (const p of ["/", "/a"]) r[p] = { ...r[p]!, refuseAgents: [token] }; }
  return r;
};

Deno.test("a firewall that refuses GPTBot while robots.txt allows it: caught, with the access matrix", () =>
  withApp(async (app) => {
    const blocked = await auditOver(app, firewalled("GPTBot"));
    assert.ok(blocked.fired.has("ai_bot_blocked_by_server"), [...blocked.fired].join());
    assert.ok(blocked.fired.has("ai_bot_access"));
    // robots.txt says nothing about AI crawlers: the block is the server's alone.
    assert.ok(!blocked.fired.has("ai_crawler_rules"));
    const refusals = await blocked.items("ai_bot_blocked_by_server");
    assert.ok(refusals.length >= 2, JSON.stringify(refusals));
    for (const item of refusals) {
      assert.equal(item.bot, "GPTBot");
      assert.equal(item.bot_class, "training");
      assert.equal(item.status, 403);
      assert.equal(item.browser_status, 200);
    }
    assert.deepEqual(
      new Set(refusals.map((i) => new URL(i.url).pathname)),
      new Set(["/", "/a"]),
    );
    // The matrix: only the training class is kept out, by the server, not by robots.txt.
    const matrix = await blocked.items("ai_bot_access");
    assert.deepEqual(matrix.map((m) => m.bot_class), ["training"]);
    assert.deepEqual(matrix[0].robots_blocked, []);
    assert.deepEqual(matrix[0].server_refused, ["GPTBot: blocked/blocked"]);
    assert.ok(matrix[0].server_ok.includes("ClaudeBot"));
    assert.equal(matrix[0].pages_sampled, 2);
    const cats = blocked.audit.summary.categories;
    assert.ok(cats.agents < 100, `agents ${cats.agents}`);
    for (const c of ["performance", "security", "indexability", "mobile", "structure"]) {
      assert.equal(typeof cats[c], "number", c);
    }

    const open = await auditOver(app, firewalled(null));
    assert.ok(!open.fired.has("ai_bot_blocked_by_server"), [...open.fired].join());
    assert.ok(!open.fired.has("ai_bot_access"));
    assert.equal(open.audit.summary.categories.agents, 100);
    assert.ok(open.audit.score > blocked.audit.score, `${open.audit.score} ${blocked.audit.score}`);
  }));

const CARD = (o: string) => ({
  name: "io.example/mcp",
  version: "1.0.0",
  remotes: [{ type: "streamable-http", url: `${o}/mcp` }],
});
const KEYS = {
  keys: [{ kty: "OKP", crv: "Ed25519", x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }],
};
const TRAINING_OUT = "User-agent: GPTBot\nUser-agent: ClaudeBot\nUser-agent: CCBot\n" +
  "User-agent: Google-Extended\nDisallow: /\n";

/** Every agent-facing defect at once, or (`valid`) the same site done right. */
const agentSite = (valid: boolean) => (o: string): Routes => {
  const paid: Route = valid
    ? html(basePage(o, "/b", "b"))
    : { status: 402, body: "Pay", headers: { "crawler-price": "USD 0.01" } };
  return base(o, { "/": { links: ["/a", "/b"] } }, {
    "/robots.txt": robotsRoute(
      `User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=${valid ? "no" : "yes"}\n\n` +
        TRAINING_OUT,
    ),
    "/b": paid,
    "/.well-known/api-catalog": valid ? undefined : json({ linkset: [{ anchor: 7 }] }),
    "/.well-known/oauth-protected-resource": json({ resource: valid ? o : "https://elsewhere" }),
    "/.well-known/oauth-authorization-server": json(
      valid ? { issuer: o, response_types_supported: ["code"] } : { issuer: o },
    ),
    "/.well-known/mcp/server-card.json": json(valid ? CARD(o) : { name: "x", remotes: [] }),
    "/.well-known/http-message-signatures-directory": json(valid ? KEYS : { keys: "none" }),
  });
};

Deno.test("agent-facing defects fire through the API, and their valid twin is quiet", () =>
  withApp(async (app) => {
    const bad = await auditOver(app, agentSite(false));
    const defects = [
      "content_signal_conflict",
      "api_catalog_invalid",
      "oauth_metadata_invalid",
      "mcp_server_card_invalid",
      "web_bot_auth_directory_invalid",
      "pay_per_crawl",
    ];
    for (const id of defects) assert.ok(bad.fired.has(id), `${id}: ${[...bad.fired].join()}`);
    assert.ok(bad.fired.has("content_signals"));
    const oauth = await bad.items("oauth_metadata_invalid");
    assert.deepEqual(
      oauth.map((i) => i.document).sort(),
      ["oauth_authorization_server", "oauth_protected_resource"],
    );
    const [paid] = await bad.items("pay_per_crawl");
    assert.equal(new URL(paid.url).pathname, "/b");
    // A 402 is a price, not a broken page or link.
    assert.deepEqual(await bad.items("http_4xx"), []);
    assert.deepEqual(await bad.items("broken_internal_links"), []);
    const [conflict] = await bad.items("content_signal_conflict");
    assert.match(
      conflict.conflicts[0],
      /ai-train allows it, but robots.txt disallows every training bot/,
    );

    const good = await auditOver(app, agentSite(true));
    for (const id of defects) assert.ok(!good.fired.has(id), `${id} fired on the valid site`);
    assert.ok(good.fired.has("content_signals"), "declared signals are reported");
    assert.ok(!good.fired.has("agent_discovery_missing"));
    assert.ok(good.audit.summary.categories.agents > bad.audit.summary.categories.agents);
  }));

Deno.test("a pace that cannot fit the full probe set: one request per class on the home page, the block still caught", async () => {
  // 4 requests a second and a 5 s step: 23 requests would take 5.75 s, so the step goes lean.
  const out = await auditSite(
    (o) => firewalled("GPTBot")(o) as Record<string, Route>,
    { maxRps: 4, stepMs: 5_000 },
  );
  assert.equal(out.fired.get("ai_bot_blocked_by_server"), 1);
  const [training] = out.findings.get("ai_bot_access") ?? [];
  assert.equal(training.bot_class, "training");
  assert.equal(training.pages_sampled, 1);
  assert.deepEqual(training.server_refused, ["GPTBot: blocked"]);
  // A browser and each class's first token on the home page, Markdown, five documents.
  assert.equal(out.probeHits.length, 5 + 1 + 5, out.probeHits.join());
});
