/**
 * The billing tool over endpoints 13–17: the plans document, credits, credit-pack and subscription
 * checkouts (a `checkout_url` a human pays at), and a project's subscription state. Without a key
 * only the public plans document is offered, as on `/v1`.
 */
import { z } from "zod";
import { plansDocument, UNIT_PRICES } from "../../../domain/billing/catalog.ts";
import {
  createPackCheckout,
  createSubscriptionCheckout,
} from "../../../domain/billing/checkout.ts";
import { createStripeClient, type StripeClient } from "../../../domain/billing/stripe_client.ts";
import { getSubscriptionState } from "../../../domain/billing/subscription_status.ts";
import {
  CreateSubscriptionBody,
  Credits,
  creditsView,
  PackCheckout,
  packCheckoutView,
  PlansDocument,
  PurchaseCreditsBody,
  SubscriptionCheckout,
  subscriptionCheckoutView,
  SubscriptionState,
} from "../../billing.ts";
import type { Services } from "../../env.ts";
import { idempotent } from "../idempotency.ts";
import { asBody, IdempotencyKeyArg, required, type ToolDef } from "../kit.ts";

/** One Stripe client per app, as billingRoutes builds one. */
const stripeClients = new WeakMap<Services, StripeClient | null>();
function stripeOf(s: Services): StripeClient | null {
  if (!stripeClients.has(s)) stripeClients.set(s, createStripeClient(s.deps.config));
  return stripeClients.get(s)!;
}

const Output = z.object({
  plans: PlansDocument.optional(),
  credits: Credits.optional(),
  checkout: z.union([PackCheckout, SubscriptionCheckout]).optional(),
  subscription: SubscriptionState.optional(),
  idempotent_replayed: z.boolean().optional(),
});

const PLANS_TEXT = "plans: the public price list (per-project plans basic and pro, credit " +
  "packs, unit prices, sandbox terms, the pricing page to hand a human).";

function plansAnswer(baseUrl: string) {
  const plans = plansDocument(baseUrl);
  return {
    structured: { plans },
    summary: `Plans: ${plans.plans.map((p) => `${p.id} ${p.monthly_price} USD/month`).join(", ")}` +
      ` per project; credit packs ${plans.a_la_carte.credit_packs.map((p) => p.id).join(", ")}. ` +
      `Pricing page for a human: ${plans.links.pricing_page}.`,
  };
}

const PublicInput = z.object({
  action: z.enum(["plans"]).describe(PLANS_TEXT),
}).strict();

/** What a caller without a key sees: the public plans document only. */
export const publicBillingTool: ToolDef<typeof PublicInput> = {
  name: "billing",
  title: "Plans and billing",
  description:
    "Serpwright's prices: per-project monthly plans, prepaid credit packs, unit prices " +
    "and the free sandbox. Connect with an API key (see signup) to see credits and buy.",
  input: PublicInput,
  output: Output,
  access: "anonymous",
  annotations: { readOnlyHint: true, idempotentHint: true },
  run(_args, ctx) {
    return Promise.resolve(plansAnswer(ctx.baseUrl));
  },
};

const BillingInput = z.object({
  action: z.enum(["plans", "credits", "buy_credits", "subscribe", "subscription"]).describe(
    PLANS_TEXT + " credits: the balance and unit prices. buy_credits: open a checkout for " +
      "pack_id; returns checkout_url for a human to pay, credits land automatically. subscribe: " +
      "open a monthly checkout of plan_id for project_id; returns checkout_url. subscription: " +
      "a project's subscription state (project_id).",
  ),
  pack_id: z.enum(["pack_500", "pack_2000", "pack_10000"]).optional()
    .describe("buy_credits: the pack"),
  plan_id: z.enum(["basic", "pro"]).optional().describe("subscribe: the plan"),
  project_id: z.string().min(1).max(100).optional()
    .describe("subscribe, subscription: the project (proj_…)"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

export const billingTool: ToolDef<typeof BillingInput> = {
  name: "billing",
  title: "Plans, credits and checkouts",
  description: "Money: read the plans and the credit balance, and open checkouts. A purchase " +
    "never charges by itself: buy_credits and subscribe return a checkout_url that a HUMAN must " +
    "open and pay; then credits land / the project activates automatically (poll credits or " +
    "subscription). Purchases need a live key (sandbox_not_billable otherwise).",
  input: BillingInput,
  output: Output,
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller, baseUrl } = ctx;
    const { deps } = services;
    const p = caller.principal!;
    switch (args.action) {
      case "plans":
        return plansAnswer(baseUrl);
      case "credits": {
        const credits = await creditsView(deps, p);
        return {
          structured: { credits },
          summary: `Balance: ${credits.balance_credits} credits (1 credit = 1 USD). Audit ` +
            `${UNIT_PRICES.technical_audit}, article ${UNIT_PRICES.article_generated} credits.`,
        };
      }
      case "buy_credits": {
        const { pack_id } = asBody(PurchaseCreditsBody, { pack_id: args.pack_id });
        const answer = await idempotent(
          services,
          caller,
          { key: args.idempotency_key, endpoint: "POST /v1/credits/purchases", body: { pack_id } },
          async () => {
            const checkout = await createPackCheckout(deps, stripeOf(services), {
              accountId: p.account.id,
              mode: p.key.mode,
              idempotencyKey: args.idempotency_key,
            }, { packId: pack_id });
            return { status: 201, body: packCheckoutView(checkout) };
          },
        );
        const c = answer.body;
        return {
          structured: { checkout: c, ...(answer.replayed ? { idempotent_replayed: true } : {}) },
          summary: `Hand this link to a human to pay ${c.usd} USD for ${c.credits} credits: ` +
            `${c.checkout_url} (then read the balance with action credits)`,
        };
      }
      case "subscribe": {
        required(args.project_id, "project_id", "subscribe");
        const body = asBody(CreateSubscriptionBody, {
          project_id: args.project_id,
          plan_id: args.plan_id,
        });
        const answer = await idempotent(
          services,
          caller,
          { key: args.idempotency_key, endpoint: "POST /v1/subscriptions", body },
          async () => {
            const checkout = await createSubscriptionCheckout(deps, stripeOf(services), {
              accountId: p.account.id,
              mode: p.key.mode,
              idempotencyKey: args.idempotency_key,
            }, { projectId: body.project_id, planId: body.plan_id });
            return { status: 201, body: subscriptionCheckoutView(checkout) };
          },
        );
        const c = answer.body;
        return {
          structured: { checkout: c, ...(answer.replayed ? { idempotent_replayed: true } : {}) },
          summary: `Hand this link to a human to subscribe ${c.project_id} to ${c.plan}: ` +
            `${c.checkout_url} (valid 24 h). Then poll billing action subscription.`,
        };
      }
      case "subscription": {
        const id = required(args.project_id, "project_id", "subscription");
        const subscription = await getSubscriptionState(deps, {
          accountId: p.account.id,
          mode: p.key.mode,
        }, id);
        return {
          structured: { subscription },
          summary: `Project ${id}: subscription ${subscription.status}` +
            (subscription.plan ? ` (${subscription.plan})` : "") +
            (subscription.paid_until ? `, paid until ${subscription.paid_until}` : "") + ".",
        };
      }
    }
  },
};
