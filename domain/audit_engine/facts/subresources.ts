/**
 * Subresource facts: every same-site resource the page loads (images, scripts, stylesheets,
 * fonts, media, frames: resources.ts RESOURCE_ELEMENTS), kept once per URL up to the page's cap,
 * with frame sources also kept as pages to crawl; and the references loaded over http (mixed
 * content on https pages, other hosts' http on http pages) or protocol-relative. Feeds
 * broken_resources, the frame crawl and the mixed content checks.
 *
 * @module
 */
import { canonicalUrl, siteKeyOf } from "../urls.ts";
import { fontFaceUrls, FRAME_KINDS, RESOURCE_KIND as K, srcsetUrls } from "../resources.ts";
import {
  type Attrs,
  type FactCollector,
  MAX_ITEMS,
  type ParseState,
  sample,
  simpleInternalPath,
  tryUrl,
} from "./collector.ts";

/** Same-site frame sources kept per page (a frameset has a few; more are not crawled). */
export const MAX_FRAMES = 50;

/** What this family adds to the page's facts. */
export interface SubresourceFacts {
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
  samples: {
    /** "element url", e.g. "script //cdn.example/app.js" (http ones are `httpResources`). */
    protocolRelative: string[];
  };
}

/** Longer resource URLs are not kept (a KV key holds at most 2 KiB; crawl/store.ts). */
const RESOURCE_URL_MAX = 1_500;
/** Characters of one inline <style> block read for @font-face rules. */
const STYLE_CHARS = 200_000;
/** Schemes a resource reference may have that are never fetched (cheap test before parsing). */
const UNFETCHED_SCHEME = /^(data|blob|javascript|about|mailto|tel|cid):/i;

class SubresourceCollector {
  /** Distinct resources kept so far (created at the first one). */
  seenResources: Set<string> | null = null;
  /** Inside an inline <style>: its text is read for @font-face sources. */
  inStyle = false;
  styleBuf = "";
  constructor(readonly p: ParseState<SubresourceFacts>) {}

  open(name: string, a: Attrs) {
    switch (name) {
      case "img":
        this.subresource(a.src, false, "img");
        this.resource(a.src, K["img src"]);
        if (a.srcset !== undefined) this.srcset(a.srcset, K["img srcset"]);
        break;
      case "link":
        this.link(a);
        break;
      case "script":
        if (a.type !== undefined && a.type.trim().toLowerCase() === "application/ld+json") break;
        if (a.src === undefined) break;
        this.subresource(a.src, true, "script");
        this.resource(a.src, K["script src"]);
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
        if (this.p.maxResources > 0) {
          this.inStyle = true;
          this.styleBuf = "";
          this.p.captureText(this);
        }
        break;
      case "embed":
        this.resource(a.src, K["embed src"]);
        break;
      case "object":
        this.resource(a.data, K["object data"]);
        break;
    }
  }

  text(text: string) {
    if (this.styleBuf.length < STYLE_CHARS) {
      this.styleBuf += text.slice(0, STYLE_CHARS - this.styleBuf.length);
    }
  }

  close(_name: string) {
    if (!this.inStyle) return;
    this.inStyle = false;
    this.p.releaseText(this);
    for (const u of fontFaceUrls(this.styleBuf)) this.resource(u, K["style font-face"]);
    this.styleBuf = "";
  }

  /** Stylesheets, icons and preloads (the head family takes canonical and hreflang links). */
  link(a: Attrs) {
    const rel = a.rel;
    if (rel === undefined) return;
    const r = rel.toLowerCase();
    if (r === "canonical" || (r === "alternate" && a.hreflang !== undefined)) return;
    if (r.includes("stylesheet")) {
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
    const p = this.p;
    const frame = FRAME_KINDS.has(kind);
    if (!frame && p.maxResources === 0) return;
    let url: string;
    if (c0 === 47 && simpleInternalPath(p, s)) {
      url = p.baseOrigin + s; // what the URL parser (and canonicalUrl) would return
    } else {
      if (c0 !== 47 && UNFETCHED_SCHEME.test(s)) return;
      const u = tryUrl(s, p.base);
      if (u === null || (u.protocol !== "http:" && u.protocol !== "https:")) return;
      if (siteKeyOf(u) !== p.siteKey) return;
      if (frame) url = canonicalUrl(u);
      else {
        u.hash = "";
        url = u.href;
      }
    }
    if (url.length > RESOURCE_URL_MAX) return;
    const f = p.f;
    if (frame && f.frames.length < MAX_FRAMES && !f.frames.includes(url)) f.frames.push(url);
    if (p.maxResources === 0) return;
    const seen = this.seenResources ??= new Set();
    if (seen.has(url)) return;
    if (seen.size >= p.maxResources) {
      f.resourcesOverCap++;
      return;
    }
    seen.add(url);
    f.resourceUrls.push(url);
    f.resourceKinds.push(kind);
  }

  srcset(value: string, kind: number) {
    if (this.p.maxResources === 0) return;
    for (const u of srcsetUrls(value)) this.resource(u, kind);
  }

  /** A subresource reference: mixed content on https pages, cross-host http on http pages. */
  subresource(src: string | undefined, active: boolean, element: string) {
    if (src === undefined) return;
    const s = src.trim();
    const c0 = s.charCodeAt(0);
    const rel = c0 === 47 /* / */ && s.charCodeAt(1) === 47;
    if (!rel && !((c0 === 104 || c0 === 72) && /^http:/i.test(s))) return; // https or relative
    const p = this.p;
    const f = p.f;
    if (p.pageHttps) {
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
    const u = tryUrl(s, p.base);
    if (u === null || u.protocol !== "http:" || siteKeyOf(u) === p.siteKey) return;
    this.httpResource(u.href, element);
  }

  httpResource(url: string, element: string) {
    const f = this.p.f;
    f.httpResourceCount++;
    if (f.httpResources.length < MAX_ITEMS) f.httpResources.push({ url, element });
  }
}

export const subresourceFacts: FactCollector<SubresourceFacts> = {
  id: "subresources",
  tags: [
    "img",
    "link",
    "script",
    "iframe",
    "frame",
    "audio",
    "video",
    "source",
    "track",
    "input",
    "style",
    "embed",
    "object",
  ],
  closeTags: ["style"],
  init: () => ({
    frames: [],
    resourceUrls: [],
    resourceKinds: [],
    resourcesOverCap: 0,
    mixedActive: 0,
    mixedPassive: 0,
    protocolRelative: 0,
    httpResources: [],
    httpResourceCount: 0,
    samples: { protocolRelative: [] },
  }),
  start: (p) => new SubresourceCollector(p),
};
