/**
 * Billing (endpoints 13–17): the public price list, checkouts for a project's monthly plan and for
 * credit packs (a `checkout_url` a human pays at), a project's subscription state and the credit
 * balance. Checkouts re-read the calling key strongly first (`sensitive`) and take an idempotency
 * key, from which the payment provider's own is derived. The inbound Stripe webhook is not an
 * operation: it stays in routes/billing.ts.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import {
  CADENCES,
  CREDIT_NOTES,
  CREDIT_USD_VALUE,
  CURRENCY,
  findPack,
  getBalance,
  PACK_IDS,
  packsWithAvailability,
  PLAN_IDS,
  plansDocument,
  PURCHASE_HINT,
  SANDBOX_BALANCE_NOTE,
  UNIT_PRICES,
} from "../../domain/billing/mod.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { createPackCheckout, createSubscriptionCheckout } from "../../domain/billing/checkout.ts";
import { createPortalSession } from "../../domain/billing/portal.ts";
import { createStripeClient, type StripeClient } from "../../domain/billing/stripe_client.ts";
import { getSubscriptionState } from "../../domain/billing/subscription_status.ts";
import { ApiError, type Deps } from "../../domain/platform/mod.ts";
import type { KeyMode } from "../../domain/identity/types.ts";
import { defineOperation } from "../operation.ts";
import type { Services } from "../services.ts";

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
  recheck_pricing: z.object({
    unit_id: z.literal("recheck_urls"),
    credits_per_unit: z.number(),
    urls_per_unit: z.number().int(),
    max_urls: z.number().int(),
    included_in_plans: z.array(z.enum(["basic", "pro"])),
    sandbox: z.boolean(),
    rule: z.string(),
  }).openapi({
    description: "How re-checking a fix (POST /v1/audits/{auditId}/issues/{check}/recheck) " +
      "is charged (additive): recheck_urls per urls_per_unit URLs or part of them, at most " +
      "max_urls per re-check; included with the listed plans; not for sandbox keys",
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

export const SubscriptionQuery = z.object({
  project_id: z.string().min(1).max(100).openapi({ example: "proj_0abc" }),
});

/** One Stripe client per app (null when billing is not configured). */
const stripeClients = new WeakMap<Services, StripeClient | null>();
export function stripeOf(s: Services): StripeClient | null {
  if (!stripeClients.has(s)) stripeClients.set(s, createStripeClient(s.deps.config));
  return stripeClients.get(s)!;
}

/** The catalogue is constant for the life of the process: built once per base URL. */
const plansByBase = new Map<string, ReturnType<typeof plansDocument>>();
function plansOf(baseUrl: string): ReturnType<typeof plansDocument> {
  let plans = plansByBase.get(baseUrl);
  if (!plans) plansByBase.set(baseUrl, plans = plansDocument(baseUrl));
  return plans;
}

export const plansOp = defineOperation({
  id: "billing.plans",
  method: "get",
  path: "/v1/plans",
  tags: ["Billing"],
  summary: "Plans, credit packs, unit prices and sandbox terms (public, cached 5 minutes)",
  access: "public",
  tokens: "allow",
  status: 200,
  output: PlansDocument,
  outputDescription: "The Plans document",
  errors: ["rate_limited"],
  run(_input, { baseUrl, header }) {
    header("Cache-Control", "public, max-age=300");
    return Promise.resolve(plansOf(baseUrl));
  },
});

export const subscribeOp = defineOperation({
  id: "billing.subscribe",
  method: "post",
  path: "/v1/subscriptions",
  tags: ["Billing"],
  summary: "Subscribe one project monthly: returns a checkout_url for a human to pay",
  access: "key",
  tokens: "allow",
  sandbox: { refuse: "sandbox_not_billable" },
  leaves: "a checkout link; once a human pays, a subscription",
  body: CreateSubscriptionBody,
  status: 201,
  output: SubscriptionCheckout,
  outputDescription: "Checkout opened",
  errors: [
    "sandbox_not_billable",
    "not_found",
    "already_subscribed",
    "billing_not_configured",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  sensitive: true,
  async run({ body }, { services, actor, idempotencyKey }) {
    const checkout = await createSubscriptionCheckout(services.deps, stripeOf(services), {
      accountId: actor.accountId,
      mode: actor.mode,
      idempotencyKey,
    }, { projectId: body.project_id, planId: body.plan_id });
    return subscriptionCheckoutView(checkout);
  },
});

export const subscriptionOp = defineOperation({
  id: "billing.subscription",
  method: "get",
  path: "/v1/subscription",
  tags: ["Billing"],
  summary: "A project's subscription state",
  access: "key",
  tokens: "allow",
  query: SubscriptionQuery,
  status: 200,
  output: SubscriptionState,
  outputDescription: "Subscription state",
  errors: ["not_found"],
  run({ query }, { services, actor }) {
    return getSubscriptionState(
      services.deps,
      { accountId: actor.accountId, mode: actor.mode },
      query.project_id,
    );
  },
});

export const creditsOp = defineOperation({
  id: "billing.credits",
  method: "get",
  path: "/v1/credits",
  tags: ["Billing"],
  summary: "The account's credit balance, unit prices and packs",
  access: "key",
  tokens: "allow",
  sandbox: { limit: "reads a balance of 0 (credits belong to the live side)" },
  status: 200,
  output: Credits,
  outputDescription: "Credits",
  errors: [],
  run(_input, { services, actor }) {
    return creditsView(services.deps, actor);
  },
});

export const purchaseCreditsOp = defineOperation({
  id: "billing.purchase_credits",
  method: "post",
  path: "/v1/credits/purchases",
  tags: ["Billing"],
  summary: "Buy a credit pack: returns a checkout_url for a human to pay",
  access: "key",
  tokens: "allow",
  sandbox: { refuse: "sandbox_not_billable" },
  leaves: "a checkout link; once a human pays, credits",
  body: PurchaseCreditsBody,
  status: 201,
  output: PackCheckout,
  outputDescription: "Checkout opened",
  errors: [
    "sandbox_not_billable",
    "billing_not_configured",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  sensitive: true,
  async run({ body }, { services, actor, idempotencyKey }) {
    const checkout = await createPackCheckout(services.deps, stripeOf(services), {
      accountId: actor.accountId,
      mode: actor.mode,
      idempotencyKey,
    }, { packId: body.pack_id });
    return packCheckoutView(checkout);
  },
});

export const BillingPortal = z.object({
  url: z.string().openapi({
    description: "Stripe's Billing Portal for the account, valid a few minutes: hand it to a " +
      "human, who manages payment methods, invoices and plan cancellations there",
    example: "https://billing.stripe.com/p/session/test_YWNjdF8x",
  }),
}).openapi("BillingPortal");

export const billingPortalOp = defineOperation({
  id: "billing.portal",
  method: "post",
  path: "/v1/billing-portal",
  tags: ["Billing"],
  summary: "A Stripe Billing Portal link where a human manages what the account pays for",
  description: "Returns to the service's /billing/returned page. Cancelling a plan there keeps " +
    "the project active to paid_until (the webhook reports it as subscription.updated).",
  access: "key",
  tokens: "refuse",
  sandbox: { refuse: "sandbox_not_billable" },
  leaves: "a Billing Portal link (Stripe's, minutes long) where a human changes what is paid",
  optionalBody: true,
  bodyDescription: "No fields; an empty body (or none) is valid",
  body: z.object({}).strict(),
  status: 201,
  output: BillingPortal,
  outputDescription: "Billing Portal session opened",
  errors: [
    "sandbox_not_billable",
    "no_billing_customer",
    "billing_not_configured",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  sensitive: true,
  async run(_input, { services, actor, header }) {
    header("Cache-Control", "no-store");
    if (actor.mode === "sandbox") {
      throw new ApiError(
        "sandbox_not_billable",
        "A sandbox account has no billing to manage; upgrade first (POST /v1/upgrades)",
      );
    }
    const { url } = await createPortalSession(services.deps, stripeOf(services), actor.accountId);
    return { url };
  },
});

/** The billing operations, in the order the API reference lists them. */
export const BILLING_OPERATIONS = [
  plansOp,
  subscribeOp,
  subscriptionOp,
  creditsOp,
  purchaseCreditsOp,
  billingPortalOp,
];

/**
 * The Credits object of `GET /v1/credits`. A sandbox key does not see
 * the account's balance (`canSee`): it reads 0 and says why.
 */
export async function creditsView(deps: Deps, caller: { accountId: string; mode: KeyMode }) {
  const sandbox = caller.mode === "sandbox";
  return {
    balance_credits: sandbox ? 0 : await getBalance(deps.kv, caller.accountId),
    currency: CURRENCY,
    credit_usd_value: CREDIT_USD_VALUE,
    unit_prices: { ...UNIT_PRICES },
    packs: packsWithAvailability(deps.config),
    purchase: PURCHASE_HINT,
    notes: sandbox ? [...CREDIT_NOTES, SANDBOX_BALANCE_NOTE] : [...CREDIT_NOTES],
  } as const;
}

/** The credit-pack checkout response (`POST /v1/credits/purchases`). */
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

/** The subscription checkout response (`POST /v1/subscriptions`). */
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
