/**
 * Page fact extraction: ONE streaming `htmlparser2` pass per page that keeps only the small facts
 * the checks need (counts, flags, a few short strings), never a DOM. Building a DOM costs ~7x the
 * parse (design.md "Performance budgets"), and the checks must stay within 1.5x of a bare parse.
 *
 * @module
 */
import { Parser } from "htmlparser2";
import { canonicalUrl } from "./urls.ts";
import { fingerprintText } from "./text_fingerprint.ts";
import { type Detected, libraryFromBanner, mayNameLibrary } from "./js_libraries.ts";
import { emptyJsonLdFindings, inspectJsonLd, type JsonLdFindings } from "./json_ld.ts";
import { doctypeMode, type DocumentMode } from "./doctype.ts";
import { fontFaceUrls, FRAME_KINDS, RESOURCE_KIND as K, srcsetUrls } from "./resources.ts";

const EMPTY_SIG = new Uint16Array(0);

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
  /** Absolute URLs of external scripts whose URL names a known library, at most MAX_ITEMS. */
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
/** Evidence lists kept per page (counts stay exact). */
export const MAX_ITEMS = 20;
/** Distinct internal links kept per page by default (`CRAWL_MAX_LINKS_PER_PAGE`). */
export const MAX_LINKS_PER_PAGE = 1_000;
/** Distinct same-site resources kept per page by default (for broken_resources). */
export const MAX_RESOURCES_PER_PAGE = 500;
/** Same-site frame sources kept per page (a frameset has a few; more are not crawled). */
export const MAX_FRAMES = 50;
/** Longer resource URLs are not kept (a KV key holds at most 2 KiB; crawl/store.ts). */
const RESOURCE_URL_MAX = 1_500;
/** Characters of one inline <style> block read for @font-face rules. */
const STYLE_CHARS = 200_000;
/** Schemes a resource reference may have that are never fetched (cheap test before parsing). */
const UNFETCHED_SCHEME = /^(data|blob|javascript|about|mailto|tel|cid):/i;
/** Characters of an inline script read for a library banner (banners open the file). */
const INLINE_BANNER_CHARS = 512;

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
  /** Inside an inline classic script: its first characters are read for a library banner. */
  inInlineScript = false;
  inlineHead = "";
  inlineScripts = 0;
  jsonBuf = "";
  /** Visible text chunks in document order (slices of the page string; fingerprinted at end). */
  textParts: string[] = [];
  seenLinks = new Set<string>();
  /** Origin of the base URL and whether it is internal: the fast path for "/path" links. */
  baseOrigin: string;
  baseInternal: boolean;
  /** Where the open `<a>`'s link landed: index in links (>= 0), in nofollowLinks (< -1), or -1. */
  linkSlot = -1;
  aHref = "";

  /** No element or text yet: a doctype here decides the document mode (doctype.ts). */
  initial = true;
  modeDecided = false;
  /** Distinct resources kept so far (created at the first one). */
  seenResources: Set<string> | null = null;
  /** Inside an inline <style>: its text is read for @font-face sources. */
  inStyle = false;
  styleBuf = "";

  constructor(
    page: URL,
    siteKey: string,
    bytes: number,
    readonly maxLinks = MAX_LINKS_PER_PAGE,
    readonly maxResources = MAX_RESOURCES_PER_PAGE,
  ) {
    this.base = page;
    this.baseOrigin = page.origin;
    this.baseInternal = siteKeyOf(page) === siteKey;
    this.pageHttps = page.protocol === "https:";
    this.siteKey = siteKey;
    this.f = {
      bytes,
      hasDoctype: false,
      documentMode: "quirks",
      documentModeReason: null,
      doctype: null,
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
      frames: [],
      resourceUrls: [],
      resourceKinds: [],
      resourcesOverCap: 0,
      linksOverCap: 0,
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
      httpResources: [],
      httpResourceCount: 0,
      forms: 0,
      insecureFormActions: 0,
      insecureForms: [],
      generator: null,
      metaCsp: false,
      libraryScripts: [],
      inlineLibraries: [],
      plugins: 0,
      jsonLdInvalid: 0,
      jsonLdCount: 0,
      jsonLd: emptyJsonLdFindings(),
      wordCount: 0,
      textHash: 0,
      textSig: EMPTY_SIG,
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
        protocolRelative: [],
        renderBlocking: [],
        plugins: [],
      },
    };
  }

  onprocessinginstruction(name: string, data: string) {
    if (name.toLowerCase() !== "!doctype") return;
    const f = this.f;
    const first = !f.hasDoctype;
    if (first) f.doctype = data.slice(1, 201);
    f.hasDoctype = true;
    if (this.modeDecided) {
      // A second doctype, or one after content: browsers ignore it.
      if (first) f.documentModeReason = "the doctype comes after an element or text";
      return;
    }
    this.modeDecided = true;
    const v = doctypeMode(data.slice(1, 4097));
    f.documentMode = v.mode;
    f.documentModeReason = v.reason;
  }

  /** The first element or text came before any doctype: the page renders in quirks mode. */
  endInitial() {
    this.initial = false;
    if (this.modeDecided) return;
    this.modeDecided = true;
    this.f.documentMode = "quirks";
    this.f.documentModeReason = "no doctype before the first element or text";
  }

  onopentag(name: string, a: Record<string, string>) {
    const f = this.f;
    if (this.initial) this.endInitial();
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
        this.subresource(a.src, false, "img");
        this.resource(a.src, K["img src"]);
        if (a.srcset !== undefined) this.srcset(a.srcset, K["img srcset"]);
        break;
      case "picture":
        if (this.pictureDepth++ === 0) this.pictureImgs = 0;
        break;
      case "script":
        f.scriptCount++;
        if (a.type !== undefined && a.type.trim().toLowerCase() === "application/ld+json") {
          this.inJsonLd = true;
          this.jsonBuf = "";
        } else if (a.src === undefined) {
          const type = (a.type ?? "").trim().toLowerCase();
          if (type === "" || type === "module" || type.includes("javascript")) {
            this.inInlineScript = true;
            this.inlineHead = "";
            this.inlineScripts++;
          }
        } else {
          this.subresource(a.src, true, "script");
          this.resource(a.src, K["script src"]);
          if (mayNameLibrary(a.src) && f.libraryScripts.length < MAX_ITEMS) {
            const u = tryUrl(a.src, this.base);
            if (u !== null) f.libraryScripts.push(u.href);
          }
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
      case "frame":
        this.subresource(a.src, true, name);
        this.resource(a.src, name === "frame" ? K["frame src"] : K["iframe src"]);
        break;
      case "audio":
        this.subresource(a.src, false, name);
        this.resource(a.src, K["audio src"]);
        break;
      case "video":
        this.subresource(a.src, false, name);
        this.resource(a.src, K["video src"]);
        this.resource(a.poster, K["video poster"]);
        break;
      case "source":
        this.subresource(a.src, false, name);
        this.resource(a.src, K["source src"]);
        if (a.srcset !== undefined) this.srcset(a.srcset, K["source srcset"]);
        break;
      case "track":
        this.resource(a.src, K["track src"]);
        break;
      case "input":
        if (a.type !== undefined && a.type.toLowerCase() === "image") {
          this.resource(a.src, K["input src"]);
        }
        break;
      case "style":
        if (this.maxResources > 0) {
          this.inStyle = true;
          this.styleBuf = "";
        }
        break;
      case "form": {
        f.forms++;
        // No action (or an empty one) submits to the page itself.
        const action = (a.action ?? "").trim();
        const target = action === "" ? this.base : tryUrl(action, this.base);
        if (target !== null && target.protocol === "http:") {
          f.insecureFormActions++;
          if (f.insecureForms.length < MAX_ITEMS) f.insecureForms.push(target.href);
        }
        break;
      }
      case "object":
      case "embed":
      case "applet":
        f.plugins++;
        sample(f.samples.plugins, `${name} ${a.data ?? a.src ?? a.code ?? ""}`.trim());
        if (name === "embed") this.resource(a.src, K["embed src"]);
        else if (name === "object") this.resource(a.data, K["object data"]);
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
      } else if (he === "content-security-policy") {
        f.metaCsp = true;
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
    } else if (name === "generator") {
      if (f.generator === null) f.generator = (a.content ?? "").trim().slice(0, 200);
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
      this.resource(a.href, K["link stylesheet"]);
    } else if (r.includes("icon")) {
      this.resource(a.href, K["link icon"]);
    } else if (r.includes("preload")) {
      this.resource(
        a.href,
        /\bmodulepreload\b/.test(r) ? K["link modulepreload"] : K["link preload"],
      );
    }
  }

  /**
   * A same-site resource the page loads: kept once per URL with its first reference, up to the
   * page's cap; a frame source is also kept in `frames` (crawled as a page).
   */
  resource(raw: string | undefined, kind: number) {
    if (raw === undefined) return;
    const s = raw.trim();
    if (s === "") return;
    const c0 = s.charCodeAt(0);
    if (c0 === 35 /* # */) return;
    const frame = FRAME_KINDS.has(kind);
    if (!frame && this.maxResources === 0) return;
    let url: string;
    if (
      c0 === 47 && this.baseInternal && s.charCodeAt(1) !== 47 && SIMPLE_PATH.test(s) &&
      !s.includes("//") && !s.includes("/.")
    ) {
      url = this.baseOrigin + s; // what the URL parser (and canonicalUrl) would return
    } else {
      if (c0 !== 47 && UNFETCHED_SCHEME.test(s)) return;
      const u = tryUrl(s, this.base);
      if (u === null || (u.protocol !== "http:" && u.protocol !== "https:")) return;
      if (siteKeyOf(u) !== this.siteKey) return;
      if (frame) url = canonicalUrl(u);
      else {
        u.hash = "";
        url = u.href;
      }
    }
    if (url.length > RESOURCE_URL_MAX) return;
    const f = this.f;
    if (frame && f.frames.length < MAX_FRAMES && !f.frames.includes(url)) f.frames.push(url);
    if (this.maxResources === 0) return;
    const seen = this.seenResources ??= new Set();
    if (seen.has(url)) return;
    if (seen.size >= this.maxResources) {
      f.resourcesOverCap++;
      return;
    }
    seen.add(url);
    f.resourceUrls.push(url);
    f.resourceKinds.push(kind);
  }

  srcset(value: string, kind: number) {
    if (this.maxResources === 0) return;
    for (const u of srcsetUrls(value)) this.resource(u, kind);
  }

  /** A subresource reference: mixed content on https pages, cross-host http on http pages. */
  subresource(src: string | undefined, active: boolean, element: string) {
    if (src === undefined) return;
    const s = src.trim();
    const c0 = s.charCodeAt(0);
    const rel = c0 === 47 /* / */ && s.charCodeAt(1) === 47;
    if (!rel && !((c0 === 104 || c0 === 72) && /^http:/i.test(s))) return; // https or relative
    const f = this.f;
    if (this.pageHttps) {
      if (rel) {
        f.protocolRelative++;
        sample(f.samples.protocolRelative, `${element} ${s}`);
        return;
      }
      if (active) f.mixedActive++;
      else f.mixedPassive++;
      this.httpResource(s, element);
      return;
    }
    // An http page: every relative or // reference is http too; same-host ones are part of the
    // page's own not_https, other hosts are a second, separate exposure.
    const u = tryUrl(s, this.base);
    if (u === null || u.protocol !== "http:" || siteKeyOf(u) === this.siteKey) return;
    this.httpResource(u.href, element);
  }

  httpResource(url: string, element: string) {
    const f = this.f;
    f.httpResourceCount++;
    if (f.httpResources.length < MAX_ITEMS) f.httpResources.push({ url, element });
  }

  anchor(a: Record<string, string>) {
    const f = this.f;
    this.inA = true;
    this.aText = "";
    this.aCountable = false;
    this.linkSlot = -1;
    // Inside <svg>, a link is `href` (SVG 2) or `xlink:href` (SVG 1.1, Graphviz, Javadoc).
    const raw = a.href ?? (this.svgDepth > 0 ? a["xlink:href"] : undefined);
    this.aHref = raw ?? "";
    if (raw === undefined) {
      // An SVG <a> with no link (Graphviz writes them with only xlink:title) is not a link.
      if (this.svgDepth > 0) return;
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
    const f = this.f;
    if (this.seenLinks.size >= this.maxLinks) {
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

  ontext(text: string) {
    if (this.initial && /\S/.test(text)) this.endInitial();
    if (this.inTitle) this.titleBuf += text;
    if (this.inH1) this.h1Buf += text;
    if (this.inA && this.aText.length < 40) this.aText += text;
    if (this.inJsonLd) {
      if (this.jsonBuf.length < 200_000) this.jsonBuf += text;
      return;
    }
    if (this.inStyle && this.styleBuf.length < STYLE_CHARS) {
      this.styleBuf += text.slice(0, STYLE_CHARS - this.styleBuf.length);
    }
    if (this.inInlineScript && this.inlineHead.length < INLINE_BANNER_CHARS) {
      this.inlineHead += text.slice(0, INLINE_BANNER_CHARS - this.inlineHead.length);
    }
    if (this.skipText > 0) return;
    this.textParts.push(text);
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
          const generic = this.aCountable && isGenericLinkText(this.aText);
          const slot = this.linkSlot;
          // The collapsed text is only built when something keeps it (most anchors: the slot).
          const text = generic || slot !== -1 ? collapse(this.aText) : "";
          if (generic) {
            this.f.genericLinkTexts++;
            sample(this.f.samples.genericLinks, `"${text}" → ${this.aHref.trim()}`);
          }
          if (slot >= 0) this.f.linkAnchors[slot] = text.slice(0, 60);
          else if (slot < -1) this.f.nofollowAnchors[-2 - slot] = text.slice(0, 60);
          this.linkSlot = -1;
        }
        break;
      case "picture":
        if (--this.pictureDepth === 0 && this.pictureImgs === 0) this.f.pictureWithoutImg++;
        break;
      case "style":
        if (this.inStyle) {
          this.inStyle = false;
          for (const u of fontFaceUrls(this.styleBuf)) this.resource(u, K["style font-face"]);
          this.styleBuf = "";
        }
        break;
      case "script":
        if (this.inJsonLd) {
          this.inJsonLd = false;
          const block = ++this.f.jsonLdCount;
          const data = parseJson(this.jsonBuf);
          if (data === UNPARSED || !validJsonLd(data)) this.f.jsonLdInvalid++;
          if (data !== UNPARSED) inspectJsonLd(data, block, this.f.jsonLd);
          this.jsonBuf = "";
        }
        if (this.inInlineScript) {
          this.inInlineScript = false;
          const lib = libraryFromBanner(this.inlineHead);
          if (lib !== null && this.f.inlineLibraries.length < MAX_ITEMS) {
            this.f.inlineLibraries.push({ ...lib, index: this.inlineScripts });
          }
          this.inlineHead = "";
        }
        break;
    }
  }
}

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

const UNPARSED = Symbol("unparsed");

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return UNPARSED;
  }
}

/** Every top-level node has @context and @type (or is a @graph with a @context). */
function validJsonLd(data: unknown): boolean {
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
  maxLinks = MAX_LINKS_PER_PAGE,
  maxResources = MAX_RESOURCES_PER_PAGE,
): PageFacts {
  const text = typeof html === "string" ? html : decoder.decode(html);
  const bytes = typeof html === "string" ? text.length : html.byteLength;
  const c = new Collector(pageUrl, siteKey, bytes, maxLinks, maxResources);
  const parser = new Parser(c, { decodeEntities: true });
  c.parser = parser;
  parser.end(text);
  if (!c.modeDecided) c.endInitial();
  const fp = fingerprintText(c.textParts);
  c.f.wordCount = fp.words;
  c.f.textHash = fp.exact;
  c.f.textSig = fp.sig;
  return c.f;
}
