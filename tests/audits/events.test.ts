import assert from "node:assert/strict";
import { ADMIN_TOKEN, subscribeProject, withApp } from "../helpers/app.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { startReceiver, verifySignature } from "../webhooks/helpers.ts";

Deno.test("audit.completed and article.published reach a webhook receiver, signed, with their data fields", async () => {
  const site = serveSite({ "/": html(page({ title: "Events test home page" })) });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      const hook = await app.req("POST", "/v1/webhooks", {
        key: live,
        body: { url: receiver.url },
      });
      assert.equal(hook.status, 201, hook.text);
      const proj = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: site.origin, name: "Events" },
      });
      const projectId = proj.body.project_id;
      await subscribeProject(app, accountId, projectId);

      await app.req("POST", `/v1/projects/${projectId}/audits`, { key: live });
      const [auditEvent] = await receiver.waitFor(1, 15_000);
      assert.ok(
        verifySignature(
          hook.body.secret,
          auditEvent.raw,
          auditEvent.headers.get("x-serpwright-signature"),
        ),
      );
      assert.equal(auditEvent.headers.get("x-serpwright-event"), "audit.completed");
      assert.equal(auditEvent.body.event, "audit.completed");
      assert.equal(auditEvent.headers.get("x-serpwright-delivery"), auditEvent.body.id);
      const d = auditEvent.body.data;
      assert.equal(d.project_id, projectId);
      assert.equal(d.project_name, "Events");
      assert.equal(d.status, "completed");
      assert.ok(Number.isInteger(d.jobs_completed) && d.jobs_completed >= 1);
      assert.ok(Number.isInteger(d.jobs_failed));
      assert.ok(!Number.isNaN(Date.parse(d.completed_at)));

      const art = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key: live,
        body: { topic: "Announcing our events" },
      });
      await waitForArticle(app, live, art.body.article_id, { until: ["ready"] });
      const pub = await app.req("POST", `/admin/articles/${art.body.article_id}/publish`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(pub.status, 200, pub.text);
      const events = await receiver.waitFor(2, 15_000);
      const published = events.find((e) => e.body.event === "article.published")!;
      assert.ok(published, "article.published delivered");
      const p = published.body.data;
      assert.equal(p.article_id, art.body.article_id);
      assert.equal(p.project_id, projectId);
      assert.equal(p.title, "Announcing our events");
      assert.equal(p.slug, "announcing-our-events");
      assert.equal(p.language, "en");
      assert.equal(p.url, `${site.origin}/announcing-our-events`);
      assert.ok(!Number.isNaN(Date.parse(p.published_at)));
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});
