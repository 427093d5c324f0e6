import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { html, page, robotsRoute, serveSite, sitemapRoute, TEST_CA } from "../helpers/sites.ts";

/** A small well-built https site: unique titles, sitemap, robots, good headers. */
export function cleanRoutes(origin: () => string) {
  const paths = ["/", "/guides/", "/guides/audits", "/guides/links", "/about"];
  const routes: Record<string, ReturnType<typeof html>> = {};
  paths.forEach((p, i) => {
    routes[p] = html(page({
      title: `Serpwright test page number ${i} about SEO`,
      description: `Description ${i}: a clean page with a helpful summary long enough for results.`,
      h1: `Heading ${i}`,
      key: String(i),
      links: paths.filter((q) => q !== p),
      head: `<link rel="canonical" href="${origin()}${p}">`,
    }));
  });
  return { paths, routes };
}

Deno.test("clean https site scores high with no critical issue", async () => {
  let origin = "";
  const { paths } = cleanRoutes(() => origin);
  let built: ReturnType<typeof cleanRoutes>["routes"] | null = null;
  const site = serveSite((p) => {
    if (p === "/robots.txt") {
      return robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${origin}/sitemap.xml\n`);
    }
    if (p === "/sitemap.xml") return sitemapRoute(paths.map((q) => origin + q));
    built ??= cleanRoutes(() => origin).routes;
    return built[p];
  }, { tls: true });
  origin = site.origin;
  try {
    const { report, tallies } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 50,
      concurrency: 4,
      allowPrivate: true,
      ca: TEST_CA,
    });
    const fired = [...tallies].filter(([, t]) => t.affected > 0).map(([id]) => id);
    assert.equal(report.summary.issues_critical, 0, `fired: ${fired.join(", ")}`);
    assert.ok(report.score >= 90, `score ${report.score}, fired: ${fired.join(", ")}`);
    assert.equal(report.summary.issues_warning, 0, `fired: ${fired.join(", ")}`);
    assert.equal(report.pages_crawled, 5);
    assert.equal(report.jobs_failed, 0);
    assert.equal(report.site.pages.length, 5);
    assert.equal(report.site.language, "en");
    assert.equal(report.site.pages[0].depth, 0);
    for (const c of Object.values(report.summary.categories)) assert.ok(c >= 90);
  } finally {
    await site.close();
  }
});
