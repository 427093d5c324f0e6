/**
 * Structure: on-page content (titles, descriptions, headings, language, text) and the internal
 * link graph (broken links, redirects, orphans, depth).
 *
 * @module
 */
import type { Check, ItemGroup, PageContext, SiteFacts, SiteOutcome } from "../types.ts";

/**
 * Candidate pages a site needs before single_inlink_pages applies: on a tiny site one link per
 * page is the norm, not a weakness.
 */
export const SINGLE_INLINK_MIN_PAGES = 10;

/** single_inlink_pages judges only complete link graphs of 10+ candidate pages. */
export function singleInlinkApplies(f: SiteFacts): boolean {
  return !f.truncated && f.inlinkCandidates >= SINGLE_INLINK_MIN_PAGES;
}

function group(eligible: number, g: ItemGroup): SiteOutcome | null {
  if (eligible === 0) return null;
  return { eligible, affected: g.count, items: g.items };
}

/** Duplicate groups count among indexable self-canonical pages; two are needed to compare. */
function duplicates(s: SiteFacts, g: ItemGroup): SiteOutcome | null {
  return s.dupCandidates < 2 ? null : group(s.dupCandidates, g);
}

const BCP47 = /^[a-z]{2,3}(-[a-z]{4})?(-([a-z]{2}|\d{3}))?(-[a-z0-9]{5,8}|-\d[a-z0-9]{3})*$/i;

function langValid(lang: string): boolean {
  if (!BCP47.test(lang)) return false;
  try {
    Intl.getCanonicalLocales(lang);
    return true;
  } catch {
    return false;
  }
}

const UPPER_OR_UNDERSCORE = /[A-Z_]/;

function urlHygiene(u: URL): boolean {
  const path = u.pathname;
  return UPPER_OR_UNDERSCORE.test(path) || path.includes("%20") || /%[89a-f][0-9a-f]/i.test(path) ||
    u.href.length > 2083;
}

function likelyClientRendered(p: PageContext): boolean {
  return p.facts.appRoot && p.facts.wordCount < 50 && p.facts.scriptCount > 0;
}

export const structureChecks: Check[] = [
  {
    id: "title_missing",
    category: "structure",
    severity: "critical",
    impact: 4,
    effort: "low",
    title: "Pages without a title",
    detects: "No <title> in the document, or only whitespace.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.title === null || p.facts.title === "",
  },
  {
    id: "title_length",
    category: "structure",
    severity: "info",
    impact: 2,
    effort: "low",
    title: "Title shorter than 20 or longer than 60 characters",
    detects: "Titles likely to be too vague or truncated in results.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.title,
    evaluate: (p) => {
      const t = p.facts.title!;
      return (t.length < 20 || t.length > 60) && { title: t, length: t.length };
    },
  },
  {
    id: "title_duplicate",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "Duplicate titles across pages",
    detects: "The same non-empty title on two or more indexable, self-canonical pages.",
    scope: "site",
    evaluate: (s) => duplicates(s, s.dupTitle),
  },
  {
    id: "meta_description_missing",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Pages without a meta description",
    detects: "No meta description, or an empty one.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => !p.facts.description,
  },
  {
    id: "meta_description_length",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Meta description shorter than 50 or longer than 160 characters",
    detects: "Descriptions likely to be replaced or truncated in results.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.description,
    evaluate: (p) => {
      const d = p.facts.description!;
      return (d.length < 50 || d.length > 160) && { description: d, length: d.length };
    },
  },
  {
    id: "meta_description_duplicate",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "medium",
    title: "Duplicate meta descriptions across pages",
    detects: "The same non-empty description on two or more indexable, self-canonical pages.",
    scope: "site",
    evaluate: (s) => duplicates(s, s.dupDescription),
  },
  {
    id: "duplicate_head_tags",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "More than one title or meta description",
    detects: "Several <title> elements or meta descriptions in one page.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      (p.facts.titleCount > 1 || p.facts.descriptionCount > 1) && {
        titles: p.facts.titleCount,
        descriptions: p.facts.descriptionCount,
      },
  },
  {
    id: "h1_missing",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Pages without an h1 heading",
    detects: "No non-empty <h1>.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !likelyClientRendered(p),
    evaluate: (p) => p.facts.h1 === null,
  },
  {
    id: "heading_order",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Heading levels skipped",
    detects: "A heading level jumps by more than one (h2 followed by h4).",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.headingSkip,
  },
  {
    id: "html_lang_missing",
    category: "structure",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "<html> has no lang attribute",
    detects: "The page does not declare its language.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => !p.facts.htmlLang,
  },
  {
    id: "html_lang_invalid",
    category: "structure",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "<html lang> is not a valid language tag",
    detects: "The lang value is not a well-formed BCP 47 tag.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.htmlLang,
    evaluate: (p) => !langValid(p.facts.htmlLang!) && { lang: p.facts.htmlLang },
  },
  {
    id: "thin_content",
    category: "structure",
    severity: "info",
    impact: 2,
    effort: "high",
    title: "Pages with under 200 words",
    detects: "Little visible text (script, style and template excluded).",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !likelyClientRendered(p),
    evaluate: (p) => p.facts.wordCount < 200 && { words: p.facts.wordCount },
  },
  {
    id: "likely_client_rendered",
    category: "structure",
    severity: "info",
    impact: 4,
    effort: "high",
    title: "Page looks client-rendered (empty app shell)",
    detects:
      "An app root element, scripts and almost no text: content only appears after JavaScript, " +
      "which this raw-HTML audit (and some crawlers) cannot see.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      likelyClientRendered(p) && { words: p.facts.wordCount, scripts: p.facts.scriptCount },
  },
  {
    id: "duplicate_content",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "Pages with identical content",
    detects:
      "Identical normalised visible text (lower-cased words, whitespace ignored; 64-bit hash) on " +
      "two or more indexable, self-canonical URLs with at least 20 words.",
    scope: "site",
    evaluate: (s) => duplicates(s, s.dupContent),
  },
  {
    id: "url_case_duplicates",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "The same page answers at URLs that differ only in letter case",
    detects:
      "Two or more indexable, self-canonical URLs that differ only in the case of their path " +
      "serve identical text: the server is case-insensitive and search engines see duplicates " +
      "(counted here, not under duplicate_content).",
    scope: "site",
    evaluate: (s) => duplicates(s, s.caseDuplicates),
  },
  {
    id: "parameter_duplicates",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "The same page answers under different query parameters",
    detects:
      "Two or more indexable, self-canonical URLs with one path and different query strings " +
      "serve identical text (sort, tracking or session parameters) with no canonical naming " +
      "one of them (counted here, not under duplicate_content).",
    scope: "site",
    evaluate: (s) => duplicates(s, s.parameterDuplicates),
  },
  {
    id: "near_duplicate_content",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "high",
    title: "Pages with nearly identical content",
    detects: "Visible text sharing at least 80 % of its word 3-shingles with another indexable, " +
      "self-canonical page's (estimated by MinHash); identical twins are counted by " +
      "duplicate_content only.",
    scope: "site",
    evaluate: (s) => (s.nearCandidates < 2 ? null : group(s.nearCandidates, s.nearDupContent)),
  },
  {
    id: "broken_internal_links",
    category: "structure",
    severity: "critical",
    impact: 4,
    effort: "low",
    title: "Pages linking to broken internal URLs",
    detects: "Links to internal URLs that answer 4xx/5xx or fail (after redirects).",
    scope: "site",
    evaluate: (s) => group(s.html2xx, s.brokenLinks),
  },
  {
    id: "broken_fragment",
    category: "structure",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Links to anchors that do not exist",
    detects: "Links with a #fragment to a page of the site (the same page included) whose target " +
      "has no element with that id and no <a name> of that name, raw or, in a rendered audit, " +
      "rendered. `#`, `#top`, text fragments (#:~:text=) and #! routes are not anchors.",
    scope: "site",
    evaluate: (s) => (s.fragmentPages === 0 ? null : group(s.fragmentPages, s.brokenFragments)),
  },
  {
    id: "broken_resources",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Pages loading broken images, scripts, stylesheets or media",
    detects: "Same-site images (src, srcset), scripts, stylesheets, icons and preloads, " +
      "@font-face fonts of inline styles, audio, video, tracks, embeds and frame sources that " +
      "answer 4xx/5xx or fail (HEAD, GET when HEAD is refused; frames as crawled); evidence: " +
      "page, resource, element, attribute, status.",
    scope: "site",
    evaluate: (s) => group(s.resourcePages, s.brokenResources),
  },
  {
    id: "internal_redirect_links",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Pages linking to internal redirects",
    detects: "Links to internal URLs that answer 3xx; link to the final URL instead.",
    scope: "site",
    evaluate: (s) => group(s.html2xx, s.redirectLinks),
  },
  {
    id: "redirect_chain",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "low",
    title: "Redirect chains (2 or more hops)",
    detects: "A redirect whose target redirects again before the final answer.",
    scope: "site",
    evaluate: (s) => group(s.redirectStarts, s.redirectChains),
  },
  {
    id: "redirect_loop",
    category: "structure",
    severity: "critical",
    impact: 4,
    effort: "low",
    title: "Redirect loops or chains over 10 hops",
    detects: "Redirects that come back to a URL already visited, or never end.",
    scope: "site",
    evaluate: (s) => group(s.redirectStarts, s.redirectLoops),
  },
  {
    id: "meta_refresh",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Pages using meta refresh",
    detects: "<meta http-equiv=refresh>: a slow, client-side redirect; use a 301 instead.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) =>
      p.facts.metaRefresh !== null &&
      { delay_s: p.facts.metaRefresh.delay, target: p.facts.metaRefresh.url },
  },
  {
    id: "uncrawlable_links",
    category: "structure",
    severity: "warning",
    impact: 3,
    effort: "medium",
    title: "Links crawlers cannot follow",
    detects: '<a> without href, href="", javascript: or file: links, unparseable hrefs. Inside ' +
      "<svg> an <a> links by href or xlink:href, and one with neither is not a link.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.uncrawlableLinks > 0 &&
      { count: p.facts.uncrawlableLinks, links: p.facts.samples.uncrawlable },
  },
  {
    id: "link_text_generic",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Links with generic text",
    detects: 'Anchor text such as "click here", "read more" or "here".',
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.genericLinkTexts > 0 &&
      { count: p.facts.genericLinkTexts, links: p.facts.samples.genericLinks },
  },
  {
    id: "image_alt_missing",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Images without an alt attribute",
    detects: '<img> with no alt at all (alt="" and role=presentation are valid decoration).',
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.imgNoAlt > 0 && { count: p.facts.imgNoAlt, images: p.facts.samples.imgNoAlt },
  },
  {
    id: "structured_data_invalid",
    category: "structure",
    severity: "warning",
    impact: 2,
    effort: "low",
    title: "Invalid JSON-LD structured data",
    detects: "An application/ld+json block that is not JSON or lacks @context/@type.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.jsonLdCount > 0,
    evaluate: (p) =>
      p.facts.jsonLdInvalid > 0 &&
      { invalid_blocks: p.facts.jsonLdInvalid, blocks: p.facts.jsonLdCount },
  },
  {
    id: "orphan_page",
    category: "structure",
    severity: "info",
    impact: 3,
    effort: "low",
    title: "Sitemap pages no internal link points to",
    detects: "URLs listed in the sitemap with no inlinks from crawled pages (a page a crawled " +
      "page shows in a frame is not an orphan).",
    scope: "site",
    evaluate: (s) => {
      if (s.truncated) return null; // an incomplete link graph cannot prove orphanhood
      return group(s.orphanCandidates, s.orphans);
    },
  },
  {
    id: "single_inlink_pages",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "medium",
    title: "Pages with a single internal link pointing to them",
    detects:
      "Indexable self-canonical pages (not the home page) that exactly one crawled page links " +
      "to with a followable link; evidence names that page. Only on complete crawls with 10 or " +
      "more such pages.",
    scope: "site",
    evaluate: (s) => singleInlinkApplies(s) ? group(s.inlinkCandidates, s.singleInlink) : null,
  },
  {
    id: "deep_page",
    category: "structure",
    severity: "info",
    impact: 2,
    effort: "high",
    title: "Pages more than 4 clicks from the home page",
    detects: "Shortest click depth from the start URL above 4.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.depth > 4 && { depth: p.depth },
  },
  {
    id: "url_hygiene",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "high",
    title: "URLs with uppercase, underscores, spaces or non-ASCII",
    detects:
      "URL paths with uppercase letters, underscores, spaces, non-ASCII, or over 2,083 chars.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => urlHygiene(p.url) && { path: p.url.pathname.slice(0, 300) },
  },
  {
    id: "doctype_missing",
    category: "structure",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "No <!DOCTYPE html>",
    detects: "No doctype at all: browsers render the page in quirks mode (a doctype that is " +
      "there but triggers quirks mode is doctype_quirks).",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => !p.facts.hasDoctype,
  },
  {
    id: "doctype_quirks",
    category: "structure",
    severity: "warning",
    impact: 1,
    effort: "low",
    title: "Doctype that puts browsers in quirks mode",
    detects: "A doctype the HTML standard's parsing rules answer with quirks mode: a legacy " +
      "public identifier (HTML 2.0–4.0, vendor DTDs), HTML 4.01 Transitional or Frameset " +
      "without a system identifier, a name other than html, a malformed doctype, or one after " +
      "an element or text; evidence: the doctype and the rule.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.facts.hasDoctype,
    evaluate: (p) =>
      p.facts.documentMode === "quirks" &&
      { doctype: p.facts.doctype, mode: "quirks", reason: p.facts.documentModeReason },
  },
  {
    id: "doctype_limited_quirks",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Doctype that puts browsers in limited-quirks mode",
    detects: "XHTML 1.0 Transitional or Frameset, or HTML 4.01 Transitional or Frameset with a " +
      "system identifier: browsers render in limited-quirks (almost standards) mode, which " +
      "differs from standards mode only in the height of images in table cells; reported, " +
      "not scored.",
    scope: "page",
    eligibility: "html",
    applies: (p) => p.facts.hasDoctype,
    evaluate: (p) =>
      p.facts.documentMode === "limited-quirks" &&
      { doctype: p.facts.doctype, mode: "limited-quirks", reason: p.facts.documentModeReason },
  },
  {
    id: "charset_missing",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Character encoding not declared early",
    detects: "No charset in Content-Type and none in the first 1,024 bytes of HTML.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) =>
      !/charset=/i.test(p.headers.get("content-type") ?? "") && !p.facts.charsetEarly &&
      { content_type: p.headers.get("content-type") },
  },
  {
    id: "picture_without_img",
    category: "structure",
    severity: "info",
    impact: 2,
    effort: "low",
    title: "<picture> without an <img> fallback",
    detects: "A <picture> element that has no <img> inside, so nothing renders in some clients.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.pictureWithoutImg > 0 && { count: p.facts.pictureWithoutImg },
  },
  {
    id: "dead_end_page",
    category: "structure",
    severity: "info",
    impact: 1,
    effort: "low",
    title: "Pages with no outgoing links",
    detects:
      "Indexable pages that link nowhere (a frameset's frames lead on: it is not a dead end).",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.links.length + p.facts.nofollowLinks.length + p.facts.externalLinks +
          p.facts.frames.length === 0,
  },
];
