/**
 * Page fact extraction: ONE streaming `htmlparser2` pass per page that keeps only the small facts
 * the checks need (counts, flags, a few short strings), never a DOM. Building a DOM costs ~7x the
 * parse (design.md "Performance budgets"), and the checks must stay within 1.5x of a bare parse.
 *
 * The collector here is a dispatcher: it keeps the document's own state (doctype and mode,
 * depth, `<head>`/`<body>`, `<base>`, `<svg>`, the visible text) and hands each element to the
 * fact families registered in FACT_COLLECTORS that listen to its tag (a tag → families map built
 * once). A family owns its facts in its own file (facts/*.ts, see collector.ts).
 *
 * @example
 * ```ts
 * import { extractPageFacts } from "./extract.ts";
 * const facts = extractPageFacts("<title>Hi</title>", new URL("https://example.com/"), "example.com");
 * facts.title; // "Hi"
 * ```
 *
 * @module
 */
import { Parser } from "htmlparser2";
import { fingerprintText } from "../text_fingerprint.ts";
import { doctypeMode } from "../doctype.ts";
import { siteKeyOf } from "../urls.ts";
import {
  FACT_COLLECTORS,
  MAX_LINKS_PER_PAGE,
  MAX_RESOURCES_PER_PAGE,
  type PageFacts,
} from "../page_facts.ts";
import {
  type Attrs,
  type FactCollector,
  type PageCollector,
  type ParseState,
  type TextListener,
  tryUrl,
} from "./collector.ts";
import { initDocumentFacts } from "./document.ts";
import { noteAnchor } from "./fragments.ts";

type Fields = Record<string, unknown>;
const FAMILIES = FACT_COLLECTORS as readonly FactCollector[];

/** Tag → indexes in FACT_COLLECTORS of the families listening to it (built once). */
function tagMap(which: (c: FactCollector) => readonly string[] | undefined) {
  const m = new Map<string, number[]>();
  FAMILIES.forEach((c, i) => {
    for (const tag of which(c) ?? []) {
      const list = m.get(tag);
      if (list === undefined) m.set(tag, [i]);
      else list.push(i);
    }
  });
  return m;
}
const OPEN = tagMap((c) => c.tags);
const CLOSE = tagMap((c) => c.closeTags);

const TEXT_SKIP = new Set(["script", "style", "template", "noscript", "svg", "head", "title"]);

/**
 * Every page's facts in their starting values, in one fixed order: the document's, then each
 * family's in list order, `samples` merged. Built once; a field declared by two families, or
 * starting undefined (withInObjectFields would drop it), is a mistake caught here, at load.
 */
const BLANK: PageFacts = (() => {
  const all: Fields = { ...initDocumentFacts() };
  const samples: Fields = {};
  for (const c of FAMILIES) {
    for (const [k, v] of Object.entries(c.init())) {
      const into = k === "samples" ? samples : all;
      const entries = k === "samples" ? Object.entries(v as object) : [[k, v] as const];
      for (const [key, value] of entries) {
        if (key in into) throw new Error(`page fact "${key}" declared twice (${c.id})`);
        if (value === undefined) throw new Error(`page fact "${key}" starts undefined (${c.id})`);
        into[key] = value;
      }
    }
  }
  all.samples = samples;
  return withInObjectFields(all) as PageFacts;
})();

/**
 * `o` as an object whose fields all live inside it, as an object literal's do. Built key by key,
 * an object of this many fields falls into dictionary mode, and a spread of it keeps most fields
 * in a separate backing store: every fact write of the parse would pay an extra load (measured
 * ~1.5x slower field access). JSON.parse sizes its objects to their fields, and a spread of one
 * copies that layout; the values JSON cannot carry (the typed array) are put back after.
 */
function withInObjectFields(o: Fields): Fields {
  const copy = JSON.parse(JSON.stringify(o)) as Fields;
  for (const k of Object.keys(o)) {
    if (k !== "samples") copy[k] = o[k];
  }
  const samples = copy.samples as Fields;
  for (const [k, v] of Object.entries(o.samples as Fields)) samples[k] = v;
  return copy;
}

/**
 * Per family (by index in FACT_COLLECTORS), the fields whose starting value is an object (arrays
 * included): each page needs its own, from the family's `init`; the others are copied from BLANK.
 */
const FRESH = FAMILIES.map((c) => {
  const v = c.init() as Fields;
  return {
    fields: Object.keys(v).filter((k) => k !== "samples" && typeof v[k] === "object" && v[k]),
    samples: Object.keys((v.samples ?? {}) as Fields),
  };
});

/**
 * A page's facts at the start of its parse. The spread copies BLANK's shape, so every page's
 * facts share one hidden class (built field by field from the families they would fall into
 * dictionary mode, and the parse slows down); only the fields holding objects are then set to
 * the family's fresh ones (copying every field of every family costs a few microseconds a page).
 */
function startFacts(bytes: number): PageFacts {
  const f = { ...BLANK } as unknown as Fields;
  const samples: Fields = { ...BLANK.samples };
  for (let i = 0; i < FRESH.length; i++) {
    const { fields, samples: own } = FRESH[i];
    if (fields.length === 0 && own.length === 0) continue;
    const v = FAMILIES[i].init() as Fields;
    for (let j = 0; j < fields.length; j++) f[fields[j]] = v[fields[j]];
    const vs = v.samples as Fields;
    for (let j = 0; j < own.length; j++) samples[own[j]] = vs[own[j]];
  }
  f.samples = samples;
  f.bytes = bytes;
  return f as unknown as PageFacts;
}

/**
 * Streams the page once. A class whose methods are the htmlparser2 callbacks: the parser calls
 * them with `this` bound to the instance, so no closures are allocated per page.
 */
class Collector implements ParseState<PageFacts> {
  f: PageFacts;
  parser!: Parser;
  base: URL;
  readonly pageHttps: boolean;
  readonly siteKey: string;
  depth = 0;
  headDone = false;
  skipText = 0;
  svgDepth = 0;
  /** Visible text chunks in document order (slices of the page string; fingerprinted at end). */
  textParts: string[] = [];
  /** Origin of the base URL and whether it is internal: the fast path for "/path" links. */
  baseOrigin: string;
  baseInternal: boolean;
  /** No element or text yet: a doctype here decides the document mode (doctype.ts). */
  initial = true;
  modeDecided = false;
  /** Each family's collector for this page, by its index in FACT_COLLECTORS. */
  families: PageCollector[];
  /** Families reading the text now (usually none). */
  listeners: TextListener[] = [];

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
    this.f = startFacts(bytes);
    this.families = FACT_COLLECTORS.map((c) => c.start(this));
  }

  offset(): number {
    return this.parser.startIndex;
  }

  captureText(l: TextListener) {
    const ls = this.listeners;
    if (ls.length === 0) ls.push(l);
    else if (!ls.includes(l)) ls.push(l);
  }

  releaseText(l: TextListener) {
    const ls = this.listeners;
    if (ls.length === 0) return;
    // Usually the last one captured (the innermost element) is the one released.
    if (ls[ls.length - 1] === l) ls.pop();
    else {
      const i = ls.indexOf(l);
      if (i >= 0) ls.splice(i, 1);
    }
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

  onopentag(name: string, a: Attrs) {
    const f = this.f;
    if (this.initial) this.endInitial();
    f.elementCount++;
    if (++this.depth > f.maxDepth) f.maxDepth = this.depth;
    if (TEXT_SKIP.has(name)) this.skipText++;
    if (a.id !== undefined) noteAnchor(f, a.id);
    switch (name) {
      case "svg":
        this.svgDepth++;
        break;
      case "body":
        this.headDone = true;
        break;
      case "base":
        if (a.href) {
          this.base = tryUrl(a.href, this.base) ?? this.base;
          this.baseOrigin = this.base.origin;
          this.baseInternal = siteKeyOf(this.base) === this.siteKey;
        }
        break;
    }
    const ix = OPEN.get(name);
    if (ix === undefined) return;
    const families = this.families;
    for (let i = 0; i < ix.length; i++) families[ix[i]].open(name, a);
  }

  ontext(text: string) {
    if (this.initial && /\S/.test(text)) this.endInitial();
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) ls[i].text(text);
    if (this.skipText > 0) return;
    this.textParts.push(text);
  }

  onclosetag(name: string) {
    this.depth--;
    if (TEXT_SKIP.has(name)) this.skipText--;
    if (name === "svg") this.svgDepth--;
    else if (name === "head") this.headDone = true;
    const ix = CLOSE.get(name);
    if (ix === undefined) return;
    const families = this.families;
    for (let i = 0; i < ix.length; i++) families[ix[i]].close!(name);
  }
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
