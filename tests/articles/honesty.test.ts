/**
 * Articles never look better than they are: how an article was written is on the resource, an
 * outline is charged as one, links are URLs the crawl fetched, and a model run is bounded by its
 * lease. Against the real app, the fake model server and a fake site on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { parseMarkdown } from "../../domain/writing/markdown_text.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { balanceOf, liveWithCredits } from "../helpers/credits.ts";
import { ARTICLE_ENDED, AUDIT_ENDED, waitForStatus } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { startFakeOpenAI } from "../writing/fake_openai.ts";
import { scriptedModel } from "../writing/scripted_model.ts";

async function liveProject(app: TestApp, url: string, credits: number) {
  const { accountId, live } = await liveWithCredits(app, credits);
  const proj = await app.req("POST", "/v1/projects", { key: live, body: { url } });
  return { accountId, live, projectId: proj.body.project_id as string };
}

Deno.test("no model: the outline is free for a live key, says builtin_outline, scores low", () =>
  withApp(async (app) => {
    const { accountId, live, projectId } = await liveProject(app, "https://o.example", 0);
    const res = await app.req("POST", `/v1/projects/${projectId}/articles`, {
      key: live,
      body: { topic: "Tax return for freelancers" },
    });
    assert.equal(res.status, 202, "no credits needed for an outline");
    const ready = await waitForStatus(app, live, res.body.poll, ARTICLE_ENDED);
    assert.equal(ready.body.status, "ready", ready.text);
    assert.deepEqual(ready.body.generator, { kind: "builtin_outline" });
    assert.ok(ready.body.qa_score <= 40, String(ready.body.qa_score));
    assert.equal(await balanceOf(app, accountId), 0);
    // No ledger line for a free unit.
    const ledger = [];
    for await (const e of app.kv.list({ prefix: keys.ledgerOfAccount(accountId) })) {
      ledger.push(e);
    }
    assert.equal(ledger.length, 0);

    // The rule is in the catalogue's plans document and on the pricing page.
    const plans = await app.req("GET", "/v1/plans");
    assert.equal(plans.body.article_pricing.builtin_outline.unit_id, "article_outline");
    assert.equal(plans.body.article_pricing.builtin_outline.credits, 0);
    assert.equal(plans.body.article_pricing.model_article.credits, 15);
    assert.match(plans.body.article_pricing.rule, /builtin_outline/);
    const outline = plans.body.a_la_carte.items.find((i: { id: string }) =>
      i.id === "article_outline"
    );
    assert.equal(outline.usd_price, 0);
    assert.equal(plans.body.plans.length, 2, "the plan fields stay");
    const pricing = await fetch(`${app.url}/pricing`).then((r) => r.text());
    assert.match(pricing, /id="article-pricing"/);
    assert.match(pricing, /article_outline \(0 credits\)/);
  }));

Deno.test("model: GET shows generator kind model, its id and the token usage; 15 credits", async () => {
  const fake = startFakeOpenAI(scriptedModel({
    introLinks: "",
    revision: { title: "x", markdown: "# x\n" },
  }));
  try {
    await withApp(async (app) => {
      const { accountId, live, projectId } = await liveProject(app, "https://shoes.example", 20);
      const res = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key: live,
        body: { topic: "Running shoes for beginners", primary_keyword: "running shoes" },
      });
      assert.equal(res.status, 202);
      assert.equal(await balanceOf(app, accountId), 5, "a model article is article_generated");
      const ready = await waitForStatus(app, live, res.body.poll, ARTICLE_ENDED);
      assert.equal(ready.body.status, "ready", ready.text);
      assert.ok(ready.body.qa_score >= 70, String(ready.body.qa_score));
      assert.deepEqual(ready.body.generator, {
        kind: "model",
        model: "gpt-test-1",
        usage: { prompt_tokens: 80, completion_tokens: 160, total_tokens: 240, calls: 8 },
      });
      const stored = await app.kv.get<{ usage: { calls: number } }>(
        keys.article(accountId, res.body.article_id),
      );
      assert.equal(stored.value?.usage.calls, 8, "usage is stored with the article");
      // The OpenAPI document declares the field.
      const doc = await app.req("GET", "/v1/openapi.json");
      const schemas = doc.body.components.schemas;
      assert.ok(schemas.Article.properties.generator, "Article.generator in OpenAPI");
      assert.ok(schemas.ArticleGenerator.properties.usage);
    }, {
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseURL, OPENAI_MODEL: "gpt-test-1" },
    });
  } finally {
    await fake.close();
  }
});

Deno.test("a run is bounded below its lease: a hung model is aborted, failed and refunded", async () => {
  const fake = startFakeOpenAI(() => ({ delayMs: 5_000, then: { content: "{}" } }));
  try {
    await withApp(async (app) => {
      const { accountId, live, projectId } = await liveProject(app, "https://slow.example", 15);
      const t0 = performance.now();
      const res = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key: live,
        body: { topic: "A slow model" },
      });
      const failed = await waitForStatus(app, live, res.body.poll, ARTICLE_ENDED);
      const took = performance.now() - t0;
      assert.equal(failed.body.status, "failed");
      assert.equal(failed.body.error.code, "generation_timeout");
      // Budget = 80% of the 1.5 s lease: over before the lease runs out and the sweep could resend.
      assert.ok(took < 1_500, `${Math.round(took)} ms`);
      assert.equal(fake.requests.length, 1, "one generation, aborted; never a second one");
      assert.equal(await balanceOf(app, accountId), 15, "refunded");
    }, {
      env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseURL, JOB_LEASE_MS: "1500" },
    });
  } finally {
    await fake.close();
  }
});

Deno.test("a site on http://127.0.0.1:PORT: the article links the URLs the crawl fetched, http and port included", async () => {
  const site = serveSite({
    "/": html(page({ title: "Trail runners' shop", links: ["/shoes", "/fit"] })),
    "/shoes": html(page({ title: "Running shoes we stock", key: "shoes" })),
    "/fit": html(page({ title: "How we fit running shoes", key: "fit" })),
  });
  try {
    await withApp(async (app) => {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const projectId = proj.body.project_id;
      assert.match(site.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
      const audit = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      await waitForStatus(app, key, audit.body.poll, AUDIT_ENDED);
      const res = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key,
        body: { topic: "Running shoes for beginners", primary_keyword: "running shoes" },
      });
      const ready = await waitForStatus(app, key, res.body.poll, ARTICLE_ENDED);
      assert.equal(ready.body.status, "ready", ready.text);
      const links = parseMarkdown(ready.body.content_markdown).links.map((l) => l.url);
      assert.ok(links.length >= 2, links.join());
      for (const url of links) assert.ok(url.startsWith(`${site.origin}/`), url);
      assert.ok(links.includes(`${site.origin}/shoes`), links.join());
      assert.doesNotMatch(ready.body.content_markdown, /https:\/\/127\.0\.0\.1/);
    });
  } finally {
    await site.close();
  }
});
