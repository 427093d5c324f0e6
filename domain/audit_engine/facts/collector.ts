/**
 * The registration a fact family makes on the one streaming parse (facts/extract.ts). A family
 * declares the facts it owns (their type, and `init`, their values before the page is read) and
 * names the tags it listens to; the dispatcher builds a tag → families map once, so an element
 * costs only the families that asked for its tag. Per page, `start` makes the family's collector
 * (its own state); it writes its facts into `p.f` and reads the document state the dispatcher
 * keeps (the base URL, whether `<head>` ended, `<svg>` depth). `PageFacts` (page_facts.ts) is
 * the sum of the registered families' facts, so a new fact is declared only in its family's file.
 *
 * @example
 * ```ts
 * import type { FactCollector } from "./collector.ts";
 * export interface AppRootFacts {
 *   appRoot: boolean;
 * }
 * export const appRootFacts: FactCollector<AppRootFacts> = {
 *   id: "app_root",
 *   tags: ["div"],
 *   init: () => ({ appRoot: false }),
 *   start: (p) => ({
 *     open(_name, a) {
 *       if (a.id === "root") p.f.appRoot = true;
 *     },
 *   }),
 * };
 * ```
 *
 * @module
 */
/** An element's attributes as htmlparser2 gives them (names lower-cased). */
export type Attrs = Record<string, string>;

/** Reads the text of the document while it is captured (`ParseState.captureText`). */
export interface TextListener {
  text(text: string): void;
}

/**
 * What the dispatcher shares with every family during one page's parse; `F` is the part of the
 * page's facts the family sees.
 */
export interface ParseState<F = unknown> {
  /** The page's facts: each family writes its own fields. */
  readonly f: F;
  /** The document's base URL (`<base href>` applied), its origin, and whether it is internal. */
  readonly base: URL;
  readonly baseOrigin: string;
  readonly baseInternal: boolean;
  readonly pageHttps: boolean;
  /** The host (without `www.`) that counts as internal. */
  readonly siteKey: string;
  readonly maxLinks: number;
  readonly maxResources: number;
  /** `<head>` has ended (its close tag or `<body>`). */
  readonly headDone: boolean;
  /** Open `<svg>` elements around the current one. */
  readonly svgDepth: number;
  /** Offset of the current tag in the page's text. */
  offset(): number;
  /** Text chunks go to `l` until released (adding twice is one listener). */
  captureText(l: TextListener): void;
  releaseText(l: TextListener): void;
}

/** One family's collector for one page. */
export interface PageCollector {
  open(name: string, a: Attrs): void;
  close?(name: string): void;
}

/**
 * A family's registration on the streaming parse: `F`, the facts it owns (part of every page's
 * facts, stored as they are); `R`, facts of other families it also writes (their owner must be
 * registered too, which the dispatcher's types check).
 */
export interface FactCollector<F extends object = object, R extends object = Record<never, never>> {
  readonly id: string;
  /**
   * Raise with any change to what the family collects or how (a new fact, a fix): stored facts
   * of another version are not reused by incremental audits (crawl/reuse.ts). Absent is 0, which
   * only the first ten families have: a new family starts at 1 (stored facts lack its fields).
   */
  readonly version?: number;
  /** Tags whose opening `open` receives. */
  readonly tags: readonly string[];
  /** Tags whose closing `close` receives. */
  readonly closeTags?: readonly string[];
  /**
   * The family's facts before the page is read: every field it owns, always in the same order
   * (the page's facts keep one object shape, which keeps the parse fast), fresh arrays each call,
   * null rather than undefined for "none yet".
   */
  init(): F;
  start(p: ParseState<F & R>): PageCollector;
}

/** Evidence samples kept per counter and page: enough to find the element, small enough to store. */
export const SAMPLE_CAP = 5;

/** Keeps `value` (at most 200 characters) as evidence while `list` has fewer than SAMPLE_CAP. */
export function sample(list: string[], value: string): void {
  if (list.length < SAMPLE_CAP) list.push(value.length > 200 ? value.slice(0, 200) : value);
}

/** Evidence lists kept per page (counts stay exact). */
export const MAX_ITEMS = 20;

export function tryUrl(href: string, base: URL): URL | null {
  try {
    return new URL(href, base);
  } catch {
    return null;
  }
}

export function collapse(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 300);
}

/** Root-relative paths WHATWG URL would leave unchanged: no query, fragment, escapes, dots. */
const SIMPLE_PATH = /^\/[A-Za-z0-9\-_~!$&'()*+,;=:@/]*$/;

/** `s` (trimmed, starting with "/") resolves against an internal base to exactly origin + s. */
export function simpleInternalPath(p: ParseState, s: string): boolean {
  return p.baseInternal && s.charCodeAt(1) !== 47 && SIMPLE_PATH.test(s) && !s.includes("//") &&
    !s.includes("/.");
}
