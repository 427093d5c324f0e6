/**
 * Issue 22 §6, through the API: the built-in writer's outline never scores like an article,
 * whatever its length, and its QA assessments say why. A 5-page site on 127.0.0.1 is audited
 * first, so the outline has pages to list (which is what made it long enough to score 85 when
 * only the word count capped outlines).
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { waitForStatus } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

/** Five pages about the topic, each with its own title and description. */
function agentSite() {
  const paths = ["/", "/audits", "/crawling", "/reports", "/pricing"];
  const routes: Record<string, ReturnType<typeof html>> = {};
  paths.forEach((p, i) => {
    const name = p === "/" ? "home" : p.slice(1);
    routes[p] = html(page({
      key: name,
      title: `AI agents for technical SEO audits: ${name}`,
      description: `How AI agents run technical SEO audits of a site: ${name}, explained ` +
        `for site owners who want clear fixes.`,
      h1: `Technical SEO audits by AI agents (${i + 1})`,
      links: paths.filter((q) => q !== p),
    }));
  });
  return routes;
}

Deno.test("an outline of a long topic on a 5-page site scores at most 40 and its QA says it is an outline", () =>
  withApp(async (app) => {
    const site = serveSite(agentSite());
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const projectId = proj.body.project_id;
      const audit = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      assert.equal(audit.status, 202, audit.text);
      const done = await waitForStatus(app, key, `/v1/audits/${audit.body.audit_id}`, [
        "completed",
        "failed",
      ]);
      assert.equal(done.body.status, "completed", done.text);
      const pages = await app.req("GET", `/v1/audits/${audit.body.audit_id}/pages`, { key });
      assert.equal(pages.body.data.length, 5, pages.text);

      const res = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key,
        body: { topic: "How AI agents run technical SEO audits" },
      });
      assert.equal(res.status, 202, res.text);
      const ready = await waitForStatus(app, key, res.body.poll, ["ready", "failed"]);
      assert.equal(ready.body.status, "ready", ready.text);
      const a = ready.body;
      assert.deepEqual(a.generator, { kind: "builtin_outline" });
      // Long enough that the word count alone would not have capped it.
      assert.ok(a.word_count >= 300, `${a.word_count} words`);
      assert.ok(a.qa_score <= 40, `qa_score ${a.qa_score}`);
      assert.equal(a.qa.capped_at, 40);
      const outline = a.qa.assessments.find((x: { id: string }) => x.id === "not_an_outline");
      assert.equal(outline.pass, false);
      assert.equal(outline.score, 0);
      assert.match(outline.message, /outline from the built-in writer/);
      assert.match(outline.message, /not an article/);
      assert.match(outline.message, /never scores above 40/);
      // The links are the pages the audit crawled.
      for (const p of ["/audits", "/crawling"]) {
        assert.ok(a.content_markdown.includes(`](${site.origin}${p})`), p);
      }
    } finally {
      await site.close();
    }
  }));
