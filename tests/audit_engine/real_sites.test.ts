/**
 * What real sites showed the audit missed (issue 22 §3), each on a loopback site built to show it:
 * broken same-site resources (HEAD, GET when HEAD is refused or fails, the byte budget, the caps,
 * robots.txt), frames crawled as pages (a frameset is no dead end, a failing frame is charged
 * once), SVG links, and library versions taken from the file's content only.
 */
import assert from "node:assert/strict";
import { auditSite } from "./audit_site.ts";
import { base, file, jqueryFile, SVG_LINKS } from "./check_cases.ts";
import { html, robotsRoute, type Route, serveSite, sitemapRoute } from "../helpers/sites.ts";
import { BudgetSpentError, ByteBudget } from "../../domain/audit_engine/crawl/byte_budget.ts";
import { fetchResourceStatus } from "../../domain/audit_engine/crawl/fetcher.ts";
import { DEFAULT_CRAWL_CAPS } from "../../domain/audit_engine/crawl/caps.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { fontFaceUrls, srcsetUrls } from "../../domain/audit_engine/resources.ts";

type Routes = Record<string, Route>;
const routes = (r: Record<string, Route | undefined>) => r as Routes;

/** A route that records the methods it was asked with and answers per method. */
function methodRoute(
  seen: string[],
  answer: (method: string) => Response | "hang",
): Route {
  return {
    handler: async (req) => {
      seen.push(req.method);
      const a = answer(req.method);
      if (a === "hang") {
        await new Promise((r) => setTimeout(r, 1_500));
        return new Response(null, { status: 200 });
      }
      return a;
    },
  };
}

Deno.test("broken_resources: page → resource → element → status; HEAD first, GET when HEAD is 405, 501 or fails", async () => {
  const m405: string[] = [];
  const m501: string[] = [];
  const mHang: string[] = [];
  const mGone: string[] = [];
  const png = () => new Response("png", { headers: { "content-type": "image/png" } });
  const out = await auditSite((o) =>
    routes(base(o, {
      "/a": {
        head: '<link rel="stylesheet" href="/css/missing.css"><script src="/js/boom.js" defer>' +
          "</script><style>@font-face{font-family:F;src:url(/f/gone.woff2) format('woff2')}</style>",
        body: '<img src="/img/405.png" alt="" width="1" height="1">' +
          '<img src="/img/501.png" alt="" width="1" height="1">' +
          '<img src="/img/slow-head.png" alt="" width="1" height="1">' +
          '<img src="/img/ok.png" srcset="/img/ok.png 1x, /img/gone@2x.png 2x" alt="" ' +
          'width="1" height="1"><video src="/v/clip.mp4" poster="/img/gone-poster.jpg"></video>' +
          '<img src="/img/gone.png" alt="" width="1" height="1">' +
          '<img src="https://elsewhere.test/gone.png" alt="" width="1" height="1">',
      },
    }, {
      "/img/405.png": methodRoute(m405, (m) =>
        m === "HEAD" ? new Response(null, { status: 405 }) : png()),
      "/img/501.png": methodRoute(m501, (m) =>
        m === "HEAD" ? new Response(null, { status: 501 }) : png()),
      // HEAD never answers within the timeout; GET does.
      "/img/slow-head.png": methodRoute(mHang, (m) => (m === "HEAD" ? "hang" : png())),
      "/img/gone.png": methodRoute(mGone, () =>
        new Response("no", { status: 404 })),
      "/img/ok.png": file("image/png"),
      "/v/clip.mp4": file("video/mp4"),
      "/js/boom.js": { status: 500, body: "oops" },
    })), { timeoutMs: 800 });
  const o = out.origin;
  assert.deepEqual(m405, ["HEAD", "GET"]);
  assert.deepEqual(m501, ["HEAD", "GET"]);
  assert.deepEqual(mHang, ["HEAD", "GET"]);
  assert.deepEqual(mGone, ["HEAD"], "a 404 to HEAD is the answer: no GET");
  const items = out.findings.get("broken_resources")!;
  const got = items.map((i) => [i.resource, i.element, i.attribute, i.status]).sort();
  assert.deepEqual(
    got,
    [
      [`${o}/css/missing.css`, "link rel=stylesheet", "href", 404],
      [`${o}/f/gone.woff2`, "style", "@font-face src", 404],
      [`${o}/img/gone-poster.jpg`, "video", "poster", 404],
      [`${o}/img/gone.png`, "img", "src", 404],
      [`${o}/img/gone@2x.png`, "img", "srcset", 404],
      [`${o}/js/boom.js`, "script", "src", 500],
    ].sort(),
  );
  assert.ok(items.every((i) => i.url === `${o}/a`), "every item names the page");
  // One page affected, among the pages with a judged resource.
  assert.deepEqual(out.tallies.get("broken_resources"), { eligible: 1, affected: 1 });
  // The resource never shows up as a crawled page, and nothing else charges it.
  assert.ok(!out.fired.has("http_4xx") && !out.fired.has("http_5xx"));
  assert.ok(!out.fired.has("broken_internal_links"));
});

Deno.test("broken_resources: a resource that gives no answer is broken (failure named); robots-disallowed ones are not fetched", async () => {
  const out = await auditSite((o) =>
    routes(base(o, {
      "/a": {
        body: '<img src="/img/drop.png" alt="" width="1" height="1">' +
          '<img src="/private/x.png" alt="" width="1" height="1">',
      },
    }, {
      "/robots.txt": robotsRoute(`User-agent: *\nDisallow: /private/\nSitemap: ${o}/sitemap.xml\n`),
      // Both HEAD and GET time out.
      "/img/drop.png": {
        handler: () => new Promise((r) => setTimeout(() => r(new Response("")), 1_500)),
      },
    })), { timeoutMs: 400 });
  const items = out.findings.get("broken_resources")!;
  assert.equal(items.length, 1);
  assert.equal(items[0].resource, `${out.origin}/img/drop.png`);
  assert.equal(items[0].status, null);
  assert.equal(items[0].failure, "timeout");
  assert.ok(!out.hits.includes("/private/x.png"), "a disallowed resource is never requested");
});

Deno.test("broken_resources: the per-audit cap bounds what is asked; 0 turns the check off", async () => {
  const pages: Record<string, { body: string }> = {};
  const imgs = (p: number) =>
    Array.from(
      { length: 6 },
      (_, i) => `<img src="/img/${p}-${i}.png" alt="" width="1" height="1">`,
    )
      .join("");
  pages["/a"] = { body: imgs(0) };
  const build = (o: string) => routes(base(o, pages));
  const capped = await auditSite(build, { caps: { ...DEFAULT_CRAWL_CAPS, resources: 4 } });
  const imgHits = capped.hits.filter((h) => h.startsWith("/img/"));
  assert.equal(imgHits.length, 4, "only the first 4 distinct resources are asked");
  // The 4 checked all 404 (unserved), the other 2 are not judged.
  assert.equal(capped.findings.get("broken_resources")!.length, 4);

  // Off: nothing is asked, nothing judged.
  const off = await auditSite(build, { caps: { ...DEFAULT_CRAWL_CAPS, resources: 0 } });
  assert.equal(off.hits.filter((h) => h.startsWith("/img/")).length, 0);
  assert.equal(off.tallies.get("broken_resources"), undefined);
});

Deno.test("frames: same-site frame sources are crawled as pages; a frameset is no dead end; a failing frame is charged once", async () => {
  const out = await auditSite((o) =>
    routes(base(o, { "/": { links: ["/a", "/fs"] } }, {
      "/sitemap.xml": sitemapRoute([o + "/", o + "/a", o + "/fs", o + "/left"]),
      "/fs": html(
        `<!DOCTYPE html><html lang="en"><head><title>A frameset of the fixture site</title></head>` +
          `<frameset cols="20%,80%"><frame src="/left"><frame src="/gone-frame">` +
          `<frame src="https://elsewhere.test/x"></frameset></html>`,
      ),
      // Reachable only through the frame; it links on to a page nothing else links to.
      "/left": html(
        `<!DOCTYPE html><html lang="en"><head><title>Left frame of the fixture site</title>` +
          `</head><body><a href="/only-from-frame">class list</a></body></html>`,
      ),
      "/only-from-frame": html(
        `<!DOCTYPE html><html lang="en"><head><title>Reached through a frame only</title>` +
          `</head><body><a href="/">home</a></body></html>`,
      ),
    }))
  );
  const o = out.origin;
  assert.ok(out.hits.includes("/left") && out.hits.includes("/only-from-frame"), out.hits.join());
  assert.ok(!out.fired.has("dead_end_page"), "the frameset is not a dead end");
  const broken = out.findings.get("broken_resources")!;
  assert.deepEqual(broken.map((i) => [i.url, i.resource, i.element, i.status]), [
    [`${o}/fs`, `${o}/gone-frame`, "frame", 404],
  ]);
  // Charged once: not also http_4xx, and a frame is not a link.
  assert.ok(!out.fired.has("http_4xx"));
  assert.ok(!out.fired.has("broken_internal_links"));
  // /left is in the sitemap with no inlinks, but shown in a frame: not an orphan.
  assert.ok(!(out.findings.get("orphan_page") ?? []).some((i) => i.url === `${o}/left`));
});

Deno.test("SVG links: xlink:href read inside <svg>; an <a> without a link, or a fragment, is not uncrawlable", async () => {
  const f = extractPageFacts(
    `<!DOCTYPE html><html><body>${SVG_LINKS}<svg><a xlink:href="/svg-target">x</a></svg>` +
      `<a xlink:href="/not-a-link-outside-svg">y</a></body></html>`,
    new URL("https://s.test/page"),
    "s.test",
  );
  assert.deepEqual(f.links, ["https://s.test/", "https://s.test/svg-target"]);
  // Outside <svg> xlink:href is no link: that <a> has no href.
  assert.equal(f.uncrawlableLinks, 1);
  const out = await auditSite((o) => routes(base(o, { "/a": { body: SVG_LINKS } })));
  assert.ok(!out.fired.has("uncrawlable_links"));
});

Deno.test("vulnerable libraries: the file's content decides, never its name", async () => {
  const out = await auditSite((o) =>
    routes(base(o, {
      "/a": {
        head: '<script src="/js/jquery-1.8.3.min.js" defer></script>' +
          '<script src="/lib/jquery-1.12.4.min.js" defer></script>' +
          '<script src="/unread/jquery-1.8.3.min.js" defer></script>' +
          '<script src="/min/jquery-1.11.0.min.js" defer></script>',
      },
    }, {
      // Named 1.8.3, holds 3.7.1 (the real site's case): not reported.
      "/js/jquery-1.8.3.min.js": jqueryFile("3.7.1"),
      // Named and holding 1.12.4: reported, from the banner.
      "/lib/jquery-1.12.4.min.js": jqueryFile("1.12.4"),
      // Cannot be read: not reported either way.
      "/unread/jquery-1.8.3.min.js": { status: 404, body: "gone" },
      // No banner, but the version the URL names is quoted in the file's head.
      "/min/jquery-1.11.0.min.js": file("text/javascript", '!function(){var jquery="1.11.0";}()'),
    }))
  );
  const items = out.findings.get("vulnerable_js_library")!;
  const o = out.origin;
  assert.deepEqual(
    items.map((i) => [i.script, i.version, i.detected_from]).sort(),
    [
      [`${o}/lib/jquery-1.12.4.min.js`, "1.12.4", "banner"],
      [`${o}/min/jquery-1.11.0.min.js`, "1.11.0", "version_string"],
    ],
  );
});

Deno.test("srcset and @font-face sources are parsed as the standard and CSS say", () => {
  assert.deepEqual(srcsetUrls("/a.png 1x, /b.png 2x"), ["/a.png", "/b.png"]);
  assert.deepEqual(srcsetUrls("/a,b.png 100w,/c.png 200w"), ["/a,b.png", "/c.png"]);
  assert.deepEqual(srcsetUrls("/a.png, /b.png"), ["/a.png", "/b.png"]);
  assert.deepEqual(srcsetUrls(" /x.png (max-width: 1px, 2px) 1x , /y.png"), ["/x.png", "/y.png"]);
  assert.equal(
    srcsetUrls(Array.from({ length: 50 }, (_, i) => `/i${i}.png ${i + 1}x`).join(",")).length,
    8,
  );
  assert.deepEqual(
    fontFaceUrls(
      `body{background:url(/bg.png)} @font-face { font-family: A; src: url("/a.woff2") format("woff2"), ` +
        `url('/a.woff') format("woff"), url(data:font/woff2;base64,AA) } @FONT-FACE{src:url( /b.ttf )}`,
    ),
    ["/a.woff2", "/a.woff", "/b.ttf"],
  );
  // The page keeps each distinct same-site resource once, up to its cap.
  const many = Array.from({ length: 20 }, (_, i) => `<img src="/i/${i}.png">`).join("");
  const f = extractPageFacts(
    `<html><body>${many}${many}</body></html>`,
    new URL("https://s.test/"),
    "s.test",
    1000,
    5,
  );
  assert.equal(f.resourceUrls.length, 5);
  assert.equal(f.resourcesOverCap, 30, "counted per occurrence past the cap");
});

Deno.test("a resource check is charged its headers in the byte budget, and refused once the budget is spent", async () => {
  const site = serveSite({ "/x.png": file("image/png", "x".repeat(50_000)) });
  try {
    const settings = { allowPrivate: true, timeoutMs: 2_000, maxBytes: 5 * 1024 * 1024 };
    const budget = new ByteBudget(1_000_000, 0);
    const a = await fetchResourceStatus({ ...settings, budget }, site.url("/x.png"));
    assert.deepEqual({ status: a.status, method: a.method, throttleMs: a.throttleMs }, {
      status: 200,
      method: "HEAD",
      throttleMs: null,
    });
    // The headers, not the 50 KB body (never read).
    assert.ok(budget.used > 50 && budget.used < 1_000, `${budget.used} bytes`);
    const spent = new ByteBudget(100, 100);
    await assert.rejects(
      fetchResourceStatus({ ...settings, budget: spent }, site.url("/x.png")),
      BudgetSpentError,
    );
  } finally {
    await site.close();
  }
});
