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
import { libraryFromBanner, mayNameLibrary } from "../js_libraries.ts";
import { inspectJsonLd } from "../json_ld.ts";
import { MAX_ITEMS, sample, siteKeyOf } from "../page_facts.ts";
import { type Attrs, type FactCollector, type ParseState, tryUrl } from "./collector.ts";

/** Characters of an inline script read for a library banner (banners open the file). */
const INLINE_BANNER_CHARS = 512;

class ScriptCollector {
  inJsonLd = false;
  jsonBuf = "";
  /** Inside an inline classic script: its first characters are read for a library banner. */
  inInlineScript = false;
  inlineHead = "";
  inlineScripts = 0;
  constructor(readonly p: ParseState) {}

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

export const scriptFacts: FactCollector = {
  id: "scripts",
  tags: ["script"],
  closeTags: ["script"],
  start: (p) => new ScriptCollector(p),
};
