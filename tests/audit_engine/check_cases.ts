/**
 * The manifest of check fixtures: for every check id, a small loopback site on which it must fire
 * and one on which it must not (where possible, one the check applies to). Each site is the clean
 * base site below with one change. every_check.test.ts audits them all and asserts through
 * `runAuditDetailed`'s tallies; a check missing from this table fails that test.
 */
import {
  GOOD_HEADERS,
  html,
  page,
  type PageSpec,
  robotsRoute,
  type Route,
  sitemapRoute,
} from "../helpers/sites.ts";

export type Routes = Record<string, Route | undefined>;

export interface SiteCase {
  /** Routes for the site at `origin`; a path mapped to undefined answers 404. */
  routes: (origin: string) => Routes;
  /** https with the fixture certificate (default true). */
  tls?: boolean;
  /** Do not trust the fixture certificate (TLS failures). */
  untrusted?: boolean;
  timeoutMs?: number;
}

export interface CheckCase {
  fire: SiteCase;
  quiet: SiteCase;
  /** The quiet site cannot make the check applicable on loopback (say why). */
  quietNotApplicable?: string;
}

const TITLES: Record<string, string> = {};
/** A page of the base site: unique title, description and text per key, self-canonical. */
export function basePage(o: string, path: string, key: string, spec: PageSpec = {}): string {
  TITLES[key] ??= `Fixture page ${key} about careful site audits`;
  return page({
    key,
    title: TITLES[key],
    description: `Fixture page ${key}: a clean page with a helpful summary that is long enough.`,
    h1: `Heading of page ${key}`,
    links: path === "/" ? ["/a"] : ["/"],
    ...spec,
    head: `<link rel="canonical" href="${o}${path}">${spec.jsonLd === false ? "" : jsonLd(key)}${
      spec.head ?? ""
    }`,
  });
}

/** A valid schema.org block (structured data coverage). */
function jsonLd(key: string): string {
  const data = { "@context": "https://schema.org", "@type": "WebPage", name: `Page ${key}` };
  return `<script type="application/ld+json">${JSON.stringify(data)}</script>`;
}

/** A well-formed llms.txt (llmstxt.org: an H1, a summary, H2 sections of link lists). */
export function llmsTxt(o: string): Route {
  return robotsRoute(
    `# Fixture site\n\n> A site built for audit tests.\n\n## Pages\n\n- [Home](${o}/): start\n`,
  );
}

/** A small file of a type, for the resources fixture pages load (images, scripts, media). */
export const file = (type: string, body = "fixture"): Route => ({
  body,
  headers: { "content-type": type },
});

/** The files the fixture pages load: served, so only a seeded missing one is a broken resource. */
export const RESOURCE_ROUTES: Routes = {
  "/x.png": file("image/png"),
  "/a.png": file("image/png"),
  "/ok.png": file("image/png"),
  "/local.png": file("image/png"),
  "/a.webp": file("image/webp"),
  "/app.js": file("text/javascript", "window.app = 1;"),
  "/movie.swf": file("application/x-shockwave-flash"),
};

/** A valid RFC 9727 API catalog of the site at `o` (an RFC 9264 linkset). */
export const apiCatalog = (o: string): Route => ({
  body: JSON.stringify({
    linkset: [{
      anchor: `${o}/api`,
      "service-desc": [{ href: `${o}/api/openapi.json`, type: "application/json" }],
    }],
  }),
  headers: {
    "content-type": 'application/linkset+json; profile="https://www.rfc-editor.org/info/rfc9727"',
  },
});

/** The home page's Link header: its API catalog (RFC 9727 §4). */
export const AGENT_LINK = '</.well-known/api-catalog>; rel="api-catalog"';

/** A JSON document route. */
export const json = (data: unknown): Route => ({
  body: typeof data === "string" ? data : JSON.stringify(data),
  headers: { "content-type": "application/json" },
});

/**
 * The clean base site: robots.txt, llms.txt, a sitemap, "/" and "/a" linking each other, and the
 * files fixture pages load; for agents, the home page also answers Markdown on request and links
 * the API catalog it publishes.
 */
export function base(o: string, pages: Record<string, PageSpec> = {}, extra: Routes = {}): Routes {
  const routes: Routes = {
    ...RESOURCE_ROUTES,
    "/robots.txt": robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${o}/sitemap.xml\n`),
    "/llms.txt": llmsTxt(o),
    "/sitemap.xml": sitemapRoute([o + "/", o + "/a"]),
    "/": {
      ...html(basePage(o, "/", "home", pages["/"]), { link: AGENT_LINK }),
      markdown: "# Fixture home\n\nA clean page about careful site audits.\n",
    },
    "/a": html(basePage(o, "/a", "a", pages["/a"])),
    "/.well-known/api-catalog": apiCatalog(o),
  };
  for (const [p, spec] of Object.entries(pages)) {
    if (!(p in routes)) routes[p] = html(basePage(o, p, p, spec));
  }
  return { ...routes, ...extra };
}

export const clean: SiteCase = { routes: (o) => base(o) };

/**
 * The base site behind a firewall that answers 403 to one bot's user-agent token and 200 to
 * everyone else, while robots.txt allows everyone: only a request as that bot shows the block.
 */
export function firewalled(token: string): SiteCase {
  return {
    routes: (o) => {
      const r = base(o);
      for (const p of ["/", "/a"]) r[p] = { ...r[p]!, refuseAgents: [token] };
      return r;
    },
  };
}

/** robots.txt keeping every training crawler out (checks/agents.ts BOT_CLASSES.training). */
const TRAINING_BLOCKED = "User-agent: *\nAllow: /\n\n" +
  "User-agent: GPTBot\nUser-agent: ClaudeBot\nUser-agent: CCBot\nUser-agent: Google-Extended\n" +
  "Disallow: /\n";

/** Valid RFC 9728 / RFC 8414 documents of the site at `o`. */
const oauthDocs = (o: string): Routes => ({
  "/.well-known/oauth-protected-resource": json({ resource: o, authorization_servers: [o] }),
  "/.well-known/oauth-authorization-server": json({
    issuer: o,
    authorization_endpoint: `${o}/authorize`,
    token_endpoint: `${o}/token`,
    response_types_supported: ["code"],
  }),
});
const on = (pages: Record<string, PageSpec>, extra: Routes = {}): SiteCase => ({
  routes: (o) => base(o, pages, extra),
});
const withHeaders = (h: Record<string, string | null>): SiteCase => ({
  routes: (o) => {
    const headers: Record<string, string> = { ...GOOD_HEADERS };
    for (const [k, v] of Object.entries(h)) {
      if (v === null) delete headers[k];
      else headers[k] = v;
    }
    return base(o, {}, { "/": { body: basePage(o, "/", "home"), headers } });
  },
});
const plainHttp = (pages: Record<string, PageSpec> = {}): SiteCase => ({
  routes: (o) => base(o, pages),
  tls: false,
});
const redirect = (to: string, status = 301): Route => ({ status, headers: { location: to } });
/** A linked PDF, with extra headers. */
export const pdf = (h: Record<string, string> = {}): Route => ({
  body: "%PDF-1.4\n%fixture\n",
  headers: { "content-type": "application/pdf", ...h },
});
/** An hreflang cluster of the home page (en) and /a (de), for either page's head. */
const cluster = (o: string) =>
  `<link rel="alternate" hreflang="en" href="${o}/"><link rel="alternate" hreflang="de" href="${o}/a">`;
const body = (b: string): PageSpec => ({ body: b });
/** A jQuery file whose banner names `version`. */
export const jqueryFile = (version: string): Route =>
  file(
    "text/javascript",
    `/*! jQuery v${version} | (c) OpenJS Foundation and other contributors | jquery.org/license */\n` +
      "!function(e,t){}(this);",
  );
/** A minified jQuery with its banner stripped: only its code's `jquery:"…"` names the version. */
export const jqueryBundle = (version: string): Route =>
  file(
    "text/javascript",
    `!function(e,t){"use strict";var n="${"x".repeat(3000)}";` +
      `T.fn=T.prototype={jquery:"${version}",constructor:T,length:0};}(this);`,
  );
/** Inline SVG links as Graphviz and Javadoc write them: none is an uncrawlable link. */
export const SVG_LINKS = '<svg width="10" height="10"><g id="node1">' +
  '<a xlink:href="#node1"><text>fragment</text></a>' +
  '<a xlink:title="a node without a link"><text>title only</text></a>' +
  '<a xlink:href="/"><text>home</text></a><a href="#node2"><text>svg2</text></a>' +
  '</g><g id="node2"></g></svg>';
/** Doctypes of each document mode (domain/audit_engine/doctype.ts). */
export const DOCTYPE_HTML40 = '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Transitional//EN">';
/** A Javadoc frameset's doctype: its identifiers touch (issue 32), still quirks. */
export const DOCTYPE_JAVADOC_FRAMESET =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.0 Frameset//EN"' +
  '"http://www.w3.org/TR/REC-html40/frameset.dtd">';
export const DOCTYPE_HTML401_LOOSE =
  '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN" ' +
  '"http://www.w3.org/TR/html4/loose.dtd">';
export const DOCTYPE_HTML401_STRICT = '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" ' +
  '"http://www.w3.org/TR/html4/strict.dtd">';
const head = (h: string): PageSpec => ({ head: h });
const big = (bytes: number): PageSpec => ({ body: `<p>${"lorem ipsum ".repeat(bytes / 12)}</p>` });

/**
 * Ten pages /p1../p10 besides /a, linked from the home page; with `ring`, each also links to the
 * next (so every page has two inlinks), without it the home page is each one's only linker.
 */
function tenPages(ring: boolean): SiteCase {
  const ps = Array.from({ length: 10 }, (_, i) => `/p${i + 1}`);
  const pages: Record<string, PageSpec> = { "/": { links: ["/a", ...ps] } };
  ps.forEach((p, i) => (pages[p] = { links: ring ? ["/", "/a", ps[(i + 1) % 10]] : ["/"] }));
  const listed = (o: string) => sitemapRoute([o + "/", o + "/a", ...ps.map((p) => o + p)]);
  return { routes: (o) => base(o, pages, { "/sitemap.xml": listed(o) }) };
}

export const CASES: Record<string, CheckCase> = {
  // indexability
  robots_txt_unreachable: {
    fire: on({}, { "/robots.txt": { status: 503, body: "down" } }),
    quiet: clean,
  },
  robots_txt_invalid: {
    fire: on({}, { "/robots.txt": robotsRoute("User-agent: *\nFoo: bar\nDisallow: nope\n") }),
    quiet: clean,
  },
  robots_txt_missing: { fire: on({}, { "/robots.txt": undefined }), quiet: clean },
  start_url_blocked: {
    fire: on({}, { "/robots.txt": robotsRoute("User-agent: Googlebot\nDisallow: /\n") }),
    quiet: clean,
  },
  crawler_blocked: {
    fire: on({}, { "/robots.txt": robotsRoute("User-agent: SerpwrightBot\nDisallow: /\n") }),
    quiet: clean,
  },
  blocked_by_robots: {
    fire: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/private/x"] } }, {
          "/robots.txt": robotsRoute(
            `User-agent: *\nDisallow: /private\nSitemap: ${o}/sitemap.xml\n`,
          ),
        }),
    },
    quiet: clean,
  },
  home_page_error: { fire: on({}, { "/": { status: 404, body: "gone" } }), quiet: clean },
  http_4xx: {
    // A meta-refresh target nothing links to: no other check charges it.
    fire: on({ "/a": head('<meta http-equiv="refresh" content="30; url=/gone">') }),
    quiet: clean,
  },
  http_5xx: {
    fire: on({ "/a": head('<meta http-equiv="refresh" content="30; url=/boom">') }, {
      "/boom": { status: 500, body: "oops" },
    }),
    quiet: clean,
  },
  fetch_failed: {
    fire: {
      ...on({ "/a": head('<meta http-equiv="refresh" content="30; url=/slow">') }, {
        "/slow": { ...html("<p>late</p>"), delayMs: 1_500 },
      }),
      timeoutMs: 400,
    },
    quiet: clean,
  },
  noindex: { fire: on({ "/a": head('<meta name="robots" content="noindex">') }), quiet: clean },
  noindex_sitewide: {
    fire: on({ "/": head('<meta name="robots" content="noindex">') }),
    quiet: clean,
  },
  head_tags_in_body: {
    fire: on({ "/a": body('<meta name="robots" content="index">') }),
    quiet: clean,
  },
  sitemap_missing: {
    fire: on({}, {
      "/robots.txt": robotsRoute("User-agent: *\nAllow: /\n"),
      "/sitemap.xml": undefined,
    }),
    quiet: clean,
  },
  sitemap_invalid: {
    fire: on({}, { "/sitemap.xml": { body: "<foo/>", headers: { "content-type": "text/xml" } } }),
    quiet: clean,
  },
  sitemap_bad_entries: {
    fire: { routes: (o) => base(o, {}, { "/sitemap.xml": sitemapRoute([o + "/", o + "/gone"]) }) },
    quiet: clean,
  },
  canonical_invalid: {
    fire: {
      routes: (o) =>
        base(o, {}, {
          "/a": html(basePage(o, "/a", "a").replace(`href="${o}/a"`, 'href="/a"')),
        }),
    },
    quiet: clean,
  },
  canonical_suspicious: {
    fire: {
      routes: (o) =>
        base(o, {}, { "/a": html(basePage(o, "/a", "a").replace(`${o}/a"`, `${o}/"`)) }),
    },
    quiet: clean,
  },
  canonical_target_bad: {
    fire: {
      routes: (o) =>
        base(o, {}, { "/a": html(basePage(o, "/a", "a").replace(`${o}/a"`, `${o}/gone"`)) }),
    },
    quiet: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/b"] }, "/b": {} }, {
          "/a": html(basePage(o, "/a", "a").replace(`${o}/a"`, `${o}/b"`)),
        }),
    },
  },
  canonical_chain: {
    // /a names /b as canonical, /b (an indexable 200 page) names /c.
    fire: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/b", "/c"] }, "/c": {} }, {
          "/a": html(basePage(o, "/a", "a").replace(`${o}/a"`, `${o}/b"`)),
          "/b": html(basePage(o, "/b", "b").replace(`${o}/b"`, `${o}/c"`)),
        }),
    },
    quiet: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/b"] }, "/b": {} }, {
          "/a": html(basePage(o, "/a", "a").replace(`${o}/a"`, `${o}/b"`)),
        }),
    },
  },
  sitemap_missing_indexable: {
    // /b is linked from the home page, indexable and self-canonical, but not in the sitemap.
    fire: on({ "/": { links: ["/a", "/b"] }, "/b": {} }),
    quiet: clean,
  },
  x_robots_tag_non_html: {
    fire: on({ "/": { links: ["/a", "/doc.pdf"] } }, {
      "/doc.pdf": pdf({ "x-robots-tag": "noindex" }),
    }),
    quiet: on({ "/": { links: ["/a", "/doc.pdf"] } }, { "/doc.pdf": pdf() }),
  },
  hreflang_no_return: {
    // The home page names /a as its German version; /a names nothing back.
    fire: { routes: (o) => base(o, { "/": head(cluster(o)) }) },
    quiet: { routes: (o) => base(o, { "/": head(cluster(o)), "/a": head(cluster(o)) }) },
  },
  hreflang_target_bad: {
    // The home page names /old (a redirect to /a) as its German version.
    fire: {
      routes: (o) =>
        base(o, {
          "/": head(
            `<link rel="alternate" hreflang="en" href="${o}/">` +
              `<link rel="alternate" hreflang="de" href="${o}/old">`,
          ),
        }, { "/old": redirect("/a") }),
    },
    quiet: { routes: (o) => base(o, { "/": head(cluster(o)), "/a": head(cluster(o)) }) },
  },
  hreflang_x_default_missing: {
    fire: { routes: (o) => base(o, { "/": head(cluster(o)), "/a": head(cluster(o)) }) },
    quiet: {
      routes: (o) => {
        const full = cluster(o) + `<link rel="alternate" hreflang="x-default" href="${o}/">`;
        return base(o, { "/": head(full), "/a": head(full) });
      },
    },
  },
  hreflang_invalid: {
    fire: {
      routes: (o) =>
        base(o, { "/": head(`<link rel="alternate" hreflang="english" href="${o}/">`) }),
    },
    quiet: {
      routes: (o) =>
        base(o, {
          "/": head(
            `<link rel="alternate" hreflang="en" href="${o}/"><link rel="alternate" hreflang="de" href="${o}/a">`,
          ),
        }),
    },
  },
  hreflang_cluster: {
    fire: {
      routes: (o) => base(o, { "/": head(`<link rel="alternate" hreflang="de" href="${o}/a">`) }),
    },
    // A complete cluster without x-default is valid.
    quiet: {
      routes: (o) =>
        base(o, {
          "/": head(
            `<link rel="alternate" hreflang="en" href="${o}/"><link rel="alternate" hreflang="de" href="${o}/a">`,
          ),
        }),
    },
  },

  // structure
  title_missing: { fire: on({ "/a": { title: null } }), quiet: clean },
  title_length: { fire: on({ "/a": { title: "Short" } }), quiet: clean },
  title_duplicate: {
    fire: on({
      "/": { title: "The same title on two pages" },
      "/a": { title: "The same title on two pages" },
    }),
    quiet: clean,
  },
  meta_description_missing: { fire: on({ "/a": { description: null } }), quiet: clean },
  meta_description_length: { fire: on({ "/a": { description: "Too short." } }), quiet: clean },
  meta_description_duplicate: {
    fire: on({
      "/": { description: "One description shared by two pages, long enough for results." },
      "/a": { description: "One description shared by two pages, long enough for results." },
    }),
    quiet: clean,
  },
  duplicate_head_tags: { fire: on({ "/a": head("<title>A second title</title>") }), quiet: clean },
  h1_missing: { fire: on({ "/a": { h1: null } }), quiet: clean },
  heading_order: { fire: on({ "/a": body("<h4>Skipped a level</h4>") }), quiet: clean },
  html_lang_missing: { fire: on({ "/a": { lang: null } }), quiet: clean },
  html_lang_invalid: { fire: on({ "/a": { lang: "english" } }), quiet: clean },
  thin_content: { fire: on({ "/a": { words: false } }), quiet: clean },
  likely_client_rendered: {
    fire: on({
      "/a": { words: false, body: '<div id="root"></div><script src="/app.js" defer></script>' },
    }),
    quiet: clean,
  },
  // Same text as the home page (titles differ: text is what counts).
  duplicate_content: {
    fire: on({ "/a": { key: "home", h1: "Heading of page home" } }),
    quiet: clean,
  },
  // /A serves /a's page: a case-insensitive server.
  url_case_duplicates: {
    fire: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/A"] } }, { "/A": html(basePage(o, "/A", "a")) }),
    },
    quiet: clean,
  },
  // /a?sort=asc serves /a's page under a parameter, self-canonical.
  parameter_duplicates: {
    fire: {
      routes: (o) =>
        base(o, { "/": { links: ["/a", "/a?sort=asc"] } }, {
          "/a?sort=asc": html(basePage(o, "/a?sort=asc", "a")),
        }),
    },
    quiet: clean,
  },
  near_duplicate_content: {
    fire: on({
      "/a": {
        key: "home",
        h1: "Heading of page home",
        body: "<p>One more short sentence at the end.</p>",
      },
    }),
    quiet: clean,
  },
  broken_internal_links: { fire: on({ "/": { links: ["/a", "/missing"] } }), quiet: clean },
  broken_fragment: {
    // A missing section on another page, and on the page itself.
    fire: on({
      "/": { links: ["/a", "/a#pricing", "#faq"] },
      "/a": body('<h2 id="plans">Plans</h2>'),
    }),
    // Every kind of anchor there, and the fragments that are no anchors (`#`, `#top`, a text
    // fragment, a #! route); an SVG's xlink:href to its own node.
    quiet: on({
      "/": {
        links: ["/a", "/a#plans", "/a#legacy", "/a#caf%C3%A9", "#faq", "#", "#top", "#!/app"],
        body: '<section id="faq">Questions</section><a href="/a#:~:text=Plans">text</a>',
      },
      "/a": body('<h2 id="plans">Plans</h2><a name="legacy"></a><p id="café">Café</p>'),
    }),
  },
  broken_resources: {
    fire: on({ "/a": body('<img src="/gone.png" alt="" width="1" height="1">') }),
    quiet: on({ "/a": body('<img src="/x.png" alt="" width="1" height="1">') }),
  },
  internal_redirect_links: {
    fire: on({ "/": { links: ["/a", "/old"] } }, { "/old": redirect("/a") }),
    quiet: clean,
  },
  redirect_chain: {
    fire: on({ "/": { links: ["/r1"] } }, { "/r1": redirect("/r2"), "/r2": redirect("/a") }),
    quiet: on({ "/": { links: ["/r1"] } }, { "/r1": redirect("/a") }),
  },
  redirect_loop: {
    fire: on({ "/": { links: ["/a", "/l1"] } }, { "/l1": redirect("/l2"), "/l2": redirect("/l1") }),
    quiet: on({ "/": { links: ["/r1"] } }, { "/r1": redirect("/a") }),
  },
  meta_refresh: {
    fire: on({ "/a": head('<meta http-equiv="refresh" content="0; url=/">') }),
    quiet: clean,
  },
  uncrawlable_links: {
    fire: on({ "/a": body('<a href="javascript:void(0)">menu</a>') }),
    // Inline SVG: a fragment xlink:href, a Graphviz <a> with only xlink:title, a real link.
    quiet: on({ "/a": body(SVG_LINKS) }),
  },
  link_text_generic: { fire: on({ "/a": body('<a href="/">click here</a>') }), quiet: clean },
  image_alt_missing: {
    fire: on({ "/a": body('<img src="/x.png" width="1" height="1">') }),
    quiet: on({ "/a": body('<img src="/x.png" alt="" width="1" height="1">') }),
  },
  structured_data_invalid: {
    fire: on({ "/a": body('<script type="application/ld+json">{not json</script>') }),
    quiet: on({
      "/a": body(
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Thing"}</script>',
      ),
    }),
  },
  orphan_page: {
    fire: {
      routes: (o) =>
        base(o, { "/orphan": {} }, {
          "/sitemap.xml": sitemapRoute([o + "/", o + "/a", o + "/orphan"]),
        }),
    },
    quiet: clean,
  },
  single_inlink_pages: { fire: tenPages(false), quiet: tenPages(true) },
  deep_page: {
    fire: on({
      "/": { links: ["/a", "/d1"] },
      "/d1": { links: ["/d2"] },
      "/d2": { links: ["/d3"] },
      "/d3": { links: ["/d4"] },
      "/d4": { links: ["/d5"] },
      "/d5": {},
    }),
    quiet: clean,
  },
  url_hygiene: {
    fire: on({ "/": { links: ["/a", "/Some_Page"] }, "/Some_Page": {} }),
    quiet: clean,
  },
  doctype_missing: { fire: on({ "/a": { doctype: false } }), quiet: clean },
  // HTML 4.0 Transitional is quirks; HTML 4.01 Transitional with its system identifier is not.
  doctype_quirks: {
    fire: on({ "/a": { doctype: DOCTYPE_HTML40 } }),
    quiet: on({ "/a": { doctype: DOCTYPE_HTML401_LOOSE } }),
  },
  doctype_limited_quirks: {
    fire: on({ "/a": { doctype: DOCTYPE_HTML401_LOOSE } }),
    quiet: on({ "/a": { doctype: DOCTYPE_HTML401_STRICT } }),
  },
  charset_missing: {
    fire: {
      routes: (o) =>
        base(o, {}, {
          "/a": {
            body: basePage(o, "/a", "a").replace('<meta charset="utf-8">', ""),
            headers: { ...GOOD_HEADERS, "content-type": "text/html" },
          },
        }),
    },
    quiet: clean,
  },
  picture_without_img: {
    fire: on({ "/a": body('<picture><source srcset="/a.webp"></picture>') }),
    quiet: on({
      "/a": body(
        '<picture><source srcset="/a.webp"><img src="/a.png" alt="" width="1" height="1"></picture>',
      ),
    }),
  },
  dead_end_page: {
    fire: on({ "/a": { links: [] } }),
    // A page whose only way on is a same-site frame is not a dead end.
    quiet: on({ "/a": { links: [], body: '<iframe src="/" title="Home"></iframe>' } }),
  },

  // security
  not_https: { fire: plainHttp(), quiet: clean },
  http_not_redirected: {
    fire: plainHttp(),
    quiet: clean,
    quietNotApplicable:
      "on https the probe goes to http://host/ on port 80, which loopback tests do not serve",
  },
  tls_invalid: { fire: { ...clean, untrusted: true }, quiet: clean },
  mixed_content_active: {
    fire: on({ "/a": head('<script src="http://cdn.test/app.js" defer></script>') }),
    quiet: clean,
  },
  mixed_content_passive: {
    fire: on({ "/a": body('<img src="http://cdn.test/i.png" alt="" width="1" height="1">') }),
    quiet: clean,
  },
  http_subresources: {
    fire: plainHttp({ "/a": body('<iframe src="http://widgets.test/frame"></iframe>') }),
    // Same-host http resources on an http page are part of not_https, not a second finding.
    quiet: plainHttp({ "/a": body('<img src="/local.png" alt="" width="1" height="1">') }),
  },
  protocol_relative_resources: {
    fire: on({ "/a": body('<img src="//cdn.test/i.png" alt="" width="1" height="1">') }),
    quiet: clean,
  },
  http_links: {
    fire: {
      routes: (o) => base(o, { "/a": body(`<a href="${o.replace("https:", "http:")}/">home</a>`) }),
    },
    quiet: clean,
  },
  insecure_form: {
    fire: on({ "/a": body('<form action="http://forms.test/post"><input name="q"></form>') }),
    quiet: on({ "/a": body('<form action="https://forms.test/post"><input name="q"></form>') }),
  },
  hsts_missing: { fire: withHeaders({ "strict-transport-security": "max-age=300" }), quiet: clean },
  csp_missing: {
    fire: withHeaders({ "content-security-policy": null, "x-frame-options": "DENY" }),
    quiet: clean,
  },
  clickjacking_unprotected: {
    fire: withHeaders({ "content-security-policy": "default-src 'self'" }),
    quiet: withHeaders({
      "content-security-policy": "default-src 'self'",
      "x-frame-options": "SAMEORIGIN",
    }),
  },
  mime_sniffing_unprotected: {
    fire: withHeaders({ "x-content-type-options": null }),
    quiet: clean,
  },
  hardening_headers: { fire: withHeaders({ "referrer-policy": "unsafe-url" }), quiet: clean },
  cookie_flags: {
    fire: withHeaders({ "set-cookie": "sid=1; Path=/" }),
    quiet: withHeaders({ "set-cookie": "sid=1; Path=/; Secure; HttpOnly; SameSite=Lax" }),
  },
  version_disclosure: {
    fire: withHeaders({ server: "nginx/1.18.0" }),
    quiet: withHeaders({ server: "nginx" }),
  },
  vulnerable_js_library: {
    // Issue 32: a file named like nothing, whose content is jQuery 1.8.3.
    fire: on({ "/a": head('<script src="/js/lib.js" defer></script>') }, {
      "/js/lib.js": jqueryFile("1.8.3"),
    }),
    // Named 1.8.3, but the file is 3.7.1: the name alone is not evidence.
    quiet: on({ "/a": head('<script src="/js/jquery-1.8.3.min.js" defer></script>') }, {
      "/js/jquery-1.8.3.min.js": jqueryFile("3.7.1"),
    }),
  },

  // performance
  slow_ttfb: {
    fire: {
      routes: (o) => {
        const r = base(o);
        return { ...r, "/": { ...r["/"]!, delayMs: 850 }, "/a": { ...r["/a"]!, delayMs: 850 } };
      },
    },
    quiet: clean,
  },
  very_slow_ttfb: {
    fire: {
      routes: (o) => {
        const r = base(o);
        return { ...r, "/": { ...r["/"]!, delayMs: 1_850 }, "/a": { ...r["/a"]!, delayMs: 1_850 } };
      },
    },
    quiet: clean,
  },
  html_too_large: { fire: on({ "/a": big(2.2 * 1024 * 1024) }), quiet: clean },
  html_large: { fire: on({ "/a": big(1.2 * 1024 * 1024) }), quiet: clean },
  no_text_compression: {
    fire: {
      routes: (o) => ({ ...base(o), "/a": { ...html(basePage(o, "/a", "a")), noCompress: true } }),
    },
    quiet: clean,
  },
  render_blocking_scripts: {
    fire: on({ "/a": head('<script src="/app.js"></script>') }),
    quiet: clean,
  },
  unsized_images: { fire: on({ "/a": body('<img src="/x.png" alt="x">') }), quiet: clean },
  dom_size: { fire: on({ "/a": body("<span></span>".repeat(1_600)) }), quiet: clean },

  // mobile
  viewport_missing: { fire: on({ "/a": { viewport: null } }), quiet: clean },
  viewport_not_responsive: { fire: on({ "/a": { viewport: "width=1024" } }), quiet: clean },
  zoom_disabled: {
    fire: on({ "/a": { viewport: "width=device-width, initial-scale=1, user-scalable=no" } }),
    quiet: clean,
  },
  legacy_plugins: { fire: on({ "/a": body('<embed src="/movie.swf">') }), quiet: clean },

  // agent-readiness
  llms_txt_missing: { fire: on({}, { "/llms.txt": undefined }), quiet: clean },
  llms_txt_malformed: {
    fire: on({}, { "/llms.txt": robotsRoute("Our site\n\n## Pages\n\n- home page\n") }),
    quiet: clean,
  },
  ai_crawler_rules: {
    fire: on({}, {
      "/robots.txt": robotsRoute("User-agent: *\nAllow: /\n\nUser-agent: GPTBot\nDisallow: /\n"),
    }),
    quiet: clean,
  },
  structured_data_missing: { fire: on({ "/a": { jsonLd: false } }), quiet: clean },
  structured_data_coverage: { fire: on({ "/a": { jsonLd: false } }), quiet: clean },

  // agents (checks/agents.ts)
  ai_bot_blocked_by_server: { fire: firewalled("GPTBot"), quiet: clean },
  ai_bot_access: { fire: firewalled("GPTBot"), quiet: clean },
  content_signals: {
    fire: on({}, {
      "/robots.txt": robotsRoute(
        `User-agent: *\nContent-Signal: search=yes, ai-train=no\nAllow: /\n`,
      ),
    }),
    quiet: clean,
  },
  content_signal_conflict: {
    fire: on({}, {
      "/robots.txt": robotsRoute(TRAINING_BLOCKED + "Content-Signal: ai-train=yes\n"),
    }),
    quiet: on({}, {
      "/robots.txt": robotsRoute(TRAINING_BLOCKED + "Content-Usage: train-ai=n, search=y\n"),
    }),
  },
  markdown_on_request_missing: {
    fire: {
      routes: (o) => ({ ...base(o), "/": html(basePage(o, "/", "home"), { link: AGENT_LINK }) }),
    },
    quiet: clean,
  },
  agent_link_headers_missing: {
    fire: { routes: (o) => ({ ...base(o), "/": html(basePage(o, "/", "home")) }) },
    quiet: clean,
  },
  agent_discovery_missing: {
    fire: on({}, { "/.well-known/api-catalog": undefined }),
    quiet: clean,
  },
  api_catalog_invalid: {
    fire: on({}, { "/.well-known/api-catalog": json({ linkset: [{ item: "/api" }] }) }),
    quiet: clean,
  },
  oauth_metadata_invalid: {
    fire: on({}, {
      "/.well-known/oauth-protected-resource": json({ authorization_servers: ["not a url"] }),
    }),
    quiet: { routes: (o) => base(o, {}, oauthDocs(o)) },
  },
  mcp_server_card_invalid: {
    fire: on({}, { "/.well-known/mcp/server-card.json": json('{"name": "io.example/mcp",') }),
    quiet: {
      routes: (o) =>
        base(o, {}, {
          "/.well-known/mcp/server-card.json": json({
            name: "io.example/mcp",
            version: "1.0.0",
            remotes: [{ type: "streamable-http", url: `${o}/mcp` }],
          }),
        }),
    },
  },
  web_bot_auth_directory_invalid: {
    fire: on({}, { "/.well-known/http-message-signatures-directory": json({ keys: [] }) }),
    quiet: on({}, {
      "/.well-known/http-message-signatures-directory": json({
        keys: [{ kty: "OKP", crv: "Ed25519", x: "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs" }],
      }),
    }),
  },
  pay_per_crawl: {
    fire: {
      routes: (o) => ({
        ...base(o),
        "/a": { status: 402, body: "Payment required", headers: { "crawler-price": "USD 0.01" } },
      }),
    },
    quiet: clean,
  },
};

// --- Structured data validation (checks/structured_data.ts) ---------------------------------

/** A JSON-LD block as a script element (for a page's head or body). */
export function ldScript(data: unknown): string {
  return `<script type="application/ld+json">${JSON.stringify(data)}</script>`;
}
const ld = (data: unknown): PageSpec => ({ body: ldScript(data) });
const SCHEMA = "https://schema.org";

Object.assign(
  CASES,
  {
    rich_result_invalid: {
      fire: on({ "/a": ld({ "@context": SCHEMA, "@type": "Product", name: "Mug" }) }),
      quiet: on({
        "/a": ld({
          "@context": SCHEMA,
          "@type": "Product",
          name: "Mug",
          offers: { "@type": "Offer", price: "9.50", priceCurrency: "EUR" },
        }),
      }),
    },
    schema_type_unknown: {
      fire: on({ "/a": ld({ "@context": SCHEMA, "@type": "Prodcut", name: "Mug" }) }),
      quiet: clean,
    },
  } satisfies Record<string, CheckCase>,
);
