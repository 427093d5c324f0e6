/**
 * THE price catalogue: plans, credit packs, unit prices and sandbox terms. `GET /v1/plans`,
 * `GET /v1/credits`, the checkout code, the credit debits of audits and articles and the pricing
 * page all read these constants, so a price changes in exactly one place.
 */
import type { Cadence, PlanId } from "./types.ts";
import { SANDBOX_LIMITS } from "../identity/mod.ts";
import type { Config } from "../platform/mod.ts";

/** When the catalogue last changed; bump it with any price or feature change. */
export const CATALOG_UPDATED_AT = "2026-11-01T00:00:00.000Z";

export const CURRENCY = "USD";
/** 1 credit is worth 1 USD of list price. */
export const CREDIT_USD_VALUE = 1;

/**
 * URLs one re-check fetches at most: the first ones of the check's stored evidence, by URL (a
 * limit of the product the catalogue prices; domain/rechecks/create.ts applies it).
 */
export const RECHECK_MAX_URLS = 100;

/** How often a scheduled audit may run, most frequent first. */
export const CADENCES = ["daily", "weekly", "monthly"] as const satisfies readonly Cadence[];
export type { Cadence };

/** True when `cadence` runs no more often than `max` (monthly ≤ weekly ≤ daily). */
export function cadenceWithin(cadence: Cadence, max: Cadence): boolean {
  return CADENCES.indexOf(cadence) >= CADENCES.indexOf(max);
}

export interface Plan {
  id: PlanId;
  name: string;
  monthlyPrice: number;
  featured: boolean;
  features: string[];
  /** The most frequent audit schedule the plan includes (`PUT /v1/projects/{id}/schedule`). */
  scheduleMaxCadence: Cadence;
}

/** How many times more pages a `pro` project's audit may crawl than `CRAWL_MAX_PAGES`. */
export const PRO_CRAWL_FACTOR = 5;

export const PLANS: readonly Plan[] = [
  {
    id: "basic",
    name: "Basic",
    monthlyPrice: 199,
    featured: false,
    features: [
      "One project (site), billed per project per month",
      "Technical audits included, no credit charges",
      "Draft SEO articles included, no credit charges",
      "Publishing of generated articles",
      "Signed webhooks for audit, article and billing events",
      "Scheduled audits up to weekly, with regression alerts (audit.regressed)",
    ],
    scheduleMaxCadence: "weekly",
  },
  {
    id: "pro",
    name: "Pro",
    monthlyPrice: 299,
    featured: true,
    features: [
      "Everything in Basic",
      `Audits crawl up to ${PRO_CRAWL_FACTOR} times as many pages of the site`,
      "Scheduled audits up to daily",
      "Rendered audits included (pages rendered in a real browser: lab LCP, CLS, TBT, mobile " +
      "layout, what JavaScript changes)",
    ],
    scheduleMaxCadence: "daily",
  },
];

export const PLAN_IDS = ["basic", "pro"] as const satisfies readonly PlanId[];

export type PackId = "pack_500" | "pack_2000" | "pack_10000";
export const PACK_IDS = [
  "pack_500",
  "pack_2000",
  "pack_10000",
] as const satisfies readonly PackId[];

export interface CreditPack {
  id: PackId;
  /** USD paid. */
  usd: number;
  /** Credits landing on the balance, bonus included (2000 USD buys 2000 + 200 bonus = 2200). */
  credits: number;
  bonusCredits: number;
}

export const CREDIT_PACKS: readonly CreditPack[] = [
  { id: "pack_500", usd: 500, credits: 500, bonusCredits: 0 },
  { id: "pack_2000", usd: 2000, credits: 2200, bonusCredits: 200 },
  { id: "pack_10000", usd: 10000, credits: 12500, bonusCredits: 2500 },
];

export type UnitId =
  | "technical_audit"
  | "article_generated"
  | "article_outline"
  | "article_published"
  | "article_language_version"
  | "deep_audit"
  | "rendered_audit"
  | "rendering_addon"
  | "recheck_urls"
  | "seo_strategy"
  | "keyword_research_content_plan";

export interface UnitItem {
  id: UnitId;
  unit: string;
  /** Price in credits, equal to its USD list price. */
  credits: number;
  description: string;
}

export const UNIT_ITEMS: readonly UnitItem[] = [
  {
    id: "technical_audit",
    unit: "audit",
    credits: 25,
    description: "One technical site audit (POST /v1/projects/{projectId}/audits)",
  },
  {
    id: "article_generated",
    unit: "article",
    credits: 15,
    description: "One generated draft article (POST /v1/projects/{projectId}/articles)",
  },
  {
    id: "article_outline",
    unit: "article",
    credits: 0,
    description: "An outline from the built-in writer, on a server with no language model " +
      "configured (generator.kind builtin_outline): free; it is a writer's brief, not an article",
  },
  {
    id: "article_published",
    unit: "article",
    credits: 5,
    description: "Publishing an article; not auto-charged: publishing needs a project subscription",
  },
  {
    id: "article_language_version",
    unit: "article",
    credits: 8,
    description: "An article's version in another language",
  },
  {
    id: "rendered_audit",
    unit: "audit",
    credits: 75,
    description:
      'One rendered technical audit (POST /v1/projects/{projectId}/audits with {"render": ' +
      "true}): the raw audit plus up to 50 pages rendered in a browser; instead of technical_audit",
  },
  {
    id: "rendering_addon",
    unit: "audit",
    credits: 50,
    description: "Rendering on a project with a basic subscription (its raw audit is included): " +
      "the difference to rendered_audit, paid from credits with a live key",
  },
  {
    id: "recheck_urls",
    unit: "10 URLs",
    credits: 1,
    description: "Re-checking one check of a completed audit on its affected URLs (POST " +
      "/v1/audits/{auditId}/issues/{check}/recheck): 1 credit per 10 URLs or part of 10, at " +
      `most ${RECHECK_MAX_URLS} URLs per re-check`,
  },
  {
    id: "deep_audit",
    unit: "audit",
    credits: 99,
    description: "An in-depth audit with content and competitor review",
  },
  {
    id: "seo_strategy",
    unit: "strategy",
    credits: 75,
    description: "An SEO strategy for a project",
  },
  {
    id: "keyword_research_content_plan",
    unit: "plan",
    credits: 50,
    description: "Keyword research with a content plan",
  },
];

/**
 * What an article request is charged as: a model-written article is `article_generated`; on a
 * server with no model (`OPENAI_API_KEY` unset) the built-in writer can only deliver an outline,
 * and charging the article price for a template would not be honest, so it is `article_outline`.
 * Decided when the request is accepted (the server's configuration says which writer runs); an
 * article that still comes back as an outline is refunded down to the outline price.
 */
export function articleUnit(modelConfigured: boolean): "article_generated" | "article_outline" {
  return modelConfigured ? "article_generated" : "article_outline";
}

/**
 * Scheduled audits of a project without a subscription: each run is charged like an API audit
 * (`technical_audit` from the credit balance), at most this often; a run the balance cannot pay
 * pauses the schedule. Sandbox keys cannot schedule.
 */
export const CREDIT_SCHEDULE = {
  maxCadence: "daily" as Cadence,
  unit: "technical_audit" as const,
};

/**
 * How a rendered audit (`{"render": true}`) is paid, by what would pay for the raw one: included
 * with a `pro` subscription; a `basic` subscription pays the difference (`rendering_addon`) from
 * the account's credits with a live key; without a subscription a live key pays `rendered_audit`
 * instead of `technical_audit`; sandbox keys cannot (rendering costs ~40x a raw fetch, the trial
 * stays raw). Decided when the request is accepted; refunded like any audit if it fails.
 */
export type RenderedAuditCharge =
  | { kind: "included" }
  | { kind: "credits"; unit: "rendered_audit" | "rendering_addon" }
  | { kind: "refused" };

export function renderedAuditCharge(
  plan: PlanId | null,
  keyMode: "live" | "sandbox",
): RenderedAuditCharge {
  if (plan === "pro") return { kind: "included" };
  if (keyMode === "sandbox") return { kind: "refused" };
  return { kind: "credits", unit: plan === "basic" ? "rendering_addon" : "rendered_audit" };
}

/** Credits per unit, e.g. `UNIT_PRICES.technical_audit === 25`. */
export const UNIT_PRICES: Readonly<Record<UnitId, number>> = Object.fromEntries(
  UNIT_ITEMS.map((u) => [u.id, u.credits]),
) as Record<UnitId, number>;

/** URLs one `recheck_urls` unit pays for: the price per URL is a tenth of a credit. */
export const RECHECK_URLS_PER_UNIT = 10;

/**
 * Credits a re-check of `urls` URLs costs a live key without a subscription: one `recheck_urls`
 * per 10 URLs or part of 10 (credits are whole numbers), so 100 URLs cost 10 credits.
 * Subscriptions include re-checks; sandbox keys cannot re-check (their one audit is the trial).
 */
export function recheckCredits(urls: number): number {
  return Math.ceil(urls / RECHECK_URLS_PER_UNIT) * UNIT_PRICES.recheck_urls;
}

/** The re-check's pricing in words (plans document, pricing page, docs). */
export const RECHECK_PRICING_RULE =
  "Re-checking a fix (POST /v1/audits/{auditId}/issues/{check}/recheck) fetches again only " +
  `that check's affected URLs, at most ${RECHECK_MAX_URLS}: recheck_urls, 1 credit per ` +
  `${RECHECK_URLS_PER_UNIT} URLs or part of ${RECHECK_URLS_PER_UNIT} (a tenth of a credit per ` +
  `URL; ${RECHECK_MAX_URLS} URLs cost ${RECHECK_MAX_URLS / RECHECK_URLS_PER_UNIT} credits), ` +
  "charged when accepted and refunded if it fails. Included with every subscription; sandbox " +
  "keys cannot re-check (402 payment_required: the trial's one audit is the whole trial).";

/** The rule of {@link articleUnit} in words, for the plans document, pricing page and docs. */
export const ARTICLE_PRICING_RULE =
  "Articles are charged by how they are written: one written by a language model is " +
  `article_generated (${UNIT_PRICES.article_generated} credits); on a server with no model ` +
  "configured the built-in writer delivers an outline (generator.kind builtin_outline), charged " +
  `as article_outline (${UNIT_PRICES.article_outline} credits). Subscribed projects pay nothing ` +
  "per article either way; sandbox keys count both against their " +
  `${SANDBOX_LIMITS.articles}-article trial.`;

export function findPlan(id: string): Plan | undefined {
  return PLANS.find((p) => p.id === id);
}

export function findPack(id: string): CreditPack | undefined {
  return CREDIT_PACKS.find((p) => p.id === id);
}

/** The configured Stripe price of a plan or pack, or null when the operator has not set it. */
export function stripePriceOf(config: Config, id: PlanId | PackId): string | null {
  return config.stripe.prices[id] ?? null;
}

/**
 * Which crawl an audit gets, by what pays for it: the sandbox trial, a standard audit (credits or
 * a `basic` subscription), or a `pro` subscription's deeper crawl.
 */
export type CrawlAllowance = "sandbox" | "standard" | "pro";

/** What one audit may make the crawler do to a site. */
export interface CrawlLimits {
  maxPages: number;
  /** Bytes of all responses together. */
  maxBytes: number;
  /** Wall time after which no new fetch starts. */
  maxDurationMs: number;
  /** Requests in flight at once. */
  concurrency: number;
}

const MIB = 1024 * 1024;
/** The largest crawl the engine takes (`CRAWL_MAX_PAGES` is capped at it too). */
const MAX_CRAWL_PAGES = 100_000;

/**
 * The crawl budget of an audit, a business rule like the prices: a free sandbox key must not be
 * able to make the service crawl a third-party site hard, so its audits get the operator's
 * `SANDBOX_CRAWL_*` budget (default 25 pages, 10 MiB, 2 minutes, 2 requests at a time); paid
 * audits crawl `CRAWL_MAX_PAGES` (1 MiB of bodies per page on average, 60 minutes); `pro` five
 * times the pages and bytes (at most 100,000 pages). The crawl runs as leased steps, so a budget
 * longer than one lease is never started twice.
 */
export function crawlLimitsFor(allowance: CrawlAllowance, config: Config): CrawlLimits {
  if (allowance === "sandbox") {
    return {
      maxPages: Math.min(config.sandboxCrawl.maxPages, config.crawlMaxPages),
      maxBytes: config.sandboxCrawl.maxBytes,
      maxDurationMs: config.sandboxCrawl.maxDurationMs,
      concurrency: Math.min(2, config.crawlConcurrency),
    };
  }
  const maxPages = allowance === "pro"
    ? Math.min(MAX_CRAWL_PAGES, config.crawlMaxPages * PRO_CRAWL_FACTOR)
    : config.crawlMaxPages;
  return {
    maxPages,
    maxBytes: maxPages * MIB,
    maxDurationMs: 60 * 60_000,
    concurrency: config.crawlConcurrency,
  };
}

/** Whether a plan or pack can be bought on this server: a secret key and its price are set. */
export function isPurchasable(config: Config, id: PlanId | PackId): boolean {
  return config.stripe.secretKey !== null && stripePriceOf(config, id) !== null;
}

/** How to buy credits, for `GET /v1/credits` and the 402 `insufficient_credits` body. */
export const PURCHASE_HINT =
  'POST /v1/credits/purchases with {"pack_id": "pack_500" | "pack_2000" | "pack_10000"} returns a ' +
  "checkout_url; a human pays there and the credits land on the balance automatically.";

/** The rule of {@link renderedAuditCharge} in words (plans document, pricing page, docs). */
export const RENDERED_AUDIT_RULE =
  'A rendered audit ({"render": true} on POST /v1/projects/{projectId}/audits) renders up to 50 ' +
  "pages in a real browser on top of the raw audit. Included with the pro plan; a basic " +
  `subscription pays the difference, rendering_addon (${UNIT_PRICES.rendering_addon} credits), ` +
  "from the account's credits with a live key; without a subscription a live key pays " +
  `rendered_audit (${UNIT_PRICES.rendered_audit} credits) instead of technical_audit ` +
  `(${UNIT_PRICES.technical_audit}); sandbox keys cannot. Servers without a browser (Deno ` +
  "Deploy) answer " +
  "503 rendering_unavailable and charge nothing.";

/** The all-inclusive alternative, for the 402 `insufficient_credits` body. */
export const SUBSCRIPTION_HINT =
  'POST /v1/subscriptions with {"project_id": "...", "plan_id": "basic" | "pro"} (199 or 299 USD ' +
  "per project per month) makes the project's audits and articles all-inclusive.";

/** The notes of `GET /v1/credits`. */
export const CREDIT_NOTES: readonly string[] = [
  "1 credit equals 1 USD of list price; credits never expire.",
  "Credits are spent only by projects without an active subscription: technical_audit 25 and " +
  "article_generated 15 credits, charged when the job is accepted and refunded if it fails.",
  "article_published is not auto-charged: credit-funded articles are draft-only, and publishing " +
  "requires a project subscription.",
  ARTICLE_PRICING_RULE,
  "Sandbox keys cannot buy credits (403 sandbox_not_billable); use a live key.",
];

/** Added to `GET /v1/credits` notes for sandbox keys, whose balance reads 0. */
export const SANDBOX_BALANCE_NOTE =
  "Sandbox keys do not see the account's credit balance (it reads 0 here); ask with a live key.";

/**
 * The Plans document of `GET /v1/plans`, built from the catalogue. `baseUrl` is the public base
 * (`PUBLIC_BASE_URL`) for the absolute links.
 */
export function plansDocument(baseUrl: string) {
  return {
    currency: CURRENCY,
    updated_at: CATALOG_UPDATED_AT,
    merchant_of_record:
      "Stripe processes every payment as merchant of record; card details never reach this service.",
    plans: PLANS.map((p) => ({
      id: p.id,
      name: p.name,
      audience: "human" as const,
      monthly_price: p.monthlyPrice,
      currency: CURRENCY,
      period: "month" as const,
      featured: p.featured,
      features: [...p.features],
      checkout_url: `${baseUrl}/pricing#plan-${p.id}`,
      scheduled_audits: { max_cadence: p.scheduleMaxCadence, included: true },
    })),
    agent_channel: {
      audience: "agent" as const,
      model: "per_project" as const,
      note:
        "Agents subscribe one project at a time: POST /v1/subscriptions returns a checkout_url for " +
        "a human to pay; the project activates on payment. Without a subscription, live keys pay " +
        "per unit from prepaid credits.",
      signup: `POST ${baseUrl}/v1/accounts`,
      subscriptions: `POST ${baseUrl}/v1/subscriptions`,
      subscription_status: `GET ${baseUrl}/v1/subscription?project_id=<project_id>`,
      base_monthly_fee: 0,
      docs: `${baseUrl}/docs/agents`,
    },
    a_la_carte: {
      note:
        "Live keys without a project subscription pay per unit from a prepaid credit balance; " +
        "1 credit equals 1 USD.",
      payment: `Prepaid credit packs: POST ${baseUrl}/v1/credits/purchases returns a checkout_url.`,
      credit_packs: CREDIT_PACKS.map((p) => ({
        id: p.id,
        usd: p.usd,
        credits: p.credits,
        bonus_credits: p.bonusCredits,
      })),
      currency: CURRENCY,
      items: UNIT_ITEMS.map((u) => ({
        id: u.id,
        unit: u.unit,
        usd_price: u.credits * CREDIT_USD_VALUE,
        description: u.description,
      })),
      scheduled_audits: {
        max_cadence: CREDIT_SCHEDULE.maxCadence,
        unit: CREDIT_SCHEDULE.unit,
        credits_per_audit: UNIT_PRICES[CREDIT_SCHEDULE.unit],
        note: "A project without a subscription may schedule audits with a live key; each run " +
          `is charged ${UNIT_PRICES[CREDIT_SCHEDULE.unit]} credits like an API audit, and the ` +
          "schedule pauses (event schedule.paused) when the balance cannot pay.",
      },
    },
    article_pricing: {
      model_article: {
        unit_id: "article_generated" as const,
        credits: UNIT_PRICES.article_generated,
      },
      builtin_outline: {
        unit_id: "article_outline" as const,
        credits: UNIT_PRICES.article_outline,
      },
      rule: ARTICLE_PRICING_RULE,
    },
    rendered_audit_pricing: {
      rendered_audit: { unit_id: "rendered_audit" as const, credits: UNIT_PRICES.rendered_audit },
      basic_plan_addon: {
        unit_id: "rendering_addon" as const,
        credits: UNIT_PRICES.rendering_addon,
      },
      included_in_plans: ["pro"] as PlanId[],
      sandbox: false,
      rule: RENDERED_AUDIT_RULE,
    },
    recheck_pricing: {
      unit_id: "recheck_urls" as const,
      credits_per_unit: UNIT_PRICES.recheck_urls,
      urls_per_unit: RECHECK_URLS_PER_UNIT,
      max_urls: RECHECK_MAX_URLS,
      included_in_plans: ["basic", "pro"] as PlanId[],
      sandbox: false,
      rule: RECHECK_PRICING_RULE,
    },
    sandbox: {
      note: "Free trial with hard caps, no card: a sandbox key at signup, watermarked draft-only " +
        "articles, no purchases.",
      audits: SANDBOX_LIMITS.audits,
      articles: SANDBOX_LIMITS.articles,
      expires_days: SANDBOX_LIMITS.expires_days,
      price: 0,
      signup: `POST ${baseUrl}/v1/accounts`,
      scheduled_audits: false,
    },
    links: {
      pricing_page: `${baseUrl}/pricing`,
      for_agents: `${baseUrl}/docs/agents`,
      llms_txt: `${baseUrl}/llms.txt`,
    },
  };
}

export type PlansDocument = ReturnType<typeof plansDocument>;

/** The `packs` of `GET /v1/credits`: `available` is false when the pack cannot be bought here. */
export function packsWithAvailability(config: Config) {
  return CREDIT_PACKS.map((p) => ({
    id: p.id,
    usd: p.usd,
    credits: p.credits,
    bonus_credits: p.bonusCredits,
    available: isPurchasable(config, p.id),
  }));
}
