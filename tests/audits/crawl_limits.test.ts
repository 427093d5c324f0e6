/**
 * Limits told truthfully (issue 31 item 5): a sandbox audit of a site larger than the trial's page
 * budget says so in every place a caller or a reader looks: `limits_hit` (with the URLs it left
 * unfetched, the budget's owner and the upgrade path), the audit's `crawl` object, the HTML
 * report's header and the Markdown summary. Before the fix the trial stopped at 25 URLs, left
 * the rest unfetched and reported "No crawl cap was hit".
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

/** A home linking to `linked` pages, and a sitemap that also lists an orphan page. */
function largeSite(linked: number) {
  const paths = Array.from({ length: linked }, (_, i) => `/p${i}`);
  return serveSite((path) => {
    if (path === "/") return html(page({ title: "Home of the large site", links: paths }));
    if (path === "/sitemap.xml") {
      const urls = ["/", ...paths, "/orphan"].map((p) => `<url><loc>${site.url(p)}</loc></url>`);
      return {
        headers: { "content-type": "application/xml" },
        body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${
          urls.join("")
        }</urlset>`,
      };
    }
    if (path === "/robots.txt") {
      return {
        headers: { "content-type": "text/plain" },
        body: `User-agent: *\nAllow: /\nSitemap: ${site.url("/sitemap.xml")}\n`,
      };
    }
    const m = /^\/(p\d+|orphan)$/.exec(path);
    if (m) return html(page({ title: `Page ${m[1]} of the large site`, key: m[1] }));
    return undefined;
  });
}
let site: ReturnType<typeof serveSite>;

Deno.test("a sandbox audit cut by the trial's page budget says so everywhere, with the upgrade path", () =>
  withApp(async (app) => {
    site = largeSite(33);
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
      assert.equal(res.status, 202, res.text);
      const done = await waitForAudit(app, key, res.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);

      // 25 fetches (the trial's budget); home + 33 linked + the orphan = 35 URLs known.
      const fetched = site.hits.filter((p) => p === "/" || /^\/(p\d+|orphan)$/.test(p)).length;
      assert.equal(fetched, 25);
      const pages = done.body.limits_hit.find((l: { limit: string }) => l.limit === "pages");
      assert.ok(pages, `limits_hit names the page budget: ${JSON.stringify(done.body.limits_hit)}`);
      assert.equal(pages.value, 25);
      assert.equal(pages.left_out, 10, "9 linked pages and the orphan were not fetched");
      assert.equal(pages.budget, "trial");
      assert.equal(pages.upgrade_path, "/v1/upgrades");
      assert.deepEqual(done.body.crawl, {
        complete: false,
        pages_fetched: 25,
        urls_not_fetched: 10,
        pages_reused: 0,
      });

      const report = await fetch(`${app.url}/v1/audits/${res.body.audit_id}/report`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await report.text();
      assert.equal(report.status, 200);
      assert.ok(!text.includes("No crawl cap was hit"), "the report does not deny the cap");
      assert.match(text, /trial/i);
      assert.match(text, /10 URLs not fetched/);
      assert.ok(text.includes("/pricing"), "the report links the way out of the trial");

      const md = await fetch(`${app.url}/v1/audits/${res.body.audit_id}/summary.md`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const summary = await md.text();
      assert.equal(md.status, 200, summary);
      assert.match(summary, /Partial crawl/);
      assert.match(summary, /trial's page budget \(25\): 10 URLs not fetched/);
      assert.match(summary, /POST \/v1\/upgrades/);
    } finally {
      await site.close();
    }
  }));

Deno.test("a site within the budget reports a complete crawl and no cap", () =>
  withApp(async (app) => {
    site = largeSite(5);
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
      const done = await waitForAudit(app, key, res.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);
      assert.deepEqual(done.body.limits_hit, []);
      assert.deepEqual(done.body.crawl, {
        complete: true,
        pages_fetched: 7,
        urls_not_fetched: 0,
        pages_reused: 0,
      });
      const report = await fetch(`${app.url}/v1/audits/${res.body.audit_id}/report`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.match(await report.text(), /No crawl cap was hit/);
    } finally {
      await site.close();
    }
  }));
