/**
 * Indexability: can search engines fetch and index the site's pages (robots.txt, status codes,
 * noindex, sitemaps, canonicals, hreflang).
 *
 * @module
 */
import type { Check, ItemGroup, PageContext, SiteOutcome } from "../types.ts";
import { canonicalValues, flag, isNoindex, resolveCanonicals, stripWww } from "./helpers.ts";

function group(eligible: number, g: ItemGroup): SiteOutcome | null {
  if (eligible === 0) return null;
  return { eligible, affected: g.count, items: g.items };
}

const HREFLANG_LANG = /^[a-z]{2,3}$/i;

interface HreflangReport {
  /** Values that are not a language code, x-default, or an absolute URL. */
  bad: string[];
  selfRef: boolean;
  xDefault: boolean;
  /** Languages mapped to two different URLs. */
  twice: string[];
}

/** One report per page: three checks read it. */
const reports = new WeakMap<PageContext["facts"], HreflangReport>();

function hreflangReport(p: PageContext): HreflangReport {
  let r = reports.get(p.facts);
  if (r === undefined) reports.set(p.facts, r = buildHreflangReport(p));
  return r;
}

function buildHreflangReport(p: PageContext): HreflangReport {
  const bad: string[] = [];
  let selfRef = false;
  let xDefault = false;
  const langs = new Map<string, string>();
  const twice: string[] = [];
  for (const h of p.facts.hreflangs) {
    const lang = h.lang.trim().toLowerCase();
    let href: URL | null = null;
    try {
      href = /^https?:\/\//i.test(h.href.trim()) ? new URL(h.href.trim()) : null;
    } catch {
      href = null;
    }
    if (href === null) bad.push(`${h.lang} → ${h.href}`.slice(0, 200));
    if (lang === "x-default") xDefault = true;
    else if (!HREFLANG_LANG.test(lang.split("-")[0])) bad.push(`hreflang="${h.lang}"`);
    if (href) {
      if (href.href === p.url.href) selfRef = true;
      const prev = langs.get(lang);
      if (prev !== undefined && prev !== href.href && !twice.includes(lang)) twice.push(lang);
      langs.set(lang, href.href);
    }
  }
  return { bad, selfRef, xDefault, twice };
}

export const indexabilityChecks: Check[] = [
  {
    id: "robots_txt_unreachable",
    category: "indexability",
    severity: "critical",
    impact: 5,
    effort: "low",
    title: "robots.txt answers 5xx or cannot be fetched",
    detects: "/robots.txt answers a server error or times out; Google may stop crawling the site.",
    scope: "site",
    evaluate: (s) => ({
      ...flag(s.robots.state === "unreachable"),
      items: [{ url: s.robots.url, status: s.robots.status || null }],
    }),
  },
  {
    id: "robots_txt_invalid",
    category: "indexability",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "robots.txt has lines crawlers reject",
    detects:
      "Unknown directives, rules before any User-agent, patterns not starting with / or *, a " +
      "misplaced $, a relative Sitemap URL, or a file over 500 KiB.",
    scope: "site",
    evaluate: (s) =>
      s.robots.state === "ok"
        ? {
          ...flag(s.robots.problems.length > 0),
          items: s.robots.problems.map((line) => ({ url: s.robots.url, line })),
        }
        : null,
  },
  {
    id: "robots_txt_missing",
    category: "indexability",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "No robots.txt file",
    detects: "/robots.txt answers 404/410 (allowed: crawlers treat it as allow-all).",
    scope: "site",
    evaluate: (s) => ({
      ...flag(s.robots.state === "missing"),
      items: [{ url: s.robots.url, status: s.robots.status }],
    }),
  },
  {
    id: "start_url_blocked",
    category: "indexability",
    severity: "critical",
    impact: 5,
    effort: "low",
    title: "robots.txt blocks the home page for search engines",
    detects: "The start URL is disallowed for Googlebot (or, without a Googlebot group, for *).",
    scope: "site",
    evaluate: (s) => ({
      ...flag(s.robots.startBlockedForGoogle),
      items: [{ url: s.startUrl, robots_txt: s.robots.url }],
    }),
  },
  {
    id: "crawler_blocked",
    category: "indexability",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "robots.txt blocks SerpwrightBot, so the site could not be audited",
    detects: "The start URL is disallowed for our own token (or, with a user_agent preset, for " +
      "that crawler's token); we honour it and crawl nothing.",
    scope: "site",
    evaluate: (s) => ({
      ...flag(s.ownBotBlocked),
      items: [{ url: s.startUrl, robots_txt: s.robots.url, user_agent: s.botToken }],
    }),
  },
  {
    id: "blocked_by_robots",
    category: "indexability",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "Internal URLs blocked by robots.txt",
    detects: "Internal URLs found in links or the sitemap that robots.txt disallows (not fetched).",
    scope: "site",
    evaluate: (s) => group(s.known, s.blocked),
  },
  {
    id: "home_page_error",
    category: "indexability",
    severity: "critical",
    impact: 5,
    effort: "medium",
    title: "Home page answers an error or is unreachable",
    detects: "The start URL (after redirects) answers 4xx/5xx, fails, or redirects in a loop.",
    scope: "site",
    evaluate: (s) => {
      if (s.ownBotBlocked) return null;
      const h = s.home;
      return {
        ...flag(h === null || h.state === "failed" || h.status >= 400),
        items: [{
          url: h?.url ?? s.startUrl,
          start_url: s.startUrl,
          status: h?.status ?? null,
          failure: h === null ? "redirect_loop" : h.failure,
        }],
      };
    },
  },
  {
    id: "http_4xx",
    category: "indexability",
    severity: "critical",
    impact: 4,
    effort: "medium",
    title: "Internal URLs answer 4xx",
    detects:
      "Internal URLs that answer a client error (404, 410, 403, ...) and that no other check " +
      "charges: linked ones are broken_internal_links, listed ones sitemap_bad_entries, " +
      "canonical targets canonical_target_bad, the home page home_page_error.",
    scope: "site",
    evaluate: (s) => group(s.attempted, s.status4xx),
  },
  {
    id: "http_5xx",
    category: "indexability",
    severity: "critical",
    impact: 4,
    effort: "medium",
    title: "Internal URLs answer 5xx",
    detects: "Internal URLs that answer a server error (charged once, as for http_4xx).",
    scope: "site",
    evaluate: (s) => group(s.attempted, s.status5xx),
  },
  {
    id: "fetch_failed",
    category: "indexability",
    severity: "critical",
    impact: 4,
    effort: "medium",
    title: "Internal URLs could not be fetched",
    detects:
      "Timeouts, DNS or connection failures, refused redirect targets (charged once, as for " +
      "http_4xx; TLS failures are tls_invalid).",
    scope: "site",
    evaluate: (s) => group(s.attempted, s.failed),
  },
  {
    id: "noindex",
    category: "indexability",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "Pages excluded with noindex",
    detects:
      "meta robots/googlebot or X-Robots-Tag with noindex, none or a past unavailable_after.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) =>
      isNoindex(p.facts, p.headers, p.now) && {
        meta_robots: p.facts.robotsMeta || null,
        x_robots_tag: p.headers.get("x-robots-tag"),
      },
  },
  {
    id: "noindex_sitewide",
    category: "indexability",
    severity: "critical",
    impact: 5,
    effort: "low",
    title: "Home page or most of the site is noindex",
    detects: "The home page is noindex, or at least 80 % of 10 or more HTML pages are.",
    scope: "site",
    evaluate: (s) => {
      if (s.html2xx === 0) return null;
      const homeNoindex = s.home !== null && s.home.html && s.home.noindex;
      return {
        ...flag(homeNoindex || (s.html2xx >= 10 && s.noindexPages / s.html2xx >= 0.8)),
        items: [{
          url: s.home?.url ?? s.startUrl,
          home_noindex: homeNoindex,
          noindex_pages: s.noindexPages,
          html_pages: s.html2xx,
        }],
      };
    },
  },
  {
    id: "head_tags_in_body",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "robots, description or canonical tags placed in <body>",
    detects: "Search engines ignore these tags outside <head>.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.headTagsInBody > 0 && { tags_in_body: p.facts.headTagsInBody },
  },
  {
    id: "sitemap_missing",
    category: "indexability",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "No XML sitemap",
    detects: "No Sitemap: line in robots.txt and /sitemap.xml is not a 200 XML sitemap.",
    scope: "site",
    evaluate: (s) => ({
      ...flag(!s.sitemap.found && s.sitemap.problems.length === 0),
      items: [{ url: new URL("/sitemap.xml", s.startUrl).href, robots_txt: s.robots.url }],
    }),
  },
  {
    id: "sitemap_invalid",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Sitemap is invalid",
    detects: "Unparseable XML, a root other than urlset/sitemapindex, over 50,000 URLs or 50 MB, " +
      "relative or off-site <loc> values, or a sitemap robots.txt blocks.",
    scope: "site",
    evaluate: (s) => ({
      ...flag(s.sitemap.problems.length > 0),
      items: s.sitemap.problems.map((problem) => ({ problem })),
    }),
  },
  {
    id: "sitemap_bad_entries",
    category: "indexability",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Sitemap lists URLs that redirect, fail, are noindex, blocked or canonicalised",
    detects: "Sitemap entries that are not indexable canonical 200 pages.",
    scope: "site",
    evaluate: (s) => group(s.sitemapListed, s.sitemapBad),
  },
  {
    id: "canonical_invalid",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Canonical link is invalid or conflicting",
    detects: "An empty, relative or unparseable canonical, or several different canonicals.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => {
      const c = resolveCanonicals(p);
      if (c.length === 0) return false;
      const bad = c.some((u) => u === null) || new Set(c.map((u) => u!.href)).size > 1;
      return bad && { canonicals: canonicalValues(p).map((v) => v.slice(0, 200)).slice(0, 5) };
    },
  },
  {
    id: "canonical_suspicious",
    category: "indexability",
    severity: "info",
    impact: 3,
    effort: "low",
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
      const reason = p.url.pathname !== "/" && u.pathname === "/" && u.search === ""
        ? "points to the home page"
        : p.url.protocol === "https:" && u.protocol === "http:"
        ? "https page with an http canonical"
        : stripWww(u.host) !== stripWww(p.url.host)
        ? "canonical on another host"
        : null;
      return reason !== null && { canonical: u.href, reason };
    },
  },
  {
    id: "canonical_target_bad",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Canonical points to a redirect, error, noindex or blocked URL",
    detects: "The canonical target (internal, crawled) is not an indexable 200 page.",
    scope: "site",
    evaluate: (s) => group(s.canonicalTargets, s.canonicalBad),
  },
  {
    id: "canonical_chain",
    category: "indexability",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Canonical points to a page that canonicalises elsewhere",
    detects:
      "The canonical target (internal, an indexable 200 page) names another URL as its own " +
      "canonical: a chain (or a loop), with every hop in the evidence.",
    scope: "site",
    evaluate: (s) => group(s.canonicalTargets, s.canonicalChains),
  },
  {
    id: "sitemap_missing_indexable",
    category: "indexability",
    severity: "info",
    impact: 2,
    effort: "low",
    title: "Indexable pages missing from the sitemap",
    detects:
      "Indexable, self-canonical HTML 200 pages found through links that the sitemap does not " +
      "list (only when a sitemap was found and read without problems).",
    scope: "site",
    evaluate: (s) => {
      // Without a sitemap (sitemap_missing) or with one read only in part (sitemap_invalid),
      // absence from it proves nothing.
      if (!s.sitemap.found || s.sitemap.problems.length > 0 || s.sitemap.partial) return null;
      return group(s.sitemapCandidates, s.sitemapMissing);
    },
  },
  {
    id: "x_robots_tag_non_html",
    category: "indexability",
    severity: "info",
    impact: 0,
    effort: "low",
    title: "Non-HTML files with an X-Robots-Tag noindex or nofollow",
    detects:
      "Crawled non-HTML 200 responses (PDFs, images, feeds) whose X-Robots-Tag header says " +
      "noindex, nofollow or none: reported so the choice is visible, not judged.",
    scope: "site",
    evaluate: (s) => group(s.nonHtml2xx, s.xRobotsNonHtml),
  },
  {
    id: "hreflang_invalid",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "hreflang annotations are malformed",
    detects: "A language code that is not x-default or a known-shape code, or a relative href.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.hreflangs.length > 0,
    evaluate: (p) => {
      const r = hreflangReport(p);
      return r.bad.length > 0 && { bad_values: r.bad.slice(0, 10) };
    },
  },
  {
    id: "hreflang_cluster",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "hreflang set lacks a self-reference, or maps a language to two URLs",
    detects:
      "Incomplete hreflang clusters: no entry for the page itself, or one language with two " +
      "URLs (a missing x-default is hreflang_x_default_missing's; return links across pages are " +
      "hreflang_no_return's).",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.hreflangs.length > 0,
    evaluate: (p) => {
      const r = hreflangReport(p);
      // x-default is optional (Google recommends it, does not require it).
      const bad = !r.selfRef || r.twice.length > 0;
      return bad && {
        self_reference: r.selfRef,
        x_default: r.xDefault,
        languages_mapped_twice: r.twice.slice(0, 10),
      };
    },
  },
  {
    id: "hreflang_no_return",
    category: "indexability",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "hreflang alternates that do not link back",
    detects:
      "A page names an internal alternate (an indexable, self-canonical HTML 200 page) that does " +
      "not name the page among its own hreflang alternates: the return link is missing and " +
      "search engines may ignore the pair.",
    scope: "site",
    evaluate: (s) => group(s.hreflangPages, s.hreflangNoReturn),
  },
  {
    id: "hreflang_target_bad",
    category: "indexability",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "hreflang alternates that redirect, fail, are noindex or canonicalised elsewhere",
    detects:
      "An internal hreflang alternate that redirects, answers an error, fails, is blocked by " +
      "robots.txt, is not HTML, is noindex or names another canonical: search engines ignore " +
      "alternates that are not the indexable canonical URL.",
    scope: "site",
    evaluate: (s) => group(s.hreflangTargetPages, s.hreflangTargetBad),
  },
  {
    id: "hreflang_x_default_missing",
    category: "indexability",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "hreflang set without x-default",
    detects:
      "The page declares hreflang alternates but no x-default: users whose language matches " +
      "none of them get no designated fallback (Google recommends one; it is not required).",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.hreflangs.length > 0,
    evaluate: (p) => {
      const r = hreflangReport(p);
      if (r.xDefault) return false;
      const languages = [...new Set(p.facts.hreflangs.map((h) => h.lang.trim().toLowerCase()))];
      return { languages: languages.slice(0, 20) };
    },
  },
];
