/**
 * Indexability: can search engines fetch and index the site's pages (robots.txt, status codes,
 * noindex, sitemaps, canonicals, hreflang).
 *
 * @module
 */
import type { Check, CrawlResult, PageContext, UrlRecord } from "../types.ts";
import { flag, isNoindex, resolveCanonicals, stripWww } from "./helpers.ts";

/** Fetched internal URLs (responses and failures; not robots-blocked or unvisited). */
function attempted(site: CrawlResult): UrlRecord[] {
  return site.records.filter((r) => r.state === "fetched" || r.state === "failed");
}

/**
 * Failing URLs whose failure another check already charges, so each defect counts once, where it
 * is fixed: the home page (home_page_error), URLs crawled pages link to, directly or through
 * redirects (broken_internal_links, on the linking pages), sitemap entries
 * (sitemap_bad_entries) and canonical targets (canonical_target_bad). What is left (a redirect
 * or meta-refresh target nothing else points at) is charged by the status checks.
 */
function chargedElsewhere(site: CrawlResult): Set<number> {
  const out = new Set<number>();
  const mark = (r: UrlRecord | undefined) => {
    // The URL and every hop of its redirects (a link to a redirect to a 404 is a broken link).
    for (let i = 0; r !== undefined && i < 11 && !out.has(r.id); i++) {
      out.add(r.id);
      r = r.location >= 0 ? site.records[r.location] : undefined;
    }
  };
  mark(site.start);
  for (const r of site.records) {
    if (r.inSitemap) mark(r);
    if (r.canonicalOther !== null) mark(site.byUrl.get(r.canonicalOther));
    if (r.html && r.status >= 200 && r.status < 300) {
      for (const id of r.links) mark(site.records[id]);
    }
  }
  return out;
}

function countFailing(site: CrawlResult, bad: (r: UrlRecord) => boolean) {
  const tried = attempted(site);
  if (tried.length === 0) return null;
  const failing = tried.filter(bad);
  if (failing.length === 0) return { eligible: tried.length, affected: 0 };
  const elsewhere = chargedElsewhere(site);
  return {
    eligible: tried.length,
    affected: failing.filter((r) => !elsewhere.has(r.id)).length,
  };
}

function countStatus(site: CrawlResult, lo: number, hi: number) {
  return countFailing(site, (r) => r.status >= lo && r.status <= hi);
}

const HREFLANG_LANG = /^[a-z]{2,3}$/i;

function hreflangProblems(
  p: PageContext,
): { invalid: boolean; cluster: boolean; xDefault: boolean } {
  let invalid = false;
  let selfRef = false;
  let xDefault = false;
  const langs = new Map<string, string>();
  let multi = false;
  for (const h of p.facts.hreflangs) {
    const lang = h.lang.trim().toLowerCase();
    let href: URL | null = null;
    try {
      href = /^https?:\/\//i.test(h.href.trim()) ? new URL(h.href.trim()) : null;
    } catch {
      href = null;
    }
    if (href === null) invalid = true;
    if (lang === "x-default") xDefault = true;
    else if (!HREFLANG_LANG.test(lang.split("-")[0])) invalid = true;
    if (href) {
      if (href.href === p.url.href) selfRef = true;
      const prev = langs.get(lang);
      if (prev !== undefined && prev !== href.href) multi = true;
      langs.set(lang, href.href);
    }
  }
  // x-default is optional (Google recommends it, does not require it).
  return { invalid, cluster: !selfRef || multi, xDefault };
}

function finalOf(site: CrawlResult, r: UrlRecord): UrlRecord | null {
  let cur = r;
  for (let i = 0; i < 11; i++) {
    if (cur.location < 0) return cur;
    cur = site.records[cur.location];
  }
  return null;
}

export const indexabilityChecks: Check[] = [
  {
    id: "robots_txt_unreachable",
    category: "indexability",
    severity: "critical",
    title: "robots.txt answers 5xx or cannot be fetched",
    detects: "/robots.txt answers a server error or times out; Google may stop crawling the site.",
    scope: "site",
    evaluate: (s) => flag(s.robots.state === "unreachable"),
  },
  {
    id: "robots_txt_invalid",
    category: "indexability",
    severity: "warning",
    title: "robots.txt has lines crawlers reject",
    detects:
      "Unknown directives, rules before any User-agent, patterns not starting with / or *, a " +
      "misplaced $, a relative Sitemap URL, or a file over 500 KiB.",
    scope: "site",
    evaluate: (s) => s.robots.state === "ok" ? flag(s.robots.problems.length > 0) : null,
  },
  {
    id: "robots_txt_missing",
    category: "indexability",
    severity: "info",
    title: "No robots.txt file",
    detects: "/robots.txt answers 404/410 (allowed: crawlers treat it as allow-all).",
    scope: "site",
    evaluate: (s) => flag(s.robots.state === "missing"),
  },
  {
    id: "start_url_blocked",
    category: "indexability",
    severity: "critical",
    title: "robots.txt blocks the home page for search engines",
    detects: "The start URL is disallowed for Googlebot (or, without a Googlebot group, for *).",
    scope: "site",
    evaluate: (s) => flag(!s.robots.isAllowed(s.startUrl, "Googlebot")),
  },
  {
    id: "crawler_blocked",
    category: "indexability",
    severity: "info",
    title: "robots.txt blocks SerpwrightBot, so the site could not be audited",
    detects: "The start URL is disallowed for our own token; we honour it and crawl nothing.",
    scope: "site",
    evaluate: (s) => flag(s.ownBotBlocked),
  },
  {
    id: "blocked_by_robots",
    category: "indexability",
    severity: "info",
    title: "Internal URLs blocked by robots.txt",
    detects: "Internal URLs found in links or the sitemap that robots.txt disallows (not fetched).",
    scope: "site",
    evaluate: (s) => {
      const known = s.records.filter((r) => r.state !== "unvisited" && r.state !== "queued");
      if (known.length === 0) return null;
      return {
        eligible: known.length,
        affected: known.filter((r) => r.state === "blocked").length,
      };
    },
  },
  {
    id: "home_page_error",
    category: "indexability",
    severity: "critical",
    title: "Home page answers an error or is unreachable",
    detects: "The start URL (after redirects) answers 4xx/5xx, fails, or redirects in a loop.",
    scope: "site",
    evaluate: (s) => {
      if (s.ownBotBlocked) return null;
      const h = s.home;
      return flag(h === null || h.state === "failed" || h.status >= 400);
    },
  },
  {
    id: "http_4xx",
    category: "indexability",
    severity: "critical",
    title: "Internal URLs answer 4xx",
    detects:
      "Internal URLs that answer a client error (404, 410, 403, ...) and that no other check " +
      "charges: linked ones are broken_internal_links, listed ones sitemap_bad_entries, " +
      "canonical targets canonical_target_bad, the home page home_page_error.",
    scope: "site",
    evaluate: (s) => countStatus(s, 400, 499),
  },
  {
    id: "http_5xx",
    category: "indexability",
    severity: "critical",
    title: "Internal URLs answer 5xx",
    detects: "Internal URLs that answer a server error (charged once, as for http_4xx).",
    scope: "site",
    evaluate: (s) => countStatus(s, 500, 599),
  },
  {
    id: "fetch_failed",
    category: "indexability",
    severity: "critical",
    title: "Internal URLs could not be fetched",
    detects:
      "Timeouts, DNS or connection failures, refused redirect targets (charged once, as for " +
      "http_4xx; TLS failures are tls_invalid).",
    scope: "site",
    evaluate: (s) => countFailing(s, (r) => r.state === "failed" && r.failure !== "tls"),
  },
  {
    id: "noindex",
    category: "indexability",
    severity: "info",
    title: "Pages excluded with noindex",
    detects:
      "meta robots/googlebot or X-Robots-Tag with noindex, none or a past unavailable_after.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => isNoindex(p.facts, p.headers, p.now),
  },
  {
    id: "noindex_sitewide",
    category: "indexability",
    severity: "critical",
    title: "Home page or most of the site is noindex",
    detects: "The home page is noindex, or at least 80 % of 10 or more HTML pages are.",
    scope: "site",
    evaluate: (s) => {
      const html = s.records.filter((r) => r.html && r.status >= 200 && r.status < 300);
      if (html.length === 0) return null;
      const noindex = html.filter((r) => r.noindex).length;
      const homeNoindex = s.home !== null && s.home.html && s.home.noindex;
      return flag(homeNoindex || (html.length >= 10 && noindex / html.length >= 0.8));
    },
  },
  {
    id: "head_tags_in_body",
    category: "indexability",
    severity: "warning",
    title: "robots, description or canonical tags placed in <body>",
    detects: "Search engines ignore these tags outside <head>.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.headTagsInBody > 0,
  },
  {
    id: "sitemap_missing",
    category: "indexability",
    severity: "warning",
    title: "No XML sitemap",
    detects: "No Sitemap: line in robots.txt and /sitemap.xml is not a 200 XML sitemap.",
    scope: "site",
    evaluate: (s) => flag(!s.sitemap.found && s.sitemap.problems.length === 0),
  },
  {
    id: "sitemap_invalid",
    category: "indexability",
    severity: "warning",
    title: "Sitemap is invalid",
    detects: "Unparseable XML, a root other than urlset/sitemapindex, over 50,000 URLs or 50 MB, " +
      "relative or off-site <loc> values, or a sitemap robots.txt blocks.",
    scope: "site",
    evaluate: (s) => flag(s.sitemap.problems.length > 0),
  },
  {
    id: "sitemap_bad_entries",
    category: "indexability",
    severity: "warning",
    title: "Sitemap lists URLs that redirect, fail, are noindex, blocked or canonicalised",
    detects: "Sitemap entries that are not indexable canonical 200 pages.",
    scope: "site",
    evaluate: (s) => {
      const listed = s.records.filter((r) =>
        r.inSitemap && (r.state === "fetched" || r.state === "failed" || r.state === "blocked")
      );
      if (listed.length === 0) return null;
      const bad = listed.filter((r) =>
        r.state !== "fetched" || r.status < 200 || r.status >= 300 || r.noindex ||
        r.canonicalOther !== null
      );
      return { eligible: listed.length, affected: bad.length };
    },
  },
  {
    id: "canonical_invalid",
    category: "indexability",
    severity: "warning",
    title: "Canonical link is invalid or conflicting",
    detects: "An empty, relative or unparseable canonical, or several different canonicals.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => {
      const c = resolveCanonicals(p);
      if (c.length === 0) return false;
      if (c.some((u) => u === null)) return true;
      return new Set(c.map((u) => u!.href)).size > 1;
    },
  },
  {
    id: "canonical_suspicious",
    category: "indexability",
    severity: "info",
    title: "Canonical points to the home page, to http or to another host",
    detects:
      "A deep page canonicalised to the site root, an https page with an http canonical, or a " +
      "canonical on another host (www. ignored).",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => {
      const c = resolveCanonicals(p);
      if (c.length !== 1 || c[0] === null) return false;
      const u = c[0];
      if (p.url.pathname !== "/" && u.pathname === "/" && u.search === "") return true;
      if (p.url.protocol === "https:" && u.protocol === "http:") return true;
      return stripWww(u.host) !== stripWww(p.url.host);
    },
  },
  {
    id: "canonical_target_bad",
    category: "indexability",
    severity: "warning",
    title: "Canonical points to a redirect, error, noindex or blocked URL",
    detects: "The canonical target (internal, crawled) is not an indexable 200 page.",
    scope: "site",
    evaluate: (s) => {
      let eligible = 0;
      let affected = 0;
      for (const r of s.records) {
        if (r.canonicalOther === null) continue;
        const t = s.byUrl.get(r.canonicalOther);
        if (!t || t.state === "unvisited" || t.state === "queued") continue;
        eligible++;
        if (t.state !== "fetched" || t.status < 200 || t.status >= 300 || t.noindex) affected++;
      }
      return eligible === 0 ? null : { eligible, affected };
    },
  },
  {
    id: "hreflang_invalid",
    category: "indexability",
    severity: "warning",
    title: "hreflang annotations are malformed",
    detects: "A language code that is not x-default or a known-shape code, or a relative href.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.hreflangs.length > 0,
    evaluate: (p) => hreflangProblems(p).invalid,
  },
  {
    id: "hreflang_cluster",
    category: "indexability",
    severity: "warning",
    title: "hreflang set lacks a self-reference, or maps a language to two URLs",
    detects:
      "Incomplete hreflang clusters: no entry for the page itself, or one language with two " +
      "URLs (x-default is optional; return links across pages are not checked).",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.hreflangs.length > 0,
    evaluate: (p) => hreflangProblems(p).cluster,
  },
];

export { finalOf };
