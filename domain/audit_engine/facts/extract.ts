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
 * starting undefined, is a mistake caught here, at load.
 */
const BLANK: Fields = (() => {
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
  return all;
})();

/**
 * The families whose `init` a page needs: those with a field (or sample list) starting as an
 * object or array, which each page must have its own of; their other fields start as in BLANK.
 */
const FRESH = FAMILIES.map((c) =>
  Object.values(c.init()).some((v) => typeof v === "object" && v !== null)
);
/** Each such field (and sample list), with the index of the family whose `init` gives it. */
const FRESH_FIELDS: [string, number][] = [];
const FRESH_SAMPLES: [string, number][] = [];
FAMILIES.forEach((c, i) => {
  const v = c.init() as Fields;
  for (const [k, x] of Object.entries(v)) {
    if (k !== "samples" && typeof x === "object" && x !== null) FRESH_FIELDS.push([k, i]);
  }
  for (const k of Object.keys((v.samples ?? {}) as Fields)) FRESH_SAMPLES.push([k, i]);
});

/** Makes a page's starting facts from BLANK and the fresh `init()` of the families that have some. */
type MakeFacts = (bytes: number, blank: Fields, fresh: Fields[]) => PageFacts;

/**
 * ONE object literal naming every field in BLANK's order, compiled once from the registered
 * families (their field names are identifiers from this codebase, checked here; nothing from a
 * page goes into it); null where the runtime refuses code from strings. A literal is what the
 * hand-written one this replaces was: one shape, every field inside the object, made in ~0.1 µs.
 */
function compiledFacts(): MakeFacts | null {
  const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  const name = (k: string) => {
    if (!IDENTIFIER.test(k)) throw new Error(`page fact "${k}" is not an identifier`);
    return k;
  };
  const from = new Map(FRESH_FIELDS);
  const fields = Object.keys(BLANK).filter((k) => k !== "samples").map((k) => {
    if (k === "bytes") return "bytes";
    const i = from.get(k);
    return i === undefined ? `${name(k)}: blank.${k}` : `${name(k)}: fresh[${i}].${k}`;
  });
  const samples = FRESH_SAMPLES.map(([k, i]) => `${name(k)}: fresh[${i}].samples.${k}`);
  const body = `"use strict"; return { ${fields.join(", ")}, samples: { ${samples.join(", ")} } };`;
  try {
    return new Function("bytes", "blank", "fresh", body) as MakeFacts;
  } catch {
    return null; // e.g. --disallow-code-generation-from-strings
  }
}

/**
 * The same facts without compiled code: a spread of BLANK laid out so its fields live inside the
 * object (JSON.parse sizes an object to its fields; built key by key, an object this large falls
 * into dictionary mode, and a spread of one keeps its fields in a side store, ~1.5x slower to
 * reach in the parse), then each fresh field set by key. ~1.5 µs a page more than the literal.
 */
const INLINE_BLANK: Fields = (() => {
  const copy = JSON.parse(JSON.stringify(BLANK)) as Fields;
  for (const k of Object.keys(BLANK)) if (k !== "samples") copy[k] = BLANK[k];
  return copy; // the typed array JSON cannot carry is put back above
})();
function keyedFacts(bytes: number, _blank: Fields, fresh: Fields[]): PageFacts {
  const f: Fields = { ...INLINE_BLANK };
  const samples: Fields = { ...(INLINE_BLANK.samples as Fields) };
  for (let j = 0; j < FRESH_FIELDS.length; j++) {
    const [k, i] = FRESH_FIELDS[j];
    f[k] = fresh[i][k];
  }
  for (let j = 0; j < FRESH_SAMPLES.length; j++) {
    const [k, i] = FRESH_SAMPLES[j];
    samples[k] = (fresh[i].samples as Fields)[k];
  }
  f.samples = samples;
  f.bytes = bytes;
  return f as PageFacts;
}

/** Both ways of making a page's starting facts (tests check they agree). */
export const FACT_MAKERS: { compiled: MakeFacts | null; keyed: MakeFacts } = {
  compiled: compiledFacts(),
  keyed: keyedFacts,
};
const makeFacts = FACT_MAKERS.compiled ?? FACT_MAKERS.keyed;

/** A page's facts at the start of its parse. */
export function startFacts(bytes: number, make: MakeFacts = makeFacts): PageFacts {
  const fresh: Fields[] = new Array(FAMILIES.length);
  for (let i = 0; i < FAMILIES.length; i++) if (FRESH[i]) fresh[i] = FAMILIES[i].init() as Fields;
  return make(bytes, BLANK, fresh);
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
