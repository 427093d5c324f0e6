import assert from "node:assert/strict";
import { auditSite } from "./audit_site.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { TargetRefusedError } from "../../domain/net/address_guard.ts";
import { html, page, robotsRoute, sitemapRoute } from "../helpers/sites.ts";

const audit = auditSite;

function assertFired(fired: Map<string, number>, ids: string[]) {
  for (const id of ids) assert.ok(fired.has(id), `${id} should fire; fired: ${[...fired.keys()]}`);
}

const robotsOk = (origin: string) =>
  robotsRoute(`User-agent: *\nDisallow:\nSitemap: ${origin}/sitemap.xml\n`);

Deno.test("structure defects fire their checks and lower the structure score", async () => {
  const { report, fired } = await audit((o) => ({
    "/robots.txt": robotsOk(o),
    "/sitemap.xml": sitemapRoute([o + "/", o + "/a", o + "/b"]),
    "/": html(page({
      key: "home",
      links: ["/a", "/b", "/c", "/missing", "/old"],
      body: `<a href="/a">click here</a><a href="javascript:void(0)">x</a><img src="/x.png">
        <h4>skipped</h4><script type="application/ld+json">{not json</script>`,
    })),
    "/a": html(page({ title: null, key: "a", links: ["/"] })),
    "/b": html(page({ title: "Same title on two pages here", description: null, key: "b" })),
    "/c": html(page({ title: "Same title on two pages here", h1: null, lang: null, key: "c" })),
    "/old": { status: 301, headers: { location: "/b" } },
  }));
  assertFired(fired, [
    "title_missing",
    "title_duplicate",
    "meta_description_missing",
    "h1_missing",
    "html_lang_missing",
    "image_alt_missing",
    "link_text_generic",
    "uncrawlable_links",
    "heading_order",
    "structured_data_invalid",
    "broken_internal_links",
    "internal_redirect_links",
  ]);
  // The linked 404 is one defect, charged once: to the pages that link it.
  assert.ok(!fired.has("http_4xx"), "a linked 404 is broken_internal_links only");
  assert.ok(
    report.summary.categories.structure < 90,
    `structure ${report.summary.categories.structure}`,
  );
  assert.ok(report.summary.issues_critical > 0);
  assert.ok(report.summary.top_issues.length <= 10);
  assert.equal(report.summary.top_issues[0].severity, "critical");
});

Deno.test("mobile defects: missing viewport and disabled zoom", async () => {
  const { report, fired } = await audit(() => ({
    "/": html(page({ viewport: null, key: "1", links: ["/z"] })),
    "/z": html(
      page({
        viewport: "width=1024, user-scalable=no",
        title: "Zoom page title is here ok",
        key: "2",
      }),
    ),
  }));
  assertFired(fired, ["viewport_missing", "zoom_disabled", "viewport_not_responsive"]);
  assert.ok(report.summary.categories.mobile < 50, `mobile ${report.summary.categories.mobile}`);
});

Deno.test("security defects on https: HSTS, mixed content, cookies, http links", async () => {
  const { report, fired } = await audit((o) => ({
    "/": html(
      page({
        key: "1",
        links: ["/p"],
        head: '<script src="http://cdn.example/app.js"></script>',
        body: `<img src="http://cdn.example/i.png" alt="i" width="1" height="1">
          <a href="${o.replace("https:", "http:")}/p">plain</a>`,
      }),
      { "strict-transport-security": "max-age=0", "set-cookie": "sid=1; Path=/" },
    ),
    "/p": html(
      page({
        key: "2",
        title: "Second page with a fine title",
        body: "<form action='http://x.example/'></form>",
      }),
    ),
  }), { tls: true });
  assertFired(fired, [
    "hsts_missing",
    "mixed_content_active",
    "mixed_content_passive",
    "cookie_flags",
    "http_links",
    "insecure_form",
  ]);
  assert.ok(!fired.has("not_https"));
  assert.ok(
    report.summary.categories.security <= 75,
    `security ${report.summary.categories.security}`,
  );
});

Deno.test("plain http site: not_https is critical and security drops", async () => {
  const { report, fired } = await audit(() => ({ "/": html(page({ key: "1" })) }));
  assertFired(fired, ["not_https"]);
  assert.ok(report.summary.categories.security < 50);
});

Deno.test("performance defects: slow TTFB, no compression, huge page", async () => {
  const huge = page({ key: "h", body: `<p>${"word ".repeat(500_000)}</p>` });
  const { fired } = await audit(() => ({
    "/": { ...html(page({ key: "1", links: ["/huge", "/plain"] })), delayMs: 900 },
    "/huge": { ...html(huge), delayMs: 900 },
    "/plain": {
      ...html(page({ key: "3", title: "Uncompressed page title here" })),
      noCompress: true,
      delayMs: 900,
    },
  }));
  assertFired(fired, ["slow_ttfb", "html_too_large", "no_text_compression"]);
});

Deno.test("robots.txt: disallowed URLs are not fetched, Crawl-delay is honoured", async () => {
  const t0 = performance.now();
  const { fired, hits } = await audit(() => ({
    "/robots.txt": robotsRoute(
      "User-agent: *\nDisallow: /private\nCrawl-delay: 0.2\n\nUser-agent: OtherBot\nDisallow: /\n",
    ),
    "/": html(page({ key: "1", links: ["/private/x", "/a", "/b"] })),
    "/a": html(page({ key: "2", title: "Page a has its own title" })),
    "/b": html(page({ key: "3", title: "Page b has its own title" })),
  }));
  const elapsed = performance.now() - t0;
  assert.ok(!hits.includes("/private/x"), "blocked URL must not be fetched");
  assertFired(fired, ["blocked_by_robots", "sitemap_missing"]);
  assert.ok(!fired.has("start_url_blocked"), "a group for another bot must not apply to us");
  assert.ok(elapsed >= 380, `3 pages with Crawl-delay 0.2 took ${elapsed} ms`);
});

Deno.test("robots.txt blocking everything for Googlebot caps the score", async () => {
  const { report, fired } = await audit(() => ({
    "/robots.txt": robotsRoute("User-agent: *\nDisallow: /\n"),
    "/": html(page({ key: "1" })),
  }));
  assertFired(fired, ["start_url_blocked", "crawler_blocked"]);
  assert.ok(report.score <= 30);
  assert.equal(report.pages_crawled, 0);
});

Deno.test("robots.txt with invalid lines and a 5xx robots are reported", async () => {
  const bad = await audit(() => ({
    "/robots.txt": robotsRoute("Disallow: /x\nFoo: bar\nUser-agent: *\nDisallow: nope\n"),
    "/": html(page({ key: "1" })),
  }));
  assertFired(bad.fired, ["robots_txt_invalid"]);
  const down = await audit(() => ({
    "/robots.txt": { status: 503, body: "down" },
    "/": html(page({ key: "1" })),
  }));
  assertFired(down.fired, ["robots_txt_unreachable"]);
  assert.ok(down.report.score <= 79);
});

Deno.test("redirect loops and chains are recorded, not followed forever", async () => {
  const { fired, hits } = await audit(() => ({
    "/": html(page({ key: "1", links: ["/loop-a", "/chain-1"] })),
    "/loop-a": { status: 302, headers: { location: "/loop-b" } },
    "/loop-b": { status: 302, headers: { location: "/loop-a" } },
    "/chain-1": { status: 301, headers: { location: "/chain-2" } },
    "/chain-2": { status: 301, headers: { location: "/final" } },
    "/final": html(page({ key: "f", title: "Final page of the chain" })),
  }));
  assertFired(fired, ["redirect_loop", "redirect_chain", "internal_redirect_links"]);
  assert.equal(hits.filter((h) => h === "/loop-a").length, 1);
});

Deno.test("non-HTML responses are fetched but not parsed as pages", async () => {
  const { report, tallies } = await audit(() => ({
    "/": html(page({ key: "1", links: ["/doc.pdf", "/data.json"] })),
    "/doc.pdf": { body: "%PDF-1.4 fake", headers: { "content-type": "application/pdf" } },
    "/data.json": { body: "{}", headers: { "content-type": "application/json" } },
  }));
  assert.equal(report.pages_crawled, 3);
  assert.equal(tallies.get("title_missing")!.eligible, 1);
  assert.equal(report.site.pages.length, 1);
});

Deno.test("a linked timeout is one broken link (not also fetch_failed); the audit completes", async () => {
  const { report, fired } = await audit(() => ({
    "/": html(page({ key: "1", links: ["/slow"] })),
    "/slow": { ...html(page({ key: "2" })), delayMs: 3_000 },
  }), { timeoutMs: 300 });
  assertFired(fired, ["broken_internal_links"]);
  assert.ok(!fired.has("fetch_failed"));
  assert.equal(report.jobs_failed, 1);
});

Deno.test("huge pages are capped by maxBytes and still audited", async () => {
  const body = page({ key: "1", body: `<p>${"lorem ".repeat(400_000)}</p>` });
  const { report } = await audit(() => ({ "/": html(body) }), { maxBytes: 256 * 1024 });
  assert.equal(report.jobs_completed, 1);
  assert.equal(report.site.pages.length, 1);
});

Deno.test("a site answering 500 everywhere scores at most 30", async () => {
  const { report, fired } = await audit(() =>
    new Proxy({}, {
      get: () => ({ status: 500, body: "<h1>oops</h1>", headers: { "content-type": "text/html" } }),
    })
  );
  assertFired(fired, ["home_page_error", "robots_txt_unreachable"]);
  assert.ok(!fired.has("http_5xx"), "the failing home page is charged to home_page_error only");
  assert.ok(report.score <= 30, `score ${report.score}`);
  assert.ok(report.summary.issues_critical >= 2);
});

Deno.test("indexability: noindex, sitemap bad entries, orphans, canonical targets", async () => {
  const { fired } = await audit((o) => ({
    "/robots.txt": robotsOk(o),
    "/sitemap.xml": sitemapRoute([o + "/", o + "/n", o + "/gone", o + "/orphan"]),
    "/": html(page({ key: "1", links: ["/n", "/canon"] })),
    "/n": html(
      page({
        key: "2",
        title: "Noindex page title goes here",
        head: '<meta name="robots" content="noindex">',
      }),
    ),
    "/canon": html(
      page({
        key: "3",
        title: "Canonical to a missing page",
        head: `<link rel="canonical" href="${o}/gone">`,
      }),
    ),
    "/orphan": html(page({ key: "4", title: "Nobody links to this page" })),
  }));
  assertFired(fired, ["noindex", "sitemap_bad_entries", "orphan_page", "canonical_target_bad"]);
  assert.ok(!fired.has("noindex_sitewide"));
});

Deno.test("the start URL refused by the guard throws; an unresolvable host completes", async () => {
  await assert.rejects(
    runAuditDetailed({
      startUrl: "http://127.0.0.1:9/",
      maxPages: 5,
      concurrency: 1,
      allowPrivate: false,
    }),
    TargetRefusedError,
  );
  const { report, tallies } = await runAuditDetailed({
    startUrl: "http://does-not-resolve.example/",
    maxPages: 5,
    concurrency: 1,
    allowPrivate: false,
    resolver: () => Promise.resolve([]),
  });
  assert.equal(tallies.get("home_page_error")!.affected, 1);
  assert.equal(tallies.get("fetch_failed")!.affected, 0, "the home page is charged once");
  assert.ok(report.score <= 30);
  assert.equal(report.jobs_failed, 1);
});
