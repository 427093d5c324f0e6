/** `GET /`: what the service is, and a link to everything it serves. */
import { SANDBOX_LIMITS } from "../../domain/identity/mod.ts";
import { html, layout } from "./layout.ts";

export function homePage(baseUrl: string): string {
  const b = baseUrl;
  const body = html`
    <h1>Serpwright: SEO automation for AI agents</h1>
    <p>Serpwright is an HTTP API that agents call without a human: sign up with one request and get a
    sandbox API key at once (no CAPTCHA, no card), register a site as a project, run technical SEO
    audits, and generate draft SEO articles. When the trial runs out, the agent hands a human a
    checkout link; payment activates the project.</p>

    <h2 id="start">Start here</h2>
    <ul>
      <li><a href="${b}/docs/agents">Agent quickstart</a>: every step from signup to a finished audit and
    article, with <code>curl</code> lines, polling intervals, webhooks and signature verification,
    billing, key rotation, error handling and idempotent retries.</li>
      <li><a href="${b}/v1/openapi.json">OpenAPI 3.1 document</a>: every endpoint, request bodies with
    their bounds, response schemas, error codes and headers, generated from the schemas that validate
    every request.</li>
      <li><a href="${b}/docs/errors">Error codes</a>: every <code>error.code</code>, its HTTP status, when
    it happens and what to do.</li>
      <li><a href="${b}/pricing">Pricing</a>: per-project plans, credit packs and unit prices (the same data
    as <a href="${b}/v1/plans"><code>GET /v1/plans</code></a>).</li>
      <li><a href="${b}/llms.txt">llms.txt</a>: a short plain-text map of the service for language models.</li>
      <li><a href="${b}/docs/agents#mcp">MCP server</a>: the same capabilities as tools at
    <code>${b}/mcp</code> for agent hosts (Claude, ChatGPT connectors, Cursor, VS Code), with the
    same key as <code>Authorization: Bearer &lt;API_KEY&gt;</code>, or with no key at hand: a
    browser-based host given just that URL signs you in with OAuth (paste a key or sign up, then
    allow; <a href="${b}/docs/agents#mcp-oauth">how</a>); registry entry
    <a href="${b}/server.json">server.json</a>.</li>
    </ul>

    <h2 id="at-a-glance">At a glance</h2>
    <ul>
      <li>API base: <code>${b}/v1</code>; JSON in and out; snake_case fields.</li>
      <li>Auth: <code>Authorization: Bearer &lt;API_KEY&gt;</code>; sandbox keys start with
    <code>sk_sandbox_</code>, live keys with <code>sk_live_</code>.</li>
      <li>Sandbox trial: ${SANDBOX_LIMITS.projects} project, ${SANDBOX_LIMITS.audits} audit,
    ${SANDBOX_LIMITS.articles} watermarked draft articles, ${SANDBOX_LIMITS.expires_days} days.</li>
      <li>Audits and articles are asynchronous: a <code>202</code> with a <code>poll</code> path, then
    <code>GET</code> it after its <code>poll_after_seconds</code> (2 to 60 s, from the job's size), or receive a signed webhook.</li>
      <li>Errors: <code>{"error": {"code", "message", "doc_url"}}</code>; branch on <code>error.code</code>.</li>
    </ul>
  `;
  return layout({
    baseUrl: b,
    path: "/",
    title: "Serpwright: SEO automation for AI agents",
    description:
      "SEO automation API for AI agents: instant sandbox signup, technical audits and draft SEO articles.",
    body,
  });
}
