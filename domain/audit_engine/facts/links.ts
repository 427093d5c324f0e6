/**
 * Link facts from `<a>`: the internal links the crawl follows (capped, with their anchor text),
 * nofollow links, external and uncrawlable links, http links on https pages, generic link texts.
 * Feeds the crawl frontier and the link checks (uncrawlable_links, link_text_generic, orphans…).
 *
 * @module
 */
import { canonicalUrl, siteKeyOf } from "../urls.ts";
import { checkedFragment, type FragmentFacts, noteFragmentLink } from "./fragments.ts";
import {
  type Attrs,
  collapse,
  type FactCollector,
  type ParseState,
  sample,
  simpleInternalPath,
  tryUrl,
} from "./collector.ts";

/** What this family adds to the page's facts. */
export interface LinkFacts {
  /** Internal, followable link targets (canonicalised, deduplicated). */
  links: string[];
  /** Anchor text of each entry of `links` (first occurrence, at most 60 characters). */
  linkAnchors: string[];
  /** Internal links marked rel=nofollow (not followed, still checked as targets). */
  nofollowLinks: string[];
  nofollowAnchors: string[];
  /**
   * Internal links past the page's cap (`maxLinks`), not kept in `links` or `nofollowLinks`:
   * counted per occurrence (0 when the page is under the cap).
   */
  linksOverCap: number;
  externalLinks: number;
  /** Internal `<a href="http://...">` found while the page itself is https. */
  httpInternalLinks: number;
  uncrawlableLinks: number;
  genericLinkTexts: number;
  samples: { uncrawlable: string[]; genericLinks: string[]; httpInternalLinks: string[] };
}

const GENERIC_LINK_TEXT = new Set([
  "click here",
  "click this",
  "go",
  "here",
  "this",
  "start",
  "right here",
  "more",
  "learn more",
  "read more",
  "more info",
  "more information",
  "continue",
  "continue reading",
  "link",
  "details",
]);

/** Longest generic phrase; longer anchor text (after trimming) cannot be one. */
const GENERIC_MAX = Math.max(...[...GENERIC_LINK_TEXT].map((t) => t.length));
const WHITESPACE_RUN = /\s\s|[\t\n\r\f\u00a0]/;

/** Anchor text is a generic phrase (cheap path first: most anchors are longer or single-spaced). */
function isGenericLinkText(raw: string): boolean {
  const t = raw.trim();
  if (t.length > 3 * GENERIC_MAX) return false;
  const lower = t.toLowerCase();
  return GENERIC_LINK_TEXT.has(lower) ||
    (WHITESPACE_RUN.test(lower) && GENERIC_LINK_TEXT.has(collapse(lower)));
}

class LinkCollector {
  inA = false;
  aText = "";
  aCountable = false;
  seenLinks = new Set<string>();
  /** Where the open `<a>`'s link landed: index in links (>= 0), in nofollowLinks (< -1), or -1. */
  linkSlot = -1;
  aHref = "";
  base: string | undefined;
  constructor(readonly p: ParseState<LinkFacts & FragmentFacts>) {}

  open(_name: string, a: Attrs) {
    const p = this.p;
    const f = p.f;
    this.inA = true;
    this.aText = "";
    this.aCountable = false;
    this.linkSlot = -1;
    p.captureText(this);
    // Inside <svg>, a link is `href` (SVG 2) or `xlink:href` (SVG 1.1, Graphviz, Javadoc).
    const raw = a.href ?? (p.svgDepth > 0 ? a["xlink:href"] : undefined);
    this.aHref = raw ?? "";
    if (raw === undefined) {
      // An SVG <a> with no link (Graphviz writes them with only xlink:title) is not a link.
      if (p.svgDepth > 0) return;
      if (a.name === undefined && a.id === undefined && a.role === undefined) {
        f.uncrawlableLinks++;
        sample(f.samples.uncrawlable, "<a> without href");
      }
      return;
    }
    const href = raw.trim();
    if (href === "") {
      f.uncrawlableLinks++;
      sample(f.samples.uncrawlable, 'href=""');
      return;
    }
    const c0 = href.charCodeAt(0);
    if (c0 === 35 /* # */) {
      // A fragment of this document (of the base URL, as the standard resolves it).
      const frag = checkedFragment(href.slice(1));
      if (frag !== null && p.baseInternal) noteFragmentLink(f, this.baseKey(), frag);
      return;
    }
    if (c0 !== 47 && /^(javascript|file):/i.test(href)) {
      f.uncrawlableLinks++;
      sample(f.samples.uncrawlable, href);
      return;
    }
    if (c0 !== 47 && /^(mailto|tel|sms|data):/i.test(href)) return;
    const nofollow = a.rel !== undefined && /\bnofollow\b/i.test(a.rel);
    this.aCountable = !nofollow;
    if (c0 === 47 && simpleInternalPath(p, href)) {
      // Fast path (most internal links): the URL parser would return exactly origin + href.
      this.addLink(p.baseOrigin + href, nofollow);
      return;
    }
    const u = tryUrl(href, p.base);
    if (u === null || (u.protocol !== "http:" && u.protocol !== "https:")) {
      if (u === null) {
        f.uncrawlableLinks++;
        sample(f.samples.uncrawlable, href);
      }
      return;
    }
    if (siteKeyOf(u) !== p.siteKey) {
      f.externalLinks++;
      return;
    }
    if (p.pageHttps && u.protocol === "http:") {
      f.httpInternalLinks++;
      sample(f.samples.httpInternalLinks, href);
    }
    const key = canonicalUrl(u);
    if (u.hash.length > 1) {
      const frag = checkedFragment(u.hash.slice(1));
      if (frag !== null) noteFragmentLink(f, key, frag);
    }
    this.addLink(key, nofollow);
  }

  /** The base URL as a link target (canonical), computed once per page. */
  baseKey(): string {
    return this.base ??= canonicalUrl(this.p.base);
  }

  addLink(key: string, nofollow: boolean) {
    if (this.seenLinks.has(key)) return;
    const f = this.p.f;
    if (this.seenLinks.size >= this.p.maxLinks) {
      // A page of 30,000 links would otherwise become 30,000 frontier entries and records.
      f.linksOverCap++;
      this.linkSlot = -1;
      return;
    }
    this.seenLinks.add(key);
    if (nofollow) {
      this.linkSlot = -2 - f.nofollowLinks.length;
      f.nofollowLinks.push(key);
      f.nofollowAnchors.push("");
    } else {
      this.linkSlot = f.links.length;
      f.links.push(key);
      f.linkAnchors.push("");
    }
  }

  text(text: string) {
    if (this.aText.length < 40) this.aText += text;
  }

  close(_name: string) {
    if (!this.inA) return;
    this.inA = false;
    this.p.releaseText(this);
    const f = this.p.f;
    const generic = this.aCountable && isGenericLinkText(this.aText);
    const slot = this.linkSlot;
    // The collapsed text is only built when something keeps it (most anchors: the slot).
    const text = generic || slot !== -1 ? collapse(this.aText) : "";
    if (generic) {
      f.genericLinkTexts++;
      sample(f.samples.genericLinks, `"${text}" → ${this.aHref.trim()}`);
    }
    if (slot >= 0) f.linkAnchors[slot] = text.slice(0, 60);
    else if (slot < -1) f.nofollowAnchors[-2 - slot] = text.slice(0, 60);
    this.linkSlot = -1;
  }
}

/** Links with a `#fragment` are noted in the fragments family's facts. */
export const linkFacts: FactCollector<LinkFacts, FragmentFacts> = {
  id: "links",
  tags: ["a"],
  closeTags: ["a"],
  init: () => ({
    links: [],
    linkAnchors: [],
    nofollowLinks: [],
    nofollowAnchors: [],
    linksOverCap: 0,
    externalLinks: 0,
    httpInternalLinks: 0,
    uncrawlableLinks: 0,
    genericLinkTexts: 0,
    samples: { uncrawlable: [], genericLinks: [], httpInternalLinks: [] },
  }),
  start: (p) => new LinkCollector(p),
};
