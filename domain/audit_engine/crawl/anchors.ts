/**
 * Storing what `broken_fragment` joins after the crawl: each HTML page's anchors (hashed) and its
 * fragment links, one small value each per page (facts/fragments.ts bounds both). A rendered
 * audit adds the anchors its rendered DOM shows to the page's stored set (`addRenderedAnchors`),
 * so an anchor a script writes is not reported missing.
 *
 * @module
 */
import type { AnchorsValue, FragLinksValue } from "../types.ts";
import { keys } from "../../platform/mod.ts";
import type { PageFacts } from "../page_facts.ts";
import { MAX_ANCHORS } from "../facts/fragments.ts";
import { clipUtf8, getMany, MAX_URL_LENGTH, type WriteBatch } from "./store.ts";

/** Fragment links stored per page stay under this (KV values hold 64 KiB). */
const FRAG_LINK_BYTES = 40 * 1024;

type Fragmentary = Pick<PageFacts, "anchors" | "anchorsOverCap" | "fragmentTargets" | "fragments">;

/** Stores an HTML page's anchors (always: an empty set says the page has none) and fragment links. */
export function writeFragmentFacts(
  batch: WriteBatch,
  auditId: string,
  pageUrl: string,
  facts: Fragmentary,
): void {
  batch.set(
    keys.auditAnchors(auditId, pageUrl),
    {
      h: facts.anchors,
      more: facts.anchorsOverCap,
    } satisfies AnchorsValue,
  );
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

/** Adds the anchors of rendered pages (by URL) to their stored sets. */
export async function addRenderedAnchors(
  kv: Deno.Kv,
  batch: WriteBatch,
  auditId: string,
  pages: { url: string; facts: Pick<PageFacts, "anchors" | "anchorsOverCap"> }[],
): Promise<void> {
  if (pages.length === 0) return;
  const stored = await getMany(kv, pages.map((p) => keys.auditAnchors(auditId, p.url)));
  pages.forEach(({ url, facts }, i) => {
    const raw = stored[i];
    if (raw === null) return; // not an HTML page of the raw crawl: never a target
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
    batch.set(keys.auditAnchors(auditId, url), { h: [...set], more } satisfies AnchorsValue);
  });
}
