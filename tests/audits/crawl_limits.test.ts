/**
 * Limits told truthfully (issue 31 item 5): a sandbox audit of a site larger than the trial's page
 * budget says so in every place a caller or a reader looks: `limits_hit` (with the URLs it left
 * unfetched, the budget's owner and the upgrade path), the audit's `crawl` object, the HTML
 * report's header and the Markdown summary. Before the fix the trial stopped at 25 URLs, left
 * the rest unfetched and reported "No crawl cap was hit".
 */
import assert from "node:assert/strict";
import { type TestApp, withApp } from "../helpers/app.ts";
import { completedLiveAudit } from "../helpers/credits.ts";
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

/** The error-rate stop, small enough for a test: 3 errors in the last 6 responses pause it. */
const ERROR_STOP_ENV = {
  CRAWL_ERROR_RATE_MAX: "0.5",
  CRAWL_ERROR_WINDOW: "6",
  CRAWL_ERROR_PAUSE_SECONDS: "1",
  CRAWL_ERROR_PAUSES: "2",
};

/**
 * A home linking to `count` pages; page requests numbered from 1 (the home is 1) answer `fail`
 * while `failing(n)` holds. `/p2` lacks a viewport (a finding made before any failure).
 */
function flakySite(count: number, failing: (n: number) => boolean, fail: () => Response) {
  const paths = Array.from({ length: count }, (_, i) => `/p${i}`);
  let n = 0;
  return serveSite((path) => {
    if (path !== "/" && !/^\/p\d+$/.test(path)) return undefined;
    return {
      handler: () => {
        if (failing(++n)) return fail();
        if (path === "/") {
          return routeResponse(page({ title: "Home of the flaky site", links: paths }));
        }
        return routeResponse(page({
          title: `Page ${path} of the flaky site`,
          key: path,
          ...(path === "/p2" ? { viewport: null } : {}),
        }));
      },
    };
  });
}

function routeResponse(body: string): Response {
  const r = html(body);
  return new Response(r.body as string, { status: 200, headers: r.headers });
}

async function liveAudit(app: TestApp, origin: string) {
  return (await completedLiveAudit(app, origin)).done;
}

Deno.test("a site that starts answering 503 mid-crawl: paused, then completed with what it has", () =>
  withApp(async (app) => {
    site = flakySite(40, (n) => n > 8, () => new Response("down", { status: 503 }));
    try {
      const done = await liveAudit(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      const stop = done.body.limits_hit.find((l: { limit: string }) => l.limit === "error_rate");
      assert.ok(
        stop,
        `limits_hit names the error-rate stop: ${JSON.stringify(done.body.limits_hit)}`,
      );
      assert.equal(stop.value, 50);
      assert.equal(stop.budget, "operator");
      assert.ok(stop.left_out >= 10, `URLs left unfetched: ${stop.left_out}`);
      assert.equal(done.body.crawl.complete, false);
      assert.equal(done.body.crawl.urls_not_fetched, stop.left_out);
      assert.equal(done.body.politeness.paused, 2, "paused twice, then stopped");
      // Far fewer requests than pages: the failing site was not hammered through its 40 pages.
      const pageHits = site.hits.filter((p) => /^\/p\d+$/.test(p)).length;
      assert.ok(pageHits < 35, `page requests: ${pageHits}`);
      // The findings of the part crawled are kept.
      const checks = done.body.summary.top_issues.map((t: { check: string }) => t.check);
      assert.ok(checks.includes("viewport_missing"), JSON.stringify(checks));
    } finally {
      await site.close();
    }
  }, { env: ERROR_STOP_ENV }));

Deno.test("a brief burst of 429 pauses the crawl, which then completes fully", () =>
  withApp(async (app) => {
    // The home, then its 5 pages at once: the first two answer 429 (2 errors in 4 responses).
    site = flakySite(
      5,
      (n) => n === 2 || n === 3,
      () => new Response("slow down", { status: 429, headers: { "retry-after": "1" } }),
    );
    try {
      const done = await liveAudit(app, site.origin);
      assert.equal(done.body.status, "completed", done.text);
      assert.equal(done.body.politeness.paused, 1, JSON.stringify(done.body.politeness));
      assert.deepEqual(done.body.limits_hit, []);
      assert.equal(done.body.crawl.complete, true);
      assert.equal(done.body.crawl.pages_fetched, 6, "the home and its 5 pages, each once");
      assert.equal(done.body.politeness.gave_up, 0);
      assert.equal(site.hits.filter((p) => /^\/p\d+$/.test(p)).length, 7, "2 fetched again");
    } finally {
      await site.close();
    }
    // Short steps: the agents probes after the crawl, paced at the rate the 429s halved, end
    // with their step.
  }, { env: { ...ERROR_STOP_ENV, CRAWL_ERROR_WINDOW: "4", CRAWL_STEP_SECONDS: "3" } }));
