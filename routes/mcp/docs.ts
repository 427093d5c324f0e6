/**
 * The words of the MCP server: its `instructions`, the tool-flow quickstart and the error table
 * served as resources (and by the `docs` tool), and the host configuration snippet the public
 * pages show. Limits and prices come from the constants the API uses.
 */
import { SANDBOX_LIMITS } from "../../domain/identity/mod.ts";
import { UNIT_PRICES } from "../../domain/billing/mod.ts";
import { ERROR_CODES } from "../../domain/platform/mod.ts";

/** The path of the endpoint, on the public base URL. */
export const MCP_PATH = "/mcp";

/** What `initialize` / `server/discover` tell a model about the service, in a few lines. */
export const SERVER_INSTRUCTIONS =
  "Serpwright is SEO automation for agents: technical site audits and draft SEO articles.\n" +
  "Flow: signup (no key needed) returns an api_key; the MCP host must then send " +
  "`Authorization: Bearer <api_key>` to this server. Then: projects (create, one per site) → " +
  "audits (start, then get with wait up to 60 s or after poll_after_seconds; completed: summary, " +
  "issues, report_url, share for a human, recheck after a fix) → articles (start, then get the " +
  "same way; draft markdown, never published for you). Results are short text plus the /v1 " +
  "body in structuredContent; the text's last line names the REST address.\n" +
  `Sandbox: ${SANDBOX_LIMITS.projects} project, ${SANDBOX_LIMITS.audits} audit, ` +
  `${SANDBOX_LIMITS.articles} articles, ${SANDBOX_LIMITS.expires_days} days. After that, billing ` +
  "returns a checkout_url that a human must open and pay; never claim a purchase is done.\n" +
  "Failures are tool errors (isError) whose text starts with `Error <code>:` and ends with the " +
  'API\'s error body as JSON (also in _meta["com.serpwright/error"]): branch on the code (e.g. ' +
  "insufficient_credits → billing buy_credits, sandbox_limit_reached → hand a human the " +
  "upgrade_url). Creating actions take idempotency_key: reuse it when retrying the same action.";

/** The JSON an MCP host needs (Claude, Cursor and most hosts read this `mcpServers` shape). */
export function hostConfigSnippet(baseUrl: string, key = "sk_sandbox_..."): string {
  return JSON.stringify(
    {
      mcpServers: {
        serpwright: {
          type: "http",
          url: `${baseUrl}${MCP_PATH}`,
          headers: { Authorization: `Bearer ${key}` },
        },
      },
    },
    null,
    2,
  );
}

/** The quickstart in tool terms (the HTTP one is /docs/agents). */
export function quickstartMarkdown(baseUrl: string): string {
  return `# Serpwright over MCP: quickstart

Endpoint: ${baseUrl}${MCP_PATH} (Streamable HTTP, stateless; protocol 2026-07-28, 2025-11-25 and
2025-06-18). Authentication: the same API keys as the HTTP API, as \`Authorization: Bearer <key>\`.
Without a key only signup, billing (plans) and docs are listed.

1. \`signup\` with \`{"email": "agent@example.com"}\` → \`api_key\` (shown once). Configure the host:

\`\`\`json
${hostConfigSnippet(baseUrl)}
\`\`\`

2. \`account\` → mode, trial usage and limits.
3. \`projects\` \`{"action": "create", "url": "https://example.com"}\` → \`project_id\`.
4. \`audits\` \`{"action": "start", "project_id": "proj_…", "wait": 60}\` → the audit; if still
   running, \`{"action": "get", "audit_id": "aud_…", "wait": 60}\` (or poll after
   \`poll_after_seconds\`). Completed audits carry \`score\`, \`summary.fix_first\` (what to
   fix first, with effort and fix), \`summary.top_issues\` and \`report_url\` (the HTML report,
   with the key); actions \`summary\` (2 KB of Markdown),
   \`issues\` (worst first), \`issue\` (with \`check\`: its affected URLs and evidence) and
   \`pages\` (every URL crawled) page with \`limit\` (default 10) and \`cursor\`. \`share\` → a link
   a human opens without a key; after a fix, \`recheck\` with \`check\` (and \`wait\`) judges each
   affected URL again.
   A host that supports MCP tasks (2026-07-28 extension \`io.modelcontextprotocol/tasks\`)
   gets \`start\` as a task and polls it (\`tasks/get\`) for you: no \`wait\` or \`get\` needed.
5. \`articles\` \`{"action": "start", "project_id": "proj_…", "topic": "How to choose running shoes"}\`
   → \`article_id\`; \`{"action": "get", "article_id": "art_…", "wait": 60}\` until \`ready\`, then read
   \`content_markdown\`.
6. When the sandbox runs out: \`billing\` \`{"action": "plans"}\`, and with a live key
   \`{"action": "buy_credits", "pack_id": "pack_500"}\` or
   \`{"action": "subscribe", "project_id": "proj_…", "plan_id": "basic"}\` → \`checkout_url\` for a
   human to pay. An audit costs ${UNIT_PRICES.technical_audit} credits, an article
   ${UNIT_PRICES.article_generated}, unless the project is subscribed.
7. Optional: \`webhooks\` \`{"action": "create", "url": "https://…"}\` for signed deliveries instead
   of polling.
8. Optional, live key: \`schedule\`
   \`{"action": "set", "project_id": "proj_…", "cadence": "weekly", "hour_utc": 6}\` audits the
   site on its own; \`audit.regressed\` (webhooks) tells you when it got worse.

Errors are tool results with \`isError: true\`: the text starts with \`Error <code>:\` and ends with the
API's error body \`{"error": {code, message, doc_url}}\` as JSON, also in \`_meta["com.serpwright/error"]\`;
the same codes as the HTTP API (resource \`serpwright://docs/errors\`). Retries of creating
actions are safe with the same \`idempotency_key\` (shared with the HTTP API's Idempotency-Key).
Rate limit: 600 calls per minute per key (\`rate_limited\` with \`retry_after_seconds\`).
`;
}

/** Every error code as a markdown table, from the table `/docs/errors` is built from. */
export function errorsMarkdown(baseUrl: string): string {
  const rows = Object.entries(ERROR_CODES).map(([code, e]) =>
    `| \`${code}\` | ${e.status} | ${e.meaning} | ${e.action} |`
  );
  return `# Serpwright error codes

Tool errors carry the code in their text (\`Error <code>: …\`) and in
\`_meta["com.serpwright/error"].error.code\`; branch on it, never on the message. Each code's
entry: ${baseUrl}/docs/errors#<code>.

| code | HTTP | meaning | what to do |
| --- | --- | --- | --- |
${rows.join("\n")}
`;
}
