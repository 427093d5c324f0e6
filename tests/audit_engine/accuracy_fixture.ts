/**
 * The seeded-defect fixture of the accuracy table (accuracy.test.ts): ONE loopback site with a
 * defect seeded on most of its pages, so checks meet each other as on a real site (a thin page
 * that is also client-rendered, a link chain that is also a link to a redirect), and a
 * ground-truth manifest naming, for each check, the exact URLs its findings must name.
 *
 * A site has one robots.txt, one sitemap, one scheme and one median response time, so site-wide
 * verdicts that exclude each other (robots.txt missing vs unreachable vs invalid, http vs https,
 * slow vs very slow) cannot all be seeded on one site: those few are seeded on small variants of
 * the same fixture (VARIANTS), each audited once, and the main site is their negative label.
 */
import {
  base,
  basePage,
  DOCTYPE_HTML40,
  DOCTYPE_HTML401_LOOSE,
  DOCTYPE_HTML401_STRICT,
  DOCTYPE_JAVADOC_FRAMESET,
  file,
  jqueryBundle,
  jqueryFile,
  json,
  ldScript,
  pdf,
  SVG_LINKS,
} from "./check_cases.ts";
import {
  GOOD_HEADERS,
  html,
  type PageSpec,
  robotsRoute,
  type Route,
  sitemapRoute,
} from "../helpers/sites.ts";

type Routes = Record<string, Route | undefined>;

/** The label of an evidence item that names no URL: the site itself. */
export const SITE = "(site)";

/** One audited site of the fixture and what each check must name on it. */
export interface LabelledSite {
  name: string;
  routes: (origin: string) => Routes;
  tls: boolean;
  untrusted?: boolean;
  timeoutMs: number;
  /**
   * check id → paths (or absolute URLs for another scheme) its findings must name on this site.
   * A check absent here must name nothing on this site.
   */
  expect: Record<string, string[]>;
  /** Pages (paths) on which no check at all may fire. */
  clean: string[];
}

/** A page of the fixture whose canonical names `to`. */
const canonTo = (o: string, path: string, to: string): Route =>
  html(basePage(o, path, path.slice(1)).replace(`${o}${path}"`, `${o}${to}"`));
const redirect = (to: string, status = 301): Route => ({ status, headers: { location: to } });
const withHeaders = (o: string, path: string, h: Record<string, string | null>): Route => {
  const headers: Record<string, string> = { ...GOOD_HEADERS };
  for (const [k, v] of Object.entries(h)) {
    if (v === null) delete headers[k];
    else headers[k] = v;
  }
  return { body: basePage(o, path, path), headers };
};
/** A response that starts and then breaks: a failed fetch, no HTTP error status. */
const brokenBody: Route = {
  handler: () =>
    new Response(
      new ReadableStream({
        start(c) {
          c.enqueue(new TextEncoder().encode("<!doctype html><title>half"));
          c.error(new Error("connection dropped"));
        },
      }),
      { headers: { "content-type": "text/html" } },
    ),
};
/** A description of its own for pages that share their text. */
const D = (n: string) => `Fixture page ${n}: a page whose text is shared, with a long description.`;
const big = (bytes: number): PageSpec => ({ body: `<p>${"lorem ipsum ".repeat(bytes / 12)}</p>` });
const inlineJq = (v: string) =>
  `<script>/*! jQuery v${v} | (c) OpenJS Foundation | jquery.org/license */\nvar $ = 1;</script>`;
/** A script whose file name names jQuery `v` (the route's banner decides what it holds). */
const jq = (v: string, dir = "js") => `<script src="/${dir}/jquery-${v}.min.js" defer></script>`;

/**
 * Page-level defects of the main site: path → the page spec that seeds it (each page links back
 * home; the home page links to every page below).
 */
function seededPages(o: string): Record<string, PageSpec> {
  return {
    "/clean-1": {},
    "/clean-2": { body: '<img src="/ok.png" alt="" width="1" height="1">' },
    "/noindex": { head: '<meta name="robots" content="noindex">' },
    "/head-in-body": { body: '<meta name="robots" content="index">' },
    "/hreflang-bad": { head: `<link rel="alternate" hreflang="english" href="${o}/hreflang-bad">` },
    // No entry for the page itself.
    "/hreflang-no-self": { head: `<link rel="alternate" hreflang="de" href="${o}/clean-1">` },
    // A complete cluster of two pages that name each other, with an x-default.
    "/hreflang-ok": { head: okCluster(o) },
    "/hreflang-ok-de": { head: okCluster(o) },
    // Alternates that redirect (/old) and are noindex (/noindex).
    "/hreflang-bad-targets": {
      head: `<link rel="alternate" hreflang="en" href="${o}/hreflang-bad-targets">` +
        `<link rel="alternate" hreflang="de" href="${o}/old">` +
        `<link rel="alternate" hreflang="fr" href="${o}/noindex">`,
    },
    // Names /clean-2 as its German version; /clean-2 names nothing back.
    "/hreflang-one-way": {
      head: `<link rel="alternate" hreflang="en" href="${o}/hreflang-one-way">` +
        `<link rel="alternate" hreflang="de" href="${o}/clean-2">`,
    },
    "/no-title": { title: null },
    "/short-title": { title: "Short" },
    "/same-title-1": { title: "One title shared by two fixture pages here" },
    "/same-title-2": { title: "One title shared by two fixture pages here" },
    "/no-desc": { description: null },
    "/short-desc": { description: "Too short." },
    "/same-desc-1": {
      description: "One description shared by two pages, long enough for results.",
    },
    "/same-desc-2": {
      description: "One description shared by two pages, long enough for results.",
    },
    "/two-titles": { head: "<title>A second title</title>" },
    "/no-h1": { h1: null },
    "/h4": { body: "<h4>Skipped a level</h4>" },
    "/no-lang": { lang: null },
    "/bad-lang": { lang: "english" },
    "/thin": { words: false },
    "/csr": { words: false, body: '<div id="root"></div><script src="/app.js" defer></script>' },
    // Same visible text (the h1 included), own titles and descriptions.
    "/dup-1": {
      description: D("dup-1"),
      key: "dup",
      h1: "Same text",
      title: "Duplicate text one with its own title",
    },
    "/dup-2": {
      description: D("dup-2"),
      key: "dup",
      h1: "Same text",
      title: "Duplicate text two with its own title",
    },
    "/near-1": {
      description: D("near-1"),
      key: "near",
      title: "Near duplicate one with its own title",
    },
    "/near-2": {
      key: "near",
      title: "Near duplicate two with its own title",
      body: "<p>One more short sentence at the end.</p>",
    },
    "/links-broken": { links: ["/", "/missing"] },
    // A section another page lacks, one this page lacks; then anchors that are all there (an id,
    // an <a name>, an SVG node's id on another page, `#top`), and a text fragment.
    "/frag-broken": { links: ["/", "/frag-ok#missing-section", "#nowhere"] },
    "/frag-ok": {
      links: ["/", "/frag-ok#sec", "/frag-ok#old-name", "/svg-links#node1", "#top"],
      body: '<section id="sec">Section</section><a name="old-name"></a>' +
        '<a href="/clean-1#:~:text=Page">a quote</a>',
    },
    "/links-redirect": { links: ["/", "/old"] },
    "/links-chain": { links: ["/", "/r1"] },
    "/links-loop": { links: ["/", "/l1"] },
    "/refresh": { head: '<meta http-equiv="refresh" content="0; url=/">' },
    "/refresh-4xx": { head: '<meta http-equiv="refresh" content="30; url=/gone-refresh">' },
    "/refresh-5xx": { head: '<meta http-equiv="refresh" content="30; url=/boom">' },
    "/refresh-fail": { head: '<meta http-equiv="refresh" content="30; url=/broken">' },
    "/js-link": { body: '<a href="javascript:void(0)">menu</a>' },
    "/click-here": { body: '<a href="/">click here</a>' },
    "/no-alt": { body: '<img src="/x.png" width="1" height="1">' },
    "/bad-jsonld": { body: '<script type="application/ld+json">{not json</script>' },
    "/d1": { links: ["/", "/d2"] },
    "/d2": { links: ["/d3"] },
    "/d3": { links: ["/d4"] },
    "/d4": { links: ["/d5"] },
    "/d5": {},
    "/Some_Page": {},
    "/no-doctype": { doctype: false },
    // A doctype that is there but gives quirks mode; one that gives limited-quirks mode; and one
    // of the same era that gives standards mode (quiet).
    "/quirks-doctype": { doctype: DOCTYPE_HTML40 },
    "/javadoc-doctype": { doctype: DOCTYPE_JAVADOC_FRAMESET },
    "/loose-doctype": { doctype: DOCTYPE_HTML401_LOOSE },
    "/strict-401-doctype": { doctype: DOCTYPE_HTML401_STRICT },
    "/picture": { body: '<picture><source srcset="/a.webp"></picture>' },
    "/dead-end": { links: [] },
    // Links in inline SVG: fragments, a Graphviz node with only xlink:title, a real link.
    "/svg-links": { body: SVG_LINKS },
    // Same-site files that answer 404: an image, a stylesheet, a font of an inline @font-face
    // rule, a frame (crawled as a page, charged here and not as http_4xx).
    "/broken-img": { body: '<img src="/missing.png" alt="" width="1" height="1">' },
    "/broken-css": { head: '<link rel="stylesheet" href="/missing.css">' },
    "/broken-font": {
      head: "<style>@font-face { font-family: F; src: url('/fonts/missing.woff2') " +
        "format('woff2'); } body { font-family: F; }</style>",
    },
    "/broken-frame": { body: '<iframe src="/gone-frame" title="A frame"></iframe>' },
    // Every kind of reference, each answering 200 (one only to GET: HEAD is 405 there).
    "/resources-ok": {
      head: '<link rel="stylesheet" href="/site.css"><link rel="icon" href="/favicon.ico">' +
        '<link rel="preload" as="font" href="/fonts/ok.woff2" crossorigin>' +
        "<style>@font-face { font-family: G; src: url(/fonts/ok.woff2); }</style>",
      body: '<img src="/x.png" srcset="/x.png 1x, /x@2x.png 2x" alt="" width="1" height="1">' +
        '<video src="/clip.mp4" poster="/ok.png" width="1" height="1"><track src="/subs.vtt">' +
        '</video><img src="/head-405.png" alt="" width="1" height="1">' +
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="" width="1" height="1">',
    },
    // A frameset (served by hand in mainRoutes): its frames are crawled, and it is no dead end.
    "/frameset": {},
    "/mixed-script": { head: '<script src="http://cdn.test/app.js" defer></script>' },
    "/mixed-img": { body: '<img src="http://cdn.test/i.png" alt="" width="1" height="1">' },
    "/proto-rel": { body: '<img src="//cdn.test/i.png" alt="" width="1" height="1">' },
    "/http-link": { body: `<a href="${o.replace("https:", "http:")}/clean-1">clean page</a>` },
    "/form-http": { body: '<form action="http://forms.test/post"><input name="q"></form>' },
    "/form-https": { body: '<form action="https://forms.test/post"><input name="q"></form>' },
    // The files' banners confirm 1.8.3 and 3.7.1; /renamed-jquery's file is named 1.8.3 but
    // holds 3.7.1 (as on a real site): the name is not evidence.
    "/old-jquery": { head: jq("1.8.3") },
    "/new-jquery": { head: jq("3.7.1") },
    "/renamed-jquery": { head: jq("1.8.3", "vendor") },
    // Named like no library, read for their content: jQuery 1.8.3 by its banner, a bundle whose
    // code carries jquery:"1.8.3"; a current one in a file of another name stays quiet.
    "/lib-jquery": { head: '<script src="/js/lib.js" defer></script>' },
    "/bundle-jquery": { head: '<script src="/js/app.bundle.js" defer></script>' },
    "/site-js": { head: '<script src="/js/site.js" defer></script>' },
    // jQuery bundled into the page, known by its banner: an old one and a current one.
    "/inline-jquery": { body: inlineJq("1.8.3") },
    "/inline-jquery-new": { body: inlineJq("3.7.1") },
    "/huge": big(2.2 * 1024 * 1024),
    "/large": big(1.2 * 1024 * 1024),
    "/blocking-script": { head: '<script src="/app.js"></script>' },
    "/unsized-img": { body: '<img src="/x.png" alt="x">' },
    "/big-dom": { body: "<span></span>".repeat(1_600) },
    "/no-viewport": { viewport: null },
    "/fixed-viewport": { viewport: "width=1024" },
    "/no-zoom": { viewport: "width=device-width, initial-scale=1, user-scalable=no" },
    "/embed": { body: '<embed src="/movie.swf">' },
    "/no-jsonld": { jsonLd: false },
    // One page at two casings of its path (own titles and descriptions: only the text is shared).
    "/Case-Page": { key: "case", h1: "Same page, any case" },
    "/case-page": { key: "case", h1: "Same page, any case" },
    // One page under two sort parameters (/list itself is not linked).
    "/list?sort=asc": { key: "list", h1: "Same list, any order" },
    "/list?sort=desc": { key: "list", h1: "Same list, any order" },
    // Indexable and linked, but left out of the sitemap that lists every other such page.
    "/not-in-sitemap": {},
    // Links to every page the home page links to (set in mainRoutes), so those have two inlinks.
    "/hub": {},
    ...structuredDataPages(o),
  };
}

// --- Structured data validation (rich_result_invalid, schema_type_unknown) -------------------

const SCHEMA = "https://schema.org";
const ld = (...blocks: unknown[]): PageSpec => ({ body: blocks.map(ldScript).join("") });

/** Pages with valid and broken rich-result markup and schema.org types. */
function structuredDataPages(o: string): Record<string, PageSpec> {
  const crumbs = [
    { "@type": "ListItem", position: 1, name: "Home", item: `${o}/` },
    { "@type": "ListItem", position: 2, name: "Shop" },
  ];
  return {
    // Every rule's type, well formed: nothing may fire here.
    "/rich-ok": ld(
      {
        "@context": SCHEMA,
        "@graph": [
          {
            "@type": "Product",
            name: "Mug",
            offers: { "@type": "Offer", price: 9.5, priceCurrency: "EUR" },
          },
          { "@type": "BreadcrumbList", itemListElement: crumbs },
        ],
      },
      {
        "@context": SCHEMA,
        "@type": "FAQPage",
        mainEntity: [{
          "@type": "Question",
          name: "Why?",
          acceptedAnswer: { "@type": "Answer", text: "Because." },
        }],
      },
      {
        "@context": SCHEMA,
        "@type": "Restaurant",
        name: "Café",
        address: { "@type": "PostalAddress", streetAddress: "1 Main St" },
      },
      { "@context": SCHEMA, "@type": "Article", headline: "No requirements for Article" },
    ),
    // An Offer without its price inside a @graph.
    "/rich-no-price": ld({
      "@context": SCHEMA,
      "@graph": [{ "@type": "WebSite", name: "Shop" }, {
        "@type": "Product",
        name: "Mug",
        offers: { "@type": "Offer", priceCurrency: "EUR" },
      }],
    }),
    "/rich-breadcrumb": ld({
      "@context": SCHEMA,
      "@type": "BreadcrumbList",
      itemListElement: [{ "@type": "ListItem", item: `${o}/` }, crumbs[1]],
    }),
    "/rich-faq": ld({
      "@context": SCHEMA,
      "@type": "FAQPage",
      mainEntity: { "@type": "Question", name: "Why?", acceptedAnswer: { "@type": "Answer" } },
    }),
    "/rich-business": ld({ "@context": SCHEMA, "@type": "Store", name: "Corner shop" }),
    "/schema-typo": ld({ "@context": SCHEMA, "@type": "Prodcut", name: "Mug" }),
    "/schema-context": ld({ "@context": "https://example.test/vocab", "@type": "Widget" }),
  };
}

/**
 * A frameset as old documentation generators write it: no body, no links, two frames (one of
 * them, /frame-only, reachable through the frame alone). No h1 and no text, as a frameset has.
 */
const framesetPage = (o: string) =>
  basePage(o, "/frameset", "frameset").replace(
    /<body>[\s\S]*<\/body>/,
    '<frameset cols="30%,70%"><frame src="/frame-only" title="Index">' +
      '<frame src="/clean-1" title="Content"></frameset>',
  );

/** The hreflang cluster of /hreflang-ok and /hreflang-ok-de. */
const okCluster = (o: string) =>
  `<link rel="alternate" hreflang="en" href="${o}/hreflang-ok">` +
  `<link rel="alternate" hreflang="de" href="${o}/hreflang-ok-de">` +
  `<link rel="alternate" hreflang="x-default" href="${o}/hreflang-ok">`;

/** Pages served by hand (headers, bodies) rather than through `seededPages`. */
const HEADER_PAGES: Record<string, Record<string, string | null>> = {
  "/weak-hsts": { "strict-transport-security": "max-age=300" },
  "/no-csp": { "content-security-policy": null, "x-frame-options": "DENY" },
  "/no-frame-rule": { "content-security-policy": "default-src 'self'" },
  "/no-nosniff": { "x-content-type-options": null },
  "/unsafe-referrer": { "referrer-policy": "unsafe-url" },
  "/cookie": { "set-cookie": "sid=1; Path=/" },
  "/good-cookie": { "set-cookie": "sid=1; Path=/; Secure; HttpOnly; SameSite=Lax" },
  "/server-version": { server: "nginx/1.18.0" },
  "/server-name": { server: "nginx" },
  // noindex sent as an HTTP header rather than a meta tag.
  "/header-noindex": { "x-robots-tag": "noindex" },
};
/** Pages whose canonical names another URL: linked, never in the sitemap. */
const CANONICALISED = [
  "/canon-home",
  "/canon-gone",
  "/canon-ok",
  "/canon-redirect",
  "/canon-noindex",
  "/canon-chain",
  "/canon-loop-a",
  "/canon-loop-b",
  "/canon-loop-c",
];
const OTHER_PAGES = [
  "/canon-relative",
  ...CANONICALISED,
  "/noindex.pdf",
  "/open.pdf",
  "/no-charset",
  "/uncompressed",
];

function mainRoutes(o: string): Routes {
  const pages = seededPages(o);
  const linked = [
    ...Object.keys(pages).filter((p) => !/^\/d[2-5]$/.test(p)),
    ...Object.keys(HEADER_PAGES),
    ...OTHER_PAGES,
    "/private/x",
    "/paid",
  ];
  pages["/"] = { links: linked };
  pages["/hub"] = { links: ["/", ...linked.filter((p) => p !== "/hub")] };
  // The sitemap lists every linked page that is indexable and self-canonical (so only
  // /not-in-sitemap is missing from it), besides the bad entries seeded below.
  const unlisted = new Set([
    "/private/x",
    "/noindex",
    "/header-noindex",
    ...CANONICALISED,
    "/not-in-sitemap",
    "/open.pdf",
    "/paid",
  ]);
  const listed = [...linked, "/d2", "/d3", "/d4", "/d5"].filter((p) => !unlisted.has(p));
  const routes = base(o, pages, {
    // Content-Usage allows AI training while every training crawler is disallowed: a conflict.
    "/robots.txt": robotsRoute(
      `User-agent: *\nDisallow: /private\nFoo: bar\nContent-Usage: train-ai=y\n\n` +
        `User-agent: GPTBot\nUser-agent: ClaudeBot\nUser-agent: CCBot\n` +
        `User-agent: Google-Extended\nDisallow: /\n\nSitemap: ${o}/sitemap.xml\n`,
    ),
    // Discovery documents, each broken its own way (the authorization server's is valid).
    "/.well-known/api-catalog": json({ linkset: "not an array" }),
    "/.well-known/oauth-protected-resource": json({ resource: "https://other.example" }),
    "/.well-known/oauth-authorization-server": json({
      issuer: o,
      response_types_supported: ["code"],
    }),
    "/.well-known/mcp/server-card.json": json('{"name": "io.example/mcp"'),
    "/.well-known/http-message-signatures-directory": json({ keys: [{ crv: "Ed25519" }] }),
    // Pay per crawl: a price, not a 4xx or a broken link.
    "/paid": { status: 402, body: "Payment required", headers: { "crawler-price": "USD 0.01" } },
    "/llms.txt": robotsRoute("Our site\n\n## Pages\n\n- home page\n"),
    "/sitemap.xml": sitemapRoute([
      o + "/",
      o + "/clean-1",
      o + "/orphan",
      o + "/gone-sitemap",
      o + "/old",
      o + "/noindex",
      o + "/header-noindex",
      o + "/canon-home",
      o + "/frame-only",
      ...listed.filter((p) => p !== "/clean-1").map((p) => o + p),
    ]),
    "/orphan": html(basePage(o, "/orphan", "orphan")),
    "/frameset": html(framesetPage(o)),
    // Reached only through /frameset's frame; listed in the sitemap, and not an orphan.
    "/frame-only": html(basePage(o, "/frame-only", "frame-only", { lang: null })),
    "/js/jquery-1.8.3.min.js": jqueryFile("1.8.3"),
    "/js/jquery-3.7.1.min.js": jqueryFile("3.7.1"),
    "/vendor/jquery-1.8.3.min.js": jqueryFile("3.7.1"),
    "/js/lib.js": jqueryFile("1.8.3"),
    "/js/app.bundle.js": jqueryBundle("1.8.3"),
    "/js/site.js": jqueryBundle("3.7.1"),
    "/site.css": file("text/css", "body { margin: 0 }"),
    "/favicon.ico": file("image/x-icon"),
    "/fonts/ok.woff2": file("font/woff2"),
    "/x@2x.png": file("image/png"),
    "/clip.mp4": file("video/mp4"),
    "/subs.vtt": file("text/vtt", "WEBVTT"),
    "/head-405.png": {
      handler: (req) =>
        req.method === "HEAD"
          ? new Response(null, { status: 405 })
          : new Response("png", { headers: { "content-type": "image/png" } }),
    },
    "/a": undefined,
    "/old": redirect("/clean-1"),
    "/r1": redirect("/r2"),
    "/r2": redirect("/clean-2"),
    "/l1": redirect("/l2"),
    "/l2": redirect("/l1"),
    "/boom": { status: 500, body: "oops" },
    "/broken": brokenBody,
    "/canon-relative": html(
      basePage(o, "/canon-relative", "canon-relative").replace(
        `href="${o}/canon-relative"`,
        'href="/canon-relative"',
      ),
    ),
    "/canon-home": canonTo(o, "/canon-home", "/"),
    "/canon-gone": canonTo(o, "/canon-gone", "/gone-canonical"),
    "/canon-redirect": canonTo(o, "/canon-redirect", "/old"),
    "/canon-noindex": canonTo(o, "/canon-noindex", "/noindex"),
    // Canonical to /canon-ok, which canonicalises to /clean-1: a chain.
    "/canon-chain": canonTo(o, "/canon-chain", "/canon-ok"),
    // A canonical loop of three hops: a → b → c → a.
    "/canon-loop-a": canonTo(o, "/canon-loop-a", "/canon-loop-b"),
    "/canon-loop-b": canonTo(o, "/canon-loop-b", "/canon-loop-c"),
    "/canon-loop-c": canonTo(o, "/canon-loop-c", "/canon-loop-a"),
    "/canon-ok": canonTo(o, "/canon-ok", "/clean-1"),
    "/no-charset": {
      body: basePage(o, "/no-charset", "no-charset").replace('<meta charset="utf-8">', ""),
      headers: { ...GOOD_HEADERS, "content-type": "text/html" },
    },
    // Linked files: one kept out of the index by header, one not.
    "/noindex.pdf": pdf({ "x-robots-tag": "noindex, nofollow" }),
    "/open.pdf": pdf(),
    "/uncompressed": { ...html(basePage(o, "/uncompressed", "uncompressed")), noCompress: true },
  });
  for (const [p, h] of Object.entries(HEADER_PAGES)) routes[p] = withHeaders(o, p, h);
  // A firewall refuses one AI search bot robots.txt allows (ai_bot_blocked_by_server).
  routes["/"] = { ...routes["/"]!, refuseAgents: ["Claude-SearchBot"] };
  return routes;
}

/** The main fixture site: every page-level check and most site-level ones. */
export const MAIN: LabelledSite = {
  name: "main",
  routes: mainRoutes,
  tls: true,
  timeoutMs: 5_000,
  clean: [
    "/clean-1",
    "/clean-2",
    "/frag-ok",
    "/strict-401-doctype",
    "/svg-links",
    "/resources-ok",
    "/renamed-jquery",
    "/site-js",
    "/hreflang-ok",
    "/hreflang-ok-de",
    "/new-jquery",
    "/inline-jquery-new",
    "/form-https",
    "/good-cookie",
    "/server-name",
    "/canon-ok",
    "/open.pdf",
    "/rich-ok",
  ],
  expect: {
    // indexability
    robots_txt_invalid: ["/robots.txt"],
    blocked_by_robots: ["/private/x"],
    http_4xx: ["/gone-refresh"],
    http_5xx: ["/boom"],
    fetch_failed: ["/broken"],
    noindex: ["/noindex", "/header-noindex"],
    head_tags_in_body: ["/head-in-body"],
    // Sitemap entries that 404, redirect, are noindex (meta, header, or a file's X-Robots-Tag)
    // or canonicalised away.
    sitemap_bad_entries: [
      "/gone-sitemap",
      "/old",
      "/noindex",
      "/header-noindex",
      "/canon-home",
      "/noindex.pdf",
    ],
    canonical_invalid: ["/canon-relative"],
    canonical_suspicious: ["/canon-home"],
    // Canonicals to a 404, a redirect and a noindex page.
    canonical_target_bad: ["/canon-gone", "/canon-redirect", "/canon-noindex"],
    // /canon-ok is the middle of the chain, not its start: it stays clean.
    // Every page of the three-hop loop starts a chain that comes back to it.
    canonical_chain: ["/canon-chain", "/canon-loop-a", "/canon-loop-b", "/canon-loop-c"],
    // The hub has only the home page's link, the deep chain one link each; every other page
    // has the home page's and the hub's.
    single_inlink_pages: ["/hub", "/d2", "/d3", "/d4", "/d5"],
    // Every other indexable page reached through links is in the sitemap.
    sitemap_missing_indexable: ["/not-in-sitemap"],
    x_robots_tag_non_html: ["/noindex.pdf"],
    hreflang_invalid: ["/hreflang-bad"],
    hreflang_cluster: ["/hreflang-no-self"],
    // /hreflang-no-self names /clean-1, which does not name it back either.
    hreflang_no_return: ["/hreflang-one-way", "/hreflang-no-self"],
    hreflang_target_bad: ["/hreflang-bad-targets"],
    // Every hreflang page but the complete cluster lacks an x-default.
    hreflang_x_default_missing: [
      "/hreflang-bad",
      "/hreflang-no-self",
      "/hreflang-one-way",
      "/hreflang-bad-targets",
    ],
    ai_crawler_rules: ["/robots.txt"],
    // agents: the home page's firewall refuses Claude-SearchBot, which robots.txt allows; the
    // matrix names the home page (training crawlers kept out by robots.txt, one AI search bot
    // by the server).
    ai_bot_blocked_by_server: ["/"],
    ai_bot_access: ["/"],
    content_signals: ["/robots.txt"],
    content_signal_conflict: ["/robots.txt"],
    api_catalog_invalid: ["/.well-known/api-catalog"],
    oauth_metadata_invalid: ["/.well-known/oauth-protected-resource"],
    mcp_server_card_invalid: ["/.well-known/mcp/server-card.json"],
    web_bot_auth_directory_invalid: ["/.well-known/http-message-signatures-directory"],
    pay_per_crawl: ["/paid"],
    // structure
    title_missing: ["/no-title"],
    title_length: ["/short-title"],
    title_duplicate: ["/same-title-1", "/same-title-2"],
    meta_description_missing: ["/no-desc"],
    meta_description_length: ["/short-desc"],
    meta_description_duplicate: ["/same-desc-1", "/same-desc-2"],
    duplicate_head_tags: ["/two-titles"],
    h1_missing: ["/no-h1", "/frameset"],
    heading_order: ["/h4"],
    // /frame-only is found through a frame only: crawled like a linked page.
    html_lang_missing: ["/no-lang", "/frame-only"],
    html_lang_invalid: ["/bad-lang"],
    // The client-rendered shell is thin too.
    thin_content: ["/thin", "/frameset"],
    likely_client_rendered: ["/csr"],
    duplicate_content: ["/dup-1", "/dup-2"],
    url_case_duplicates: ["/Case-Page", "/case-page"],
    parameter_duplicates: ["/list?sort=asc", "/list?sort=desc"],
    near_duplicate_content: ["/near-1", "/near-2"],
    // The http:// link fails on this https-only server: a broken link as well as an http link.
    broken_internal_links: ["/links-broken", "/http-link"],
    broken_fragment: ["/frag-broken"],
    broken_resources: ["/broken-img", "/broken-css", "/broken-font", "/broken-frame"],
    // A link into a chain or a loop is a link to a redirect too.
    internal_redirect_links: ["/links-redirect", "/links-chain", "/links-loop"],
    redirect_chain: ["/r1"],
    redirect_loop: ["/l1"],
    // Any meta refresh is reported, the 30-second ones that lead to the error pages too.
    meta_refresh: ["/refresh", "/refresh-4xx", "/refresh-5xx", "/refresh-fail"],
    uncrawlable_links: ["/js-link"],
    link_text_generic: ["/click-here"],
    image_alt_missing: ["/no-alt"],
    structured_data_invalid: ["/bad-jsonld"],
    orphan_page: ["/orphan"],
    deep_page: ["/d5"],
    url_hygiene: ["/Some_Page", "/Case-Page"],
    doctype_missing: ["/no-doctype"],
    doctype_quirks: ["/quirks-doctype", "/javadoc-doctype"],
    doctype_limited_quirks: ["/loose-doctype"],
    charset_missing: ["/no-charset"],
    picture_without_img: ["/picture"],
    dead_end_page: ["/dead-end"],
    structured_data_missing: ["/no-jsonld"],
    // A site-wide verdict that names the start URL.
    structured_data_coverage: ["/"],
    llms_txt_malformed: ["/llms.txt"],
    // security
    mixed_content_active: ["/mixed-script"],
    mixed_content_passive: ["/mixed-img"],
    protocol_relative_resources: ["/proto-rel"],
    http_links: ["/http-link"],
    insecure_form: ["/form-http"],
    hsts_missing: ["/weak-hsts"],
    csp_missing: ["/no-csp"],
    clickjacking_unprotected: ["/no-frame-rule"],
    mime_sniffing_unprotected: ["/no-nosniff"],
    hardening_headers: ["/unsafe-referrer"],
    cookie_flags: ["/cookie"],
    version_disclosure: ["/server-version"],
    vulnerable_js_library: ["/old-jquery", "/inline-jquery", "/lib-jquery", "/bundle-jquery"],
    // performance
    html_too_large: ["/huge"],
    html_large: ["/large"],
    no_text_compression: ["/uncompressed"],
    render_blocking_scripts: ["/blocking-script"],
    unsized_images: ["/unsized-img"],
    dom_size: ["/big-dom"],
    // mobile
    viewport_missing: ["/no-viewport"],
    viewport_not_responsive: ["/fixed-viewport"],
    zoom_disabled: ["/no-zoom"],
    legacy_plugins: ["/embed"],
    // structured data validation
    rich_result_invalid: ["/rich-no-price", "/rich-breadcrumb", "/rich-faq", "/rich-business"],
    schema_type_unknown: ["/schema-typo", "/schema-context"],
  },
};

/**
 * Checks that cannot be made applicable-and-quiet on loopback (the main site still must not name
 * them, which the test asserts like any other false positive).
 */
export const QUIET_NOT_APPLICABLE: Record<string, string> = {
  http_not_redirected:
    "on https the probe goes to http://host/ on port 80, which loopback tests do not serve",
};

/** Valid discovery documents and a content signal that contradicts nothing. */
const VALID_AGENT_DOCS = (o: string): Routes => ({
  "/robots.txt": robotsRoute(
    `User-agent: *\nAllow: /\nContent-Signal: search=yes, ai-train=no\nSitemap: ${o}/sitemap.xml\n`,
  ),
  "/.well-known/mcp/server-card.json": json({
    name: "io.example/mcp",
    version: "1.0.0",
    remotes: [{ type: "streamable-http", url: `${o}/mcp` }],
  }),
  "/.well-known/http-message-signatures-directory": json({
    keys: [{ kty: "OKP", crv: "Ed25519", x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }],
  }),
});

/** Small variants for site-wide verdicts that exclude the main site's (see the module doc). */
export const VARIANTS: LabelledSite[] = [
  variant(
    "bare-http",
    (o) =>
      base(o, { "/a": { body: '<iframe src="http://widgets.test/frame"></iframe>' } }, {
        "/robots.txt": undefined,
        "/sitemap.xml": undefined,
        "/llms.txt": undefined,
        // Nothing for agents: no Markdown, no Link header, no API catalog.
        "/": html(basePage(o, "/", "home")),
        "/.well-known/api-catalog": undefined,
      }),
    {
      robots_txt_missing: ["/robots.txt"],
      sitemap_missing: ["/sitemap.xml"],
      llms_txt_missing: ["/llms.txt"],
      markdown_on_request_missing: ["/"],
      agent_link_headers_missing: ["/"],
      agent_discovery_missing: ["/"],
      not_https: ["/", "/a"],
      http_not_redirected: ["/"],
      http_subresources: ["/a"],
    },
    { tls: false },
  ),
  variant(
    "robots-down",
    (o) => base(o, {}, { "/robots.txt": { status: 503, body: "down" } }),
    { robots_txt_unreachable: ["/robots.txt"] },
  ),
  variant(
    "sitemap-not-xml-home-noindex",
    (o) =>
      base(o, { "/": { head: '<meta name="robots" content="noindex">' } }, {
        "/sitemap.xml": { body: "<foo/>", headers: { "content-type": "text/xml" } },
        // The agents' documents and signals, valid: the quiet labels of their checks.
        ...VALID_AGENT_DOCS(o),
      }),
    {
      noindex: ["/"],
      noindex_sitewide: ["/"],
      // Its evidence names no URL (the problem text names the sitemap): labelled as the site.
      sitemap_invalid: [SITE],
      // Declared (reported), and contradicting nothing.
      content_signals: ["/robots.txt"],
    },
  ),
  variant(
    "googlebot-blocked",
    (o) => base(o, {}, { "/robots.txt": robotsRoute("User-agent: Googlebot\nDisallow: /\n") }),
    {
      start_url_blocked: ["/"],
      // Classic search is kept out by robots.txt: the access matrix names its class.
      ai_bot_access: ["/"],
      // /sitemap.xml itself is disallowed for Googlebot: a sitemap Google cannot read.
      sitemap_invalid: [SITE],
    },
  ),
  variant(
    "our-bot-blocked",
    (o) => base(o, {}, { "/robots.txt": robotsRoute("User-agent: SerpwrightBot\nDisallow: /\n") }),
    {
      crawler_blocked: ["/"],
      // "Blocked" means blocked for the auditing crawler: with our own token disallowed, the
      // start URL and the sitemap's entries are reported as blocked too (Google may still fetch
      // them; crawler_blocked is the finding that says why). Labelled as what the service promises.
      blocked_by_robots: ["/"],
      sitemap_bad_entries: ["/"],
    },
  ),
  variant("home-error", (o) => base(o, {}, { "/": { status: 404, body: "gone" } }), {
    home_page_error: ["/"],
    // The home page's error is also what /a links to, what the sitemap lists, and why nothing
    // links to /a.
    broken_internal_links: ["/a"],
    sitemap_bad_entries: ["/"],
    orphan_page: ["/a"],
  }),
  // An untrusted certificate fails every fetch: robots.txt, the sitemap, llms.txt, the home page.
  variant("untrusted-certificate", (o) => base(o), {
    tls_invalid: ["/"],
    home_page_error: ["/"],
    robots_txt_unreachable: ["/robots.txt"],
    sitemap_missing: ["/sitemap.xml"],
    llms_txt_missing: ["/llms.txt"],
  }, { untrusted: true }),
  // Both pages are over the threshold and named; very slow replaces slow.
  variant("slow", (o) => delayed(base(o), 850), { slow_ttfb: ["/", "/a"] }, { timeoutMs: 5_000 }),
  variant("very-slow", (o) => delayed(base(o), 1_850), { very_slow_ttfb: ["/", "/a"] }, {
    timeoutMs: 5_000,
  }),
];

function variant(
  name: string,
  routes: (o: string) => Routes,
  expect: Record<string, string[]> = {},
  opts: { tls?: boolean; untrusted?: boolean; timeoutMs?: number } = {},
): LabelledSite {
  return {
    name,
    routes,
    tls: opts.tls ?? true,
    untrusted: opts.untrusted,
    timeoutMs: opts.timeoutMs ?? 3_000,
    expect,
    clean: [],
  };
}

/** Every HTML page of `r` answers after `ms`. */
function delayed(r: Routes, ms: number): Routes {
  return { ...r, "/": { ...r["/"]!, delayMs: ms }, "/a": { ...r["/a"]!, delayMs: ms } };
}
