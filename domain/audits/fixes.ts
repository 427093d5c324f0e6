/**
 * Fixes an agent can apply: for a completed audit, proposed changes per URL built from its stored
 * findings and page records, each with the check it fixes, the current and proposed value, why,
 * and a confidence. One row per stored evidence item of the checks below, in this order (a
 * section per check, by URL within it), then the redirect map:
 *
 * - `title_missing`, `title_duplicate`, `meta_description_missing`,
 *   `meta_description_duplicate`: a title or description built from the page's own h1, title and
 *   URL words (`source: "page_text"`: no model is asked, and it says so; low or medium confidence).
 * - `internal_redirect_links`: the final URL of the redirect the link goes through (the audit's
 *   records followed hop by hop).
 * - `broken_internal_links`: the live URL the broken target most likely meant, or none.
 * - `canonical_target_bad`, `canonical_chain`, `hreflang_target_bad`: the final, live URL the
 *   canonical or alternate should name (or the page itself, or removal).
 * - `sitemap_bad_entries`, `sitemap_missing_indexable`: entries to drop (or replace) and add.
 * - The redirect map: each broken internal URL → the live URL most likely meant, by path
 *   (trigram similarity) and content (the anchors that link to it against the live page's title,
 *   h1 and URL words); redirect_config.ts writes it for nginx and Apache.
 *
 * Memory stays bounded whatever the audit's size: rows are built from KV pages of findings, the
 * redirect map is worked out once in one pass over the page records (holding only the broken
 * URLs, at most the stored evidence) and kept in KV beside the audit's results.
 *
 * @module
 */
import {
  ApiError,
  badCursor,
  decodeCursor,
  type Deps,
  encodeCursor,
  keys,
  list,
  read,
} from "../platform/mod.ts";
import { getPages, listInPages, type PageRecord } from "../audit_engine/mod.ts";
import type { Evidence } from "../audit_engine/types.ts";
import { getAudit } from "./record.ts";
import type { RedirectGuess } from "./types.ts";
import { type AllRows, type Caller, EXPORT_BATCH, MAX_PAGE_SIZE } from "./results.ts";
import {
  apacheLine,
  destinationOf,
  header,
  type LeftOutReason,
  nginxLine,
} from "./redirect_config.ts";
import { type Cell, csvChunks, csvRecords, ndjsonChunks, rowOf } from "./export_encode.ts";

export type FixKind =
  | "title"
  | "meta_description"
  | "link"
  | "redirect"
  | "canonical"
  | "hreflang"
  | "sitemap_add"
  | "sitemap_drop";

export type Confidence = "high" | "medium" | "low";

/** One proposed change. */
export interface FixView {
  /** Where the change is made: the page, the broken URL (redirect), the sitemap entry. */
  url: string;
  check: string;
  kind: FixKind;
  /** What on the page it is about: the link target, canonical or alternate; null otherwise. */
  target: string | null;
  current: string | null;
  /** The value to write; null: remove it (a link, alternate or entry) or nothing to propose. */
  proposed: string | null;
  why: string;
  confidence: Confidence;
  /** audit: facts the audit recorded; page_text: built from the page's own words; similarity. */
  source: "audit" | "page_text" | "similarity";
}

/** One redirect of the map, with whether each server file could hold it. */
export interface RedirectView {
  from: string;
  to: string | null;
  score: number;
  confidence: Confidence | null;
  links: number;
  nginx: { written: boolean; reason: LeftOutReason };
  apache: { written: boolean; reason: LeftOutReason };
}

/** The checks whose findings become fixes, in the order the list gives them. */
export const FIX_CHECKS = [
  "title_missing",
  "title_duplicate",
  "meta_description_missing",
  "meta_description_duplicate",
  "internal_redirect_links",
  "broken_internal_links",
  "canonical_target_bad",
  "canonical_chain",
  "hreflang_target_bad",
  "sitemap_bad_entries",
  "sitemap_missing_indexable",
] as const;

/** The redirect map's section comes after the checks'. */
const REDIRECT_SECTION = FIX_CHECKS.length;
/** Below this score no live URL is proposed for a broken one. */
export const MIN_REDIRECT_SCORE = 0.5;
/** A trigram shared by more broken URLs than this finds no candidates on its own (a common stem). */
const COMMON_GRAM = 64;
const MAX_HOPS = 10;
const TITLE_MAX = 60;
const DESCRIPTION_MAX = 155;

/** A completed audit of the caller, or 404 / 409. */
async function completedAudit(deps: Deps, caller: Caller, auditId: string) {
  const audit = await getAudit(deps, caller.accountId, auditId, caller.mode);
  if (audit.status !== "completed") {
    throw new ApiError(
      "invalid_state",
      `Audit '${auditId}' is ${audit.status}; its fixes are listed once it is completed`,
    );
  }
  return audit;
}

/** The checks of FIX_CHECKS that fired in the audit. */
async function firedChecks(kv: Deno.Kv, auditId: string): Promise<Set<string>> {
  const stored = (await read(kv, keys.auditIssues(auditId))).value;
  return new Set((stored?.issues ?? []).filter((i) => i.affected > 0).map((i) => i.check));
}

function checkFilter(check: string | undefined): (section: number) => boolean {
  if (check === undefined) return () => true;
  if (!(FIX_CHECKS as readonly string[]).includes(check)) {
    throw new ApiError(
      "invalid_request",
      `check: fixes are proposed for ${FIX_CHECKS.join(", ")}`,
    );
  }
  return (s) =>
    FIX_CHECKS[s] === check || (s === REDIRECT_SECTION && check === "broken_internal_links");
}

// ---------------------------------------------------------------------------------------------
// Text built from the page's own words.

/** Text from a page, one line, without control characters. */
function clean(s: string | null | undefined): string {
  // deno-lint-ignore no-control-regex
  return (s ?? "").replace(/[\x00-\x1f\x7f]+/g, " ").replace(/\s+/g, " ").trim();
}

/** `s` cut at a word boundary to at most `max` characters. */
function clip(s: string, max: number): string {
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:–-]+$/, "") + "…";
}

/** The words of a URL's last path segment ("blue-shirt.html" → "Blue shirt"). */
function slugWords(url: string): string {
  let seg = "";
  try {
    const parts = new URL(url).pathname.split("/").filter((p) => p !== "");
    seg = decodeURIComponent(parts[parts.length - 1] ?? "");
  } catch {
    return "";
  }
  const words = clean(seg.replace(/\.[a-z0-9]{2,5}$/i, "").replace(/[-_+.]+/g, " "));
  return words ? words[0].toUpperCase() + words.slice(1) : "";
}

function siteName(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./, "");
  } catch {
    return "";
  }
}

/** A title from the page's h1 or URL words, with the site's name. */
function builtTitle(r: PageRecord | null, url: string, avoid: string | null): string | null {
  const h1 = clean(r?.h1);
  const title = clean(r?.title);
  const slug = slugWords(url);
  const same = (a: string) => avoid !== null && a.toLowerCase() === clean(avoid).toLowerCase();
  let base = h1 && !same(h1) ? h1 : "";
  if (!base && title && slug) base = `${title} – ${slug}`;
  if (!base && slug) base = slug;
  if (!base || same(base)) return null;
  const site = siteName(url);
  const suffix = site && !base.toLowerCase().includes(site) ? ` | ${site}` : "";
  return clip(base, TITLE_MAX - suffix.length) + suffix;
}

/** A description from the page's title, h1 and URL words. */
function builtDescription(r: PageRecord | null, url: string, avoid: string | null): string | null {
  const h1 = clean(r?.h1);
  const title = clean(r?.title);
  const subject = h1 || title || slugWords(url);
  if (!subject) return null;
  // The title adds words only when it is the page's own (not one it shares with others).
  const own = title && h1 && title.toLowerCase() !== h1.toLowerCase() &&
    !r?.checks.includes("title_duplicate");
  const more = own ? ` ${title}.` : "";
  const text = clip(
    `${subject}: what this page covers on ${siteName(url)}.${more}`,
    DESCRIPTION_MAX,
  );
  return avoid !== null && clean(avoid).toLowerCase() === text.toLowerCase() ? null : text;
}

// ---------------------------------------------------------------------------------------------
// Where a URL ends, by the audit's records.

interface Final {
  url: string;
  /** The end answers 2xx HTML, indexable (no noindex, no canonical elsewhere). */
  live: boolean;
  hops: number;
  loop: boolean;
}

function isLive(r: PageRecord | null): boolean {
  return r !== null && r.state === "fetched" && r.status >= 200 && r.status < 300 && r.html &&
    !r.noindex && r.canonicalOther === null;
}

/** Follows `url`'s redirects through the audit's records (at most MAX_HOPS). */
async function finalOf(
  kv: Deno.Kv,
  auditId: string,
  url: string,
  memo: Map<string, Promise<Final>>,
): Promise<Final> {
  let got = memo.get(url);
  if (!got) {
    got = (async () => {
      const seen = new Set<string>([url]);
      let at = url;
      for (let hops = 0; hops <= MAX_HOPS; hops++) {
        const [r] = await getPages(kv, auditId, [at]);
        const redirect = r !== null && r.state === "fetched" && r.status >= 300 &&
          r.status < 400 && r.location !== null && !r.externalLocation;
        if (!redirect) return { url: at, live: isLive(r), hops, loop: false };
        at = r!.location!;
        if (seen.has(at)) return { url: at, live: false, hops: hops + 1, loop: true };
        seen.add(at);
      }
      return { url: at, live: false, hops: MAX_HOPS, loop: false };
    })();
    memo.set(url, got);
  }
  return await got;
}

function confidenceOf(score: number): Confidence {
  return score >= 0.8 ? "high" : score >= 0.65 ? "medium" : "low";
}

// ---------------------------------------------------------------------------------------------
// Evidence → fixes.

interface RowContext {
  kv: Deno.Kv;
  auditId: string;
  memo: Map<string, Promise<Final>>;
}

const str = (v: unknown): string | null => typeof v === "string" ? v : null;

/** The fixes of one batch of a check's evidence items, one row per item. */
async function fixesOf(ctx: RowContext, check: string, items: Evidence[]): Promise<FixView[]> {
  const { kv, auditId, memo } = ctx;
  const urls = items.map((e) => String(e.url));
  const needsPage = check.startsWith("title_") || check.startsWith("meta_description_");
  const records = needsPage ? await getPages(kv, auditId, urls) : [];
  const guesses = new Map<string, RedirectGuess | null>();
  if (check === "broken_internal_links") {
    const targets = [...new Set(items.map((e) => str(e.target)).filter((t) => t !== null))];
    for (let i = 0; i < targets.length; i += 10) {
      const batch = targets.slice(i, i + 10);
      const got = await kv.getMany<RedirectGuess[]>(
        batch.map((t) => keys.auditRedirectGuess(auditId, t!) as unknown as Deno.KvKey),
      );
      got.forEach((g, j) => guesses.set(batch[j]!, g.value));
    }
  }
  const out: FixView[] = [];
  for (let i = 0; i < items.length; i++) {
    const e = items[i];
    const url = String(e.url);
    const r = records[i] ?? null;
    const row = (f: Omit<FixView, "url" | "check">): FixView => ({ url, check, ...f });
    switch (check) {
      case "title_missing":
      case "title_duplicate": {
        const current = check === "title_duplicate" ? str(e.title) ?? r?.title ?? null : null;
        const proposed = builtTitle(r, url, current);
        out.push(row({
          kind: "title",
          target: null,
          current,
          proposed,
          why: proposed === null
            ? "The page has no heading or URL words to build a title from: write one by hand"
            : (check === "title_missing"
              ? "The page has no title; built from its own h1 or URL words and the site's name"
              : `${
                Number(e.group_size) || 2
              } pages share this title; a distinct one built from this page's h1 or URL words`) +
              " (not written by a model: review it)",
          confidence: proposed === null ? "low" : r?.h1 ? "medium" : "low",
          source: "page_text",
        }));
        break;
      }
      case "meta_description_missing":
      case "meta_description_duplicate": {
        const current = check === "meta_description_duplicate"
          ? str(e.description) ?? r?.description ?? null
          : null;
        const proposed = builtDescription(r, url, current);
        out.push(row({
          kind: "meta_description",
          target: null,
          current,
          proposed,
          why: (check === "meta_description_missing"
            ? "The page has no meta description"
            : "Several pages share this meta description") +
            "; a starting point built from the page's own h1 and title (not written by a " +
            "model: rewrite it from the page's content)",
          confidence: "low",
          source: "page_text",
        }));
        break;
      }
      case "internal_redirect_links": {
        const target = str(e.target) ?? "";
        const fin = await finalOf(kv, auditId, target, memo);
        const via = str(e.redirects_to);
        const proposed = fin.loop ? null : fin.hops > 0 ? fin.url : via;
        out.push(row({
          kind: "link",
          target,
          current: target,
          proposed,
          why: fin.loop
            ? "The link goes into a redirect loop: point it at the page meant"
            : `The link goes through ${Math.max(1, fin.hops)} redirect(s); link to where they end` +
              (fin.live ? "" : " (the end is not a live, indexable page: check it)"),
          confidence: fin.loop ? "low" : fin.live ? "high" : "low",
          source: "audit",
        }));
        break;
      }
      case "broken_internal_links": {
        const target = str(e.target) ?? "";
        const g = guesses.get(target) ?? null;
        const status = typeof e.status === "number" ? `answers ${e.status}` : "got no answer";
        out.push(row({
          kind: "link",
          target,
          current: target,
          proposed: g?.to ?? null,
          why: g?.to
            ? `The target ${status}; the live URL it most likely meant, by path and content ` +
              `similarity (score ${g.score.toFixed(2)})`
            : `The target ${status} and no live URL is similar enough: remove the link or ` +
              "point it at the right page",
          confidence: g?.to ? confidenceOf(g.score) : "low",
          source: "similarity",
        }));
        break;
      }
      case "canonical_target_bad":
      case "canonical_chain":
      case "hreflang_target_bad": {
        const hreflang = check === "hreflang_target_bad";
        const target = str(hreflang ? e.alternate : e.canonical) ?? "";
        const fin = await finalOf(kv, auditId, target, memo);
        let proposed: string | null;
        let why: string;
        let confidence: Confidence;
        if (fin.live && fin.url !== target) {
          proposed = fin.url;
          why = `The ${hreflang ? "alternate" : "canonical"} redirects; name the final URL`;
          confidence = "high";
        } else if (hreflang) {
          proposed = null;
          why = `The alternate is not a live, indexable page (${
            str(e.reason) ?? "bad target"
          }): remove it or name the right language version`;
          confidence = "medium";
        } else {
          proposed = url;
          why = `The canonical target is not a live, indexable page (${
            str(e.reason) ?? (e.loop ? "a loop" : "a chain")
          }): make the page canonical to itself, or name the live page meant`;
          confidence = "medium";
        }
        out.push(row({
          kind: hreflang ? "hreflang" : "canonical",
          target,
          current: target,
          proposed,
          why,
          confidence,
          source: "audit",
        }));
        break;
      }
      case "sitemap_bad_entries": {
        const fin = await finalOf(kv, auditId, url, memo);
        const replace = fin.live && fin.url !== url ? fin.url : null;
        out.push(row({
          kind: "sitemap_drop",
          target: url,
          current: url,
          proposed: replace,
          why: replace
            ? "The sitemap lists a URL that redirects; list where it ends instead"
            : `The sitemap lists a URL that is not a live, indexable page (${
              str(e.reason) ?? "bad entry"
            }): drop it`,
          confidence: "high",
          source: "audit",
        }));
        break;
      }
      case "sitemap_missing_indexable": {
        out.push(row({
          kind: "sitemap_add",
          target: url,
          current: null,
          proposed: url,
          why: "An indexable page the crawl reached that no sitemap lists: add it",
          confidence: "high",
          source: "audit",
        }));
        break;
      }
    }
  }
  return out;
}

function redirectFix(from: string, g: RedirectGuess): FixView {
  return {
    url: from,
    check: "broken_internal_links",
    kind: "redirect",
    target: null,
    current: null,
    proposed: g.to,
    why: g.to
      ? `A broken internal URL (${g.links} link(s) found to it); redirect it to the live URL it ` +
        `most likely meant, by path and content similarity (score ${g.score.toFixed(2)})`
      : "A broken internal URL with no live URL similar enough: fix the links to it instead",
    confidence: g.to ? confidenceOf(g.score) : "low",
    source: "similarity",
  };
}

// ---------------------------------------------------------------------------------------------
// The redirect map, worked out once.

const STOP = new Set(["the", "and", "for", "with", "our", "your", "page", "html", "www", "com"]);

function wordsOf(s: string): Set<string> {
  return new Set(
    s.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 3 && !STOP.has(w)),
  );
}

/** A URL's path as compared: decoded, lower case, no trailing slash or file extension. */
function normPath(url: string): string {
  try {
    let p = new URL(url).pathname;
    try {
      p = decodeURIComponent(p);
    } catch { /* kept encoded */ }
    return p.toLowerCase().replace(/\.(html?|php|aspx?)$/, "").replace(/\/+$/, "") || "/";
  } catch {
    return url.toLowerCase();
  }
}

function grams(s: string): Set<string> {
  const t = ` ${s} `;
  const out = new Set<string>();
  for (let i = 0; i + 3 <= t.length; i++) out.add(t.slice(i, i + 3));
  return out;
}

interface Broken {
  url: string;
  grams: Set<string>;
  words: Set<string>;
  parent: string;
  links: number;
  best: { url: string; score: number } | null;
}

/** The redirect map of a completed audit, worked out now unless it is already stored. */
async function ensureRedirectMap(kv: Deno.Kv, auditId: string): Promise<void> {
  if ((await read(kv, keys.auditRedirectMapDone(auditId))).value !== null) return;
  // The broken URLs (the stored evidence bounds them) and the words of the links to them.
  const broken = new Map<string, Broken>();
  for await (const page of listInPages(kv, keys.auditFindings(auditId, "broken_internal_links"))) {
    for (const { value: e } of page) {
      const target = str(e.target);
      if (target === null) continue;
      let b = broken.get(target);
      if (!b) {
        const path = normPath(target);
        b = {
          url: target,
          grams: grams(path),
          words: wordsOf(path),
          parent: path.slice(0, path.lastIndexOf("/")),
          links: 0,
          best: null,
        };
        broken.set(target, b);
      }
      b.links++;
      for (const w of wordsOf(str(e.anchor) ?? "")) b.words.add(w);
    }
  }
  const list_ = [...broken.values()];
  const index = new Map<string, number[]>();
  list_.forEach((b, i) => {
    for (const g of b.grams) {
      const ids = index.get(g);
      if (ids) ids.push(i);
      else index.set(g, [i]);
    }
  });
  if (list_.length > 0) {
    for await (const page of listInPages(kv, keys.auditPages(auditId), EXPORT_BATCH)) {
      for (const { value: r } of page) {
        if (!isLive(r) || broken.has(r.url)) continue;
        const path = normPath(r.url);
        const g = grams(path);
        const shared = new Map<number, number>();
        for (const x of g) {
          const ids = index.get(x);
          if (!ids || ids.length > COMMON_GRAM) continue;
          for (const id of ids) shared.set(id, (shared.get(id) ?? 0) + 1);
        }
        if (shared.size === 0) continue;
        let words: Set<string> | null = null;
        for (const id of shared.keys()) {
          const b = list_[id];
          let common = 0;
          for (const x of g) if (b.grams.has(x)) common++;
          const dice = (2 * common) / (g.size + b.grams.size);
          words ??= wordsOf(`${path} ${r.title ?? ""} ${r.h1 ?? ""}`);
          let hit = 0;
          for (const w of b.words) if (words.has(w)) hit++;
          const content = b.words.size > 0 ? hit / b.words.size : 0;
          const parent = path.slice(0, path.lastIndexOf("/")) === b.parent ? 0.05 : 0;
          const score = Math.min(1, 0.7 * dice + 0.25 * content + parent);
          if (!b.best || score > b.best.score) b.best = { url: r.url, score };
        }
      }
    }
  }
  for (let i = 0; i < list_.length; i += 100) {
    const op = kv.atomic();
    for (const b of list_.slice(i, i + 100)) {
      const ok = b.best !== null && b.best.score >= MIN_REDIRECT_SCORE;
      const guess: RedirectGuess = {
        to: ok ? b.best!.url : null,
        score: ok ? Math.round(b.best!.score * 100) / 100 : 0,
        links: b.links,
      };
      op.set(keys.auditRedirectGuess(auditId, b.url) as unknown as Deno.KvKey, guess);
    }
    await op.commit();
  }
  await kv.set(keys.auditRedirectMapDone(auditId) as unknown as Deno.KvKey, list_.length);
}

// ---------------------------------------------------------------------------------------------
// The listings.

/** The filters of the fixes listing. */
export interface FixFilters {
  check?: string;
}

function pageSize(limit: number | undefined): number {
  return Math.max(1, Math.min(MAX_PAGE_SIZE, limit ?? 50));
}

function parseCursor(cursor: string | undefined): { section: number; kv: string | undefined } {
  if (cursor === undefined) return { section: 0, kv: undefined };
  const m = /^s([0-9]{1,2})(?:\.(.+))?$/.exec(cursor);
  if (!m || Number(m[1]) > REDIRECT_SECTION) throw badCursor();
  return { section: Number(m[1]), kv: m[2] === undefined ? undefined : decodeCursor(m[2]) };
}

// deno-lint-ignore no-explicit-any
type AnyPrefix = any;

function sectionPrefix(auditId: string, section: number): AnyPrefix {
  return section === REDIRECT_SECTION
    ? keys.auditRedirectGuesses(auditId)
    : keys.auditFindings(auditId, FIX_CHECKS[section]);
}

async function sectionRows(
  ctx: RowContext,
  section: number,
  entries: { key: Deno.KvKey; value: unknown }[],
): Promise<FixView[]> {
  if (section === REDIRECT_SECTION) {
    return entries.map((e) => redirectFix(String(e.key[2]), e.value as RedirectGuess));
  }
  return await fixesOf(ctx, FIX_CHECKS[section], entries.map((e) => e.value as Evidence));
}

/**
 * A page of the fixes of a completed audit (`check` filters to one check's fixes; for
 * broken_internal_links its link fixes and the redirect map). The cursor names the section and
 * the KV cursor within it.
 */
export async function listAuditFixes(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: FixFilters & { limit?: number; cursor?: string },
): Promise<{ audit_id: string; data: FixView[]; next_cursor: string | null }> {
  const audit = await completedAudit(deps, caller, auditId);
  const keep = checkFilter(query.check);
  const start = parseCursor(query.cursor);
  const kv = deps.kv;
  const fired = await firedChecks(kv, auditId);
  if (fired.has("broken_internal_links")) await ensureRedirectMap(kv, auditId);
  const limit = pageSize(query.limit);
  const ctx: RowContext = { kv, auditId, memo: new Map() };
  const data: FixView[] = [];
  for (let s = start.section; s <= REDIRECT_SECTION; s++) {
    const check = s === REDIRECT_SECTION ? "broken_internal_links" : FIX_CHECKS[s];
    if (!keep(s) || !fired.has(check)) continue;
    const want = limit - data.length;
    const it = list(kv, { prefix: sectionPrefix(auditId, s) }, {
      limit: want,
      cursor: s === start.section ? start.kv : undefined,
    });
    const entries: { key: Deno.KvKey; value: unknown }[] = [];
    try {
      for await (const e of it) entries.push(e as { key: Deno.KvKey; value: unknown });
    } catch (err) {
      if (query.cursor !== undefined) throw badCursor();
      throw err;
    }
    data.push(...await sectionRows(ctx, s, entries));
    if (entries.length === want) {
      return { audit_id: audit.id, data, next_cursor: `s${s}.${encodeCursor(it.cursor)}` };
    }
  }
  return { audit_id: audit.id, data, next_cursor: null };
}

/** Every fix of a completed audit under the filter, read EXPORT_BATCH items at a time. */
export async function allAuditFixes(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: FixFilters,
): Promise<AllRows<FixView>> {
  const audit = await completedAudit(deps, caller, auditId);
  const keep = checkFilter(query.check);
  const kv = deps.kv;
  const fired = await firedChecks(kv, auditId);
  if (fired.has("broken_internal_links")) await ensureRedirectMap(kv, auditId);
  async function* batches() {
    for (let s = 0; s <= REDIRECT_SECTION; s++) {
      const check = s === REDIRECT_SECTION ? "broken_internal_links" : FIX_CHECKS[s];
      if (!keep(s) || !fired.has(check)) continue;
      // One memo per batch: it holds at most a batch's targets.
      for await (const page of listInPages(kv, sectionPrefix(auditId, s), EXPORT_BATCH)) {
        const ctx: RowContext = { kv, auditId, memo: new Map() };
        yield await sectionRows(ctx, s, page as { key: Deno.KvKey; value: unknown }[]);
      }
    }
  }
  return { audit_id: audit.id, batches: batches() };
}

function redirectView(from: string, g: RedirectGuess): RedirectView {
  const none = { written: false, reason: "no live URL is similar enough to redirect to" };
  if (g.to === null) {
    return {
      from,
      to: null,
      score: g.score,
      confidence: null,
      links: g.links,
      nginx: none,
      apache: none,
    };
  }
  const to = destinationOf(from, g.to);
  const n = nginxLine(from, to);
  const a = apacheLine(from, to);
  return {
    from,
    to: g.to,
    score: g.score,
    confidence: confidenceOf(g.score),
    links: g.links,
    nginx: "line" in n ? { written: true, reason: null } : { written: false, reason: n.reason },
    apache: "line" in a ? { written: true, reason: null } : { written: false, reason: a.reason },
  };
}

/** A page of the redirect map, each entry saying whether each server file holds it and why not. */
export async function listAuditRedirects(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: { limit?: number; cursor?: string },
): Promise<{ audit_id: string; data: RedirectView[]; next_cursor: string | null }> {
  const audit = await completedAudit(deps, caller, auditId);
  await ensureRedirectMap(deps.kv, auditId);
  const limit = pageSize(query.limit);
  const it = list(deps.kv, { prefix: keys.auditRedirectGuesses(auditId) as AnyPrefix }, {
    limit,
    cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
  });
  const data: RedirectView[] = [];
  try {
    for await (const e of it) {
      data.push(redirectView(String(e.key[2]), e.value as RedirectGuess));
    }
  } catch (err) {
    if (query.cursor !== undefined) throw badCursor();
    throw err;
  }
  return {
    audit_id: audit.id,
    data,
    next_cursor: data.length === limit ? encodeCursor(it.cursor) : null,
  };
}

export type RedirectFormat = "nginx" | "apache" | "csv";

/** The CSV columns of the redirect map. */
export const REDIRECT_COLUMNS = [
  "from",
  "to",
  "score",
  "confidence",
  "links",
  "nginx",
  "apache",
] as const;

/** The redirect map as a server file or CSV, produced batch by batch. */
export async function exportAuditRedirects(
  deps: Deps,
  caller: Caller,
  auditId: string,
  format: RedirectFormat,
): Promise<{ filename: string; chunks: AsyncIterable<string> }> {
  const audit = await completedAudit(deps, caller, auditId);
  const kv = deps.kv;
  await ensureRedirectMap(kv, auditId);
  async function* chunks() {
    if (format === "csv") yield csvRecords([REDIRECT_COLUMNS]);
    else yield header(format, audit.id).join("\n") + "\n";
    if (format === "nginx") yield 'map $request_uri $serpwright_redirect {\n    default "";\n';
    let leftOut = 0;
    for await (const page of listInPages(kv, keys.auditRedirectGuesses(auditId), EXPORT_BATCH)) {
      const views = page.map((e) => redirectView(String(e.key[2]), e.value));
      if (format === "csv") {
        yield csvRecords(views.map((v) => [
          v.from,
          v.to,
          v.score,
          v.confidence,
          v.links,
          v.nginx.reason ?? "written",
          v.apache.reason ?? "written",
        ]));
        continue;
      }
      const lines: string[] = [];
      for (const v of views) {
        if (v.to === null) continue;
        const to = destinationOf(v.from, v.to);
        const got = format === "nginx" ? nginxLine(v.from, to) : apacheLine(v.from, to);
        if ("line" in got) lines.push(got.line);
        else leftOut++;
      }
      if (lines.length > 0) yield lines.join("\n") + "\n";
    }
    if (format === "nginx") yield "}\n";
    if (format !== "csv" && leftOut > 0) {
      yield `# ${leftOut} redirect(s) could not be written safely and are left out: see ` +
        `GET /v1/audits/${audit.id}/fixes/redirects (JSON) for each reason.\n`;
    }
  }
  const ext = format === "nginx" ? "conf" : format === "apache" ? "conf" : "csv";
  return { filename: `serpwright-${audit.id}-redirects-${format}.${ext}`, chunks: chunks() };
}

/** The CSV columns of the fixes: every field of a JSON fix, in its order. */
export const FIX_COLUMNS = [
  "url",
  "check",
  "kind",
  "target",
  "current",
  "proposed",
  "why",
  "confidence",
  "source",
] as const satisfies readonly (keyof FixView)[];

/** `GET /v1/audits/{id}/fixes` as a CSV or NDJSON file. */
export async function exportAuditFixes(
  deps: Deps,
  caller: Caller,
  auditId: string,
  filters: FixFilters,
  format: "csv" | "ndjson",
): Promise<{ filename: string; chunks: AsyncIterable<string> }> {
  const rows = await allAuditFixes(deps, caller, auditId, filters);
  const row = rowOf(FIX_COLUMNS) as unknown as (item: FixView) => Cell[];
  return {
    filename: `serpwright-${rows.audit_id}-fixes.${format}`,
    chunks: format === "csv"
      ? csvChunks(FIX_COLUMNS, row, rows.batches)
      : ndjsonChunks(rows.batches),
  };
}
