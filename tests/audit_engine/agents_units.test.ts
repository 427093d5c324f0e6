/**
 * The pure parts of the `agents` category (checks/agents.ts, render/agent_view.ts): how answers
 * become verdicts, both content-signal vocabularies and their conflicts, each discovery
 * document's rules, Link relations, Markdown answers and WebMCP tool shapes.
 */
import assert from "node:assert/strict";
import {
  accessVerdict,
  agentLinkRels,
  type BotClass,
  discoveryProblems,
  isMarkdownAnswer,
  parseContentSignals,
  paymentScheme,
  signalConflicts,
} from "../../domain/audit_engine/checks/agents.ts";
import { webMcpToolProblems } from "../../domain/render/agent_view.ts";

const O = "https://shop.example";

Deno.test("answers: blocks, challenges and prices are told apart", () => {
  const h = (o: Record<string, string> = {}) => new Headers(o);
  assert.equal(accessVerdict(200, h()), "ok");
  assert.equal(accessVerdict(301, h()), "ok");
  for (const s of [401, 403, 429, 451]) assert.equal(accessVerdict(s, h()), "blocked");
  assert.equal(accessVerdict(503, h({ "cf-mitigated": "challenge" })), "blocked");
  assert.equal(accessVerdict(200, h({ "cf-mitigated": "challenge" })), "blocked");
  assert.equal(accessVerdict(503, h()), "error");
  assert.equal(accessVerdict(0, null), "error");
  assert.equal(accessVerdict(402, h()), "payment");
  assert.equal(paymentScheme(h({ "crawler-price": "USD 0.01" })), "pay_per_crawl");
  assert.equal(paymentScheme(h({ "payment-required": "eyJ4" })), "x402");
  assert.equal(paymentScheme(h({ "www-authenticate": 'Payment id="1"' })), "http_payment");
  assert.equal(paymentScheme(h()), "unspecified");
});

Deno.test("content signals: both vocabularies, groups, paths; conflicts only where a yes meets a block", () => {
  const s = parseContentSignals(
    "User-agent: *\nContent-Signal: search=yes, ai-input=no, ai-train=yes\nAllow: /\n\n" +
      "User-agent: GPTBot\nUser-agent: CCBot\nContent-Usage: /blog train-ai=n, search=y\n" +
      "Content-Signal: ai-train=maybe, telepathy=yes\nDisallow: /\n",
  );
  assert.deepEqual(
    s.entries.map((e) => [e.directive, e.use, e.allowed, e.group, e.path]),
    [
      ["Content-Signal", "search", true, "*", null],
      ["Content-Signal", "ai-input", false, "*", null],
      ["Content-Signal", "ai-train", true, "*", null],
      ["Content-Usage", "train-ai", false, "GPTBot, CCBot", "/blog"],
      ["Content-Usage", "search", true, "GPTBot, CCBot", "/blog"],
    ],
  );
  assert.equal(s.problems.length, 2);
  const none = signalConflicts(s, new Set<BotClass>());
  assert.deepEqual(none, s.problems, "no block: only the vocabulary problems");
  const trainingOut = signalConflicts(s, new Set<BotClass>(["training"]));
  assert.match(trainingOut[0], /ai-train allows it, but robots.txt disallows every training bot/);
  // search is made by two classes: blocking one of them is no conflict.
  assert.equal(
    signalConflicts(s, new Set<BotClass>(["classic_search"])).some((c) => /search allows/.test(c)),
    false,
  );
  assert.deepEqual(parseContentSignals("User-agent: *\nAllow: /\n").entries, []);
});

Deno.test("discovery documents: each one's required members", () => {
  const p = (k: Parameters<typeof discoveryProblems>[0], v: unknown) =>
    discoveryProblems(k, typeof v === "string" ? v : JSON.stringify(v), O);
  assert.deepEqual(p("api_catalog", "{"), ["not valid JSON"]);
  assert.deepEqual(p("api_catalog", []), ["not a JSON object"]);
  assert.deepEqual(
    p("api_catalog", { linkset: [{ anchor: `${O}/api`, item: [{ href: `${O}/api/v1` }] }] }),
    [],
  );
  assert.equal(p("api_catalog", { linkset: [{ item: [{ link: "x" }] }] }).length, 2);
  assert.deepEqual(p("oauth_protected_resource", { resource: `${O}/` }), []);
  assert.equal(p("oauth_protected_resource", { resource: "https://evil.example" }).length, 1);
  assert.deepEqual(
    p("oauth_authorization_server", { issuer: O, response_types_supported: ["code"] }),
    [],
  );
  assert.equal(
    p("oauth_authorization_server", { issuer: O, token_endpoint: "not a url" }).length,
    2,
  );
  const card = { name: "io.example/x", version: "1", remotes: [{ type: "sse", url: `${O}/m` }] };
  assert.deepEqual(p("mcp_server_card", card), []);
  assert.equal(
    p("mcp_server_card", { ...card, remotes: [{ type: "sse", url: "ftp://x" }] }).length,
    1,
  );
  assert.deepEqual(p("web_bot_auth", { keys: [{ kty: "OKP", crv: "Ed25519", x: "abc" }] }), []);
  assert.deepEqual(p("web_bot_auth", { keys: [{ kty: "OKP" }] }), [
    "keys[0] (OKP) needs `crv` and `x`",
  ]);
});

Deno.test("Link relations and Markdown answers", () => {
  assert.deepEqual(
    agentLinkRels(
      '</a.md>; rel="alternate"; type="text/markdown", </x>; rel=preload, ' +
        '</.well-known/api-catalog>; rel="api-catalog describedby"',
    ),
    ["alternate", "api-catalog", "describedby"],
  );
  assert.deepEqual(agentLinkRels('</s.css>; rel="stylesheet"'), []);
  assert.deepEqual(agentLinkRels(null), []);
  assert.equal(isMarkdownAnswer("text/markdown; charset=utf-8", "<p>x"), true);
  assert.equal(isMarkdownAnswer("text/plain", "# Title\n\nText"), true);
  assert.equal(isMarkdownAnswer("text/plain", "just text"), false);
  assert.equal(isMarkdownAnswer("text/html", "# Title"), false);
});

Deno.test("WebMCP tools: name, description, execute and an object schema", () => {
  const ok = {
    name: "search",
    description: "Search.",
    inputSchema: JSON.stringify({ type: "object", properties: {} }),
    hasExecute: true,
    via: "registerTool",
  };
  assert.deepEqual(webMcpToolProblems(ok), []);
  assert.deepEqual(webMcpToolProblems({ ...ok, inputSchema: null }), []);
  assert.deepEqual(webMcpToolProblems({ ...ok, name: "add to cart" }), [
    "name is not 1-128 of A-Z a-z 0-9 _ . -",
  ]);
  assert.deepEqual(webMcpToolProblems({ ...ok, description: " ", hasExecute: false }), [
    "no description",
    "no execute function",
  ]);
  assert.deepEqual(webMcpToolProblems({ ...ok, inputSchema: '{"type":"string"}' }), [
    'inputSchema is not a JSON Schema of type "object"',
  ]);
  assert.deepEqual(webMcpToolProblems({ ...ok, inputSchema: "__unserialisable__" }), [
    "inputSchema is not JSON",
  ]);
});
