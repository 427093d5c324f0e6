/**
 * Storing what `broken_fragment` joins after the crawl: each HTML page's anchors (hashed) and its
 * fragment links, one small value each per page (facts/fragments.ts bounds both). A page with
 * links has its anchor set carried by the first chunk of its links (store.ts `writeLinks`), one
 * KV write fewer a page on the thread that writes them all; a page without links keeps it under
 * `audit_anchors/<url>`, as every page did before (`readAnchorSets` reads either). A rendered
 * audit adds the anchors its rendered DOM shows to the page's stored set (`addRenderedAnchors`),
 * so an anchor a script writes is not reported missing.
 *
 * @module
 */
import type { AnchorsValue, FragLinksValue, LinkChunk } from "../types.ts";
import { keys } from "../../platform/mod.ts";
import { KV_LIMITS, valueBytes } from "../../../kv/limits_guard.ts";
import type { PageFacts } from "../page_facts.ts";
import { MAX_ANCHORS } from "../facts/fragments.ts";
import { clipUtf8, getMany, MAX_URL_LENGTH, type WriteBatch } from "./store.ts";

/** Fragment links stored per page stay under this (KV values hold 64 KiB). */
const FRAG_LINK_BYTES = 40 * 1024;

type Fragmentary = Pick<PageFacts, "anchors" | "anchorsOverCap" | "fragmentTargets" | "fragments">;

/** An HTML page's anchor set as stored (an empty set says the page has none). */
export function anchorSet(facts: Pick<PageFacts, "anchors" | "anchorsOverCap">): AnchorsValue {
  return { h: facts.anchors, more: facts.anchorsOverCap };
}

/**
 * Stores an HTML page's fragment links and, unless its first link chunk carries it (`carried`),
 * its anchor set (always: an empty set says the page has none).
 */
export function writeFragmentFacts(
  batch: WriteBatch,
  auditId: string,
  pageUrl: string,
  facts: Fragmentary,
  carried = false,
): void {
  if (!carried) batch.set(keys.auditAnchors(auditId, pageUrl), anchorSet(facts));
  if (facts.fragments.length === 0) return;
  const v: FragLinksValue = { t: [], f: [] };
  let bytes = 0;
  facts.fragmentTargets.forEach((t, i) => {
    if (t.length > MAX_URL_LENGTH) return; // never crawled: nothing to judge it against
    const frag = clipUtf8(facts.fragments[i], 400);
    bytes += t.length * 3 + frag.length * 3 + 16;
    if (bytes > FRAG_LINK_BYTES) return;
    v.t.push(t);
    v.f.push(frag);
  });
  if (v.t.length > 0) batch.set(keys.auditFragLinks(auditId, pageUrl), v);
}

/** A page's stored anchor set, and the link chunk that carries it (null: its own key holds it). */
export interface StoredAnchors {
  set: AnchorsValue;
  chunk: LinkChunk | null;
}

/**
 * The stored anchor sets of `urls` (null: not an HTML page the crawl fetched): from each page's
 * first link chunk, else (a page without links, or a chunk that carries none) its own key, read
 * only for those.
 */
export async function readAnchorSets(
  kv: Deno.Kv,
  auditId: string,
  urls: readonly string[],
): Promise<(StoredAnchors | null)[]> {
  const chunks = await getMany(kv, urls.map((u) => keys.auditLinks(auditId, u, 0)));
  const out: (StoredAnchors | null)[] = chunks.map((c) =>
    c?.h !== undefined ? { set: { h: c.h, more: c.more ?? false }, chunk: c } : null
  );
  const rest = urls.flatMap((_, i) => (out[i] === null ? [i] : []));
  if (rest.length === 0) return out;
  const own = await getMany(kv, rest.map((i) => keys.auditAnchors(auditId, urls[i])));
  rest.forEach((i, k) => (out[i] = own[k] ? { set: own[k], chunk: null } : null));
  return out;
}

/** Room a link chunk that carries a set leaves under KV's value limit, for its key's bookkeeping. */
const CHUNK_SLACK = 1_024;

/**
 * Writes a page's grown anchor set where it was read (`stored`). A chunk that would pass KV's value
 * limit with it (a rendered DOM's anchors added to a chunk full of links) carries none any more,
 * and the set goes to the page's own key, where `readAnchorSets` then finds it.
 */
function writeAnchorSet(
  batch: WriteBatch,
  auditId: string,
  url: string,
  set: AnchorsValue,
  stored: StoredAnchors,
): void {
  if (stored.chunk) {
    const carrying: LinkChunk = { ...stored.chunk, h: set.h, more: set.more };
    const bytes = valueBytes(carrying);
    if (bytes <= KV_LIMITS.valueBytes - CHUNK_SLACK) {
      batch.set(keys.auditLinks(auditId, url, 0), carrying, bytes);
      return;
    }
    const { h: _, more: __, ...bare } = stored.chunk;
    batch.set(keys.auditLinks(auditId, url, 0), bare);
  }
  batch.set(keys.auditAnchors(auditId, url), set);
}

/** Adds the anchors of rendered pages (by URL) to their stored sets. */
export async function addRenderedAnchors(
  kv: Deno.Kv,
  batch: WriteBatch,
  auditId: string,
  pages: { url: string; facts: Pick<PageFacts, "anchors" | "anchorsOverCap"> }[],
): Promise<void> {
  if (pages.length === 0) return;
  const stored = await readAnchorSets(kv, auditId, pages.map((p) => p.url));
  pages.forEach(({ url, facts }, i) => {
    const read = stored[i];
    if (read === null) return; // not an HTML page of the raw crawl: never a target
    const raw = read.set;
    const set = new Set(raw.h);
    let more = raw.more || facts.anchorsOverCap;
    for (const h of facts.anchors) {
      if (set.has(h)) continue;
      if (set.size >= MAX_ANCHORS) {
        more = true;
        break;
      }
      set.add(h);
    }
    if (set.size === raw.h.length && more === raw.more) return;
    writeAnchorSet(batch, auditId, url, { h: [...set], more } satisfies AnchorsValue, read);
  });
}
