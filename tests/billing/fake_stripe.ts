/**
 * A fake Stripe API on loopback: real HTTP, form-encoded requests exactly as the `stripe` SDK sends
 * them. It answers the calls the service makes (create customers, create and expire Checkout
 * Sessions, create Billing Portal sessions), records every request so tests can assert the price,
 * mode, metadata and Idempotency-Key, and replays an answer for a repeated Idempotency-Key as
 * Stripe does. Also signs webhook events the way Stripe signs them.
 *
 * Machine payments (`mppx`'s Stripe method): the test helper that creates a shared payment
 * granted token (`POST /v1/test_helpers/shared_payment/granted_tokens`, what an agent's wallet
 * would grant us), and `POST /v1/payment_intents` confirmed with such a token, as the method
 * sends it. Like Stripe: the token parameter exists only on a `.preview` API version; a token is
 * spent against its usage limits (currency, `max_amount` in total, `expires_at`); the test cards
 * `pm_card_chargeDeclined` (402 `card_declined`) and `pm_card_authenticationRequired`
 * (`requires_action`) behave as theirs do; and an Idempotency-Key seen before answers the first
 * response again with `Idempotent-Replayed: true` (the same key with other parameters: 400
 * `idempotency_error`).
 */
import { findPack, findPlan } from "../../domain/billing/catalog.ts";
import { stripeWebhooks, subtleCrypto } from "../../domain/billing/stripe_client.ts";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Headers;
  /** The form body, flattened as sent: `metadata[account_id]`, `line_items[0][price]`, … */
  form: Record<string, string>;
}

export interface FakeStripe {
  url: string;
  requests: RecordedRequest[];
  /** Session-create requests only. */
  sessionCreates(): RecordedRequest[];
  /** Customer-create requests only. */
  customerCreates(): RecordedRequest[];
  /** Billing Portal session-create requests only. */
  portalCreates(): RecordedRequest[];
  /** PaymentIntent-create requests only (replays included). */
  paymentIntentCreates(): RecordedRequest[];
  /** The PaymentIntents created, by id. */
  paymentIntents: Map<string, Record<string, unknown>>;
  /** The shared payment granted tokens, by id. */
  grantedTokens: Map<string, Record<string, unknown>>;
  /**
   * The next request to a path starting with `prefix` (default: Checkout Sessions) answers this
   * status and Stripe error body instead.
   */
  failNext(
    status: number,
    error: { type: string; code?: string; message?: string },
    prefix?: string,
  ): void;
  close(): Promise<void>;
}

export function startFakeStripe(): Promise<FakeStripe> {
  const requests: RecordedRequest[] = [];
  const byIdempotencyKey = new Map<string, unknown>();
  const paymentIntents = new Map<string, Record<string, unknown>>();
  const grantedTokens = new Map<string, Record<string, unknown>>();
  const intentsByKey = new Map<string, { params: string; status: number; body: unknown }>();
  let counter = 0;
  let failure: { status: number; error: Record<string, unknown>; prefix: string } | null = null;

  const json = (body: unknown, status = 200, extra: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", "request-id": `req_${++counter}`, ...extra },
    });
  const invalid = (message: string, param?: string, code?: string, status = 400) =>
    json({
      error: {
        type: "invalid_request_error",
        message,
        ...(param ? { param } : {}),
        ...(code ? { code } : {}),
      },
    }, status);
  const randomId = (prefix: string) =>
    `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;

  /** `POST /v1/test_helpers/shared_payment/granted_tokens`: a token as an agent would grant it. */
  const grantToken = (form: Record<string, string>) => {
    const amount = Number(form["usage_limits[max_amount]"]);
    const expiresAt = Number(form["usage_limits[expires_at]"]);
    if (!form.payment_method) {
      return invalid("Missing required param: payment_method.", "payment_method");
    }
    if (!form["usage_limits[currency]"] || !Number.isSafeInteger(amount) || amount <= 0) {
      return invalid("Invalid usage_limits.", "usage_limits");
    }
    if (!Number.isSafeInteger(expiresAt)) return invalid("Invalid usage_limits[expires_at].");
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) {
      const m = /^metadata\[(.+)\]$/.exec(k);
      if (m) metadata[m[1]] = v;
    }
    const token = {
      id: randomId("spt_test"),
      object: "shared_payment.granted_token",
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      deactivated_at: null,
      deactivated_reason: null,
      payment_method: form.payment_method,
      seller_details: { network_id: form["seller_details[network_id]"] ?? null },
      metadata,
      usage_details: { amount_captured: { value: 0, currency: form["usage_limits[currency]"] } },
      usage_limits: {
        currency: form["usage_limits[currency]"],
        max_amount: amount,
        expires_at: expiresAt,
      },
    };
    grantedTokens.set(token.id, token);
    return json(token);
  };

  /** `POST /v1/payment_intents`, confirmed at once with a shared payment granted token. */
  const createIntent = (req: Request, form: Record<string, string>) => {
    const key = req.headers.get("idempotency-key");
    const params = JSON.stringify(Object.entries(form).sort());
    if (key && intentsByKey.has(key)) {
      const first = intentsByKey.get(key)!;
      if (first.params !== params) {
        return json({
          error: {
            type: "idempotency_error",
            message: "Keys for idempotent requests can only be used with the same parameters " +
              "they were first used with.",
          },
        }, 400);
      }
      return json(first.body, first.status, { "idempotent-replayed": "true" });
    }
    const answer = (body: unknown, status = 200) => {
      if (key) intentsByKey.set(key, { params, status, body });
      return json(body, status);
    };
    const sptId = form.shared_payment_granted_token;
    const version = req.headers.get("stripe-version") ?? "";
    if (sptId !== undefined && !version.endsWith(".preview")) {
      return invalid(
        "Received unknown parameter: shared_payment_granted_token",
        "shared_payment_granted_token",
        "parameter_unknown",
      );
    }
    const amount = Number(form.amount);
    if (!Number.isSafeInteger(amount) || amount < 50) {
      return invalid("Amount must be at least 50 cents.", "amount", "amount_too_small");
    }
    if (form.confirm !== "true" || !sptId) {
      return invalid("This fake confirms PaymentIntents with a shared payment granted token only.");
    }
    const spt = grantedTokens.get(sptId) as
      | {
        deactivated_at: number | null;
        payment_method: string;
        usage_limits: { currency: string; max_amount: number; expires_at: number };
        usage_details: { amount_captured: { value: number } };
      }
      | undefined;
    if (!spt) {
      return invalid(
        `No such shared_payment_granted_token: '${sptId}'`,
        "shared_payment_granted_token",
        "resource_missing",
      );
    }
    const now = Math.floor(Date.now() / 1000);
    if (spt.deactivated_at !== null || spt.usage_limits.expires_at <= now) {
      return invalid(
        "This shared payment token is no longer active.",
        "shared_payment_granted_token",
      );
    }
    if (form.currency !== spt.usage_limits.currency) {
      return invalid("The currency does not match the shared payment token's usage limits.");
    }
    if (spt.usage_details.amount_captured.value + amount > spt.usage_limits.max_amount) {
      return invalid(
        "This amount exceeds the shared payment token's usage limits.",
        "shared_payment_granted_token",
      );
    }
    const id = randomId("pi");
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(form)) {
      const m = /^metadata\[(.+)\]$/.exec(k);
      if (m) metadata[m[1]] = v;
    }
    const declined = spt.payment_method === "pm_card_chargeDeclined";
    const intent = {
      id,
      object: "payment_intent",
      amount,
      amount_received: declined ? 0 : amount,
      currency: form.currency,
      status: declined
        ? "requires_payment_method"
        : spt.payment_method === "pm_card_authenticationRequired"
        ? "requires_action"
        : "succeeded",
      confirmation_method: "automatic",
      latest_charge: declined ? null : randomId("ch"),
      payment_method: spt.payment_method,
      shared_payment_granted_token: sptId,
      metadata,
      livemode: false,
      created: now,
    };
    paymentIntents.set(id, intent);
    if (declined) {
      return answer({
        error: {
          type: "card_error",
          code: "card_declined",
          decline_code: "generic_decline",
          message: "Your card was declined.",
          payment_intent: intent,
        },
      }, 402);
    }
    if (intent.status === "succeeded") spt.usage_details.amount_captured.value += amount;
    return answer(intent);
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    const form = Object.fromEntries(new URLSearchParams(text));
    requests.push({ method: req.method, path: url.pathname, headers: req.headers, form });

    const auth = req.headers.get("authorization") ?? "";
    const basic = /^Basic (.+)$/.exec(auth)?.[1];
    const secret = basic ? atob(basic).replace(/:$/, "") : /^Bearer (.+)$/.exec(auth)?.[1] ?? "";
    if (!secret.startsWith("sk_test_")) {
      return json({ error: { type: "invalid_request_error", message: "Invalid API Key" } }, 401);
    }
    if (failure && url.pathname.startsWith(failure.prefix)) {
      const f = failure;
      failure = null;
      return json({ error: f.error }, f.status);
    }
    const key = req.headers.get("idempotency-key");
    if (req.method === "POST" && key && byIdempotencyKey.has(`${url.pathname} ${key}`)) {
      return json(byIdempotencyKey.get(`${url.pathname} ${key}`));
    }
    if (req.method === "POST" && url.pathname === "/v1/customers") {
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]] = v;
      }
      const customer = {
        id: `cus_test_${++counter}${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`,
        object: "customer",
        email: form.email ?? null,
        metadata,
      };
      if (key) byIdempotencyKey.set(`${url.pathname} ${key}`, customer);
      return json(customer);
    }
    if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
      if (!/^cus_/.test(form.customer ?? "")) {
        return json({
          error: {
            type: "invalid_request_error",
            code: "resource_missing",
            message: `No such customer: '${form.customer}'`,
          },
        }, 400);
      }
      const id = `bps_test_${++counter}${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;
      return json({
        id,
        object: "billing_portal.session",
        customer: form.customer,
        return_url: form.return_url ?? null,
        url: `https://billing.stripe.test/p/session/${id}`,
      });
    }
    if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      const id = `cs_test_${++counter}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      const metadata: Record<string, string> = {};
      for (const [k, v] of Object.entries(form)) {
        const m = /^metadata\[(.+)\]$/.exec(k);
        if (m) metadata[m[1]] = v;
      }
      const session = {
        id,
        object: "checkout.session",
        mode: form.mode,
        status: "open",
        payment_status: "unpaid",
        client_reference_id: form.client_reference_id ?? null,
        metadata,
        success_url: form.success_url,
        cancel_url: form.cancel_url,
        url: `https://checkout.stripe.test/c/pay/${id}`,
        subscription: null,
        customer: form.customer ?? null,
        expires_at: form.expires_at
          ? Number(form.expires_at)
          : Math.floor(Date.now() / 1000) + 86_400,
      };
      if (key) byIdempotencyKey.set(`${url.pathname} ${key}`, session);
      return json(session);
    }
    if (
      req.method === "POST" && url.pathname === "/v1/test_helpers/shared_payment/granted_tokens"
    ) {
      return grantToken(form);
    }
    if (req.method === "POST" && url.pathname === "/v1/payment_intents") {
      return createIntent(req, form);
    }
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(url.pathname);
    if (req.method === "POST" && expire) {
      return json({ id: expire[1], object: "checkout.session", status: "expired", url: null });
    }
    return json({
      error: { type: "invalid_request_error", message: `Unrecognized request URL ${url.pathname}` },
    }, 404);
  });

  return Promise.resolve({
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    sessionCreates: () =>
      requests.filter((r) => r.method === "POST" && r.path === "/v1/checkout/sessions"),
    customerCreates: () =>
      requests.filter((r) => r.method === "POST" && r.path === "/v1/customers"),
    portalCreates: () =>
      requests.filter((r) => r.method === "POST" && r.path === "/v1/billing_portal/sessions"),
    paymentIntentCreates: () =>
      requests.filter((r) => r.method === "POST" && r.path === "/v1/payment_intents"),
    paymentIntents,
    grantedTokens,
    failNext(status, error, prefix = "/v1/checkout/sessions") {
      failure = { status, error: { ...error }, prefix };
    },
    async close() {
      await server.shutdown();
    },
  });
}

export const WEBHOOK_SECRET = "whsec_test_serpwright";

/** The env that points the service at the fake, with every price configured. */
export function stripeEnv(fake: FakeStripe, overrides: Record<string, string> = {}) {
  return {
    STRIPE_SECRET_KEY: "sk_test_x",
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
    STRIPE_API_BASE: fake.url,
    STRIPE_PRICE_BASIC: "price_basic",
    STRIPE_PRICE_PRO: "price_pro",
    STRIPE_PRICE_PACK_500: "price_pack_500",
    STRIPE_PRICE_PACK_2000: "price_pack_2000",
    STRIPE_PRICE_PACK_10000: "price_pack_10000",
    ...overrides,
  };
}

/** A `Stripe-Signature` header for `payload`, signed at `timestampMs` as Stripe does. */
export async function signPayload(
  payload: string,
  timestampMs: number,
  secret = WEBHOOK_SECRET,
): Promise<string> {
  return await stripeWebhooks.generateTestHeaderStringAsync({
    payload,
    secret,
    timestamp: Math.floor(timestampMs / 1000),
    cryptoProvider: subtleCrypto,
  });
}

let eventCounter = 0;

/** A Stripe event envelope of the pinned API version. */
export function stripeEvent(type: string, object: Record<string, unknown>, id?: string) {
  return {
    id: id ?? `evt_test_${++eventCounter}_${crypto.randomUUID().slice(0, 8)}`,
    object: "event",
    api_version: "2026-10-28.endive",
    created: Math.floor(Date.now() / 1000),
    type,
    livemode: false,
    pending_webhooks: 1,
    data: { object },
  };
}

/**
 * A completed, paid Checkout Session carrying the metadata the service set, with the amounts
 * Stripe reports for the catalogue's price (USD cents) and, in payment mode, its PaymentIntent.
 */
export function paidSession(
  metadata: Record<string, string>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  // An upgrade pays a plan, a pack or both in one session (subscription mode with a plan).
  const recurring = metadata.kind === "subscription" ||
    (metadata.kind === "upgrade" && metadata.plan_id !== undefined);
  const usd = metadata.kind === "subscription"
    ? findPlan(metadata.plan_id ?? "")?.monthlyPrice
    : metadata.kind === "upgrade"
    ? (findPlan(metadata.plan_id ?? "")?.monthlyPrice ?? 0) +
      (findPack(metadata.pack_id ?? "")?.usd ?? 0)
    : findPack(metadata.pack_id ?? "")?.usd;
  const cents = (usd ?? 0) * 100;
  return {
    id: `cs_test_paid_${crypto.randomUUID().slice(0, 8)}`,
    object: "checkout.session",
    mode: recurring ? "subscription" : "payment",
    status: "complete",
    payment_status: "paid",
    metadata,
    currency: "usd",
    amount_subtotal: cents,
    amount_total: cents,
    payment_intent: recurring ? null : `pi_${crypto.randomUUID().replaceAll("-", "").slice(0, 14)}`,
    subscription: recurring ? `sub_${crypto.randomUUID().slice(0, 8)}` : null,
    customer: "cus_test_1",
    ...extra,
  };
}

/** A charge of a paid pack after `amountRefunded` cents of `amount` went back (cumulative). */
export function refundedCharge(input: {
  paymentIntent: string;
  amount: number;
  amountRefunded: number;
}): Record<string, unknown> {
  return {
    id: `ch_${input.paymentIntent.slice(3)}`,
    object: "charge",
    amount: input.amount,
    amount_refunded: input.amountRefunded,
    currency: "usd",
    payment_intent: input.paymentIntent,
    refunded: input.amountRefunded >= input.amount,
    metadata: {},
  };
}

/** A dispute of a pack's charge (`status`: needs_response when created, won or lost when closed). */
export function dispute(input: {
  id?: string;
  paymentIntent: string;
  amount: number;
  status: string;
}): Record<string, unknown> {
  return {
    id: input.id ?? `dp_${crypto.randomUUID().replaceAll("-", "").slice(0, 14)}`,
    object: "dispute",
    amount: input.amount,
    currency: "usd",
    charge: `ch_${input.paymentIntent.slice(3)}`,
    payment_intent: input.paymentIntent,
    reason: "fraudulent",
    status: input.status,
  };
}

/** A subscription as `customer.subscription.deleted` carries it. */
export function deletedSubscription(id: string, metadata: Record<string, string> | null) {
  return {
    id,
    object: "subscription",
    status: "canceled",
    metadata: metadata ?? {},
    customer: "cus_test_1",
    canceled_at: Math.floor(Date.now() / 1000),
    ended_at: Math.floor(Date.now() / 1000),
  };
}

/** A paid invoice of a subscription (shape of API versions since 2025-03-31.basil). */
export function paidInvoice(input: {
  subscription: string;
  metadata: Record<string, string> | null;
  billingReason: "subscription_create" | "subscription_cycle";
  periodStartMs: number;
  periodEndMs: number;
  status?: "paid" | "open";
}): Record<string, unknown> {
  return {
    id: `in_test_${crypto.randomUUID().slice(0, 8)}`,
    object: "invoice",
    billing_reason: input.billingReason,
    status: input.status ?? "paid",
    customer: "cus_test_1",
    parent: {
      type: "subscription_details",
      quote_details: null,
      subscription_details: {
        subscription: input.subscription,
        metadata: input.metadata,
      },
    },
    lines: {
      object: "list",
      data: [{
        id: "il_1",
        object: "line_item",
        period: {
          start: Math.floor(input.periodStartMs / 1000),
          end: Math.floor(input.periodEndMs / 1000),
        },
      }],
    },
  };
}
