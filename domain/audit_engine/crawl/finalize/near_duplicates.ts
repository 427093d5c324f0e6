/**
 * Pass 3b, near-duplicates: pages whose texts are alike but not identical (estimated Jaccard
 * similarity of word 3-shingles ≥ NEAR_SIMILARITY), found through the LSH band index engine.ts
 * writes: pages sharing a band are compared, and only those.
 *
 * Memory: at most NEAR_MAX_COMPARE signatures per band bucket, the last NEAR_SIG_CACHE
 * signatures read, and one number per near-duplicate page.
 *
 * @example
 * ```ts
 * import { duplicateGroups } from "./duplicates.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts;
 * const twins = await duplicateGroups(kv, auditId, f);
 * await nearDuplicates(kv, auditId, twins, f.nearDupContent);
 * ```
 *
 * @module
 */
import type { NearSig } from "../../types.ts";
import { keys } from "../../../platform/mod.ts";
import { similarity } from "../../text_fingerprint.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { getMany, listInPages } from "../store.ts";
import type { Group } from "./facts.ts";

/** Estimated Jaccard similarity of word 3-shingles from which pages are near-duplicates. */
const NEAR_SIMILARITY = 0.8;
/** Signatures held per band bucket: each page is compared with at most this many. */
export const NEAR_MAX_COMPARE = 200;
/** Signatures kept read in the near-duplicate pass (~0.3 KB each). */
const NEAR_SIG_CACHE = 4_096;
/**
 * Signature comparisons between two yields: one page of the index may compare 500 pages with 200
 * each when a hostile site puts every page in one bucket.
 */
const COMPARES_PER_YIELD = 8_192;

export type { NearSig };

/**
 * Pages with a near-duplicate, from the LSH band index (engine.ts): entries sorted by band, so
 * each bucket of pages sharing a band is contiguous; every page is compared with the first
 * NEAR_MAX_COMPARE pages of its bucket (the only signatures held), skipping pairs of identical
 * text and pairs already both known. Signatures are read per page of the index, only for entries
 * that may share their bucket, and the last NEAR_SIG_CACHE read are kept. A page with an
 * identical twin (`twins`: text hashes) can make a third page a near-duplicate but is not counted
 * itself (duplicate_content counts it).
 */
export async function nearDuplicates(
  kv: Deno.Kv,
  auditId: string,
  twins: ReadonlySet<number>,
  g: Group,
): Promise<void> {
  interface Entry {
    url: string;
    hash: number;
    text: number;
    sig: Uint16Array;
  }
  const near = new Set<number>();
  // A page sits in up to 16 buckets: recently read signatures are kept (bounded, oldest out).
  const cache = new Map<number, NearSig | null>();
  let bucket: string | null = null;
  let held: Entry[] = [];
  // Held entries not yet known near: once none is and the page itself is, every pair left is
  // known both ways, so its loop ends (a site of near-identical pages would otherwise walk all
  // 200 held entries for each of its pages in each of its 16 bands).
  let open = 0;
  const pace = new Pacer(COMPARES_PER_YIELD);
  const found = (x: Entry, other: Entry, sim: number, isHeld: boolean) => {
    if (near.has(x.hash)) return;
    near.add(x.hash);
    if (isHeld) open--;
    if (!twins.has(x.text)) {
      g.add({ url: x.url, similar_to: other.url, similarity: Math.round(sim * 100) / 100 });
    }
  };
  for await (const page of listInPages(kv, keys.auditNearBands(auditId))) {
    const bands = page.map((e) => e.key[2]);
    // An entry alone in its bucket within this page (and not continuing the previous page's
    // bucket, nor possibly continued by the next page) is compared with nothing: no read.
    const needed = bands.map((b, i) =>
      b === bucket || (i > 0 && bands[i - 1] === b) ||
      (i + 1 < bands.length && bands[i + 1] === b) || i === bands.length - 1
    );
    const byHash = new Map<number, NearSig | null>();
    const want: number[] = [];
    for (let i = 0; i < page.length; i++) {
      const h = page[i].key[3];
      if (!needed[i] || byHash.has(h)) continue;
      const c = cache.get(h);
      if (c !== undefined) byHash.set(h, c);
      else {
        byHash.set(h, null);
        want.push(h);
      }
    }
    const sigs = await getMany(kv, want.map((h) => keys.auditNearSig(auditId, h)));
    want.forEach((h, i) => {
      byHash.set(h, sigs[i]);
      if (cache.size >= NEAR_SIG_CACHE) cache.delete(cache.keys().next().value!);
      cache.set(h, sigs[i]);
    });
    for (let i = 0; i < page.length; i++) {
      if (bands[i] !== bucket) {
        bucket = bands[i];
        held = [];
        open = 0;
      }
      const v = needed[i] ? byHash.get(page[i].key[3]) : null;
      if (!v) continue;
      if (pace.due(held.length)) await yieldToLoop();
      const a: Entry = { url: v.u, hash: page[i].key[3], text: v.h, sig: v.s };
      for (const o of held) {
        if (open === 0 && near.has(a.hash)) break;
        if (o.text === a.text || (near.has(a.hash) && near.has(o.hash))) continue;
        const sim = similarity(a.sig, o.sig);
        if (sim >= NEAR_SIMILARITY) {
          found(a, o, sim, false);
          found(o, a, sim, true);
        }
      }
      if (held.length < NEAR_MAX_COMPARE) {
        held.push(a);
        if (!near.has(a.hash)) open++;
      }
    }
  }
}
