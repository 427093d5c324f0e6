/**
 * `GET /docs/agents`: the agent quickstart. Every `curl` line runs as written against
 * `deno task dev` (`http://localhost:8000`, the `.env.dev` operator token); tests check each one
 * against the served routes. Limits and prices are read from the same constants the API uses.
 */
import { SANDBOX_LIMITS } from "../../domain/identity/mod.ts";
import {
  PACK_IDS,
  PLANS,
  RECHECK_PRICING_RULE,
  RENDERED_AUDIT_RULE,
  UNIT_PRICES,
} from "../../domain/billing/mod.ts";
import { EVENT_NAMES } from "../../domain/platform/mod.ts";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  MAX_ATTEMPTS,
  MAX_ENDPOINTS,
  SIGNATURE_HEADER,
  SIGNATURE_TOLERANCE_S,
  SIGNATURE_V2_HEADER,
  TIMESTAMP_HEADER,
} from "../../domain/webhooks/types.ts";
import { codeBlock, html, layout, table } from "./layout.ts";
import { hostConfigSnippet } from "../mcp/docs.ts";

/** The address the quickstart's commands use: the `deno task dev` server. */
export const DEV_BASE = "http://localhost:8000";
/** The operator token of `.env.dev`. */
export const DEV_ADMIN_TOKEN = "dev-admin-token-not-secret";

const D = DEV_BASE;

/** The receiver's signature check, shown on the page (and exercised by examples/agent.ts). */
export const VERIFY_SNIPPET = `
/**
 * True when \`header\` is "v2=" and the hex HMAC-SHA256 of "{delivery id}.{timestamp}.{raw body}",
 * keyed with the endpoint secret, and the timestamp is within ${SIGNATURE_TOLERANCE_S} s of now.
 */
async function verifyDelivery(
  secret: string,
  rawBody: string,
  id: string | null,
  timestamp: string | null,
  header: string | null,
): Promise<boolean> {
  const given = /^v2=([0-9a-f]{64})$/.exec(header ?? "")?.[1];
  if (!given || !id || !timestamp || !/^\\d+$/.test(timestamp)) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > ${SIGNATURE_TOLERANCE_S}) return false; // replayed later
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret), // the 64 hex characters as text, exactly as the create response gave them
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = enc.encode(\`\${id}.\${timestamp}.\${rawBody}\`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, signed));
  const expected = Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
  // Constant-time compare: look at every character, whatever the first difference.
  let diff = 0;
  for (let i = 0; i < expected.length; i++) diff |= expected.charCodeAt(i) ^ given.charCodeAt(i);
  return diff === 0;
}

// A receiver (Deno): verify on the RAW body before parsing, dedupe on the SIGNED delivery id,
// answer 2xx fast.
const seen = new Set<string>(); // durable storage in production; keep ids at least a day
Deno.serve({ port: 8787 }, async (req) => {
  const raw = await req.text();
  const id = req.headers.get("${DELIVERY_HEADER}");
  const ok = await verifyDelivery(
    Deno.env.get("SERPWRIGHT_WEBHOOK_SECRET")!,
    raw,
    id,
    req.headers.get("${TIMESTAMP_HEADER}"),
    req.headers.get("${SIGNATURE_V2_HEADER}"),
  );
  if (!ok) return new Response("bad signature", { status: 401 });
  if (seen.has(id!)) return new Response("duplicate"); // a retry of one already handled
  seen.add(id!);
  const envelope = JSON.parse(raw); // {id, event, created_at, data}
  console.log(req.headers.get("${EVENT_HEADER}"), envelope.data);
  return new Response("ok");
});
`;

export function agentsPage(baseUrl: string): string {
  const b = baseUrl;
  const basic = PLANS.find((p) => p.id === "basic")!;
  const pro = PLANS.find((p) => p.id === "pro")!;
  const body = html`
    <h1>Agent quickstart</h1>
    <p>From nothing to a finished technical audit and a draft SEO article, over plain HTTP. Every
    command below runs as written against a local server started with <code>deno task dev</code>
    (<code>${D}</code>)${b === D
      ? ""
      : html`; against this deployment, use <code>${b}</code> instead of <code>${D}</code>`}. The full contract, with every field, bound and error code, is the
    <a href="${b}/v1/openapi.json">OpenAPI 3.1 document</a>. A runnable client that walks this whole
    page is <code>examples/agent.ts</code> in the repository
    (<code>deno run -A examples/agent.ts --base ${D}</code>).</p>

    <nav aria-label="Steps">
      <ol>
        <li><a href="#signup">Sign up</a></li>
        <li><a href="#project">Register a project</a></li>
        <li><a href="#audit">Run an audit and poll it</a></li>
        <li><a href="#article">Generate an article and poll it</a></li>
        <li><a href="#webhooks">Webhooks and signature verification</a></li>
        <li><a href="#billing">Billing and checkout</a></li>
        <li><a href="#keys">Key rotation</a></li>
        <li><a href="#errors">Error handling</a></li>
        <li><a href="#idempotency">Idempotent retries</a></li>
        <li><a href="#limits">Rate limits and other limits</a></li>
        <li><a href="#mcp">Connect over MCP</a></li>
      </ol>
    </nav>

    <h2 id="conventions">Conventions</h2>
    <ul>
      <li>Every path starts with <code>/v1</code>; bodies are JSON (<code>Content-Type: application/json</code>); fields are snake_case; timestamps are ISO 8601 UTC.</li>
      <li>Authenticated calls send <code>Authorization: Bearer $KEY</code>. Only <code>POST /v1/accounts</code> and <code>GET /v1/plans</code> are public.</li>
      <li>Unknown body fields are refused (400 <code>invalid_request</code> naming the field). Bodies over 64 KiB answer 413.</li>
      <li>Save the ids each answer gives you; the commands below use shell variables for them.</li>
    </ul>

    <h2 id="signup">1. Sign up</h2>
    <p>Public, no CAPTCHA. The answer holds a sandbox key, valid at once and <strong>shown only this
    once</strong> (a retry of the same request with the same <code>Idempotency-Key</code> replays
    it). Make every <code>Idempotency-Key</code> a fresh random value (below, 32 hex digits from
    <code>/dev/urandom</code>, which every Unix has), never a name someone else could pick too.</p>
    ${codeBlock(`
# A fresh random key per operation; resend it only to retry that same operation.
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/accounts \\
  -H 'Content-Type: application/json' -H "Idempotency-Key: $IDEM" \\
  -d '{"email":"agent@example.com","origin":"agent"}'
# 201 {"account_id":"acct_…","api_key":"sk_sandbox_…","mode":"sandbox",
#      "sandbox_limits":{"audits":${SANDBOX_LIMITS.audits},"articles":${SANDBOX_LIMITS.articles},"expires_days":${SANDBOX_LIMITS.expires_days}},
#      "upgrade_url":"${b}/pricing","docs":"${b}/docs/agents"}
export KEY=sk_sandbox_...     # the api_key from the answer
export ACCOUNT=acct_...       # the account_id

curl -s ${D}/v1/account -H "Authorization: Bearer $KEY"
# 200 {"account_id":…,"mode":"sandbox","sandbox_usage":{"audits":0,"articles":0},"sandbox_limits":{…},…}
`)}
    <p>The sandbox allows ${SANDBOX_LIMITS.projects} project, ${SANDBOX_LIMITS.audits} audit and
    ${SANDBOX_LIMITS.articles} watermarked draft articles, for ${SANDBOX_LIMITS.expires_days} days.
    When it runs out (or the key expires), start an upgrade: <code>POST /v1/upgrades</code> answers
    a short <code>user_code</code> and a link, <code>verification_uri_complete</code>, to hand a
    human. They choose a plan or credits and pay; poll the upgrade's <code>poll</code> path every
    <code>interval</code> seconds, and the first answer after payment carries the account's live
    key (<code>api_key</code>), once. Errors that end the trial say so (<code>upgrade_url</code>,
    <code>upgrade</code>). See <a href="#billing">Billing</a>.</p>

    <h2 id="project">2. Register a project</h2>
    <p>A project is one site. <code>url</code> (1 to 500 characters, http or https) is normalised
    server-side; <code>name</code> (1 to 120) defaults to the host name, <code>language</code> (2 to 10)
    to <code>en</code>, <code>country</code> (2 to 10) to <code>US</code>. A host that does not resolve
    to public addresses (loopback, private networks, cloud metadata) is refused with 400 when the
    project is created.</p>
    ${codeBlock(`
export PROJECT_IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/projects \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $PROJECT_IDEM" \\
  -d '{"url":"https://example.com","language":"en","country":"US"}'
# 201 {"project_id":"proj_…","url":"https://example.com","name":"example.com","status":"setup",
#      "language":"en","country":"US","sandbox":true,"access":"sandbox","created_at":"…"}
export PROJECT=proj_...

curl -s ${D}/v1/projects -H "Authorization: Bearer $KEY"
curl -s ${D}/v1/projects/$PROJECT -H "Authorization: Bearer $KEY"
`)}

    <h2 id="audit">3. Run a technical audit and poll it</h2>
    <p>No body (or <code>{"render": true}</code>, <a href="#rendered-audit">below</a>). The answer is <code>202</code> with a <code>poll</code> path. An audit already queued or
    running for the project is returned as is (nothing charged twice). The 202 says when to look:
    <strong>poll after <code>poll_after_seconds</code></strong> (also the <code>Retry-After</code>
    header), estimated from the audit's page budget and the jobs queued ahead (2 to 60 s: a small
    site is done in seconds), or register a webhook for <code>audit.completed</code> first
    (<a href="#webhooks">below</a>) and skip polling.</p>
    ${codeBlock(`
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/projects/$PROJECT/audits \\
  -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $IDEM"
# 202 {"audit_id":"aud_…","status":"queued","poll":"/v1/audits/aud_…","poll_after_seconds":2}
export AUDIT=aud_...

# Poll after poll_after_seconds until completed or failed.
while true; do
  sleep 2
  R=$(curl -s ${D}/v1/audits/$AUDIT -H "Authorization: Bearer $KEY")
  echo "$R" | grep -Eq '"status":"(completed|failed)"' && break
done
echo "$R"
# 200 {"audit_id":…,"status":"completed","score":87,"summary":{"issues_critical":0,
#      "issues_warning":3,"issues_info":5,"top_issues":[{"check":…,"severity":"warning",
#      "title":…,"affected_count":2},…],"categories":{"performance":…,"security":…,
#      "indexability":…,"mobile":…,"structure":…,"agents":…},"fix_first":[{"check":…,"title":…,
#      "impact":4,"effort":"low","affected_count":2,"reach":0.074,"cost":…,"fix":…},…]},
#      "started_at":…,"completed_at":…,
#      "report_url":"${b}/v1/audits/aud_…/report","share_url":null}
`)}
    <p>Statuses: <code>queued</code> → <code>running</code> → <code>completed</code> (with
    <code>score</code> 0 to 100, <code>summary</code> and <code>changes</code>) or <code>failed</code>
    (with <code>error</code>). The summary lists at most 10 top issues, worst first (by severity),
    and <code>fix_first</code>: at most 5 issues to fix first, by what they cost in search times the
    share of pages they reach, each with its effort and fix (<a href="${b}/docs/checks#impact">the
    scale</a>). Locally, point the
    project at a site your machine can reach.</p>
    <h3 id="audit-findings">What to fix: issues, evidence and the page inventory</h3>
    <p>Once the audit is <code>completed</code> (before that these answer 409
    <code>invalid_state</code>), list what it found. Each issue says what it means, how to fix it, links
    its entry on the <a href="${b}/docs/checks">check reference</a>, and says whether it is
    <code>new</code>, <code>persisting</code> or <code>fixed</code> since the project's previous completed
    audit. Every list is paged: <code>limit</code> up to 100, then pass <code>next_cursor</code> as
    <code>cursor</code> until it is <code>null</code>.</p>
    ${codeBlock(`
curl -s "${D}/v1/audits/$AUDIT/issues?severity=critical&limit=20" -H "Authorization: Bearer $KEY"
# 200 {"audit_id":…,"changes":{"previous_audit_id":null,"new":4,"persisting":0,"fixed":0},
#      "data":[{"check":"broken_internal_links","severity":"critical","title":…,"meaning":…,
#      "fix":"Change each listed link to a working URL, or restore the target page.",
#      "doc_url":"${b}/docs/checks#broken_internal_links","affected_count":3,"change":"new",
#      "items_url":"/v1/audits/aud_…/issues/broken_internal_links",…}],"next_cursor":null}

# The affected items of one issue, with their evidence, by URL.
curl -s "${D}/v1/audits/$AUDIT/issues/broken_internal_links?limit=100" -H "Authorization: Bearer $KEY"
# 200 {…,"data":[{"url":"https://example.com/blog","target":"https://example.com/old-guide",
#      "anchor":"our old guide","status":404}],"next_cursor":null}

# The page inventory: status, depth, indexability and why not, title, links, timings, checks.
curl -s "${D}/v1/audits/$AUDIT/pages?indexable=false&limit=100" -H "Authorization: Bearer $KEY"
# 200 {"audit_id":…,"data":[{"url":…,"status":404,"indexable":false,
#      "not_indexable_reason":"error_status","inlinks":2,"checks":["http_4xx"],…}],"next_cursor":…}
`)}

    <h3 id="report">The report, and share links for a human</h3>
    <p>A completed audit links its HTML report: <code>report_url</code> (charts, every issue with its
    fix, the page inventory; opened with the key). To hand it to a human who has no key, create a
    share link: its <code>url</code> (shown once) opens the report read-only until it expires (1 to 90
    days) or is revoked; the audit's <code>share_url</code> then repeats the newest live link.
    Articles have preview links the same way (<code>POST /v1/articles/{id}/shares</code>). Over MCP:
    <code>audits</code> actions <code>report</code> (the address, never the page) and
    <code>share</code>.</p>
    ${codeBlock(`
curl -s ${D}/v1/audits/$AUDIT/report -H "Authorization: Bearer $KEY"   # the HTML page
curl -s -X POST ${D}/v1/audits/$AUDIT/shares -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{"expires_in_days":7}'
# 201 {"share_id":"shr_…","url":"${b}/reports/…","expires_at":…}
curl -s ${D}/v1/audits/$AUDIT/shares -H "Authorization: Bearer $KEY"   # the links, no tokens
curl -s -X DELETE ${D}/v1/audits/$AUDIT/shares/shr_... -H "Authorization: Bearer $KEY"
`)}

    <h3 id="recheck">Re-checking a fix</h3>
    <p>After fixing what an issue lists, re-check that one check on its affected URLs instead of
    running a new audit: the service fetches again only those URLs (the first 100 of the issue's
    items; <code>urls_left_out</code> counts the rest) and judges the check on them. Poll the
    <code>poll</code> path after <code>poll_after_seconds</code> (about a second per 10 URLs); once <code>completed</code> every URL is
    <code>fixed</code>, <code>still_failing</code> (with fresh evidence, shaped like the issue's
    items) or <code>not_checked</code> (with a <code>reason</code>). Checks judged on one page, URL
    statuses and broken or redirecting links can be re-checked; site-wide verdicts (robots.txt,
    sitemaps, duplicates, orphans, click depth) answer 409 <code>invalid_state</code> with the
    reason. ${RECHECK_PRICING_RULE}</p>
    ${codeBlock(`
curl -s -X POST ${D}/v1/audits/$AUDIT/issues/title_missing/recheck \
  -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')"
# 202 {"recheck_id":"rck_…","urls_checked":2,"urls_left_out":0,
#      "charge":{"funding":"credits","credits":1},"poll":"/v1/rechecks/rck_…",
#      "poll_after_seconds":2,…}
# then GET the poll path: {"status":"completed","counts":{"fixed":2,"still_failing":0,…},
#      "items":[{"url":…,"result":"fixed","status":200,"evidence":[]},…]}
# 402 payment_required for a sandbox key; 409 invalid_state before the audit completed
`)}

    <h3 id="rendered-audit">Rendered audits (optional, priced apart)</h3>
    <p>Send <code>{"render": true}</code> to also render up to 50 pages in a real browser (the home
    page and the most linked page of each template first; 10 of them on a throttled phone with lab LCP,
    CLS and TBT). The rendered findings (<code>noindex_only_in_raw_html</code>,
    <code>content_requires_js</code>, <code>links_only_after_js</code>, <code>lcp_slow</code>,
    <code>cls_high</code>, <code>tap_targets_small</code>…) are listed with the others; the audit
    carries <code>render</code> (<code>pages_rendered</code>, <code>lab_pages</code>,
    <code>pages_failed</code>, <code>pages_discovered</code>, <code>rounds</code>). Links that
    scripts add are followed: the pages behind them are crawled and rendered too (same page
    budget, same site only) and marked <code>discovered_by: "render"</code> in
    <code>/pages</code>, where every lab page also shows <code>lab</code> (<code>lcp_ms</code>,
    <code>cls</code>, <code>tbt_ms</code>, <code>bytes</code>, <code>requests</code>).
    ${RENDERED_AUDIT_RULE} Without a body the audit is the raw-HTML audit, at its usual price.</p>
    ${codeBlock(`
curl -s -X POST ${D}/v1/projects/$PROJECT/audits \
  -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')" \
  -H 'Content-Type: application/json' -d '{"render": true}'
# 202 as above (an audit already queued or running is returned as is); 402 payment_required for
# a sandbox key (the trial stays raw); 503 rendering_unavailable where the server has no browser
`)}
    <h3 id="audit-options">Scope and User-Agent (optional)</h3>
    <p>The same body takes <code>include</code> / <code>exclude</code> (URL path globs:
    <code>*</code> within a segment, <code>**</code> across, <code>/blog/**</code> also matches
    <code>/blog</code>), <code>max_depth</code>, <code>urls</code> (list mode: exactly these URLs of
    the project's site, no link followed), <code>sitemap_only</code> and <code>user_agent</code>
    (<code>serpwright</code>, <code>googlebot_smartphone</code>, <code>googlebot_desktop</code>,
    <code>bingbot</code>: robots.txt is read for that crawler's token). The start page is always
    audited, except in list mode. The audit echoes them as <code>options</code> and, once completed,
    says what each left out in <code>scope.left_out</code>; links to out-of-scope URLs are not
    broken. Unknown fields are refused (400 naming the field); a start with other options while an
    audit runs is 409 <code>audit_in_progress</code> (its <code>audit_id</code> is in the answer).
    Schedules take the same fields.</p>
    ${codeBlock(`
# The body of POST /v1/projects/$PROJECT/audits (or of the schedule's PUT):
{"exclude": ["/tag/**", "/search?*"], "max_depth": 4, "user_agent": "googlebot_smartphone"}
# 202 as above; 400 invalid_request naming the field (e.g. "exclude.0: must start with /")
`)}
    <h3 id="staging-audit">Staging sites behind a login, and politeness</h3>
    <p>Send <code>auth</code> to audit a site behind a login: <code>{"type":"basic","user":…,
    "password":…}</code>, <code>{"type":"headers","headers":{"X-Preview-Token":…}}</code> (1 to 8
    named headers) or <code>{"type":"cookie","cookie":"session=…"}</code>. The credentials go only to
    the project URL's own origin (scheme, host and port), never across a redirect to another host;
    they are encrypted at rest, shown masked in the audit's <code>options</code>, never logged, and
    deleted when the audit ends. Raw audits only (400 with <code>render</code>); 503
    <code>site_auth_not_configured</code> where the server has no encryption key. <code>max_rps</code>
    (0.1 to 100) caps requests per second to the site, within the server's own cap. The crawl honours
    robots.txt <code>Crawl-delay</code> (up to 10 s) and slows down on 429 and 503 with
    <code>Retry-After</code>, fetching the page again later (up to 3 times); a completed audit says
    what slowed it in <code>politeness</code>. For example the body
    <code>{"auth":{"type":"basic","user":"preview","password":"…"},"max_rps":2}</code> gives an
    audit showing <code>"options":{"user_agent":"serpwright","auth":{"type":"basic","user":"preview","password":"***"},
    "max_rps":2}</code>.</p>
    <p>Every audit also scores how AI crawlers and agents see the site: the category
    <code>agents</code> (added to <code>categories</code>; absent on older audits). Its checks: a
    firewall that refuses a bot robots.txt allows (<code>ai_bot_blocked_by_server</code>, found by
    asking as each bot class), the access matrix per bot class (<code>ai_bot_access</code>),
    Content Signals and their conflicts with robots.txt, Markdown on request, <code>Link</code>
    headers, discovery documents (API catalog, OAuth metadata, MCP server card, Web Bot Auth keys)
    validated, 402 pay-per-crawl pages, <code>llms_txt_missing</code> and
    <code>ai_crawler_rules</code>. What is only absent is info, never scored; see
    <a href="${b}/docs/checks#category-agents">the checks</a>.</p>

    <h2 id="article">4. Generate a draft article and poll it</h2>
    <p>Give <code>topic</code> (3 to 180 characters, used verbatim as the title) and/or
    <code>primary_keyword</code> (2 to 120). One article generates per project at a time (409
    <code>article_in_progress</code>). <strong>Poll after the 202's <code>poll_after_seconds</code></strong>
    (2 s with the built-in offline writer, 30 s with a model; a model's article takes minutes).
    Articles are drafts: they are never published automatically; fetch
    <code>content_markdown</code> and publish it yourself.</p>
    ${codeBlock(`
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/projects/$PROJECT/articles \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" \\
  -d '{"topic":"How to choose running shoes for flat feet","primary_keyword":"running shoes for flat feet"}'
# 202 {"article_id":"art_…","status":"queued","poll":"/v1/articles/art_…"}
export ARTICLE=art_...

# Poll after poll_after_seconds (2 s with the built-in writer, 30 s with a model) until ready.
sleep 2
while true; do
  R=$(curl -s ${D}/v1/articles/$ARTICLE -H "Authorization: Bearer $KEY")
  echo "$R" | grep -Eq '"status":"(ready|failed|published)"' && break
  sleep 60
done
echo "$R"
# 200 {"article_id":…,"status":"ready","title":"How to choose running shoes for flat feet",
#      "meta_description":…,"content_markdown":"# How to choose…","word_count":…,"qa_score":…,
#      "generator":{"kind":"model","model":…,"usage":{…}},
#      "language":"en","watermark":{"sandbox":true,"note":…}}
`)}
    <p>Statuses: <code>queued</code> → <code>generating</code> → <code>qa</code> → <code>ready</code>
    (content fields appear), or <code>failed</code>; <code>published</code> once the operator publishes
    a subscribed project's article. While generating, only the status is returned.
    <code>generator.kind</code> says how it was written: <code>model</code>, or
    <code>builtin_outline</code> when the server has no model configured: then it is an outline to
    complete (low <code>qa_score</code>), charged as <code>article_outline</code> (0 credits).</p>

    <h2 id="webhooks">5. Webhooks and signature verification</h2>
    <p>Register an endpoint to receive signed events instead of polling. Register it
    <em>before</em> starting the audit to receive that audit's <code>audit.completed</code>. In
    production the URL must be public <code>https://</code>; private and loopback hosts are refused.
    The local server (<code>.env.dev</code> sets <code>ALLOW_PRIVATE_TARGETS=1</code>) also accepts
    <code>http://127.0.0.1</code>, so the receiver below works as written. Up to ${MAX_ENDPOINTS}
    endpoints per account. <code>POST /v1/webhooks</code> takes no <code>Idempotency-Key</code>.</p>
    ${codeBlock(`
curl -s -X POST ${D}/v1/webhooks \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -d '{"url":"http://127.0.0.1:8787/hook","events":["audit.completed","article.published"]}'
# 201 {"webhook_id":"wh_…","url":…,"events":[…],"active":true,"created_at":…,
#      "secret":"<64 hex characters, shown once>","signature_header":"${SIGNATURE_HEADER}",
#      "signature_scheme":"hex(hmac_sha256(secret, raw_body))",
#      "signature_v2_header":"X-Serpwright-Signature-V2","signature_v2_scheme":"v2=hex(…)",
#      "timestamp_header":"X-Serpwright-Timestamp"}
export WEBHOOK=wh_...

curl -s ${D}/v1/webhooks -H "Authorization: Bearer $KEY"          # secrets masked
curl -s -X DELETE ${D}/v1/webhooks/$WEBHOOK -H "Authorization: Bearer $KEY"
`)}
    <p>Each delivery is a <code>POST</code> of the JSON envelope
    <code>{"id", "event", "created_at", "data"}</code> with these headers:</p>
    ${table(["Header", "Meaning"], [
      [
        html`<code>${SIGNATURE_V2_HEADER}</code>`,
        html`<code>v2=</code> and the lowercase hex HMAC-SHA256 of <code>{delivery id}.{timestamp}.{raw body}</code>, keyed with the endpoint secret. Verify it, and the timestamp, before trusting the payload.`,
      ],
      [
        html`<code>${TIMESTAMP_HEADER}</code>`,
        `Unix seconds at which this attempt was signed; refuse deliveries more than ${SIGNATURE_TOLERANCE_S} s from your clock.`,
      ],
      [
        html`<code>${SIGNATURE_HEADER}</code>`,
        "Lowercase hex HMAC-SHA256 of the raw body alone (the first scheme, kept for existing receivers; it does not stop replays).",
      ],
      [html`<code>${EVENT_HEADER}</code>`, "The event name."],
      [
        html`<code>${DELIVERY_HEADER}</code>`,
        "The delivery id, stable across retries and covered by the v2 signature: deduplicate on it.",
      ],
    ])}
    <p>Answer any 2xx within 10 seconds. Failed deliveries are retried with exponential backoff (at
    most ${MAX_ATTEMPTS} attempts, at most 6 hours apart); 50 consecutive failures deactivate the
    endpoint. Events: ${EVENT_NAMES.map((e, i) => html`${i ? ", " : ""}<code>${e}</code>`)}
    (<code>article.generated</code> and <code>usage.threshold_reached</code> are reserved: accepted as
    filters, not sent yet). Verify on the raw bytes, with a constant-time compare:</p>
    ${codeBlock(VERIFY_SNIPPET, "TypeScript signature verification")}
    <p>Run it with <code>SERPWRIGHT_WEBHOOK_SECRET=&lt;secret&gt; deno run --allow-net --allow-env receiver.ts</code>.</p>

    <h2 id="billing">6. Billing and checkout</h2>
    <p>Billing is per project. A subscription (<code>basic</code> ${basic.monthlyPrice} USD or
    <code>pro</code> ${pro.monthlyPrice} USD per project per month) makes the project's audits and
    articles all-inclusive. Without one, a live key pays per unit from prepaid credits
    (<code>technical_audit</code> ${UNIT_PRICES.technical_audit} credits,
    <code>article_generated</code> ${UNIT_PRICES.article_generated}; 1 credit = 1 USD). Sandbox keys
    cannot buy (403 <code>sandbox_not_billable</code>). Payment is always completed by a human in a
    browser at the <code>checkout_url</code> the API returns; the project activates, or the credits
    land, automatically. Prices: <a href="${b}/pricing">pricing page</a> and <code>GET /v1/plans</code>.</p>
    ${codeBlock(`
curl -s ${D}/v1/plans

# The trial's way out: start an upgrade with the sandbox key (an expired one too) and hand a
# human verification_uri_complete; poll the answer's poll path every interval seconds. Once the
# human paid, one answer carries the live key (api_key); later ones say "claimed".
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/upgrades -H "Authorization: Bearer $KEY" -H "Idempotency-Key: $IDEM"
# 201 {"upgrade_id":"upg_…","status":"pending","user_code":"KMTQ-7XWD",
#      "verification_uri":"${b}/upgrade","verification_uri_complete":"${b}/upgrade?code=KMTQ-7XWD",
#      "expires_at":…,"interval":5,"poll":"/v1/upgrades/upg_…","note":…}
# curl -s ${D}/v1/upgrades/upg_... -H "Authorization: Bearer $KEY"
# 200 {"status":"claimed","api_key":"sk_live_…","project_ids":[…],"plan":"basic",…}  (once)

# Without Stripe (the local server), the operator mints a live key instead (the .env.dev token).
curl -s -X POST ${D}/admin/accounts/$ACCOUNT/live-keys \\
  -H 'Authorization: Bearer ${DEV_ADMIN_TOKEN}'
export LIVE=sk_live_...

# Live keys create live projects; their access is pending_payment until paid.
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/projects \\
  -H "Authorization: Bearer $LIVE" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" \\
  -d '{"url":"https://shop.example.com"}'
export LIVE_PROJECT=proj_...

# Subscribe that project: a human pays at checkout_url.
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/subscriptions \\
  -H "Authorization: Bearer $LIVE" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" \\
  -d '{"project_id":"'"$LIVE_PROJECT"'","plan_id":"basic"}'
# 201 {"status":"pending_payment","checkout_url":"https://checkout.stripe.com/…","project_id":…,"plan":"basic","note":…}
curl -s "${D}/v1/subscription?project_id=$LIVE_PROJECT" -H "Authorization: Bearer $LIVE"
# 200 {"project_id":…,"plan":"basic","status":"pending_payment"}   later "active" with "paid_until"

# Or pay per unit: read the balance, buy a pack (${PACK_IDS.join(", ")}).
curl -s ${D}/v1/credits -H "Authorization: Bearer $LIVE"
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/credits/purchases \\
  -H "Authorization: Bearer $LIVE" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" \\
  -d '{"pack_id":"pack_500"}'
# 201 {"status":"pending_payment","checkout_url":…,"pack_id":"pack_500","usd":500,"credits":500,"bonus_credits":0,"note":…}
`)}
    <p>The local server has no payment provider configured, so both purchases answer 503
    <code>billing_not_configured</code> there; with <code>STRIPE_*</code> set they return a
    <code>checkout_url</code>. A live project without a subscription and with too few credits answers
    402 <code>insufficient_credits</code>, whose body adds <code>required_credits</code>,
    <code>balance_credits</code>, <code>purchase</code> and <code>subscription_alternative</code>. Poll
    <code>GET /v1/subscription</code> or receive <code>subscription.updated</code> and
    <code>credits.updated</code> webhooks (and <code>account.upgraded</code> when an upgrade is
    paid). A human manages what the account pays for (card, invoices, cancelling a plan) in
    Stripe's billing portal: <code>POST /v1/billing-portal</code> with a live key answers its
    <code>url</code> (409 <code>no_billing_customer</code> before the first payment).</p>
    ${codeBlock(`
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/billing-portal -H "Authorization: Bearer $LIVE" \\
  -H "Idempotency-Key: $IDEM"
# 201 {"url":"https://billing.stripe.com/p/session/…"}
`)}

    <h2 id="keys">7. Key rotation</h2>
    <p>Order matters: <strong>create the new key first, switch to it, then revoke the old one</strong>.
    The last active key cannot be revoked (400 <code>cannot_revoke_last_key</code>); an account has at
    most 5 active keys (400 <code>key_limit_reached</code>). A key mints keys of its own mode only;
    sandbox rotations keep the trial's expiry and usage.</p>
    ${codeBlock(`
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -X POST ${D}/v1/api-keys \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" \\
  -d '{"name":"rotated"}'
# 201 {"id":"key_…","name":"rotated","key_prefix":"sk_sandbox_","last4":…,"api_key":"sk_sandbox_…",…}
export NEW_KEY=sk_sandbox_...

curl -s ${D}/v1/api-keys -H "Authorization: Bearer $NEW_KEY"    # find the old key's id
export OLD_KEY_ID=key_...
curl -s -X DELETE ${D}/v1/api-keys/$OLD_KEY_ID -H "Authorization: Bearer $NEW_KEY"
# 200 {"key":{"id":…,"revoked_at":"…",…}}   the old key now answers 401 key_revoked
export KEY=$NEW_KEY           # from now on, the new key
`)}

    <h2 id="errors">8. Error handling</h2>
    <p>Every non-2xx answer has the body <code>{"error": {"code", "message", "doc_url"}}</code>.
    Branch on <code>error.code</code>, never on the message. <code>doc_url</code> points at the code's
    entry on the <a href="${b}/docs/errors">error reference</a>.</p>
    ${table(["error.code", "What the agent does"], [
      [html`<code>rate_limited</code> (429)`, "Sleep Retry-After seconds, then retry."],
      [
        html`<code>internal_error</code> (500)`,
        "Retry with the same Idempotency-Key after a short backoff.",
      ],
      [
        html`<code>invalid_request</code> (400)`,
        "Fix the field the message names; do not retry unchanged.",
      ],
      [
        html`<code>unauthorized</code>, <code>key_revoked</code>, <code>key_expired</code> (401)`,
        "Switch to another active key; an expired sandbox key starts an upgrade " +
        "(POST /v1/upgrades) that a human finishes.",
      ],
      [
        html`<code>sandbox_limit_reached</code> (403)`,
        "Start an upgrade (POST /v1/upgrades) and hand a human its verification_uri_complete.",
      ],
      [
        html`<code>insufficient_credits</code>, <code>payment_required</code> (402)`,
        "Buy credits or subscribe the project, then retry.",
      ],
      [
        html`<code>audit_in_progress</code> (409)`,
        "Poll the running audit (audit_id in the answer), or start with its options.",
      ],
      [
        html`<code>article_in_progress</code> (409)`,
        "Poll the running article, then start the next.",
      ],
      [html`<code>not_found</code> (404)`, "Check the id; list the resources."],
    ])}
    ${codeBlock(`
curl -s -i ${D}/v1/projects/proj_does_not_exist -H "Authorization: Bearer $KEY"
# HTTP/1.1 404 Not Found
# x-ratelimit-limit: 600
# {"error":{"code":"not_found","message":"…","doc_url":"${b}/docs/errors#not_found"}}
`)}

    <h2 id="idempotency">9. Idempotent retries</h2>
    <p>Every POST except <code>POST /v1/webhooks</code> accepts an optional <code>Idempotency-Key</code>
    header (up to 200 characters; use a fresh random UUID per logical operation). Repeating the same
    request with the same key replays the stored answer verbatim, with
    <code>Idempotent-Replayed: true</code>, instead of running it again, one-time secrets included. So
    after a timeout or a 500, resend the same request with the same key: at most one account, project,
    audit or checkout comes of it.</p>
    <ul>
      <li>Scope: per account and key mode (a sandbox key never sees a live key's answers); on signup
    (no key yet), per client IP. Keys are kept for 24 hours, and the stored answers are encrypted with
    a key derived from your Idempotency-Key and API key.</li>
      <li>A replay needs the same request: the same endpoint, the same body (key order and spacing
    aside) and the same API key. Anything else answers 409 <code>idempotency_conflict</code> with a
    message saying which differs.</li>
      <li>Only 2xx answers are stored. Errors change nothing, so after fixing the cause (buying credits,
    say) the same key may be reused.</li>
      <li>The same key on a different endpoint (method and path) answers 409
    <code>idempotency_conflict</code>. A second request arriving while the first with that key still
    runs waits for it (up to 10 s) and replays its answer.</li>
    </ul>
    ${codeBlock(`
# The same request sent twice with one key: the second answer is the first one replayed
# (the same key id and raw key, not a second key). Another body, or another API key, with this
# Idempotency-Key would answer 409 idempotency_conflict.
export IDEM=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
curl -s -i -X POST ${D}/v1/api-keys \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" -d '{"name":"ci"}'
curl -s -i -X POST ${D}/v1/api-keys \\
  -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \\
  -H "Idempotency-Key: $IDEM" -d '{"name":"ci"}'
# idempotent-replayed: true
`)}

    <h2 id="limits">10. Rate limits and other limits</h2>
    <p>Every <code>/v1</code> answer carries <code>X-RateLimit-Limit</code>,
    <code>X-RateLimit-Remaining</code> and <code>X-RateLimit-Reset</code> (Unix seconds); every 429 adds
    <code>Retry-After</code> (seconds).</p>
    ${table(["Limit", "Value"], [
      ["Authenticated requests", "600 per minute per API key"],
      ["Unauthenticated /v1 requests", "600 per minute per client IP"],
      ["Signups", "5 per hour per client IP"],
      ["Active API keys", "5 per account"],
      [
        "Sandbox",
        `${SANDBOX_LIMITS.projects} project, ${SANDBOX_LIMITS.audits} audit, ${SANDBOX_LIMITS.articles} articles, ${SANDBOX_LIMITS.expires_days} days`,
      ],
      ["Concurrent articles", "1 generating per project"],
      ["Webhook endpoints", `${MAX_ENDPOINTS} per account`],
      ["Request body", "64 KiB"],
      ["Polling", "after each 202's poll_after_seconds (Retry-After), 2 to 60 s"],
    ])}

    <h2 id="mcp">11. Connect over MCP</h2>
    <p>Everything above is also a remote MCP server at <code>${b}/mcp</code> (Streamable HTTP,
    stateless; protocol revisions 2026-07-28, 2025-11-25 and 2025-06-18), for agent hosts that reach
    tools through the Model Context Protocol. It authenticates with the same API keys, as the header
    <code>Authorization: Bearer $KEY</code>, and keeps every rule of this page: the same sandbox
    and credits, rate limit (a tool call counts as a request), idempotency keys (the
    <code>idempotency_key</code> argument shares the store with <code>Idempotency-Key</code>),
    and error codes (a tool error's text starts with <code>Error &lt;code&gt;:</code> and its
    <code>_meta["com.serpwright/error"]</code> holds the error body). Without a key a
    host sees the <code>signup</code>, <code>billing</code> (plans) and <code>docs</code> tools;
    sign up there, then add the key to the host's configuration:</p>
    ${codeBlock(hostConfigSnippet(b), "MCP host configuration")}
    <p>Tools, one per resource with an <code>action</code>: <code>account</code>,
    <code>api_keys</code>, <code>projects</code>, <code>audits</code> and <code>articles</code>
    (<code>start</code> returns at once; <code>wait</code> up to 60 s holds the call with progress
    notifications), <code>billing</code> (plans, credits, <code>buy_credits</code> and
    <code>subscribe</code> return a <code>checkout_url</code> for a human), <code>webhooks</code>,
    <code>signup</code> and <code>docs</code>. The registry entry is
    <a href="${b}/server.json">server.json</a>.</p>
    <p>On protocol 2026-07-28, <code>server/discover</code> answers without a session and every
    request carries its version and client capabilities in <code>_meta</code>. A host that declares
    the tasks extension (<code>io.modelcontextprotocol/tasks</code>) gets
    <code>audits</code>/<code>articles</code> <code>start</code> as a task: it polls
    <code>tasks/get</code> (the result is what <code>get</code> answers) and
    <code>tasks/cancel</code> cancels a job still queued, refunded like a failed one. Other hosts
    keep <code>start</code> and <code>get</code>.</p>

    <h3 id="mcp-oauth">No key at hand: add the server to a browser-based host</h3>
    <p>Hosts that run in a browser (a "custom connector" or "add MCP server" screen) need only the
    URL <code>${b}/mcp</code>. They sign in with OAuth 2.1: a call that needs a key answers 401
    with <code>WWW-Authenticate: Bearer resource_metadata="${b}/.well-known/oauth-protected-resource/mcp",
    scope="mcp"</code>; the host reads that metadata and the authorization server's at
    <code>${b}/.well-known/oauth-authorization-server</code>, registers (a Client ID Metadata
    Document, or dynamic registration) and opens the sign-in page in the browser. There the human
    pastes an existing API key or signs up with an email (a sandbox account, its key shown once),
    checks the app's name and where it sends the browser back, and allows access. The host then
    calls <code>/mcp</code> with a short-lived access token it refreshes on its own.</p>
    <ul>
      <li>The token acts as the key that approved it, within less: a sandbox key gives sandbox
    access only, and revoking that key ends the app's access. It cannot create or revoke API keys
    or connected apps, sign up, set schedules, or create or delete webhook endpoints (403
    <code>token_not_allowed</code>), and the share links it makes end with it.</li>
      <li>Each approval is a connected app, listed beside the keys:
    <code>GET ${b}/v1/connected-apps</code>, revoked with
    <code>DELETE ${b}/v1/connected-apps/{id}</code> (or the <code>api_keys</code> tool, actions
    <code>list_apps</code> and <code>revoke_app</code>).</li>
      <li>Access tokens work on <code>/mcp</code> only; the HTTP API (<code>/v1</code>) takes API keys.</li>
    </ul>
  `;
  return layout({
    baseUrl: b,
    path: "/docs/agents",
    title: "Agent quickstart: Serpwright API",
    description:
      "Sign up, register a site, run an SEO audit and generate a draft article with curl; webhooks, billing, keys, errors and retries.",
    body,
  });
}
