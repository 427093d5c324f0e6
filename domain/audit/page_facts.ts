/**
 * Page fact extraction: ONE streaming `htmlparser2` pass per page that keeps only the small facts
 * the checks need (counts, flags, a few short strings), never a DOM. Building a DOM costs ~7x the
 * parse (design.md "Performance budgets"), and the checks must stay within 1.5x of a bare parse.
 *
 * @module
 */
import { Parser } from "htmlparser2";
import { canonicalUrl } from "./urls.ts";

/** Everything the page-level checks and the site-level aggregation need from one HTML page. */
export interface PageFacts {
  bytes: number;
  hasDoctype: boolean;
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
  nofollowAnchors: string[];
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
  forms: number;
  insecureFormActions: number;
  plugins: number;
  jsonLdInvalid: number;
  jsonLdCount: number;
  /** Visible words, counted up to WORD_CAP only. */
  wordCount: number;
  /** FNV-1a fingerprint of the visible text chunks (duplicate-content detection). */
  textHash: number;
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
    /** "element url", e.g. "script http://cdn.example/app.js". */
    mixedActive: string[];
    mixedPassive: string[];
    protocolRelative: string[];
    insecureFormActions: string[];
    renderBlocking: string[];
    plugins: string[];
  };
}

/** Evidence samples kept per counter and page: enough to find the element, small enough to store. */
export const SAMPLE_CAP = 5;

function sample(list: string[], value: string): void {
  if (list.length < SAMPLE_CAP) list.push(value.length > 200 ? value.slice(0, 200) : value);
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

const TEXT_SKIP = new Set(["script", "style", "template", "noscript", "svg", "head", "title"]);
const APP_ROOT_IDS = new Set(["root", "app", "__next", "__nuxt", "svelte", "___gatsby"]);
/** Root-relative paths WHATWG URL would leave unchanged: no query, fragment, escapes, dots. */
const SIMPLE_PATH = /^\/[A-Za-z0-9\-_~!$&'()*+,;=:@/]*$/;
/**
 * Word counting stops here: thin_content (200), the app-shell heuristic (50) and
 * duplicate_content (20) only compare against thresholds, and a per-character scan of all text
 * would cost about half a bare parse.
 */
export const WORD_CAP = 250;

/** Hosts are internal when equal modulo a leading `www.` (and port). */
export function sameSite(a: URL, siteKey: string): boolean {
  return siteKeyOf(a) === siteKey;
}

export function siteKeyOf(u: URL): string {
  const host = u.host;
  return host.startsWith("www.") ? host.slice(4) : host;
}

/**
 * Streams the page once. A class whose methods are the htmlparser2 callbacks: the parser calls
 * them with `this` bound to the instance, so no closures are allocated per page.
 */
class Collector {
  f: PageFacts;
  parser!: Parser;
  base: URL;
  readonly pageHttps: boolean;
  readonly siteKey: string;
  depth = 0;
  inHead = false;
  headDone = false;
  skipText = 0;
  svgDepth = 0;
  inTitle = false;
  titleBuf = "";
  inH1 = false;
  h1Buf = "";
  lastHeading = 0;
  inA = false;
  aText = "";
  aCountable = false;
  pictureDepth = 0;
  pictureImgs = 0;
  inJsonLd = false;
  jsonBuf = "";
  hashState = 0x811c9dc5;
  inWord = false;
  seenLinks = new Set<string>();
  /** Origin of the base URL and whether it is internal: the fast path for "/path" links. */
  baseOrigin: string;
  baseInternal: boolean;
  textLen = 0;
  /** Where the open `<a>`'s link landed: index in links (>= 0), in nofollowLinks (< -1), or -1. */
  linkSlot = -1;
  aHref = "";

  constructor(page: URL, siteKey: string, bytes: number) {
    this.base = page;
    this.baseOrigin = page.origin;
    this.baseInternal = siteKeyOf(page) === siteKey;
    this.pageHttps = page.protocol === "https:";
    this.siteKey = siteKey;
    this.f = {
      bytes,
      hasDoctype: false,
      htmlLang: null,
      titleCount: 0,
      title: null,
      descriptionCount: 0,
      description: null,
      robotsMeta: "",
      viewportCount: 0,
      viewport: null,
      charsetEarly: false,
      canonicals: [],
      headTagsInBody: 0,
      hreflangs: [],
      h1Count: 0,
      h1: null,
      headingSkip: false,
      links: [],
      linkAnchors: [],
      nofollowLinks: [],
      nofollowAnchors: [],
      externalLinks: 0,
      httpInternalLinks: 0,
      uncrawlableLinks: 0,
      genericLinkTexts: 0,
      imgCount: 0,
      imgNoAlt: 0,
      imgUnsized: 0,
      pictureWithoutImg: 0,
      mixedActive: 0,
      mixedPassive: 0,
      protocolRelative: 0,
      forms: 0,
      insecureFormActions: 0,
      plugins: 0,
      jsonLdInvalid: 0,
      jsonLdCount: 0,
      wordCount: 0,
      textHash: 0,
      elementCount: 0,
      maxDepth: 0,
      metaRefresh: null,
      scriptCount: 0,
      appRoot: false,
      renderBlockingScripts: 0,
      samples: {
        imgNoAlt: [],
        imgUnsized: [],
        uncrawlable: [],
        genericLinks: [],
        httpInternalLinks: [],
        mixedActive: [],
        mixedPassive: [],
        protocolRelative: [],
        insecureFormActions: [],
        renderBlocking: [],
        plugins: [],
      },
    };
  }

  onprocessinginstruction(name: string) {
    if (name.toLowerCase() === "!doctype") this.f.hasDoctype = true;
  }

  onopentag(name: string, a: Record<string, string>) {
    const f = this.f;
    f.elementCount++;
    if (++this.depth > f.maxDepth) f.maxDepth = this.depth;
    if (TEXT_SKIP.has(name)) this.skipText++;
    switch (name) {
      case "svg":
        this.svgDepth++;
        break;
      case "html":
        if (a.lang !== undefined && f.htmlLang === null) f.htmlLang = a.lang.trim();
        break;
      case "head":
        this.inHead = true;
        break;
      case "body":
        this.headDone = true;
        this.inHead = false;
        break;
      case "base":
        if (a.href) {
          this.base = tryUrl(a.href, this.base) ?? this.base;
          this.baseOrigin = this.base.origin;
          this.baseInternal = siteKeyOf(this.base) === this.siteKey;
        }
        break;
      case "title":
        if (this.svgDepth > 0) break; // <svg><title> is not the document title
        f.titleCount++;
        this.inTitle = true;
        this.titleBuf = "";
        break;
      case "meta":
        this.meta(a);
        break;
      case "link":
        this.link(a);
        break;
      case "h1":
      case "h2":
      case "h3":
      case "h4":
      case "h5":
      case "h6": {
        const level = name.charCodeAt(1) - 48;
        if (level > this.lastHeading + 1 && this.lastHeading !== 0) f.headingSkip = true;
        this.lastHeading = level;
        if (level === 1) {
          f.h1Count++;
          if (f.h1 === null) {
            this.inH1 = true;
            this.h1Buf = "";
          }
        }
        break;
      }
      case "a":
        this.anchor(a);
        break;
      case "img":
        f.imgCount++;
        if (a.alt === undefined && a.role !== "presentation" && a.role !== "none") {
          f.imgNoAlt++;
          sample(f.samples.imgNoAlt, a.src ?? "(no src)");
        }
        if (a.width === undefined || a.height === undefined) {
          f.imgUnsized++;
          sample(f.samples.imgUnsized, a.src ?? "(no src)");
        }
        if (this.pictureDepth > 0) this.pictureImgs++;
        this.subresource(a.src, false, name);
        break;
      case "picture":
        if (this.pictureDepth++ === 0) this.pictureImgs = 0;
        break;
      case "script":
        f.scriptCount++;
        if (a.type !== undefined && a.type.trim().toLowerCase() === "application/ld+json") {
          this.inJsonLd = true;
          this.jsonBuf = "";
        } else if (a.src !== undefined) {
          this.subresource(a.src, true, name);
          if (
            !this.headDone && a.async === undefined && a.defer === undefined &&
            a.type !== "module"
          ) {
            f.renderBlockingScripts++;
            sample(f.samples.renderBlocking, a.src);
          }
        }
        break;
      case "iframe":
        this.subresource(a.src, true, name);
        break;
      case "audio":
      case "video":
      case "source":
        this.subresource(a.src, false, name);
        break;
      case "form": {
        f.forms++;
        const action = a.action;
        if (action !== undefined && action.trim().toLowerCase().startsWith("http:")) {
          f.insecureFormActions++;
          sample(f.samples.insecureFormActions, action.trim());
        }
        break;
      }
      case "object":
      case "embed":
      case "applet":
        f.plugins++;
        sample(f.samples.plugins, `${name} ${a.data ?? a.src ?? a.code ?? ""}`.trim());
        break;
      case "div":
        if (a.id !== undefined && APP_ROOT_IDS.has(a.id)) f.appRoot = true;
        break;
    }
  }

  meta(a: Record<string, string>) {
    const f = this.f;
    if (a.charset !== undefined) {
      if (this.parser.startIndex < 1024) f.charsetEarly = true;
      return;
    }
    const httpEquiv = a["http-equiv"];
    if (httpEquiv !== undefined) {
      const he = httpEquiv.toLowerCase();
      if (he === "content-type" && /charset=/i.test(a.content ?? "")) {
        if (this.parser.startIndex < 1024) f.charsetEarly = true;
      } else if (he === "refresh" && a.content !== undefined) {
        const m = /^\s*(\d+(?:\.\d+)?)\s*(?:[;,]\s*(?:url\s*=\s*)?['"]?([^'"]*)['"]?)?/i.exec(
          a.content,
        );
        if (m) {
          const target = m[2] ? tryUrl(m[2].trim(), this.base) : null;
          f.metaRefresh = { delay: Number(m[1]), url: target ? canonicalUrl(target) : null };
        }
      }
      return;
    }
    const name = a.name?.toLowerCase();
    if (name === undefined) return;
    if (name === "description") {
      f.descriptionCount++;
      if (f.description === null) f.description = (a.content ?? "").trim();
      if (this.headDone) f.headTagsInBody++;
    } else if (name === "robots" || name === "googlebot") {
      const c = (a.content ?? "").toLowerCase();
      f.robotsMeta = f.robotsMeta ? `${f.robotsMeta},${c}` : c;
      if (this.headDone) f.headTagsInBody++;
    } else if (name === "viewport") {
      f.viewportCount++;
      if (f.viewport === null) f.viewport = a.content ?? "";
    }
  }

  link(a: Record<string, string>) {
    const rel = a.rel;
    if (rel === undefined) return;
    const r = rel.toLowerCase();
    const f = this.f;
    if (r === "canonical") {
      if (this.headDone) {
        f.headTagsInBody++;
        return;
      }
      const href = a.href ?? "";
      if (!f.canonicals.includes(href)) f.canonicals.push(href);
    } else if (r === "alternate" && a.hreflang !== undefined) {
      if (f.hreflangs.length < 100) f.hreflangs.push({ lang: a.hreflang, href: a.href ?? "" });
    } else if (r.includes("stylesheet")) {
      this.subresource(a.href, true, "link");
    }
  }

  subresource(src: string | undefined, active: boolean, element: string) {
    if (src === undefined || !this.pageHttps) return;
    const c0 = src.charCodeAt(0);
    const f = this.f;
    if (c0 === 47 /* / */ && src.charCodeAt(1) === 47) {
      f.protocolRelative++;
      sample(f.samples.protocolRelative, `${element} ${src}`);
    } else if ((c0 === 104 || c0 === 72) && /^http:/i.test(src)) {
      if (active) {
        f.mixedActive++;
        sample(f.samples.mixedActive, `${element} ${src}`);
      } else {
        f.mixedPassive++;
        sample(f.samples.mixedPassive, `${element} ${src}`);
      }
    }
  }

  anchor(a: Record<string, string>) {
    const f = this.f;
    this.inA = true;
    this.aText = "";
    this.aCountable = false;
    this.linkSlot = -1;
    const raw = a.href;
    this.aHref = raw ?? "";
    if (raw === undefined) {
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
    if (c0 === 35 /* # */) return;
    if (c0 !== 47 && /^(javascript|file):/i.test(href)) {
      f.uncrawlableLinks++;
      sample(f.samples.uncrawlable, href);
      return;
    }
    if (c0 !== 47 && /^(mailto|tel|sms|data):/i.test(href)) return;
    const nofollow = a.rel !== undefined && /\bnofollow\b/i.test(a.rel);
    this.aCountable = !nofollow;
    if (
      c0 === 47 && this.baseInternal && href.charCodeAt(1) !== 47 && SIMPLE_PATH.test(href) &&
      !href.includes("//") && !href.includes("/.")
    ) {
      // Fast path (most internal links): the URL parser would return exactly origin + href.
      this.addLink(this.baseOrigin + href, nofollow);
      return;
    }
    const u = tryUrl(href, this.base);
    if (u === null || (u.protocol !== "http:" && u.protocol !== "https:")) {
      if (u === null) {
        f.uncrawlableLinks++;
        sample(f.samples.uncrawlable, href);
      }
      return;
    }
    if (siteKeyOf(u) !== this.siteKey) {
      f.externalLinks++;
      return;
    }
    if (this.pageHttps && u.protocol === "http:") {
      f.httpInternalLinks++;
      sample(f.samples.httpInternalLinks, href);
    }
    this.addLink(canonicalUrl(u), nofollow);
  }

  addLink(key: string, nofollow: boolean) {
    if (this.seenLinks.has(key)) return;
    this.seenLinks.add(key);
    const f = this.f;
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

  ontext(text: string) {
    if (this.inTitle) this.titleBuf += text;
    if (this.inH1) this.h1Buf += text;
    if (this.inA && this.aText.length < 40) this.aText += text;
    if (this.inJsonLd) {
      if (this.jsonBuf.length < 200_000) this.jsonBuf += text;
      return;
    }
    if (this.skipText > 0) return;
    const f = this.f;
    // Content fingerprint per text chunk: length plus its first and last characters. Cheap, and
    // identical pages still hash identically; a full per-character hash would cost about half
    // a bare parse.
    const n = text.length;
    let h = Math.imul(this.hashState ^ n, 16777619);
    if (n > 0) {
      h = Math.imul(h ^ text.charCodeAt(0), 16777619);
      h = Math.imul(h ^ text.charCodeAt(n >> 1), 16777619);
      h = Math.imul(h ^ text.charCodeAt(n - 1), 16777619);
    }
    this.hashState = h;
    this.textLen += n;
    if (f.wordCount >= WORD_CAP) return;
    let inWord = this.inWord;
    let words = f.wordCount;
    for (let i = 0; i < n && words < WORD_CAP; i++) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 160) inWord = false;
      else if (!inWord) {
        inWord = true;
        words++;
      }
    }
    this.inWord = inWord;
    f.wordCount = words;
  }

  onclosetag(name: string) {
    this.depth--;
    if (TEXT_SKIP.has(name)) this.skipText--;
    switch (name) {
      case "svg":
        this.svgDepth--;
        break;
      case "head":
        this.inHead = false;
        this.headDone = true;
        break;
      case "title":
        if (this.inTitle) {
          this.inTitle = false;
          if (this.f.title === null) this.f.title = collapse(this.titleBuf);
        }
        break;
      case "h1":
        if (this.inH1) {
          this.inH1 = false;
          const t = collapse(this.h1Buf);
          if (t !== "") this.f.h1 = t;
        }
        break;
      case "a":
        if (this.inA) {
          this.inA = false;
          const text = collapse(this.aText);
          if (this.aCountable && GENERIC_LINK_TEXT.has(text.toLowerCase())) {
            this.f.genericLinkTexts++;
            sample(this.f.samples.genericLinks, `"${text}" → ${this.aHref.trim()}`);
          }
          const slot = this.linkSlot;
          if (slot >= 0) this.f.linkAnchors[slot] = text.slice(0, 60);
          else if (slot < -1) this.f.nofollowAnchors[-2 - slot] = text.slice(0, 60);
          this.linkSlot = -1;
        }
        break;
      case "picture":
        if (--this.pictureDepth === 0 && this.pictureImgs === 0) this.f.pictureWithoutImg++;
        break;
      case "script":
        if (this.inJsonLd) {
          this.inJsonLd = false;
          this.f.jsonLdCount++;
          if (!validJsonLd(this.jsonBuf)) this.f.jsonLdInvalid++;
          this.jsonBuf = "";
        }
        break;
    }
  }
}

function collapse(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 300);
}

function tryUrl(href: string, base: URL): URL | null {
  try {
    return new URL(href, base);
  } catch {
    return null;
  }
}

function validJsonLd(text: string): boolean {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return false;
  }
  const items = Array.isArray(data) ? data : [data];
  for (const item of items) {
    if (item === null || typeof item !== "object") return false;
    const o = item as Record<string, unknown>;
    if (o["@graph"] !== undefined) {
      if (o["@context"] === undefined) return false;
      continue;
    }
    if (o["@context"] === undefined || o["@type"] === undefined) return false;
  }
  return true;
}

const decoder = new TextDecoder();

/**
 * Extracts the facts of one HTML page. `html` may be bytes (decoded as UTF-8) or a string;
 * `siteKey` is the host (without `www.`) that counts as internal.
 */
export function extractPageFacts(
  html: string | Uint8Array,
  pageUrl: URL,
  siteKey: string,
): PageFacts {
  const text = typeof html === "string" ? html : decoder.decode(html);
  const bytes = typeof html === "string" ? text.length : html.byteLength;
  const c = new Collector(pageUrl, siteKey, bytes);
  const parser = new Parser(c, { decodeEntities: true });
  c.parser = parser;
  parser.end(text);
  c.f.textHash = Math.imul(c.hashState ^ c.textLen, 16777619) >>> 0;
  return c.f;
}
