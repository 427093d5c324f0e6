/**
 * Head facts: the language, title, meta tags (description, robots, viewport, charset, generator,
 * CSP, refresh) and the canonical and hreflang links. Feeds the indexability, structure, mobile
 * and security checks.
 *
 * @module
 */
import { canonicalUrl } from "../urls.ts";
import { type Attrs, collapse, type FactCollector, type ParseState, tryUrl } from "./collector.ts";

/** What this family adds to the page's facts. */
export interface HeadFacts {
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
  /** `<meta name="generator">` content (first), trimmed. */
  generator: string | null;
  /** A `<meta http-equiv="Content-Security-Policy">` is present. */
  metaCsp: boolean;
  metaRefresh: { delay: number; url: string | null } | null;
}

class HeadCollector {
  inTitle = false;
  titleBuf = "";
  constructor(readonly p: ParseState<HeadFacts>) {}

  open(name: string, a: Attrs) {
    const f = this.p.f;
    switch (name) {
      case "html":
        if (a.lang !== undefined && f.htmlLang === null) f.htmlLang = a.lang.trim();
        break;
      case "title":
        if (this.p.svgDepth > 0) break; // <svg><title> is not the document title
        f.titleCount++;
        this.inTitle = true;
        this.titleBuf = "";
        this.p.captureText(this);
        break;
      case "meta":
        this.meta(a);
        break;
      case "link":
        this.link(a);
        break;
    }
  }

  text(text: string) {
    this.titleBuf += text;
  }

  close(_name: string) {
    if (!this.inTitle) return;
    this.inTitle = false;
    this.p.releaseText(this);
    if (this.p.f.title === null) this.p.f.title = collapse(this.titleBuf);
  }

  meta(a: Attrs) {
    const p = this.p;
    const f = p.f;
    if (a.charset !== undefined) {
      if (p.offset() < 1024) f.charsetEarly = true;
      return;
    }
    const httpEquiv = a["http-equiv"];
    if (httpEquiv !== undefined) {
      const he = httpEquiv.toLowerCase();
      if (he === "content-type" && /charset=/i.test(a.content ?? "")) {
        if (p.offset() < 1024) f.charsetEarly = true;
      } else if (he === "content-security-policy") {
        f.metaCsp = true;
      } else if (he === "refresh" && a.content !== undefined) {
        const m = /^\s*(\d+(?:\.\d+)?)\s*(?:[;,]\s*(?:url\s*=\s*)?['"]?([^'"]*)['"]?)?/i.exec(
          a.content,
        );
        if (m) {
          const target = m[2] ? tryUrl(m[2].trim(), p.base) : null;
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
      if (p.headDone) f.headTagsInBody++;
    } else if (name === "robots" || name === "googlebot") {
      const c = (a.content ?? "").toLowerCase();
      f.robotsMeta = f.robotsMeta ? `${f.robotsMeta},${c}` : c;
      if (p.headDone) f.headTagsInBody++;
    } else if (name === "viewport") {
      f.viewportCount++;
      if (f.viewport === null) f.viewport = a.content ?? "";
    } else if (name === "generator") {
      if (f.generator === null) f.generator = (a.content ?? "").trim().slice(0, 200);
    }
  }

  /** Canonical and hreflang links (the resources family takes the other `<link>`s). */
  link(a: Attrs) {
    const rel = a.rel;
    if (rel === undefined) return;
    const r = rel.toLowerCase();
    const f = this.p.f;
    if (r === "canonical") {
      if (this.p.headDone) {
        f.headTagsInBody++;
        return;
      }
      const href = a.href ?? "";
      if (!f.canonicals.includes(href)) f.canonicals.push(href);
    } else if (r === "alternate" && a.hreflang !== undefined) {
      if (f.hreflangs.length < 100) f.hreflangs.push({ lang: a.hreflang, href: a.href ?? "" });
    }
  }
}

export const headFacts: FactCollector<HeadFacts> = {
  id: "head",
  tags: ["html", "title", "meta", "link"],
  closeTags: ["title"],
  init: () => ({
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
    generator: null,
    metaCsp: false,
    metaRefresh: null,
  }),
  start: (p) => new HeadCollector(p),
};
