/**
 * The one error type of the service. Thrown from any layer, rendered to the
 * `/v1` error shape `{error: {code, message, doc_url}}` in one place
 * (`routes/middleware/errors.ts`). The code is one of the catalogue's (`ERROR_CODES`), so a
 * misspelt code does not compile, and the HTTP status is the catalogue's, never repeated.
 *
 * @example
 * ```ts
 * throw new ApiError("not_found", "No project with id 'proj_x' on this account");
 * ```
 */
export class ApiError extends Error {
  /** HTTP status, from the catalogue. */
  readonly status: number;

  constructor(
    /** Stable machine-readable code; callers branch on it. */
    readonly code: ErrorCode,
    message: string,
    /** Extra top-level fields merged into the `error` object's siblings (e.g. 402 details). */
    readonly extra?: Record<string, unknown>,
    /** Extra response headers (e.g. `Retry-After`). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_CODES[code].status;
  }
}

/** Every error code the service can emit, with its status and what it means. */
export const ERROR_CODES = {
  invalid_request: {
    status: 400,
    meaning: "Malformed JSON, or a field failed validation. The message names the field.",
    action: "Fix the named field and send the request again.",
  },
  key_limit_reached: {
    status: 400,
    meaning: "The account already has 5 active API keys.",
    action: "Revoke a key you no longer use (DELETE /v1/api-keys/{id}), then create the new one.",
  },
  cannot_revoke_last_key: {
    status: 400,
    meaning: "The key is the account's only active key.",
    action: "Create a new key first, then revoke the old one.",
  },
  unauthorized: {
    status: 401,
    meaning: "The Authorization header is missing or malformed, or the key is unknown; on /mcp " +
      "also an OAuth access token that is unknown, expired, revoked or for another resource; on " +
      "/v1 any OAuth access token (/v1 takes API keys only).",
    action: "Send `Authorization: Bearer <API_KEY>` with a key from signup or POST /v1/api-keys; " +
      "an MCP host refreshes its token or signs in again.",
  },
  key_revoked: {
    status: 401,
    meaning: "The key was revoked.",
    action: "Use another active key of the account.",
  },
  key_expired: {
    status: 401,
    meaning: "The sandbox key passed its 14-day expiry.",
    action: "Start an upgrade (POST /v1/upgrades; the expired sandbox key may still call it) and " +
      "hand a human its verification_uri_complete; poll GET /v1/upgrades/{id} for the live key.",
  },
  payment_required: {
    status: 402,
    meaning: "No active subscription, and the key cannot pay per unit (sandbox key); or an " +
      "upgrade's credit pack (POST /v1/upgrades with pack_id) awaits the agent's machine payment.",
    action: "Use a live key with credits, or subscribe the project. A sandbox key starts an " +
      "upgrade (POST /v1/upgrades) that a human finishes, then claims its live key; with " +
      "pack_id, answer the WWW-Authenticate: Payment challenge and repeat the request.",
  },
  insufficient_credits: {
    status: 402,
    meaning:
      "Live key, no subscription on the project, and the credit balance is below the unit price.",
    action:
      "Buy a credit pack (POST /v1/credits/purchases) or subscribe the project (POST /v1/subscriptions).",
  },
  sandbox_limit_reached: {
    status: 403,
    meaning: "The sandbox budget is used up (1 project, 1 audit, 2 articles).",
    action: "Start an upgrade (POST /v1/upgrades) and hand a human its " +
      "verification_uri_complete; poll GET /v1/upgrades/{id} for the live key once they paid.",
  },
  token_not_allowed: {
    status: 403,
    meaning: "An OAuth access token (a connected app at /mcp) called an operation closed to " +
      "connected apps: minting or revoking API keys, ending connected apps, signing up, webhook " +
      "endpoints, schedules, the billing portal, upgrades — anything that makes a credential or " +
      "would outlive the app's access.",
    action: "Do it with an API key (Authorization: Bearer sk_…), or ask the account's owner.",
  },
  sandbox_not_billable: {
    status: 403,
    meaning: "A sandbox key tried to buy something.",
    action: "Purchases need a live key.",
  },
  publish_not_allowed: {
    status: 403,
    meaning: "Sandbox and credit-funded articles are draft-only; publishing needs a subscription.",
    action: "Subscribe the project, or publish the draft yourself.",
  },
  schedule_not_allowed: {
    status: 403,
    meaning:
      "Sandbox keys cannot schedule audits, and a project's funding limits how often: the basic plan weekly, pro daily, credits daily.",
    action:
      "Use a live key, pick a less frequent cadence, or subscribe the project to the plan that includes it.",
  },
  method_not_allowed: {
    status: 405,
    meaning: "The path exists but does not accept this HTTP method.",
    action: "Use one of the methods listed in the Allow header.",
  },
  payload_too_large: {
    status: 413,
    meaning: "The request body exceeds 64 KiB.",
    action: "Send a smaller body; no endpoint needs more.",
  },
  request_timeout: {
    status: 408,
    meaning: "The request body did not arrive in full within the server's time limit " +
      "(10 s by default).",
    action: "Send the body at once; retry with the same Idempotency-Key.",
  },
  not_found: {
    status: 404,
    meaning: "No such resource on this account (other accounts' ids look the same).",
    action: "Check the id; list the resources to find it.",
  },
  account_exists: {
    status: 409,
    meaning: "The email is already registered.",
    action: "Use the existing account's key, or sign up with another email.",
  },
  already_subscribed: {
    status: 409,
    meaning: "The project already has an active subscription.",
    action: "Nothing to do; audits and articles are included.",
  },
  audit_in_progress: {
    status: 409,
    meaning: "An audit of the project with other options is queued or running (its id is in " +
      "`audit_id`); a start with the same options (or none, when it has none) returns it instead.",
    action:
      "Poll the running audit (the `poll` path) until it completes or fails, then start again.",
  },
  article_in_progress: {
    status: 409,
    meaning: "An article is already generating for the project.",
    action: "Poll the running article until it is ready or failed, then try again.",
  },
  idempotency_conflict: {
    status: 409,
    meaning:
      "The Idempotency-Key was used on a different endpoint, or a request with the same key is still running.",
    action: "Use a fresh key for a new request; retry the same request later to get its replay.",
  },
  limit_reached: {
    status: 409,
    meaning:
      "A structural cap was hit (20 webhook endpoints per account, 20 live share links per audit or article).",
    action: "Delete an endpoint, or revoke a share link, you no longer use.",
  },
  invalid_state: {
    status: 409,
    meaning: "The resource is not in a state that allows this operation.",
    action: "Read the resource and act on its current state.",
  },
  already_live: {
    status: 409,
    meaning: "An upgrade was asked for an account that is already live: the caller holds a " +
      "live key, or a paid upgrade of the account waits for its live key to be claimed.",
    action: "Use the live key (GET /v1/upgrades/{id} of the paid upgrade hands it out once); " +
      "buy with POST /v1/subscriptions or POST /v1/credits/purchases.",
  },
  no_billing_customer: {
    status: 409,
    meaning: "The account has no Stripe customer yet: nothing was ever paid, so there is no " +
      "billing to manage.",
    action: "Buy first (POST /v1/subscriptions, POST /v1/credits/purchases or an upgrade); the " +
      "customer is created with the first checkout.",
  },
  rate_limited: {
    status: 429,
    meaning: "Too many requests (600 per minute per key; 5 signups per hour per IP; 3 " +
      "verification mails per hour per account and per address).",
    action: "Wait the Retry-After seconds, then retry.",
  },
  internal_error: {
    status: 500,
    meaning: "A server-side failure.",
    action: "Retry with the same Idempotency-Key; it is safe.",
  },
  billing_not_configured: {
    status: 503,
    meaning: "The requested purchase's product is not configured on this server.",
    action: "Contact the operator, or choose another plan or pack.",
  },
  mail_not_configured: {
    status: 503,
    meaning:
      "This server sends no mail: the operator has not configured SMTP_URL and MAIL_FROM, so no verification link can be sent. A standing state of the server, not a passing failure.",
    action: "Contact the operator; nothing was sent or stored.",
  },
  rendering_unavailable: {
    status: 503,
    meaning:
      "This server cannot render pages in a browser (no Chromium: Deno Deploy, or the operator set RENDERING=off), so it does not take rendered audits nor print a report's PDF (also answered while it is busy printing others, with Retry-After). Nothing was charged; a rendered audit that finds the browser gone while it runs fails with this code and is refunded.",
    action:
      "Start the audit without `render` (the raw-HTML audit), read the HTML report instead of its PDF, or use a server that renders (a VM or container; see docs/render.md).",
  },
  webhooks_not_configured: {
    status: 503,
    meaning:
      "This server cannot store webhook signing secrets: the operator has not set WEBHOOK_ENCRYPTION_KEY.",
    action: "Contact the operator; poll the resources meanwhile. Nothing was registered.",
  },
  site_auth_not_configured: {
    status: 503,
    meaning:
      "This server cannot store staging credentials (`auth`): the operator has not set WEBHOOK_ENCRYPTION_KEY, which encrypts them at rest.",
    action:
      "Start the audit (or set the schedule) without `auth`, or ask the operator to set the key. Nothing was charged or stored.",
  },
} as const satisfies Record<string, { status: number; meaning: string; action: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
