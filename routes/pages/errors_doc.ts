/**
 * `GET /docs/errors`: every error code from `ERROR_CODES` (the single source), with its status,
 * when it happens and what the caller should do. Each code's section has `id="<code>"`, the
 * anchor every `error.doc_url` points at.
 */
import { ERROR_CODES, type ErrorCode } from "../../domain/platform/mod.ts";
import { html, layout, table } from "./layout.ts";

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Content Too Large",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** Codes ordered by HTTP status, then as listed in ERROR_CODES. */
export function errorCodesByStatus(): ErrorCode[] {
  return (Object.keys(ERROR_CODES) as ErrorCode[])
    .map((code, i) => ({ code, i }))
    .sort((a, b) => ERROR_CODES[a.code].status - ERROR_CODES[b.code].status || a.i - b.i)
    .map((x) => x.code);
}

export function errorsPage(baseUrl: string): string {
  const b = baseUrl;
  const codes = errorCodesByStatus();
  const index = table(
    ["Code", "HTTP"],
    codes.map((code) => [
      html`<a href="#${code}"><code>${code}</code></a>`,
      `${ERROR_CODES[code].status} ${STATUS_TEXT[ERROR_CODES[code].status] ?? ""}`,
    ]),
  );
  const sections = codes.map((code) => {
    const e = ERROR_CODES[code];
    return html`
      <section class="code-entry" id="${code}">
        <h3><code>${code}</code></h3>
        <p><strong>HTTP ${e.status}</strong> ${STATUS_TEXT[e.status] ?? ""}</p>
        <p><strong>When:</strong> ${e.meaning}</p>
        <p><strong>What to do:</strong> ${e.action}</p>
      </section>
    `;
  });
  const body = html`
    <h1>Error codes</h1>
    <p>Every non-2xx response from <code>/v1</code> (and the operator's <code>/admin</code> endpoints)
    has one body shape. Branch on <code>error.code</code>, never on the <code>message</code> text, which
    is for humans and names the offending field on validation failures. <code>error.doc_url</code> links
    to the code's entry on this page.</p>
    <pre><code>{
      "error": {
        "code": "not_found",
        "message": "No project with id 'proj_x' on this account",
        "doc_url": "${b}/docs/errors#not_found"
      }
    }</code></pre>
    <p>Some errors carry extra top-level fields: 402 <code>insufficient_credits</code> adds
    <code>required_credits</code>, <code>balance_credits</code>, <code>purchase</code> and
    <code>subscription_alternative</code>. Every 429 carries a <code>Retry-After</code> header (seconds),
    and every <code>/v1</code> response, errors included, carries <code>X-RateLimit-Limit</code>,
    <code>X-RateLimit-Remaining</code> and <code>X-RateLimit-Reset</code> (Unix seconds).</p>

    <h2 id="retrying">Which errors to retry</h2>
    <ul>
      <li><code>rate_limited</code> (429): wait <code>Retry-After</code> seconds, then retry.</li>
      <li><code>internal_error</code> (500): retry with the same <code>Idempotency-Key</code>; it is safe.</li>
      <li><code>idempotency_conflict</code> (409) for a request still in progress: retry the same request
    shortly to get its stored answer.</li>
      <li>Every other 4xx is final until the caller changes something: fix the request, buy credits,
    subscribe, or hand a human the upgrade link. Errors never change state, so a retry after the fix
    may reuse the same <code>Idempotency-Key</code>.</li>
    </ul>

    <h2 id="index">All codes</h2>
    ${index}

    <h2 id="details">Details</h2>
    ${sections}

    <p
      class="muted">See also the <a href="${b}/docs/agents#errors">quickstart's error handling</a> and
    the error responses of each operation in the <a href="${b}/v1/openapi.json">OpenAPI document</a>.</p>
  `;
  return layout({
    baseUrl: b,
    path: "/docs/errors",
    title: "Error codes: Serpwright API",
    description: "Every Serpwright API error code with its HTTP status, cause and what to do.",
    body,
  });
}
