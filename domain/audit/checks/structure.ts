/**
 * Structure: on-page content (titles, descriptions, headings, language, text) and the internal
 * link graph (broken links, redirects, orphans, depth).
 *
 * @module
 */
import type { Check, CrawlResult, PageContext, SiteOutcome, UrlRecord } from "../types.ts";
import { finalOf } from "./indexability.ts";
import { SIG_BINS, similarity } from "../text_fingerprint.ts";

/** Pages with fewer visible words are not compared for duplicate text. */
const DUP_MIN_WORDS = 20;
/** Estimated Jaccard similarity of word 3-shingles from which pages are near-duplicates. */
const NEAR_SIMILARITY = 0.8;
/** LSH banding: 16 bands of 4 bins; pairs at 0.8 share a band with probability > 0.999. */
const BAND_BINS = 4;
/** Comparisons per page and band: bounds the work on sites made of one template. */
const NEAR_MAX_COMPARE = 200;

/** HTML 2xx, indexable, self-canonical pages: the ones duplicates are counted among. */
function dupCandidates(s: CrawlResult): UrlRecord[] {
  return s.records.filter((r) =>
    r.html && r.status >= 200 && r.status < 300 && !r.noindex && r.canonicalOther === null
  );
}

function duplicates(
  s: CrawlResult,
  key: (r: UrlRecord) => string | number | null,
): SiteOutcome | null {
  const pages = dupCandidates(s);
  if (pages.length < 2) return null;
  const groups = new Map<string | number, number>();
  for (const r of pages) {
    const k = key(r);
    if (k === null || k === "") continue;
    groups.set(k, (groups.get(k) ?? 0) + 1);
  }
  let affected = 0;
  for (const n of groups.values()) if (n > 1) affected += n;
  return { eligible: pages.length, affected };
}

/**
 * Pages with a near-duplicate: estimated Jaccard similarity of their word 3-shingles at least
 * NEAR_SIMILARITY, but not the same text. Pages already counted by duplicate_content (an
 * identical twin) are not counted again. Candidates are pages that agree on every bin of at
 * least one band (LSH), so the work stays near-linear.
 */
function nearDuplicates(s: CrawlResult): SiteOutcome | null {
  const pages = dupCandidates(s).filter((r) =>
    r.words >= DUP_MIN_WORDS && r.textSig.length === SIG_BINS
  );
  if (pages.length < 2) return null;
  const twins = new Map<number, number>();
  for (const r of pages) twins.set(r.textHash, (twins.get(r.textHash) ?? 0) + 1);
  const near = new Uint8Array(pages.length);
  const bands = new Map<string, number[]>();
  for (let i = 0; i < pages.length; i++) {
    const a = pages[i];
    for (let b = 0; b < SIG_BINS; b += BAND_BINS) {
      const band = a.textSig.subarray(b, b + BAND_BINS);
      if (band.every((x) => x === 0xffff)) continue; // an empty band proves nothing
      const key = `${b}:${band.join(",")}`;
      let bucket = bands.get(key);
      if (!bucket) bands.set(key, bucket = []);
      const n = Math.min(bucket.length, NEAR_MAX_COMPARE);
      for (let k = 0; k < n; k++) {
        const o = pages[bucket[k]];
        if (o.textHash === a.textHash || (near[i] === 1 && near[bucket[k]] === 1)) continue;
        if (similarity(a.textSig, o.textSig) >= NEAR_SIMILARITY) {
          near[i] = 1;
          near[bucket[k]] = 1;
        }
      }
      bucket.push(i);
    }
  }
  let affected = 0;
  for (let i = 0; i < pages.length; i++) {
    if (near[i] === 1 && twins.get(pages[i].textHash)! < 2) affected++;
  }
  return { eligible: pages.length, affected };
}

/** Pages whose links hit an internal URL matching `bad` (after following redirects or not). */
function linkingPages(s: CrawlResult, bad: (target: UrlRecord) => boolean): SiteOutcome | null {
  let eligible = 0;
  let affected = 0;
  for (const r of s.records) {
    if (!r.html || r.status < 200 || r.status >= 300) continue;
    eligible++;
    for (const id of r.links) {
      if (bad(s.records[id])) {
        affected++;
        break;
      }
    }
  }
  return eligible === 0 ? null : { eligible, affected };
}

/**
 * The link target fails (after its redirects). A redirect loop is not counted here: the loop is
 * one defect, charged once as redirect_loop.
 */
function isBroken(s: CrawlResult, t: UrlRecord): boolean {
  if (t.state === "failed") return true;
  if (t.state !== "fetched") return false;
  if (t.location >= 0) {
    const f = finalOf(s, t);
    return f !== null && (f.state === "failed" || (f.state === "fetched" && f.status >= 400));
  }
  return t.status >= 400;
}

interface ChainStats {
  starts: number;
  chains: number;
  loops: number;
}

/** Redirect chains from every redirecting URL that no other redirect points at. */
function chainStats(s: CrawlResult): ChainStats {
  const pointedAt = new Set<number>();
  for (const r of s.records) if (r.location >= 0) pointedAt.add(r.location);
  const out = { starts: 0, chains: 0, loops: 0 };
  for (const r of s.records) {
    if (r.location < 0) continue;
    const inCycle = pointedAt.has(r.id);
    let hops = 0;
    let cur = r;
    const seen = new Set<number>([r.id]);
    let loop = false;
    while (cur.location >= 0) {
      hops++;
      cur = s.records[cur.location];
      if (seen.has(cur.id) || hops > 10) {
        loop = true;
        break;
      }
      seen.add(cur.id);
    }
    // Chain heads only; members of a pure cycle have no head, so count the cycle from its
    // smallest id once.
    if (inCycle && !(loop && Math.min(...seen) === r.id && cur.id === r.id)) continue;
    out.starts++;
    if (loop) out.loops++;
    else if (hops >= 2) out.chains++;
  }
  return out;
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
    title: "Title shorter than 20 or longer than 60 characters",
    detects: "Titles likely to be too vague or truncated in results.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.title,
    evaluate: (p) => p.facts.title!.length < 20 || p.facts.title!.length > 60,
  },
  {
    id: "title_duplicate",
    category: "structure",
    severity: "warning",
    title: "Duplicate titles across pages",
    detects: "The same non-empty title on two or more indexable, self-canonical pages.",
    scope: "site",
    evaluate: (s) => duplicates(s, (r) => r.title),
  },
  {
    id: "meta_description_missing",
    category: "structure",
    severity: "warning",
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
    title: "Meta description shorter than 50 or longer than 160 characters",
    detects: "Descriptions likely to be replaced or truncated in results.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.description,
    evaluate: (p) => p.facts.description!.length < 50 || p.facts.description!.length > 160,
  },
  {
    id: "meta_description_duplicate",
    category: "structure",
    severity: "warning",
    title: "Duplicate meta descriptions across pages",
    detects: "The same non-empty description on two or more indexable, self-canonical pages.",
    scope: "site",
    evaluate: (s) => duplicates(s, (r) => r.description),
  },
  {
    id: "duplicate_head_tags",
    category: "structure",
    severity: "warning",
    title: "More than one title or meta description",
    detects: "Several <title> elements or meta descriptions in one page.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.titleCount > 1 || p.facts.descriptionCount > 1,
  },
  {
    id: "h1_missing",
    category: "structure",
    severity: "warning",
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
    title: "<html lang> is not a valid language tag",
    detects: "The lang value is not a well-formed BCP 47 tag.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !!p.facts.htmlLang,
    evaluate: (p) => !langValid(p.facts.htmlLang!),
  },
  {
    id: "thin_content",
    category: "structure",
    severity: "info",
    title: "Pages with under 200 words",
    detects: "Little visible text (script, style and template excluded).",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => !likelyClientRendered(p),
    evaluate: (p) => p.facts.wordCount < 200,
  },
  {
    id: "likely_client_rendered",
    category: "structure",
    severity: "info",
    title: "Page looks client-rendered (empty app shell)",
    detects:
      "An app root element, scripts and almost no text: content only appears after JavaScript, " +
      "which this raw-HTML audit (and some crawlers) cannot see.",
    scope: "page",
    eligibility: "indexable",
    evaluate: likelyClientRendered,
  },
  {
    id: "duplicate_content",
    category: "structure",
    severity: "warning",
    title: "Pages with identical content",
    detects:
      "Identical normalised visible text (lower-cased words, whitespace ignored; 64-bit hash) on " +
      "two or more indexable, self-canonical URLs with at least 20 words.",
    scope: "site",
    evaluate: (s) => duplicates(s, (r) => (r.words >= DUP_MIN_WORDS ? r.textHash : null)),
  },
  {
    id: "near_duplicate_content",
    category: "structure",
    severity: "warning",
    title: "Pages with nearly identical content",
    detects: "Visible text sharing at least 80 % of its word 3-shingles with another indexable, " +
      "self-canonical page's (estimated by MinHash); identical twins are counted by " +
      "duplicate_content only.",
    scope: "site",
    evaluate: nearDuplicates,
  },
  {
    id: "broken_internal_links",
    category: "structure",
    severity: "critical",
    title: "Pages linking to broken internal URLs",
    detects: "Links to internal URLs that answer 4xx/5xx or fail (after redirects).",
    scope: "site",
    evaluate: (s) => linkingPages(s, (t) => isBroken(s, t)),
  },
  {
    id: "internal_redirect_links",
    category: "structure",
    severity: "warning",
    title: "Pages linking to internal redirects",
    detects: "Links to internal URLs that answer 3xx; link to the final URL instead.",
    scope: "site",
    evaluate: (s) => linkingPages(s, (t) => t.state === "fetched" && t.location >= 0),
  },
  {
    id: "redirect_chain",
    category: "structure",
    severity: "warning",
    title: "Redirect chains (2 or more hops)",
    detects: "A redirect whose target redirects again before the final answer.",
    scope: "site",
    evaluate: (s) => {
      const c = chainStats(s);
      return c.starts === 0 ? null : { eligible: c.starts, affected: c.chains };
    },
  },
  {
    id: "redirect_loop",
    category: "structure",
    severity: "critical",
    title: "Redirect loops or chains over 10 hops",
    detects: "Redirects that come back to a URL already visited, or never end.",
    scope: "site",
    evaluate: (s) => {
      const c = chainStats(s);
      return c.starts === 0 ? null : { eligible: c.starts, affected: c.loops };
    },
  },
  {
    id: "meta_refresh",
    category: "structure",
    severity: "warning",
    title: "Pages using meta refresh",
    detects: "<meta http-equiv=refresh>: a slow, client-side redirect; use a 301 instead.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => p.facts.metaRefresh !== null,
  },
  {
    id: "uncrawlable_links",
    category: "structure",
    severity: "warning",
    title: "Links crawlers cannot follow",
    detects: '<a> without href, href="", javascript: or file: links, unparseable hrefs.',
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.uncrawlableLinks > 0,
  },
  {
    id: "link_text_generic",
    category: "structure",
    severity: "info",
    title: "Links with generic text",
    detects: 'Anchor text such as "click here", "read more" or "here".',
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.genericLinkTexts > 0,
  },
  {
    id: "image_alt_missing",
    category: "structure",
    severity: "warning",
    title: "Images without an alt attribute",
    detects: '<img> with no alt at all (alt="" and role=presentation are valid decoration).',
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.imgNoAlt > 0,
  },
  {
    id: "structured_data_invalid",
    category: "structure",
    severity: "warning",
    title: "Invalid JSON-LD structured data",
    detects: "An application/ld+json block that is not JSON or lacks @context/@type.",
    scope: "page",
    eligibility: "indexable",
    applies: (p) => p.facts.jsonLdCount > 0,
    evaluate: (p) => p.facts.jsonLdInvalid > 0,
  },
  {
    id: "orphan_page",
    category: "structure",
    severity: "info",
    title: "Sitemap pages no internal link points to",
    detects: "URLs listed in the sitemap with no inlinks from crawled pages.",
    scope: "site",
    evaluate: (s) => {
      if (s.truncated) return null; // an incomplete link graph cannot prove orphanhood
      const listed = s.records.filter((r) =>
        r.inSitemap && r.state === "fetched" && r.html && r.status >= 200 && r.status < 300 &&
        r !== s.home && r !== s.start
      );
      if (listed.length === 0) return null;
      return { eligible: listed.length, affected: listed.filter((r) => r.inlinks === 0).length };
    },
  },
  {
    id: "deep_page",
    category: "structure",
    severity: "info",
    title: "Pages more than 4 clicks from the home page",
    detects: "Shortest click depth from the start URL above 4.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.depth > 4,
  },
  {
    id: "url_hygiene",
    category: "structure",
    severity: "info",
    title: "URLs with uppercase, underscores, spaces or non-ASCII",
    detects:
      "URL paths with uppercase letters, underscores, spaces, non-ASCII, or over 2,083 chars.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => urlHygiene(p.url),
  },
  {
    id: "doctype_missing",
    category: "structure",
    severity: "info",
    title: "No <!DOCTYPE html>",
    detects: "Without a doctype browsers render in quirks mode.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) => !p.facts.hasDoctype,
  },
  {
    id: "charset_missing",
    category: "structure",
    severity: "info",
    title: "Character encoding not declared early",
    detects: "No charset in Content-Type and none in the first 1,024 bytes of HTML.",
    scope: "page",
    eligibility: "html",
    evaluate: (p) =>
      !/charset=/i.test(p.headers.get("content-type") ?? "") && !p.facts.charsetEarly,
  },
  {
    id: "picture_without_img",
    category: "structure",
    severity: "info",
    title: "<picture> without an <img> fallback",
    detects: "A <picture> element that has no <img> inside, so nothing renders in some clients.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) => p.facts.pictureWithoutImg > 0,
  },
  {
    id: "dead_end_page",
    category: "structure",
    severity: "info",
    title: "Pages with no outgoing links",
    detects: "Indexable pages that link nowhere.",
    scope: "page",
    eligibility: "indexable",
    evaluate: (p) =>
      p.facts.links.length + p.facts.nofollowLinks.length + p.facts.externalLinks === 0,
  },
];
