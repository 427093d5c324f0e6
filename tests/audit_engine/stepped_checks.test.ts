/**
 * The checks of issue 12 on the stepped crawl: library banners read across steps (once per
 * script, at most MAX_BANNER_FETCHES per audit whatever the files' names, robots.txt honoured), near-duplicates found through the LSH band
 * index in KV (identical twins left to duplicate_content), whatever the step size.
 */
import assert from "node:assert/strict";
import { auditSite, type Routes } from "./audit_site.ts";
import { MAX_BANNER_FETCHES } from "../../domain/audit_engine/crawl/banners.ts";
import { DEFAULT_CRAWL_CAPS } from "../../domain/audit_engine/crawl/caps.ts";
import { html, page, robotsRoute, type Route } from "../helpers/sites.ts";

/** Resource checks off: every script request the site sees is then a banner read. */
const audit = (build: Routes, stepPages: number) =>
  auditSite(build, { stepPages, maxPages: 300, caps: { ...DEFAULT_CRAWL_CAPS, resources: 0 } });

const JQUERY_OLD = {
  body: "/*! jQuery v1.8.3 jquery.com | jquery.org/license */\n!function(){}",
  headers: { "content-type": "application/javascript" },
};

/**
 * More pages than the cap, each with its own script file (named like no library: issue 32), plus
 * one shared jQuery and one disallowed.
 */
const PAGES = MAX_BANNER_FETCHES + 5;
const bannerSite: Routes = () => {
  const n = PAGES;
  const routes: Record<string, Route> = {
    "/robots.txt": robotsRoute("User-agent: *\nDisallow: /private/\n"),
    "/": html(page({
      key: "home",
      links: Array.from({ length: n }, (_, i) => `/p${i}`),
      head: '<script src="/shared/jquery.min.js" defer></script>' +
        '<script src="/private/jquery.js" defer></script>',
    })),
    "/shared/jquery.min.js": JQUERY_OLD,
    "/private/jquery.js": JQUERY_OLD,
  };
  for (let i = 0; i < n; i++) {
    routes[`/p${i}`] = html(page({
      key: `p${i}`,
      links: ["/"],
      head: `<script src="/shared/jquery.min.js" defer></script>` +
        `<script src="/js${i}/lib.js" defer></script>`,
    }));
    routes[`/js${i}/lib.js`] = JQUERY_OLD;
  }
  return routes;
};

Deno.test("library banners: read once per script across steps, at most the cap per audit, robots honoured", async () => {
  const { findings, tallies, hits, steps, origin } = await audit(bannerSite, 20);
  assert.ok(steps > 5, `${steps} steps`);
  const scripts = hits.filter((p) => p.endsWith(".js"));
  assert.equal(scripts.filter((p) => p === "/shared/jquery.min.js").length, 1, "shared read once");
  assert.ok(!scripts.includes("/private/jquery.js"), "disallowed script never read");
  assert.equal(scripts.length, MAX_BANNER_FETCHES, `${scripts.length} script reads`);
  // Every page names the shared old jQuery through its banner, so every page fires.
  const t = tallies.get("vulnerable_js_library")!;
  assert.equal(t.affected, PAGES + 1);
  const items = findings.get("vulnerable_js_library")!;
  // One item per page and library file; `url` names the page, `script` the file.
  const shared = items.filter((i) =>
    i.script === `${origin}/shared/jquery.min.js` && i.detected_from === "banner" &&
    i.version === "1.8.3"
  );
  assert.equal(new Set(shared.map((i) => i.url)).size, PAGES + 1);
  // The files named like no library that were read before the cap are reported from content.
  const own = items.filter((i) => /\/js\d+\/lib\.js$/.test(String(i.script)));
  assert.equal(own.length, MAX_BANNER_FETCHES - 1);
  assert.ok(items.every((i) => Array.isArray(i.advisories) && i.advisories.length > 0));
});

const SHARED_TEXT = Array.from(
  { length: 60 },
  (_, i) => `sentence ${i} explains how crawlers read pages and links carefully`,
).join(". ");

const nearSite: Routes = () => {
  const text = (extra: string) =>
    html(page({ key: "same", words: false, body: `<main><p>${SHARED_TEXT}. ${extra}</p></main>` }));
  return {
    "/": html(page({ key: "home", links: ["/a", "/b", "/c", "/d", "/e"] })),
    "/a": text("One closing line for page a."),
    "/b": text("Another closing line for page b."),
    "/c": text("Exactly the same ending."),
    "/d": text("Exactly the same ending."),
    "/e": html(page({ key: "e-is-different" })),
  };
};

Deno.test("near-duplicates from the band index: pairs named, twins left to duplicate_content, any step size", async () => {
  const one = await audit(nearSite, 1);
  const many = await audit(nearSite, 50);
  for (const run of [one, many]) {
    const o = run.origin;
    const near = run.findings.get("near_duplicate_content") ?? [];
    assert.deepEqual(near.map((i) => i.url).sort(), [`${o}/a`, `${o}/b`]);
    for (const i of near) {
      assert.ok([`${o}/a`, `${o}/b`, `${o}/c`, `${o}/d`].includes(String(i.similar_to)));
      assert.ok(Number(i.similarity) >= 0.8 && Number(i.similarity) < 1);
    }
    const dup = run.findings.get("duplicate_content") ?? [];
    assert.deepEqual(dup.map((i) => i.url).sort(), [`${o}/c`, `${o}/d`]);
    assert.deepEqual(run.tallies.get("near_duplicate_content"), { eligible: 6, affected: 2 });
  }
  assert.equal(one.report.score, many.report.score);
});
