/**
 * The billing tool: the billing operations (app/operations/billing.ts) as actions — the plans
 * document, credits, credit-pack and subscription checkouts (a `checkout_url` a human pays at),
 * and a project's subscription state. Without a key only the public plans document is offered,
 * as on `/v1`.
 */
import { z } from "zod";
import {
  billingPortalOp,
  Credits,
  creditsOp,
  PackCheckout,
  PlansDocument,
  plansOp,
  purchaseCreditsOp,
  subscribeOp,
  SubscriptionCheckout,
  subscriptionOp,
  SubscriptionState,
} from "../../../app/operations/billing.ts";
import { createUpgradeOp, getUpgradeOp } from "../../../app/operations/upgrades.ts";
import { action, actionTool, IdempotencyKeyArg, required } from "../kit.ts";

const Output = z.object({
  plans: PlansDocument.optional(),
  credits: Credits.optional(),
  checkout: z.union([PackCheckout, SubscriptionCheckout]).optional(),
  subscription: SubscriptionState.optional(),
  // Kept loose on purpose: the full Upgrade schema is /v1's, and every byte here is in tools/list.
  upgrade: z.looseObject({ upgrade_id: z.string(), status: z.string() }).optional(),
  portal: z.object({ url: z.string() }).optional(),
  idempotent_replayed: z.boolean().optional(),
});

const PLANS_TEXT = "plans: the public price list (per-project plans basic and pro, credit " +
  "packs, unit prices, sandbox terms, the pricing page to hand a human).";

/** The plans action, shared by the keyless and the keyed tool. */
const plans = action(plansOp, () => ({}), (doc) => ({
  structured: doc,
  summary: `Plans: ${doc.plans.map((p) => `${p.id} ${p.monthly_price} USD/month`).join(", ")}` +
    ` per project; credit packs ${doc.a_la_carte.credit_packs.map((p) => p.id).join(", ")}. ` +
    `Pricing page for a human: ${doc.links.pricing_page}.`,
}));

const PublicInput = z.object({
  action: z.enum(["plans"]).describe(PLANS_TEXT),
}).strict();

/** What a caller without a key sees: the public plans document only. */
export const publicBillingTool = actionTool({
  name: "billing",
  title: "Plans and billing",
  description:
    "Serpwright's prices: per-project monthly plans, prepaid credit packs, unit prices " +
    "and the free sandbox. Connect with an API key (see signup) to see credits and buy.",
  input: PublicInput,
  output: Output,
  access: "anonymous",
  annotations: { readOnlyHint: true, idempotentHint: true },
  actions: { plans },
});

const BillingInput = z.object({
  action: z.enum([
    "plans",
    "credits",
    "buy_credits",
    "subscribe",
    "subscription",
    "upgrade",
    "upgrade_status",
    "portal",
  ]).describe(
    "plans: the prices and the pricing page. credits: the balance. buy_credits: a checkout " +
      "of pack_id. subscribe: a monthly checkout of plan_id for project_id. subscription: a " +
      "project's subscription state. upgrade (sandbox key): give a human " +
      "verification_uri_complete, or pay pack_id yourself (402 machine_payment). " +
      "upgrade_status: once paid, api_key once. portal: a billing page URL for a human.",
  ),
  pack_id: z.enum(["pack_500", "pack_2000", "pack_10000"]).optional()
    .describe("buy_credits, upgrade: the pack"),
  plan_id: z.enum(["basic", "pro"]).optional().describe("subscribe: the plan"),
  project_id: z.string().min(1).max(100).optional()
    .describe("subscribe, subscription: the project (proj_…)"),
  upgrade_id: z.string().min(1).max(100).optional().describe("upgrade_status: upg_…"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

type Args = z.output<typeof BillingInput>;
type CreditsOut = z.output<typeof Credits>;
type PackOut = z.output<typeof PackCheckout>;
type StateOut = z.output<typeof SubscriptionState>;

export const billingTool = actionTool({
  name: "billing",
  title: "Plans, credits and checkouts",
  description: "Plans, credits, checkouts and upgrades. buy_credits and subscribe return a " +
    "checkout_url a HUMAN must pay; then credits land or the project activates. Purchases " +
    "need a live key.",
  input: BillingInput,
  output: Output,
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  actions: {
    plans,
    credits: action(creditsOp, () => ({}), (credits: CreditsOut) => ({
      structured: credits,
      summary: `Balance: ${credits.balance_credits} credits (1 credit = 1 USD). Audit ` +
        `${credits.unit_prices.technical_audit}, article ` +
        `${credits.unit_prices.article_generated} credits.`,
    })),
    buy_credits: action(purchaseCreditsOp, (a: Args) => ({
      body: { pack_id: a.pack_id },
    }), (c: PackOut) => ({
      structured: c,
      summary: `Hand this link to a human to pay ${c.usd} USD for ${c.credits} credits: ` +
        `${c.checkout_url} (then read the balance with action credits)`,
    })),
    subscribe: action(subscribeOp, (a: Args) => ({
      body: { project_id: required(a.project_id, "project_id", "subscribe"), plan_id: a.plan_id },
    }), (c) => ({
      structured: c,
      summary: `Hand this link to a human to subscribe ${c.project_id} to ${c.plan}: ` +
        `${c.checkout_url} (valid 24 h). Then poll billing action subscription.`,
    })),
    upgrade: action(createUpgradeOp, (a: Args) => ({ body: { pack_id: a.pack_id } }), (u) => ({
      structured: u,
      summary: "user_code" in u
        ? `Hand a human ${u.verification_uri_complete} (code ${u.user_code}, until ` +
          `${u.expires_at}). Then poll billing action upgrade_status, upgrade_id ` +
          `${u.upgrade_id}, every ${u.interval} s.`
        : `Paid: the account is live. Claim the live key once: billing action ` +
          `upgrade_status, upgrade_id ${u.upgrade_id}.`,
    })),
    upgrade_status: action(getUpgradeOp, (a: Args) => ({
      params: { upgradeId: required(a.upgrade_id, "upgrade_id", "upgrade_status") },
    }), (u) => ({
      structured: u,
      summary: `Upgrade ${u.upgrade_id}: ${u.status}.` +
        (u.api_key ? ` LIVE KEY (shown once, store it now): ${u.api_key}` : ` ${u.note}`),
    })),
    portal: action(billingPortalOp, () => ({ body: {} }), (p) => ({
      structured: p,
      summary: `Hand this Billing Portal link to a human (valid minutes): ${p.url}`,
    })),
    subscription: action(subscriptionOp, (a: Args) => ({
      query: { project_id: required(a.project_id, "project_id", "subscription") },
    }), (subscription: StateOut) => ({
      structured: subscription,
      summary: `Project ${subscription.project_id}: subscription ${subscription.status}` +
        (subscription.plan ? ` (${subscription.plan})` : "") +
        (subscription.paid_until ? `, paid until ${subscription.paid_until}` : "") + ".",
    })),
  },
});
