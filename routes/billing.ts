import type { Deps } from "../domain/deps.ts";
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import {
  CADENCES,
  CREDIT_NOTES,
  CREDIT_USD_VALUE,
  CURRENCY,
  findPack,
  PACK_IDS,
  packsWithAvailability,
  PLAN_IDS,
  plansDocument,
  PURCHASE_HINT,
  SANDBOX_BALANCE_NOTE,
  UNIT_PRICES,
} from "../domain/billing/catalog.ts";
import { createPackCheckout, createSubscriptionCheckout } from "../domain/billing/checkout.ts";
import { getBalance } from "../domain/billing/credits.ts";
import { createStripeClient } from "../domain/billing/stripe_client.ts";
import { handleStripeWebhook } from "../domain/billing/stripe_events.ts";
import { getSubscriptionState } from "../domain/billing/subscription_status.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { readBodyCapped } from "./middleware/json_body.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";

export const PlansDocument = z.object({
  currency: z.literal("USD"),
  updated_at: z.string(),
  merchant_of_record: z.string(),
  plans: z.array(z.object({
    id: z.enum(PLAN_IDS),
    name: z.string(),
    audience: z.literal("human"),
    monthly_price: z.number().openapi({ example: 199 }),
    currency: z.string(),
    period: z.literal("month"),
    featured: z.boolean(),
    features: z.array(z.string()),
    checkout_url: z.string(),
    scheduled_audits: z.object({
      max_cadence: z.enum(CADENCES).openapi({
        description: "The most frequent audit schedule the plan includes",
      }),
      included: z.boolean(),
    }),
  })),
  agent_channel: z.object({
    audience: z.literal("agent"),
    model: z.literal("per_project"),
    note: z.string(),
    signup: z.string(),
    subscriptions: z.string(),
    subscription_status: z.string(),
    base_monthly_fee: z.number(),
    docs: z.string(),
  }),
  a_la_carte: z.object({
    note: z.string(),
    payment: z.string(),
    credit_packs: z.array(z.object({
      id: z.enum(PACK_IDS),
      usd: z.number(),
      credits: z.number().int(),
      bonus_credits: z.number().int(),
    })),
    currency: z.string(),
    items: z.array(z.object({
      id: z.string(),
      unit: z.string(),
      usd_price: z.number(),
      description: z.string(),
    })),
    scheduled_audits: z.object({
      max_cadence: z.enum(CADENCES),
      unit: z.string(),
      credits_per_audit: z.number().int(),
      note: z.string(),
    }),
  }),
  article_pricing: z.object({
    model_article: z.object({ unit_id: z.literal("article_generated"), credits: z.number() }),
    builtin_outline: z.object({ unit_id: z.literal("article_outline"), credits: z.number() }),
    rule: z.string(),
  }).openapi({
    description: "How an article is charged: by whether a model wrote it or the server's " +
      "built-in writer delivered an outline (the article's `generator.kind`)",
  }),
  rendered_audit_pricing: z.object({
    rendered_audit: z.object({ unit_id: z.literal("rendered_audit"), credits: z.number() }),
    basic_plan_addon: z.object({ unit_id: z.literal("rendering_addon"), credits: z.number() }),
    included_in_plans: z.array(z.enum(["basic", "pro"])),
    sandbox: z.boolean(),
    rule: z.string(),
  }).openapi({
    description: 'How a rendered audit ({"render": true}) is charged (additive): included with ' +
      "the listed plans, the add-on for basic, rendered_audit for credits; not for sandbox keys",
  }),
  sandbox: z.object({
    note: z.string(),
    audits: z.number().int(),
    articles: z.number().int(),
    expires_days: z.number().int(),
    price: z.number(),
    signup: z.string(),
    scheduled_audits: z.literal(false).openapi({ description: "Sandbox keys cannot schedule" }),
  }),
  links: z.object({ pricing_page: z.string(), for_agents: z.string(), llms_txt: z.string() }),
}).openapi("Plans");

export const Credits = z.object({
  balance_credits: z.number().int(),
  currency: z.literal("USD"),
  credit_usd_value: z.number(),
  unit_prices: z.record(z.string(), z.number().int()).openapi({
    example: { technical_audit: 25, article_generated: 15 },
  }),
  packs: z.array(z.object({
    id: z.enum(PACK_IDS),
    usd: z.number(),
    credits: z.number().int(),
    bonus_credits: z.number().int(),
    available: z.boolean(),
  })),
  purchase: z.string(),
  notes: z.array(z.string()),
}).openapi("Credits");

export const SubscriptionState = z.object({
  project_id: z.string(),
  plan: z.enum(PLAN_IDS).nullable(),
  status: z.enum(["active", "pending_payment", "none"]),
  paid_until: z.string().optional().openapi({ example: "2026-12-23T12:00:00.000Z" }),
}).openapi("SubscriptionState");

export const SubscriptionCheckout = z.object({
  status: z.literal("pending_payment"),
  checkout_url: z.string(),
  project_id: z.string(),
  plan: z.enum(PLAN_IDS),
  note: z.string(),
}).openapi("SubscriptionCheckout");

export const PackCheckout = z.object({
  status: z.literal("pending_payment"),
  checkout_url: z.string(),
  pack_id: z.enum(PACK_IDS),
  usd: z.number(),
  credits: z.number().int(),
  bonus_credits: z.number().int(),
  note: z.string(),
}).openapi("CreditPackCheckout");

export const CreateSubscriptionBody = z.object({
  project_id: z.string().min(1).max(100).openapi({ example: "proj_0abc" }),
  plan_id: z.enum(PLAN_IDS).openapi({ example: "basic" }),
}).strict().openapi("CreateSubscriptionRequest");

export const PurchaseCreditsBody = z.object({
  pack_id: z.enum(PACK_IDS).openapi({ example: "pack_500" }),
}).strict().openapi("PurchaseCreditsRequest");

/** Stripe events are small; anything larger is not from Stripe. */
const MAX_WEBHOOK_BYTES = 512 * 1024;

/**
 * Billing: the public price list, credits, checkouts for plans and packs, subscription state, and
 * the inbound Stripe webhook (outside `/v1`, raw body, no bearer key).
 */
export function billingRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;
  const stripe = createStripeClient(deps.config);
  // The catalogue is constant for the life of the process: build and serialise it once.
  const plansJson = JSON.stringify(plansDocument(deps.config.publicBaseUrl));

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/plans",
      tags: ["Billing"],
      summary: "Plans, credit packs, unit prices and sandbox terms (public, cached 5 minutes)",
      responses: responses(
        { 200: { description: "The Plans document", schema: PlansDocument } },
        ["rate_limited"],
      ),
    }),
    (c) => {
      c.header("Cache-Control", "public, max-age=300");
      return c.body(plansJson, 200, { "Content-Type": "application/json" }) as never;
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/credits",
      tags: ["Billing"],
      summary: "The account's credit balance, unit prices and packs",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      responses: responses({ 200: { description: "Credits", schema: Credits } }, AUTH_ERRORS),
    }),
    async (c) => c.json(await creditsView(deps, c.get("principal")!), 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/credits/purchases",
      tags: ["Billing"],
      summary: "Buy a credit pack: returns a checkout_url for a human to pay",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: {
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: PurchaseCreditsBody } }, required: true },
      },
      responses: responses(
        { 201: { description: "Checkout opened", schema: PackCheckout } },
        [
          ...AUTH_ERRORS,
          "sandbox_not_billable",
          "billing_not_configured",
          "idempotency_conflict",
          "payload_too_large",
        ],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { pack_id } = c.req.valid("json");
      const checkout = await createPackCheckout(deps, stripe, {
        accountId: caller.account.id,
        mode: caller.key.mode,
        idempotencyKey: c.req.header("idempotency-key"),
      }, { packId: pack_id });
      return c.json(packCheckoutView(checkout), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/subscriptions",
      tags: ["Billing"],
      summary: "Subscribe one project monthly: returns a checkout_url for a human to pay",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: {
        headers: IdempotencyHeader,
        body: {
          content: { "application/json": { schema: CreateSubscriptionBody } },
          required: true,
        },
      },
      responses: responses(
        { 201: { description: "Checkout opened", schema: SubscriptionCheckout } },
        [
          ...AUTH_ERRORS,
          "sandbox_not_billable",
          "not_found",
          "already_subscribed",
          "billing_not_configured",
          "idempotency_conflict",
          "payload_too_large",
        ],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const body = c.req.valid("json");
      const checkout = await createSubscriptionCheckout(deps, stripe, {
        accountId: caller.account.id,
        mode: caller.key.mode,
        idempotencyKey: c.req.header("idempotency-key"),
      }, { projectId: body.project_id, planId: body.plan_id });
      return c.json(subscriptionCheckoutView(checkout), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/subscription",
      tags: ["Billing"],
      summary: "A project's subscription state",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: {
        query: z.object({
          project_id: z.string().min(1).max(100).openapi({ example: "proj_0abc" }),
        }),
      },
      responses: responses(
        { 200: { description: "Subscription state", schema: SubscriptionState } },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const state = await getSubscriptionState(
        deps,
        { accountId: caller.account.id, mode: caller.key.mode },
        c.req.valid("query").project_id,
      );
      return c.json(state, 200);
    },
  );

  // Stripe's inbound webhook: signed by Stripe, not by a bearer key; verified on the raw bytes,
  // which is why the JSON body middleware does not run outside /v1 and /admin.
  app.post("/webhooks/stripe", async (c) => {
    const raw = new TextDecoder().decode(
      await readBodyCapped(c.req.raw, MAX_WEBHOOK_BYTES, deps.config.bodyTimeoutMs),
    );
    const result = await handleStripeWebhook(deps, raw, c.req.header("stripe-signature") ?? null);
    return c.json({ received: true, event_id: result.eventId, outcome: result.outcome }, 200);
  });
}

/**
 * The Credits object of `GET /v1/credits` (and the MCP billing tool). A sandbox key does not see
 * the account's balance (`canSee`): it reads 0 and says why.
 */
export async function creditsView(
  deps: Deps,
  caller: { account: { id: string }; key: { mode: string } },
) {
  const sandbox = caller.key.mode === "sandbox";
  return {
    balance_credits: sandbox ? 0 : await getBalance(deps.kv, caller.account.id),
    currency: CURRENCY,
    credit_usd_value: CREDIT_USD_VALUE,
    unit_prices: { ...UNIT_PRICES },
    packs: packsWithAvailability(deps.config),
    purchase: PURCHASE_HINT,
    notes: sandbox ? [...CREDIT_NOTES, SANDBOX_BALANCE_NOTE] : [...CREDIT_NOTES],
  } as const;
}

/** The credit-pack checkout response (`POST /v1/credits/purchases`, and the MCP billing tool). */
export function packCheckoutView(checkout: { url: string; packId: string }) {
  const pack = findPack(checkout.packId)!;
  return {
    status: "pending_payment" as const,
    checkout_url: checkout.url,
    pack_id: pack.id,
    usd: pack.usd,
    credits: pack.credits,
    bonus_credits: pack.bonusCredits,
    note: `A human pays ${pack.usd} USD at checkout_url; ${pack.credits} credits (bonus ` +
      `included) then land on the balance automatically. Read it with GET /v1/credits.`,
  };
}

/** The subscription checkout response (`POST /v1/subscriptions`, and the MCP billing tool). */
export function subscriptionCheckoutView(
  checkout: { url: string; projectId: string; planId: string },
) {
  return {
    status: "pending_payment" as const,
    checkout_url: checkout.url,
    project_id: checkout.projectId,
    plan: checkout.planId,
    note: "A human opens checkout_url and pays; the project activates automatically on " +
      "payment (poll GET /v1/subscription?project_id=…). The link is valid for 24 hours.",
  };
}
