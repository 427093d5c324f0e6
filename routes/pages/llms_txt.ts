/**
 * `GET /llms.txt`, following the llms.txt convention (https://llmstxt.org): an H1 with the name, a
 * blockquote summary, a few plain facts, then H2 sections of `- [name](url): notes` links, with
 * the skippable ones under "Optional".
 */
import { SANDBOX_LIMITS } from "../../domain/identity/mod.ts";
import { PLANS, UNIT_PRICES } from "../../domain/billing/mod.ts";

export function llmsTxt(baseUrl: string): string {
  const b = baseUrl;
  const plans = PLANS.map((p) => `${p.id} ${p.monthlyPrice} USD`).join(", ");
  return `# Serpwright

> SEO automation API for AI agents: sign up over HTTP with no human and no CAPTCHA, get a sandbox
> API key at once, register a site as a project, run technical SEO audits and generate draft SEO
> articles. A human pays per project through a checkout link when the trial runs out.

- API base: ${b}/v1 (JSON, snake_case). Auth: \`Authorization: Bearer <API_KEY>\`.
- Start: \`POST ${b}/v1/accounts\` with \`{"email": "..."}\` returns \`api_key\` (shown once).
- Sandbox: ${SANDBOX_LIMITS.projects} project, ${SANDBOX_LIMITS.audits} audit, ${SANDBOX_LIMITS.articles} draft articles, ${SANDBOX_LIMITS.expires_days} days.
- Audits, re-checks and articles are asynchronous: 202 with a \`poll\` path and \`poll_after_seconds\` (also \`Retry-After\`; 2-60 s, from the job's size); poll after it, or receive signed webhooks.
- Report: a completed audit carries \`report_url\` (the HTML report, with the key) and \`share_url\`; \`POST ${b}/v1/audits/{id}/shares\` makes a share link a human opens without a key (articles: \`/v1/articles/{id}/shares\`, a preview link).
- Re-check a fix: \`POST ${b}/v1/audits/{id}/issues/{check}/recheck\` fetches only that issue's affected URLs again and judges each fixed, still_failing or not_checked.
- Audit findings: \`GET ${b}/v1/audits/{id}/issues\` (each issue with what it means, how to fix it and new/persisting/fixed since the last audit), \`/issues/{check}\` (affected URLs with evidence), \`/pages\` (page inventory); cursor pagination (\`limit\` up to 100, \`next_cursor\`).
- Errors: \`{"error": {"code", "message", "doc_url"}}\`; branch on \`error.code\`. 429 carries \`Retry-After\`.
- Retries: send \`Idempotency-Key\` on POSTs; a repeat replays the stored answer.
- Trial over (403 \`sandbox_limit_reached\`, 402 \`payment_required\`, 401 \`key_expired\`): \`POST ${b}/v1/upgrades\` with the sandbox key (an expired one too) answers a \`user_code\` and \`verification_uri_complete\` for a human, who pays; poll \`GET ${b}/v1/upgrades/{id}\` every \`interval\` s: one answer after payment carries the live key (\`api_key\`).
- MCP: the same capabilities as tools at ${b}/mcp (Streamable HTTP); header \`Authorization: Bearer <API_KEY>\`; without a key: signup, billing (plans) and docs. Host config: \`{"mcpServers": {"serpwright": {"type": "http", "url": "${b}/mcp", "headers": {"Authorization": "Bearer sk_sandbox_..."}}}}\`.
- MCP 2026-07-28: \`server/discover\` answers without a session; each request carries its version and client capabilities in \`_meta\`. A client declaring the tasks extension (\`io.modelcontextprotocol/tasks\`) gets audit and article starts as tasks: poll \`tasks/get\` (the result is what \`get\` answers), \`tasks/cancel\` refunds a queued job.
- MCP without a key (browser-based hosts): give the host only the URL ${b}/mcp. It signs in with OAuth 2.1: a keyless call of a keyed tool answers 401 with \`WWW-Authenticate: Bearer resource_metadata="${b}/.well-known/oauth-protected-resource/mcp", scope="mcp"\`; authorization server metadata at ${b}/.well-known/oauth-authorization-server (PKCE S256, Client ID Metadata Documents or dynamic registration, \`resource=${b}/mcp\`). The human pastes an API key or signs up with an email on the sign-in page and allows access; the token acts as that key (sandbox stays sandbox) but cannot create or revoke keys or connected apps, sign up, set schedules or manage webhook endpoints (403 \`token_not_allowed\`); its share links end with it; it works on /mcp only, and is listed and revoked at \`GET/DELETE ${b}/v1/connected-apps\`.
- Prices: plans per project per month (${plans}); or prepaid credits (technical_audit ${UNIT_PRICES.technical_audit}, article_generated ${UNIT_PRICES.article_generated}, article_outline ${UNIT_PRICES.article_outline} when the server has no model and delivers an outline; 1 credit = 1 USD).

## Docs

- [Agent quickstart](${b}/docs/agents): signup, project, audit, polling, article, webhooks with signature verification, billing, key rotation, errors, idempotent retries, with curl lines
- [OpenAPI 3.1 document](${b}/v1/openapi.json): every /v1 endpoint, request body, response schema, error code and header
- [Error codes](${b}/docs/errors): every error.code with its HTTP status, cause and what to do
- [Connect over MCP](${b}/docs/agents#mcp): the MCP endpoint, its tools and the host configuration with the Bearer header
- [MCP server card](${b}/.well-known/mcp/server-card.json): SEP-2127 card of the MCP server (remotes, protocol versions, authentication, capabilities), in step with server.json
- [API catalog](${b}/.well-known/api-catalog): RFC 9727 linkset to the OpenAPI document, these docs and the status
- [MCP registry entry](${b}/server.json): server.json with the streamable-http remote (API key header optional; OAuth sign-in without one)
- [MCP OAuth sign-in](${b}/docs/agents#mcp-oauth): adding the server to a browser-based host with no key at hand
- [Audit checks](${b}/docs/checks): every audit check id with what it means and how to fix it

## Pricing

- [Pricing page](${b}/pricing): plans, credit packs and unit prices, for humans
- [Plans document](${b}/v1/plans): the same catalogue as JSON

## Optional

- [Home](${b}/): what the service is
`;
}
