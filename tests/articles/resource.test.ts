import assert from "node:assert/strict";
import { ADMIN_TOKEN, errorCode, subscribeProject, withApp } from "../helpers/app.ts";
import { balanceOf, grantCredits, liveWithCredits } from "../helpers/credits.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { startFakeOpenAI } from "../writing/fake_openai.ts";

const CONTENT_FIELDS = [
  "title",
  "meta_description",
  "content_markdown",
  "word_count",
  "qa_score",
  "language",
];

Deno.test("sandbox article: 202, built-in writer, ready outline with watermark; 2 per key", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const proj = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://shoes.example" },
    });
    const path = `/v1/projects/${proj.body.project_id}/articles`;
    const topic = "How to choose running shoes for flat feet";
    const res = await app.req("POST", path, { key, body: { topic } });
    assert.equal(res.status, 202);
    assert.match(res.body.article_id, /^art_/);
    assert.equal(res.body.status, "queued");
    assert.equal(res.body.poll, `/v1/articles/${res.body.article_id}`);
    const ready = await waitForArticle(app, key, res.body.article_id);
    assert.equal(ready.body.status, "ready", ready.text);
    assert.equal(ready.body.title, topic, "topic placed verbatim as the title");
    assert.ok(ready.body.content_markdown.includes("running shoes for flat feet"));
    assert.ok(ready.body.word_count > 100);
    // No model on this server: an outline, said so, and scored as one.
    assert.deepEqual(ready.body.generator, { kind: "builtin_outline" });
    assert.ok(ready.body.qa_score <= 40, String(ready.body.qa_score));
    assert.equal(ready.body.language, "en");
    assert.equal(ready.body.watermark.sandbox, true);
    assert.equal(typeof ready.body.watermark.note, "string");

    const second = await app.req("POST", path, { key, body: { primary_keyword: "Trail Shoes" } });
    assert.equal(second.status, 202);
    const ready2 = await waitForArticle(app, key, second.body.article_id);
    assert.equal(ready2.body.title, "Trail Shoes");
    const third = await app.req("POST", path, { key, body: { topic: "A third one" } });
    assert.equal(third.status, 403);
    assert.equal(errorCode(third), "sandbox_limit_reached");
    const me = await app.req("GET", "/v1/account", { key });
    assert.deepEqual(me.body.sandbox_usage, { audits: 0, articles: 2 });
    const detail = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key });
    assert.equal(detail.body.counts.articles, 2);
  }));

Deno.test("POST articles validates topic and primary_keyword and creates nothing on error", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const proj = await app.req("POST", "/v1/projects", { key, body: { url: "https://v.example" } });
    const path = `/v1/projects/${proj.body.project_id}/articles`;
    const cases: [unknown, RegExp][] = [
      [{}, /topic/],
      [{ topic: "ab" }, /^topic:/],
      [{ topic: "x".repeat(181) }, /^topic:/],
      [{ primary_keyword: "a" }, /^primary_keyword:/],
      [{ primary_keyword: "k".repeat(121) }, /^primary_keyword:/],
      [{ topic: 5 }, /^topic:/],
      [{ topic: "Fine topic", extra: true }, /extra/],
    ];
    for (const [body, message] of cases) {
      const res = await app.req("POST", path, { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, message);
    }
    const detail = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key });
    assert.equal(detail.body.counts.articles, 0);
    assert.deepEqual((await app.req("GET", "/v1/account", { key })).body.sandbox_usage, {
      audits: 0,
      articles: 0,
    });
    const nf = await app.req("POST", "/v1/projects/proj_nope/articles", {
      key,
      body: { topic: "Fine topic" },
    });
    assert.equal(nf.status, 404);
  }));

Deno.test("one article generates per project: parallel requests get one 202 and 409s; status only while generating; failure refunds", async () => {
  // A model that thinks for a while, then refuses (401 is not retried): the article fails.
  const fake = startFakeOpenAI(() => ({
    delayMs: 600,
    then: { status: 401, body: { error: { message: "bad key" } } },
  }));
  try {
    await withApp(async (app) => {
      const { accountId, live } = await liveWithCredits(app, 40);
      const proj = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: "https://p.example" },
      });
      const path = `/v1/projects/${proj.body.project_id}/articles`;
      const results = await Promise.all(
        Array.from(
          { length: 6 },
          (_, i) => app.req("POST", path, { key: live, body: { topic: `Topic number ${i}` } }),
        ),
      );
      const accepted = results.filter((r) => r.status === 202);
      assert.equal(accepted.length, 1);
      for (const r of results.filter((r) => r.status !== 202)) {
        assert.equal(r.status, 409);
        assert.equal(errorCode(r), "article_in_progress");
      }
      assert.equal(await balanceOf(app, accountId), 25, "15 credits taken once");
      const id = accepted[0].body.article_id;
      const during = await waitForArticle(app, live, id, { until: ["generating", "qa"] });
      for (const f of CONTENT_FIELDS) {
        assert.equal(f in during.body, false, `${f} hidden while generating`);
      }
      const failed = await waitForArticle(app, live, id);
      assert.equal(failed.body.status, "failed");
      assert.equal(typeof failed.body.error.code, "string");
      assert.equal(await balanceOf(app, accountId), 40, "refunded");
      // The slot is free again.
      const next = await app.req("POST", path, { key: live, body: { topic: "After the failure" } });
      assert.equal(next.status, 202);
    }, { env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: fake.baseURL } });
  } finally {
    await fake.close();
  }
});

Deno.test("live key without subscription: 402 insufficient_credits with details below 15 credits (model articles)", () =>
  withApp(async (app) => {
    const { key: sandboxKey, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const proj = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://q.example" },
    });
    const path = `/v1/projects/${proj.body.project_id}/articles`;
    await grantCredits(app, accountId, 14);
    const res = await app.req("POST", path, { key: live, body: { topic: "Needs credits" } });
    assert.equal(res.status, 402);
    assert.equal(errorCode(res), "insufficient_credits");
    assert.equal(res.body.required_credits, 15);
    assert.equal(res.body.balance_credits, 14);
    assert.ok(res.body.purchase && res.body.subscription_alternative);
    // The live project is invisible to the sandbox key: 404 before any funding rule.
    const sb = await app.req("POST", path, { key: sandboxKey, body: { topic: "Needs credits" } });
    assert.equal(sb.status, 404);
    assert.equal(errorCode(sb), "not_found");
  }, { env: { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } }));

Deno.test("operator publish: subscribed ready article is published; others refused", () =>
  withApp(async (app) => {
    const { key: sandboxKey, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const subscribed = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://pub.example" },
    });
    const paid = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://credit.example" },
    });
    await subscribeProject(app, accountId, subscribed.body.project_id, "pro");
    await grantCredits(app, accountId, 15);

    const a = await app.req("POST", `/v1/projects/${subscribed.body.project_id}/articles`, {
      key: live,
      body: { topic: "Publishing the first post" },
    });
    assert.equal(a.status, 202);
    assert.equal(await balanceOf(app, accountId), 15, "included in the subscription");
    const b = await app.req("POST", `/v1/projects/${paid.body.project_id}/articles`, {
      key: live,
      body: { topic: "Credit funded draft" },
    });
    // No model on this server: the built-in outline is article_outline, 0 credits.
    assert.equal(b.status, 202);
    assert.equal(await balanceOf(app, accountId), 15);
    await waitForArticle(app, live, a.body.article_id, { until: ["ready"] });
    await waitForArticle(app, live, b.body.article_id, { until: ["ready"] });

    const pub = await app.req("POST", `/admin/articles/${a.body.article_id}/publish`, {
      headers: admin,
      body: { url: "https://pub.example/blog/first" },
    });
    assert.equal(pub.status, 200, pub.text);
    assert.equal(pub.body.status, "published");
    assert.equal(pub.body.url, "https://pub.example/blog/first");
    assert.equal(pub.body.slug, "publishing-the-first-post");
    assert.ok(pub.body.published_at);
    const seen = await app.req("GET", `/v1/articles/${a.body.article_id}`, { key: live });
    assert.equal(seen.body.status, "published");
    assert.ok(seen.body.content_markdown, "content stays");

    const again = await app.req("POST", `/admin/articles/${a.body.article_id}/publish`, {
      headers: admin,
    });
    assert.equal(again.status, 409);
    assert.equal(errorCode(again), "invalid_state");
    const credit = await app.req("POST", `/admin/articles/${b.body.article_id}/publish`, {
      headers: admin,
    });
    assert.equal(credit.status, 403);
    assert.equal(errorCode(credit), "publish_not_allowed");
    const noAuth = await app.req("POST", `/admin/articles/${b.body.article_id}/publish`);
    assert.equal(noAuth.status, 401);

    // A sandbox article on the sandbox project is draft-only too.
    const sp = await app.req("POST", "/v1/projects", {
      key: sandboxKey,
      body: { url: "https://sb.example" },
    });
    const sa = await app.req("POST", `/v1/projects/${sp.body.project_id}/articles`, {
      key: sandboxKey,
      body: { topic: "Sandbox draft only" },
    });
    await waitForArticle(app, sandboxKey, sa.body.article_id, { until: ["ready"] });
    const sres = await app.req("POST", `/admin/articles/${sa.body.article_id}/publish`, {
      headers: admin,
    });
    assert.equal(sres.status, 403);
  }));

Deno.test("GET /v1/articles/{id} is 404 for foreign and unknown ids", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const b = await app.signup();
    const proj = await app.req("POST", "/v1/projects", {
      key: a.key,
      body: { url: "https://f.example" },
    });
    const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/articles`, {
      key: a.key,
      body: { topic: "Foreign ids test" },
    });
    assert.equal(
      (await app.req("GET", `/v1/articles/${res.body.article_id}`, { key: b.key })).status,
      404,
    );
    assert.equal((await app.req("GET", "/v1/articles/art_missing", { key: a.key })).status, 404);
  }));
