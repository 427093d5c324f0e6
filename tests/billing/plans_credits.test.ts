import assert from "node:assert/strict";
import { PLANS, UNIT_PRICES } from "../../domain/billing/catalog.ts";
import { errorCode, withApp } from "../helpers/app.ts";
import { stripeEnv } from "./fake_stripe.ts";
import { liveAccount, withBilling } from "./helpers.ts";

Deno.test("GET /v1/plans is public, cached 5 minutes, and carries every field of the Plans document", () =>
  withApp(async (app) => {
    const res = await app.req("GET", "/v1/plans");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "public, max-age=300");
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.ok(res.headers.get("x-ratelimit-limit"), "rate headers on /v1");
    const doc = res.body;
    // The interface's fields, plus the additive `article_pricing` (how articles are charged).
    assert.deepEqual(Object.keys(doc).sort(), [
      "a_la_carte",
      "agent_channel",
      "article_pricing",
      "currency",
      "links",
      "merchant_of_record",
      "plans",
      "recheck_pricing",
      "rendered_audit_pricing",
      "sandbox",
      "updated_at",
    ]);
    assert.equal(doc.rendered_audit_pricing.rendered_audit.credits, 75);
    assert.equal(doc.rendered_audit_pricing.basic_plan_addon.credits, 50);
    assert.deepEqual(doc.rendered_audit_pricing.included_in_plans, ["pro"]);
    // Re-checking a fix (additive): a tenth of a credit per URL, in whole credits.
    assert.deepEqual(
      { ...doc.recheck_pricing, rule: typeof doc.recheck_pricing.rule },
      {
        unit_id: "recheck_urls",
        credits_per_unit: 1,
        urls_per_unit: 10,
        max_urls: 100,
        included_in_plans: ["basic", "pro"],
        sandbox: false,
        rule: "string",
      },
    );
    assert.equal(doc.currency, "USD");
    assert.ok(!Number.isNaN(Date.parse(doc.updated_at)));
    assert.equal(typeof doc.merchant_of_record, "string");

    assert.deepEqual(doc.plans.map((p: { id: string }) => p.id), ["basic", "pro"]);
    const [basic, pro] = doc.plans;
    assert.equal(basic.monthly_price, 199);
    assert.equal(pro.monthly_price, 299);
    for (const p of doc.plans) {
      assert.deepEqual(Object.keys(p).sort(), [
        "audience",
        "checkout_url",
        "currency",
        "featured",
        "features",
        "id",
        "monthly_price",
        "name",
        "period",
        "scheduled_audits",
      ]);
      assert.equal(p.audience, "human");
      assert.equal(p.currency, "USD");
      assert.equal(p.period, "month");
      assert.equal(typeof p.featured, "boolean");
      assert.ok(p.features.length > 0);
      assert.match(p.checkout_url, /^http:\/\/localhost:8000\/pricing/);
    }

    const agent = doc.agent_channel;
    assert.equal(agent.audience, "agent");
    assert.equal(agent.model, "per_project");
    assert.equal(agent.base_monthly_fee, 0);
    for (const k of ["note", "signup", "subscriptions", "subscription_status", "docs"]) {
      assert.equal(typeof agent[k], "string", k);
    }
    assert.match(agent.subscription_status, /\/v1\/subscription\?project_id=/);

    const alc = doc.a_la_carte;
    assert.equal(alc.currency, "USD");
    assert.equal(typeof alc.note, "string");
    assert.equal(typeof alc.payment, "string");
    assert.deepEqual(alc.credit_packs, [
      { id: "pack_500", usd: 500, credits: 500, bonus_credits: 0 },
      { id: "pack_2000", usd: 2000, credits: 2200, bonus_credits: 200 },
      { id: "pack_10000", usd: 10000, credits: 12500, bonus_credits: 2500 },
    ]);
    const items = Object.fromEntries(
      alc.items.map((i: { id: string; usd_price: number }) => [i.id, i.usd_price]),
    );
    assert.deepEqual(items, {
      technical_audit: 25,
      article_generated: 15,
      article_outline: 0,
      article_published: 5,
      article_language_version: 8,
      deep_audit: 99,
      seo_strategy: 75,
      keyword_research_content_plan: 50,
      rendered_audit: 75,
      rendering_addon: 50,
      recheck_urls: 1,
    });
    for (const i of alc.items) {
      assert.equal(typeof i.unit, "string");
      assert.equal(typeof i.description, "string");
    }

    const sb = doc.sandbox;
    assert.equal(sb.audits, 1);
    assert.equal(sb.articles, 2);
    assert.equal(sb.expires_days, 14);
    assert.equal(sb.price, 0);
    assert.equal(typeof sb.note, "string");
    assert.equal(typeof sb.signup, "string");
    // Scheduled audits (additive fields): the catalogue's cadence limits.
    assert.deepEqual(doc.plans.map((p: { scheduled_audits: unknown }) => p.scheduled_audits), [
      { max_cadence: "weekly", included: true },
      { max_cadence: "daily", included: true },
    ]);
    assert.equal(alc.scheduled_audits.max_cadence, "daily");
    assert.equal(alc.scheduled_audits.credits_per_audit, 25);
    assert.equal(sb.scheduled_audits, false);

    assert.deepEqual(doc.links, {
      pricing_page: "http://localhost:8000/pricing",
      for_agents: "http://localhost:8000/docs/agents",
      llms_txt: "http://localhost:8000/llms.txt",
    });
    // The document is built from the one catalogue.
    assert.deepEqual(doc.plans.map((p: { monthly_price: number }) => p.monthly_price), [
      ...PLANS.map((p) => p.monthlyPrice),
    ]);
  }));

Deno.test("GET /v1/credits: balance, prices, packs all unavailable when Stripe is not configured", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const res = await app.req("GET", "/v1/credits", { key });
    assert.equal(res.status, 200);
    assert.equal(res.body.balance_credits, 0);
    assert.equal(res.body.currency, "USD");
    assert.equal(res.body.credit_usd_value, 1);
    assert.deepEqual(res.body.unit_prices, { ...UNIT_PRICES });
    assert.equal(res.body.unit_prices.technical_audit, 25);
    assert.equal(res.body.unit_prices.article_generated, 15);
    assert.deepEqual(res.body.packs.map((p: { available: boolean }) => p.available), [
      false,
      false,
      false,
    ]);
    assert.match(res.body.purchase, /POST \/v1\/credits\/purchases/);
    assert.ok(
      res.body.notes.some((n: string) =>
        /article_published/.test(n) && /not auto-charged/.test(n) && /subscription/.test(n)
      ),
      "the note on article_published",
    );

    const anon = await app.req("GET", "/v1/credits");
    assert.equal(anon.status, 401);
    assert.equal(errorCode(anon), "unauthorized");
  }));

Deno.test("GET /v1/credits: a pack is available exactly when the key and its price are set", () =>
  withBilling(async (app) => {
    const { key } = await liveAccount(app);
    const res = await app.req("GET", "/v1/credits", { key });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.packs, [
      { id: "pack_500", usd: 500, credits: 500, bonus_credits: 0, available: true },
      { id: "pack_2000", usd: 2000, credits: 2200, bonus_credits: 200, available: false },
      { id: "pack_10000", usd: 10000, credits: 12500, bonus_credits: 2500, available: true },
    ]);
  }, (fake) => stripeEnv(fake, { STRIPE_PRICE_PACK_2000: "" })));
