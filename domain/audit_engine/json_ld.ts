/**
 * JSON-LD validation for the audit: each parsed `application/ld+json` block is walked once
 * (top-level arrays, `@graph` members, nested nodes) to find
 *
 * - `@type` names that are not schema.org types (typos such as "Prodcut") and `@context` values
 *   that do not name schema.org (check `schema_type_unknown`), against the generated table in
 *   schema_org_types.ts;
 * - rich-result entities that lack a property Google's Search Central structured-data
 *   documentation marks REQUIRED, or carry one of the wrong shape (check `rich_result_invalid`).
 *
 * The rules encoded, per type (source: Google Search Central, "Structured data" feature guides,
 * developers.google.com/search/docs/appearance/structured-data/<guide>, as the maintainers know
 * them; only properties those guides list as required, never the recommended ones):
 *
 * - Product (guide `product-snippet`; also IndividualProduct, ProductModel, SomeProducts):
 *   `name`; one of `offers`, `review`, `aggregateRating`. Inside `offers`: an Offer needs `price`
 *   (or `priceSpecification.price`), a number or a plain decimal string ("19.99", not "$19.99");
 *   an AggregateOffer needs `lowPrice` and `priceCurrency` (three letters, ISO 4217). Inside
 *   `aggregateRating`: `ratingValue`, and `ratingCount` or `reviewCount`. Inside `review` (guide
 *   `review-snippet`): `author` and `reviewRating` with its `ratingValue`.
 * - BreadcrumbList (guide `breadcrumb`): `itemListElement`; each ListItem needs `position` (an
 *   integer), `name` (or `item.name`) and `item` (a URL, or a node with `@id`/`url`), except the
 *   last ListItem, whose `item` Google fills with the page's URL.
 * - FAQPage (guide `faqpage`): `mainEntity`; each entry a Question with `name` and
 *   `acceptedAnswer`, whose Answer has `text`.
 * - LocalBusiness and every schema.org subtype of it (Restaurant, Store, Dentist...; guide
 *   `local-business`): `name` and `address`.
 * - Article, NewsArticle, BlogPosting and Organization (guides `article`, `organization`): Google
 *   lists no required property for them, only recommended ones, so nothing is required here.
 *
 * Rules apply to entities: a block's top-level nodes, `@graph` members and the `mainEntity` of
 * such nodes; the nested parts a rule names (offers, ListItems, Questions) are judged as parts of
 * their entity. A node that only references another (`{"@id": ...}`) is not judged; references
 * are not followed. Work is bounded per page (MAX_NODES objects, MAX_DEPTH levels).
 *
 * @module
 */
import { LOCAL_BUSINESS_TYPES, SCHEMA_ORG_TYPES } from "./schema_org_types.ts";

/** Objects examined per page, over all its blocks; the rest of a huge graph is not judged. */
export const MAX_NODES = 1_000;
/** Nesting levels walked. */
export const MAX_DEPTH = 24;
/** Findings kept per list and page (counts stay exact). */
export const MAX_FINDINGS = 20;

/** A rich-result entity that breaks Google's required-property rules. */
export interface RichResultIssue {
  [key: string]: string | number | string[];
  /** 1-based index of the ld+json block on the page. */
  block: number;
  type: string;
  /** JSONPath of the entity within its block, e.g. `$.@graph[1]`. */
  path: string;
  /** JSONPaths of required properties that are absent, e.g. `$.@graph[1].offers.price`. */
  missing: string[];
  /** JSONPaths of required properties present with the wrong shape. */
  invalid: string[];
}

/** A `@type` that is no schema.org type, or a `@context` that does not name schema.org. */
export interface UnknownTypeIssue {
  [key: string]: string | number;
  block: number;
  path: string;
  /** The unknown type as written, or the context (as JSON, clipped). */
  type: string;
  kind: "type" | "context";
  /** The closest schema.org type for a typo, or "" when none is close. */
  suggestion: string;
}

/** What the JSON-LD of one page yielded (accumulated over its blocks). */
export interface JsonLdFindings {
  /** Entities of a type with rich-result rules (Product, BreadcrumbList, FAQPage, LocalBusiness). */
  richEntities: number;
  richIssues: RichResultIssue[];
  richIssueCount: number;
  /** Nodes with a `@type` judged against schema.org (a schema.org context). */
  typedNodes: number;
  unknown: UnknownTypeIssue[];
  unknownCount: number;
  /** Objects examined (at most MAX_NODES). */
  nodes: number;
}

export function emptyJsonLdFindings(): JsonLdFindings {
  return {
    richEntities: 0,
    richIssues: [],
    richIssueCount: 0,
    typedNodes: 0,
    unknown: [],
    unknownCount: 0,
    nodes: 0,
  };
}

type Obj = Record<string, unknown>;
type Ctx = "schema" | "other" | "none";

const PRODUCT_TYPES = new Set(["Product", "IndividualProduct", "ProductModel", "SomeProducts"]);
const SCHEMA_PREFIX = /^https?:\/\/(?:www\.)?schema\.org\//i;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** Present: not absent, null, a blank string or []. */
function present(v: unknown): boolean {
  if (typeof v === "string") return v.trim() !== "";
  return v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);
}

/** A node that only points at another (`@id`, maybe `@type`): its definition is elsewhere. */
function isRef(o: Obj): boolean {
  if (typeof o["@id"] !== "string") return false;
  for (const k in o) if (k !== "@id" && k !== "@type") return false;
  return true;
}

/** Text-like value: a non-blank string, a number, a `@value` object, or a list holding one. */
function isText(v: unknown): boolean {
  if (typeof v === "string") return v.trim() !== "";
  if (typeof v === "number") return Number.isFinite(v);
  if (Array.isArray(v)) return v.some(isText);
  if (isObj(v)) return isText(v["@value"]);
  return false;
}

const DECIMAL = /^\s*-?\d+(\.\d+)?\s*$/;
const INTEGER = /^\s*\d+\s*$/;

function isDecimal(v: unknown): boolean {
  if (typeof v === "number") return Number.isFinite(v);
  if (typeof v === "string") return DECIMAL.test(v);
  if (isObj(v)) return isDecimal(v["@value"]);
  return false;
}

function isInteger(v: unknown): boolean {
  if (typeof v === "number") return Number.isInteger(v);
  if (typeof v === "string") return INTEGER.test(v);
  return false;
}

/** The schema.org names of a node's `@type` (bare names under a schema.org context). */
function typeNames(o: Obj, ctx: Ctx): string[] {
  const t = o["@type"];
  if (t === undefined) return [];
  const out: string[] = [];
  for (const raw of list(t)) {
    if (typeof raw !== "string") continue;
    const name = schemaName(raw, ctx);
    if (name !== null) out.push(name);
  }
  return out;
}

/**
 * The schema.org local name of a type as written: full schema.org URLs and `schema:` names
 * anywhere, bare names under a schema.org context; null for other vocabularies (and bare names
 * without any context: structured_data_invalid reports those blocks).
 */
function schemaName(raw: string, ctx: Ctx): string | null {
  const s = raw.trim();
  if (SCHEMA_PREFIX.test(s)) return s.replace(SCHEMA_PREFIX, "");
  if (s.startsWith("schema:")) return s.slice(7);
  if (s.includes(":") || s.includes("/")) return null;
  return ctx === "schema" ? s : null;
}

/** A context names schema.org when any string in it (or its `@vocab`, its values) does. */
function contextOf(c: unknown): Ctx {
  if (typeof c === "string") return /schema\.org/i.test(c) ? "schema" : "other";
  if (Array.isArray(c)) return c.some((x) => contextOf(x) === "schema") ? "schema" : "other";
  if (isObj(c)) {
    for (const k in c) {
      const v = c[k];
      if (typeof v === "string" && /schema\.org/i.test(v)) return "schema";
    }
    return "other";
  }
  return "other";
}

/** Accumulates the findings of one block. */
class Walker {
  constructor(readonly out: JsonLdFindings, readonly block: number) {}

  walk(v: unknown, path: string, ctx: Ctx, depth: number, entity: boolean): void {
    if (depth > MAX_DEPTH) return;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) this.walk(v[i], `${path}[${i}]`, ctx, depth + 1, entity);
      return;
    }
    if (!isObj(v) || this.out.nodes >= MAX_NODES) return;
    this.out.nodes++;
    if ("@context" in v) {
      ctx = contextOf(v["@context"]);
      if (ctx === "other") this.unknownContext(v["@context"], path);
    }
    const types = typeNames(v, ctx);
    if (types.length > 0) {
      this.out.typedNodes++;
      for (const t of types) if (!SCHEMA_ORG_TYPES.has(t)) this.unknownType(t, path);
      if (entity && !isRef(v)) this.judge(v, types, path);
    }
    for (const k in v) {
      const c = v[k];
      if (c === null || typeof c !== "object" || k === "@context") continue;
      // @graph members are entities; so is the mainEntity of an entity (a page's main thing).
      const child = k === "@graph" || (entity && k === "mainEntity");
      this.walk(c, `${path}.${k}`, ctx, depth + 1, child);
    }
  }

  unknownType(t: string, path: string): void {
    // The suggestion (a scan of the table) is only worked out for findings that are kept.
    if (this.keep()) {
      const type = t.slice(0, 120);
      this.out.unknown.push({
        block: this.block,
        path,
        type,
        kind: "type",
        suggestion: suggest(t),
      });
    }
  }

  unknownContext(c: unknown, path: string): void {
    if (!this.keep()) return;
    const type = (JSON.stringify(c) ?? "").slice(0, 120);
    this.out.unknown.push({ block: this.block, path, type, kind: "context", suggestion: "" });
  }

  /** Counts an unknown type or context; true when the finding is to be kept. */
  keep(): boolean {
    this.out.unknownCount++;
    return this.out.unknown.length < MAX_FINDINGS;
  }

  /** Runs the rich-result rule of each type the entity has (each rule once). */
  judge(o: Obj, types: string[], path: string): void {
    // A node typed both Product and LocalBusiness (rare) is judged under each rule.
    const rules = new Set<string>();
    let shown = "";
    for (const t of types) {
      const rule = PRODUCT_TYPES.has(t)
        ? "Product"
        : t === "BreadcrumbList" || t === "FAQPage"
        ? t
        : LOCAL_BUSINESS_TYPES.has(t)
        ? "LocalBusiness"
        : null;
      if (rule === null) continue;
      rules.add(rule);
      shown ||= t;
    }
    if (rules.size === 0) return;
    const r = new Report(path);
    for (const name of rules) {
      if (name === "Product") product(o, r);
      else if (name === "BreadcrumbList") breadcrumbs(o, r);
      else if (name === "FAQPage") faq(o, r);
      else localBusiness(o, r);
    }
    this.out.richEntities++;
    if (r.missing.length + r.invalid.length === 0) return;
    this.out.richIssueCount++;
    if (this.out.richIssues.length < MAX_FINDINGS) {
      this.out.richIssues.push({
        block: this.block,
        type: shown,
        path,
        missing: r.missing.slice(0, 10),
        invalid: r.invalid.slice(0, 10),
      });
    }
  }
}

/** Missing and invalid property paths of one entity. */
class Report {
  missing: string[] = [];
  invalid: string[] = [];
  constructor(readonly path: string) {}

  /** `name` must be text: absent → missing, present but not text → invalid. */
  text(o: Obj, prop: string, at: string): boolean {
    if (!present(o[prop])) this.missing.push(`${at}.${prop}`);
    else if (!isText(o[prop])) this.invalid.push(`${at}.${prop}`);
    else return true;
    return false;
  }

  need(o: Obj, prop: string, at: string): boolean {
    if (present(o[prop])) return true;
    this.missing.push(`${at}.${prop}`);
    return false;
  }
}

/** Each element of a property's value with its path (`x.p` for one value, `x.p[i]` for a list). */
function* parts(o: Obj, prop: string, at: string): Generator<[unknown, string]> {
  const v = o[prop];
  if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) yield [v[i], `${at}.${prop}[${i}]`]; }
  else yield [v, `${at}.${prop}`];
}

function rawTypes(o: Obj): string[] {
  return list(o["@type"]).filter((t): t is string => typeof t === "string").map((t) =>
    t.trim().replace(SCHEMA_PREFIX, "").replace(/^schema:/, "")
  );
}

function product(o: Obj, r: Report): void {
  const at = r.path;
  r.text(o, "name", at);
  if (!present(o.offers) && !present(o.review) && !present(o.aggregateRating)) {
    r.missing.push(`${at}.offers|review|aggregateRating`);
  }
  if (present(o.offers)) {
    for (const [v, p] of parts(o, "offers", at)) {
      if (!isObj(v)) {
        r.invalid.push(p);
        continue;
      }
      if (isRef(v)) continue;
      const types = rawTypes(v);
      if (types.includes("AggregateOffer")) {
        if (r.need(v, "lowPrice", p) && !isDecimal(v.lowPrice)) r.invalid.push(`${p}.lowPrice`);
        if (r.need(v, "priceCurrency", p) && !isCurrency(v.priceCurrency)) {
          r.invalid.push(`${p}.priceCurrency`);
        }
      } else if (types.includes("Offer")) {
        offerPrice(v, p, r);
      }
    }
  }
  if (present(o.aggregateRating)) {
    for (const [v, p] of parts(o, "aggregateRating", at)) {
      if (!isObj(v)) {
        r.invalid.push(p);
        continue;
      }
      if (isRef(v)) continue;
      r.need(v, "ratingValue", p);
      if (!present(v.ratingCount) && !present(v.reviewCount)) {
        r.missing.push(`${p}.ratingCount|reviewCount`);
      }
    }
  }
  if (present(o.review)) {
    for (const [v, p] of parts(o, "review", at)) {
      if (!isObj(v)) {
        r.invalid.push(p);
        continue;
      }
      if (isRef(v)) continue;
      r.need(v, "author", p);
      if (r.need(v, "reviewRating", p) && isObj(v.reviewRating) && !isRef(v.reviewRating)) {
        r.need(v.reviewRating, "ratingValue", `${p}.reviewRating`);
      }
    }
  }
}

/** An Offer's price: `price`, or `priceSpecification.price` (one of a list suffices). */
function offerPrice(v: Obj, p: string, r: Report): void {
  if (present(v.price)) {
    if (!isDecimal(v.price)) r.invalid.push(`${p}.price`);
    return;
  }
  for (const spec of list(v.priceSpecification)) {
    if (isObj(spec) && present(spec.price)) {
      if (!isDecimal(spec.price)) r.invalid.push(`${p}.priceSpecification.price`);
      return;
    }
  }
  r.missing.push(`${p}.price`);
}

function isCurrency(v: unknown): boolean {
  return typeof v === "string" && /^\s*[A-Za-z]{3}\s*$/.test(v);
}

function breadcrumbs(o: Obj, r: Report): void {
  const at = r.path;
  if (!r.need(o, "itemListElement", at)) return;
  const items = [...parts(o, "itemListElement", at)];
  // The last crumb is the one with the highest position (array order when positions are bad).
  let last = items.length - 1;
  if (items.every(([v]) => isObj(v) && isInteger(v.position))) {
    let max = -Infinity;
    items.forEach(([v], i) => {
      const pos = Number((v as Obj).position);
      if (pos > max) [max, last] = [pos, i];
    });
  }
  items.forEach(([v, p], i) => {
    if (!isObj(v)) {
      r.invalid.push(p);
      return;
    }
    if (isRef(v)) return;
    if (r.need(v, "position", p) && !isInteger(v.position)) r.invalid.push(`${p}.position`);
    const item = v.item;
    if (!isText(v.name) && !(isObj(item) && isText(item.name))) {
      if (present(v.name)) r.invalid.push(`${p}.name`);
      else r.missing.push(`${p}.name`);
    }
    if (!present(item)) {
      if (i !== last) r.missing.push(`${p}.item`);
    } else if (isObj(item)) {
      if (!isText(item["@id"]) && !isText(item.url)) r.missing.push(`${p}.item.@id`);
    } else if (!isText(item)) r.invalid.push(`${p}.item`);
  });
}

function faq(o: Obj, r: Report): void {
  const at = r.path;
  if (!r.need(o, "mainEntity", at)) return;
  for (const [q, p] of parts(o, "mainEntity", at)) {
    if (!isObj(q)) {
      r.invalid.push(p);
      continue;
    }
    if (isRef(q)) continue;
    if (!rawTypes(q).includes("Question")) {
      r.invalid.push(`${p}.@type`);
      continue;
    }
    r.text(q, "name", p);
    if (!r.need(q, "acceptedAnswer", p)) continue;
    for (const [a, ap] of parts(q, "acceptedAnswer", p)) {
      if (!isObj(a)) r.invalid.push(ap);
      else if (!isRef(a)) r.text(a, "text", ap);
    }
  }
}

function localBusiness(o: Obj, r: Report): void {
  r.text(o, "name", r.path);
  // A PostalAddress, or its text (schema.org allows Text); a number or a list of them is not.
  if (r.need(o, "address", r.path) && typeof o.address !== "string" && !isObj(o.address)) {
    r.invalid.push(`${r.path}.address`);
  }
}

let lowerNames: Map<string, string> | null = null;
/** Suggestions already worked out (a site repeats its typos on every page); bounded. */
const suggested = new Map<string, string>();

/** The schema.org type a typo most likely meant: same letters in another case, or 1-2 edits. */
export function suggest(t: string): string {
  let s = suggested.get(t);
  if (s === undefined) {
    if (suggested.size >= 1_000) suggested.clear();
    s = closest(t);
    suggested.set(t, s);
  }
  return s;
}

function closest(t: string): string {
  lowerNames ??= new Map([...SCHEMA_ORG_TYPES].map((n) => [n.toLowerCase(), n]));
  const lower = t.toLowerCase();
  const same = lowerNames.get(lower);
  if (same !== undefined) return same;
  if (t.length < 4) return "";
  let best = "";
  let bestD = 3;
  for (const [l, name] of lowerNames) {
    if (Math.abs(l.length - lower.length) >= bestD) continue;
    const d = editDistance(lower, l, bestD);
    if (d < bestD) [best, bestD] = [name, d];
  }
  return bestD <= 2 ? best : "";
}

/** Damerau-Levenshtein (adjacent transpositions count one), stopping once above `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push(new Array(b.length + 1).fill(0));
    rows[i][0] = i;
  }
  for (let j = 0; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    let rowMin = Infinity;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, rows[i - 2][j - 2] + 1);
      }
      rows[i][j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > cap) return cap + 1;
  }
  return rows[a.length][b.length];
}

/**
 * Judges one parsed JSON-LD block (`block` is its 1-based index on the page) and adds what it
 * finds to `out`. Top-level nodes and array members are entities.
 */
export function inspectJsonLd(data: unknown, block: number, out: JsonLdFindings): void {
  new Walker(out, block).walk(data, "$", "none", 0, true);
}
