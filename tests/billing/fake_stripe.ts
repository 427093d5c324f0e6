/**
 * A fake Stripe API on loopback: real HTTP, form-encoded requests exactly as the `stripe` SDK sends
 * them. It answers the calls the service makes (create customers, create and expire Checkout
 * Sessions, create Billing Portal sessions), records every request so tests can assert the price,
 * mode, metadata and Idempotency-Key, and replays an answer for a repeated Idempotency-Key as
 * Stripe does. Also signs webhook events the way Stripe signs them.
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
  let counter = 0;
  let failure: { status: number; error: Record<string, unknown>; prefix: string } | null = null;

  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json", "request-id": `req_${++counter}` },
    });

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = await req.text();
    const form = Object.fromEntries(new URLSearchParams(text));
    requests.push({ method: req.method, path: url.pathname, headers: req.headers, form });

    if (!/^Bearer sk_test_/.test(req.headers.get("authorization") ?? "")) {
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
