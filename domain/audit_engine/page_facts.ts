/**
 * The facts of one HTML page (`PageFacts`) and their limits. They are collected in ONE streaming
 * `htmlparser2` pass (facts/extract.ts, `extractPageFacts`), each fact by the family that owns it
 * (facts/*.ts).
 *
 * @module
 */
import type { Detected } from "./js_libraries.ts";
import type { JsonLdFindings } from "./json_ld.ts";
import type { DocumentMode } from "./doctype.ts";

/** Everything the page-level checks and the site-level aggregation need from one HTML page. */
export interface PageFacts {
  bytes: number;
  /** A doctype appears anywhere in the document. */
  hasDoctype: boolean;
  /**
   * The document mode a browser renders the page in (doctype.ts): decided by the first doctype if
   * it comes before any element or text, else quirks.
   */
  documentMode: DocumentMode;
  /** Why the mode is not no-quirks (the standard's rule that decided it), else null. */
  documentModeReason: string | null;
  /** The first doctype as written (without `<!` and `>`, at most 200 characters), or null. */
  doctype: string | null;
  htmlLang: string | null;
  titleCount: number;
  title: string | null;
  descriptionCount: number;
  description: string | null;
  /** Lower-cased `content` of meta robots / googlebot, joined by ",". */
  robotsMeta: string;
  viewportCount: number;
  viewport: string | null;
  /** A charset declaration (meta charset or http-equiv) within the first 1,024 bytes. */
  charsetEarly: boolean;
  /** Distinct canonical hrefs from `<head>` (raw values). */
  canonicals: string[];
  /** robots/description meta or canonical link found after `<head>` ended. */
  headTagsInBody: number;
  hreflangs: { lang: string; href: string }[];
  h1Count: number;
  h1: string | null;
  headingSkip: boolean;
  /** Internal, followable link targets (canonicalised, deduplicated). */
  links: string[];
  /** Anchor text of each entry of `links` (first occurrence, at most 60 characters). */
  linkAnchors: string[];
  /** Internal links marked rel=nofollow (not followed, still checked as targets). */
  nofollowLinks: string[];
  /**
   * Internal links past the page's cap (`maxLinks`), not kept in `links` or `nofollowLinks`:
   * counted per occurrence (0 when the page is under the cap).
   */
  linksOverCap: number;
  nofollowAnchors: string[];
  /**
   * Same-site `<frame src>` and `<iframe src>` targets (canonicalised, distinct, at most
   * MAX_FRAMES): documents of their own, crawled as pages, not links.
   */
  frames: string[];
  /**
   * Same-site subresources the page loads (images, scripts, stylesheets, fonts, media, frames):
   * distinct URLs in document order (frames canonicalised like links), at most the page's cap.
   */
  resourceUrls: string[];
  /** For each of `resourceUrls`, its first reference (an index of resources.ts RESOURCE_ELEMENTS). */
  resourceKinds: number[];
  /**
   * Same-site resource references past the page's cap, not kept in `resourceUrls`: counted per
   * occurrence (0 when the page is under the cap).
   */
  resourcesOverCap: number;
  /**
   * Anchors the page offers (`id=` on any element, `<a name=>`): 32-bit hashes (facts/fragments.ts
   * `anchorHash`), at most MAX_ANCHORS; `anchorsOverCap` when more were left out.
   */
  anchors: number[];
  anchorsOverCap: boolean;
  /**
   * Links with a `#fragment` to pages of the site (the page itself included): each target
   * (canonical, without the fragment) and its fragment as written, distinct, at most
   * MAX_FRAGMENT_LINKS (`#`, `#top`, text fragments and `#!` routes are not kept).
   */
  fragmentTargets: string[];
  fragments: string[];
  externalLinks: number;
  /** Internal `<a href="http://...">` found while the page itself is https. */
  httpInternalLinks: number;
  uncrawlableLinks: number;
  genericLinkTexts: number;
  imgCount: number;
  imgNoAlt: number;
  imgUnsized: number;
  pictureWithoutImg: number;
  mixedActive: number;
  mixedPassive: number;
  protocolRelative: number;
  /**
   * Subresources loaded over http, at most MAX_ITEMS: on https pages every http:// one (mixed
   * content); on http pages those from other hosts (same-host ones are the page's own not_https).
   */
  httpResources: { url: string; element: string }[];
  /** All such subresources (the list above is capped). */
  httpResourceCount: number;
  forms: number;
  /** Form actions that submit over http (explicit http://, or relative on an http page). */
  insecureFormActions: number;
  /** Those actions, resolved, at most MAX_ITEMS. */
  insecureForms: string[];
  /** `<meta name="generator">` content (first), trimmed. */
  generator: string | null;
  /** A `<meta http-equiv="Content-Security-Policy">` is present. */
  metaCsp: boolean;
  /**
   * Absolute URLs of external scripts worth reading for a library: every same-site one whatever
   * its name, and other hosts' whose URL names a known library; distinct, at most MAX_ITEMS.
   */
  libraryScripts: string[];
  /**
   * Libraries bundled into inline scripts, known by the banner in the script's first
   * INLINE_BANNER_CHARS characters (`index`: the inline script's position, from 1), at most
   * MAX_ITEMS.
   */
  inlineLibraries: (Detected & { index: number })[];
  plugins: number;
  jsonLdInvalid: number;
  jsonLdCount: number;
  /** Every parsed block checked against schema.org and Google's rich-result rules (json_ld.ts). */
  jsonLd: JsonLdFindings;
  /** Visible words, all of them (CJK characters count one each). */
  wordCount: number;
  /** 52 bits of a 64-bit hash of the normalised visible words (see text_fingerprint.ts). */
  textHash: number;
  /** MinHash signature of the visible text's word 3-shingles (near-duplicates). */
  textSig: Uint16Array;
  elementCount: number;
  maxDepth: number;
  metaRefresh: { delay: number; url: string | null } | null;
  scriptCount: number;
  appRoot: boolean;
  renderBlockingScripts: number;
  /** Evidence samples (at most SAMPLE_CAP each): what the counters above counted. */
  samples: {
    imgNoAlt: string[];
    imgUnsized: string[];
    uncrawlable: string[];
    genericLinks: string[];
    httpInternalLinks: string[];
    /** "element url", e.g. "script //cdn.example/app.js" (http ones are `httpResources`). */
    protocolRelative: string[];
    renderBlocking: string[];
    plugins: string[];
  };
}

/** Evidence samples kept per counter and page: enough to find the element, small enough to store. */
export const SAMPLE_CAP = 5;

/** Keeps `value` (at most 200 characters) as evidence while `list` has fewer than SAMPLE_CAP. */
export function sample(list: string[], value: string): void {
  if (list.length < SAMPLE_CAP) list.push(value.length > 200 ? value.slice(0, 200) : value);
}

/** Evidence lists kept per page (counts stay exact). */
export const MAX_ITEMS = 20;
/** Distinct internal links kept per page by default (`CRAWL_MAX_LINKS_PER_PAGE`). */
export const MAX_LINKS_PER_PAGE = 1_000;
/** Distinct same-site resources kept per page by default (for broken_resources). */
export const MAX_RESOURCES_PER_PAGE = 500;
/** Same-site frame sources kept per page (a frameset has a few; more are not crawled). */
export const MAX_FRAMES = 50;

/** Hosts are internal when equal modulo a leading `www.` (and port). */
export function sameSite(a: URL, siteKey: string): boolean {
  return siteKeyOf(a) === siteKey;
}

export function siteKeyOf(u: URL): string {
  const host = u.host;
  return host.startsWith("www.") ? host.slice(4) : host;
}
