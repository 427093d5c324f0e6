/**
 * Rendered audits over HTTP against a loopback site whose defects only rendering shows: the
 * render steps run after the crawl, their findings are stored and listed like the others
 * (/issues, /issues/{check}, /pages), scored in the five categories, and priced from the
 * catalogue; agent-readiness findings (llms.txt, AI crawler rules, structured-data coverage) on
 * every audit. Where the server cannot render, 503 rendering_unavailable and nothing charged.
 */
import assert from "node:assert/strict";
import { errorCode, subscribeProject, withApp } from "../helpers/app.ts";
import { creditsShown, liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, robotsRoute, type Route, serveSite } from "../helpers/sites.ts";
import { PAGES } from "./fixture_site.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };

/** Rendering takes a while on a busy machine. */
const RENDERED = { timeoutMs: 120_000 };

/** The fixture's pages run inline scripts and styles. */
const page = (body: string) =>
  html(body, {
    "content-security-policy": "default-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
  });

/** Home links the defect pages; robots blocks GPTBot; a malformed llms.txt. */
function site(): Record<string, Route> {
  const home = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><title>Rendered ` +
    `fixture home page</title><meta name="description" content="The home of the fixture.">` +
    `<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebSite",` +
    `"name":"Fixture"}</script></head><body><h1>Home</h1><p>Welcome.</p>` +
    `<a href="/clean">Clean</a> <a href="/noindex-removed">Noindex</a> ` +
    `<a href="/content-by-js">App</a> <a href="/links-by-js">Links</a></body></html>`;
  return {
    "/": page(home),
    "/clean": page(PAGES["/clean"]),
    "/other": page(PAGES["/other"]),
    "/noindex-removed": page(PAGES["/noindex-removed"]),
    "/content-by-js": page(PAGES["/content-by-js"]),
    "/links-by-js": page(PAGES["/links-by-js"]),
    "/js-one": page(PAGES["/other"]),
    "/js-two": page(PAGES["/other"]),
    "/robots.txt": robotsRoute("User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nAllow: /\n"),
    "/llms.txt": robotsRoute("Fixture site\n\n## Docs\n- plain text, not a link\n"),
  };
}

Deno.test({
  name: "rendered audit: render-only defects stored, listed and scored; priced from the catalogue",
  ...OPTS,
  fn: () =>
    withApp(async (app) => {
      const s = serveSite(site());
      try {
        // Sandbox keys cannot render (402), nothing queued.
        const { key: sandbox } = await app.signup();
        const sp = await app.req("POST", "/v1/projects", { key: sandbox, body: { url: s.origin } });
        const refused = await app.req("POST", `/v1/projects/${sp.body.project_id}/audits`, {
          key: sandbox,
          body: { render: true },
        });
        assert.equal(refused.status, 402);
        assert.equal(errorCode(refused), "payment_required");

        // Credits: rendered_audit (75) instead of technical_audit (25).
        const { live } = await liveWithCredits(app, 100);
        const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: s.origin } });
        const pid = proj.body.project_id;
        const started = await app.req("POST", `/v1/projects/${pid}/audits`, {
          key: live,
          body: { render: true },
        });
        assert.equal(started.status, 202, started.text);
        assert.equal(await creditsShown(app, live), 25);
        // Already running: returned as is, nothing charged again.
        const again = await app.req("POST", `/v1/projects/${pid}/audits`, {
          key: live,
          body: { render: true },
        });
        assert.equal(again.body.audit_id, started.body.audit_id);
        assert.equal(await creditsShown(app, live), 25);

        const audit = (await waitForAudit(app, live, started.body.audit_id, RENDERED)).body;
        assert.equal(audit.status, "completed", JSON.stringify(audit));
        assert.deepEqual(Object.keys(audit.summary.categories).sort(), [
          "agents",
          "indexability",
          "mobile",
          "performance",
          "security",
          "structure",
        ]);
        assert.equal(audit.render.requested, true);
        assert.ok(audit.render.pages_rendered >= 5, JSON.stringify(audit.render));
        assert.equal(audit.render.lab_pages, 1);
        assert.equal(audit.render.pages_failed, 0);

        const issues = await app.req("GET", `/v1/audits/${audit.audit_id}/issues?limit=100`, {
          key: live,
        });
        assert.equal(issues.status, 200, issues.text);
        // deno-lint-ignore no-explicit-any
        const byId = new Map(issues.body.data.map((i: any) => [i.check, i]));
        const noindex = byId.get("noindex_only_in_raw_html") as Record<string, unknown>;
        assert.ok(noindex, [...byId.keys()].join(","));
        assert.equal(noindex.severity, "critical");
        assert.equal(noindex.category, "indexability");
        assert.equal(noindex.affected_count, 1);
        assert.ok(byId.has("content_requires_js"));
        assert.ok(byId.has("links_only_after_js"));
        assert.ok(!byId.has("text_too_small"), "clean pages fire no mobile check");
        assert.ok(!byId.has("console_errors"), "no script fails");
        // A critical finding costs score in indexability.
        assert.ok(audit.summary.categories.indexability < 100);

        const items = await app.req(
          "GET",
          `/v1/audits/${audit.audit_id}/issues/noindex_only_in_raw_html`,
          { key: live },
        );
        assert.equal(items.status, 200, items.text);
        assert.deepEqual(items.body.data.map((d: { url: string }) => d.url), [
          `${s.origin}/noindex-removed`,
        ]);
        assert.equal(items.body.data[0].raw_robots, "noindex");

        const pages = await app.req("GET", `/v1/audits/${audit.audit_id}/pages?limit=100`, {
          key: live,
        });
        // deno-lint-ignore no-explicit-any
        const cjs = pages.body.data.find((p: any) => p.url === `${s.origin}/content-by-js`);
        assert.ok(JSON.stringify(cjs).includes("content_requires_js"), JSON.stringify(cjs));

        // Agent-readiness: malformed llms.txt, AI crawler rules with evidence, coverage.
        assert.equal((byId.get("llms_txt_malformed") as { severity: string }).severity, "warning");
        const ai = await app.req("GET", `/v1/audits/${audit.audit_id}/issues/ai_crawler_rules`, {
          key: live,
        });
        assert.ok(ai.body.data[0].blocked.includes("GPTBot"));
        assert.ok(ai.body.data[0].allowed.includes("ClaudeBot"));
        assert.deepEqual(ai.body.data[0].named, ["GPTBot"]);
        const cov = await app.req(
          "GET",
          `/v1/audits/${audit.audit_id}/issues/structured_data_coverage`,
          { key: live },
        );
        assert.ok(cov.body.data[0].coverage > 0 && cov.body.data[0].coverage < 1);

        // The HTML report shows the lab page's figures (kept per lab page, not only for the
        // pages a lab check fired on).
        const report = await app.req("GET", `/v1/audits/${audit.audit_id}/report`, { key: live });
        assert.equal(report.status, 200);
        const lab = report.text.slice(report.text.indexOf('id="lab-h"'));
        assert.match(lab, /Lab metrics per sampled page/);
        assert.equal((lab.match(/<td class="url">/g) ?? []).length, 1, "one lab page");
        assert.match(lab, /LCP ms/);

        // pro: included; basic: the difference from credits.
        const { accountId: a2, live: live2 } = await liveWithCredits(app, 60);
        const p2 = await app.req("POST", "/v1/projects", { key: live2, body: { url: s.origin } });
        await subscribeProject(app, a2, p2.body.project_id, "basic");
        const basic = await app.req("POST", `/v1/projects/${p2.body.project_id}/audits`, {
          key: live2,
          body: { render: true },
        });
        assert.equal(basic.status, 202, basic.text);
        assert.equal(await creditsShown(app, live2), 10);
        (await waitForAudit(app, live2, basic.body.audit_id, RENDERED)).body;
      } finally {
        await s.close();
      }
    }, { env: { RENDER_LAB_PAGES: "1", RENDER_MAX_PAGES: "10", CRAWL_STEP_PAGES: "3" } }),
});

Deno.test("no browser: rendered audits refused with 503 and nothing charged; raw audits unchanged", () =>
  withApp(async (app) => {
    const s = serveSite(site());
    try {
      const { live } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: s.origin } });
      const path = `/v1/projects/${proj.body.project_id}/audits`;
      const r = await app.req("POST", path, { key: live, body: { render: true } });
      assert.equal(r.status, 503);
      assert.equal(errorCode(r), "rendering_unavailable");
      assert.equal(await creditsShown(app, live), 100);
      const bad = await app.req("POST", path, { key: live, body: { render: "yes" } });
      assert.equal(bad.status, 400);
      const raw = await app.req("POST", path, { key: live });
      assert.equal(raw.status, 202, raw.text);
      assert.equal(await creditsShown(app, live), 75);
      const audit = (await waitForAudit(app, live, raw.body.audit_id, RENDERED)).body;
      assert.equal(audit.status, "completed");
      assert.equal(audit.render, undefined);
      const issues = await app.req("GET", `/v1/audits/${audit.audit_id}/issues?limit=100`, {
        key: live,
      });
      // deno-lint-ignore no-explicit-any
      const ids = issues.body.data.map((i: any) => i.check);
      assert.ok(ids.includes("llms_txt_malformed"));
      assert.ok(!ids.includes("content_requires_js"), "no rendered checks on a raw audit");
    } finally {
      await s.close();
    }
  }, { env: { RENDERING: "off" } }));
