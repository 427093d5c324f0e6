/**
 * Script facts: `<script>` count, JSON-LD blocks (parsed and checked, json_ld.ts), the external
 * scripts worth reading for a library (same-site ones whatever their name, other hosts' when
 * their URL names one; crawl/banners.ts reads them), libraries in inline scripts' banners
 * (js_libraries.ts), and
 * render-blocking scripts in `<head>`. Feeds the structured data, security (vulnerable
 * libraries) and performance checks. (The resources family takes the scripts' `src`.)
 *
 * @module
 */
import { type Detected, libraryFromBanner, mayNameLibrary } from "../js_libraries.ts";
import { emptyJsonLdFindings, inspectJsonLd, type JsonLdFindings } from "../json_ld.ts";
import { siteKeyOf } from "../urls.ts";
import {
  type Attrs,
  type FactCollector,
  MAX_ITEMS,
  type ParseState,
  sample,
  tryUrl,
} from "./collector.ts";

/** Characters of an inline script read for a library banner (banners open the file). */
const INLINE_BANNER_CHARS = 512;

/** What this family adds to the page's facts. */
export interface ScriptFacts {
  scriptCount: number;
  jsonLdInvalid: number;
  jsonLdCount: number;
  /** Every parsed block checked against schema.org and Google's rich-result rules (json_ld.ts). */
  jsonLd: JsonLdFindings;
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
  renderBlockingScripts: number;
  samples: { renderBlocking: string[] };
}

class ScriptCollector {
  inJsonLd = false;
  jsonBuf = "";
  /** Inside an inline classic script: its first characters are read for a library banner. */
  inInlineScript = false;
  inlineHead = "";
  inlineScripts = 0;
  constructor(readonly p: ParseState<ScriptFacts>) {}

  open(_name: string, a: Attrs) {
    const p = this.p;
    const f = p.f;
    f.scriptCount++;
    if (a.type !== undefined && a.type.trim().toLowerCase() === "application/ld+json") {
      this.inJsonLd = true;
      this.jsonBuf = "";
      p.captureText(this);
    } else if (a.src === undefined) {
      const type = (a.type ?? "").trim().toLowerCase();
      if (type === "" || type === "module" || type.includes("javascript")) {
        this.inInlineScript = true;
        this.inlineHead = "";
        this.inlineScripts++;
        p.captureText(this);
      }
    } else {
      // Worth reading for a library: every same-site script whatever its name (its content
      // decides), and another host's whose URL names a library.
      if (f.libraryScripts.length < MAX_ITEMS) {
        const u = tryUrl(a.src, p.base);
        if (
          u !== null && (u.protocol === "https:" || u.protocol === "http:") &&
          (siteKeyOf(u) === p.siteKey || mayNameLibrary(a.src)) &&
          !f.libraryScripts.includes(u.href)
        ) f.libraryScripts.push(u.href);
      }
      if (
        !p.headDone && a.async === undefined && a.defer === undefined &&
        a.type !== "module"
      ) {
        f.renderBlockingScripts++;
        sample(f.samples.renderBlocking, a.src);
      }
    }
  }

  text(text: string) {
    if (this.inJsonLd) {
      if (this.jsonBuf.length < 200_000) this.jsonBuf += text;
      return;
    }
    if (this.inInlineScript && this.inlineHead.length < INLINE_BANNER_CHARS) {
      this.inlineHead += text.slice(0, INLINE_BANNER_CHARS - this.inlineHead.length);
    }
  }

  close(_name: string) {
    const f = this.p.f;
    if (this.inJsonLd) {
      this.inJsonLd = false;
      const block = ++f.jsonLdCount;
      const data = parseJson(this.jsonBuf);
      if (data === UNPARSED || !validJsonLd(data)) f.jsonLdInvalid++;
      if (data !== UNPARSED) inspectJsonLd(data, block, f.jsonLd);
      this.jsonBuf = "";
    }
    if (this.inInlineScript) {
      this.inInlineScript = false;
      const lib = libraryFromBanner(this.inlineHead);
      if (lib !== null && f.inlineLibraries.length < MAX_ITEMS) {
        f.inlineLibraries.push({ ...lib, index: this.inlineScripts });
      }
      this.inlineHead = "";
    }
    this.p.releaseText(this);
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

export const scriptFacts: FactCollector<ScriptFacts> = {
  id: "scripts",
  tags: ["script"],
  closeTags: ["script"],
  init: () => ({
    scriptCount: 0,
    jsonLdInvalid: 0,
    jsonLdCount: 0,
    jsonLd: emptyJsonLdFindings(),
    libraryScripts: [],
    inlineLibraries: [],
    renderBlockingScripts: 0,
    samples: { renderBlocking: [] },
  }),
  start: (p) => new ScriptCollector(p),
};
