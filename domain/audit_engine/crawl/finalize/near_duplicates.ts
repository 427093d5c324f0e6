/**
 * Pass 3b, near-duplicates: pages whose texts are alike but not identical (estimated Jaccard
 * similarity of word 3-shingles ≥ NEAR_SIMILARITY), found through the LSH band index the crawl
 * writes (page_recorder.ts `NearRuns`): pages sharing a band are compared, and only those.
 *
 * Memory: one band's entries at a time (about 32 bytes per page with enough words while they are
 * sorted, in typed arrays), at most NEAR_MAX_COMPARE signatures per band bucket, the last
 * NEAR_SIG_CACHE signatures read, and one number per near-duplicate page.
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
import { BAND_BINS, BANDS } from "../page_recorder.ts";
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

/** Entries read per batch of signature reads (as a page of the index was). */
const ENTRIES_PER_READ = 500;
/** Runs listed per KV read (a run's value is up to 32 KB). */
const RUNS_PER_LIST = 16;

/**
 * One band's entries, in the order its keys had when each entry was a key (bin values, then URL
 * hash), a repeat (a step written twice) dropped: `bucket[i]` numbers the bucket of the `i`th
 * (equal bins, equal number; numbers start at `firstBucket`), `hash[i]` is its page.
 */
async function sortedBand(
  kv: Deno.Kv,
  auditId: string,
  band: number,
  firstBucket: number,
): Promise<{ bucket: Uint32Array; hash: Float64Array }> {
  const runs: { v: Uint16Array; h: Float64Array }[] = [];
  let n = 0;
  for await (
    const page of listInPages(kv, keys.auditNearRunsOfBand(auditId, band), RUNS_PER_LIST)
  ) {
    for (const e of page) {
      runs.push(e.value);
      n += e.value.h.length;
    }
  }
  // A crawl that began before the runs wrote one key per page and band, `<band>:<bins in hex>`
  // then the URL hash: its entries join the band (a deploy does not lose its earlier pages).
  const base = keys.auditNearBands(auditId);
  const bb = String(band).padStart(2, "0");
  const legacy: { v: number[]; h: number[] } = { v: [], h: [] };
  for await (
    const e of kv.list({ start: [...base, `${bb}:`], end: [...base, `${bb};`] }, { batchSize: 500 })
  ) {
    const hex = String(e.key[2]).slice(3);
    for (let k = 0; k < BAND_BINS; k++) {
      legacy.v.push(parseInt(hex.slice(4 * k, 4 * k + 4), 16));
    }
    legacy.h.push(Number(e.key[3]));
  }
  if (legacy.h.length > 0) {
    runs.push({ v: Uint16Array.from(legacy.v), h: Float64Array.from(legacy.h) });
    n += legacy.h.length;
  }
  const v = new Uint16Array(n * BAND_BINS);
  const h = new Float64Array(n);
  let at = 0;
  for (const r of runs) {
    v.set(r.v, at * BAND_BINS);
    h.set(r.h, at);
    at += r.h.length;
  }
  runs.length = 0;
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const cmp = (a: number, b: number) => {
    for (let k = 0; k < BAND_BINS; k++) {
      const d = v[a * BAND_BINS + k] - v[b * BAND_BINS + k];
      if (d !== 0) return d;
    }
    return h[a] - h[b];
  };
  order.sort(cmp);
  const bucket = new Uint32Array(n);
  const hash = new Float64Array(n);
  let out = 0;
  let id = firstBucket - 1;
  for (let i = 0; i < n; i++) {
    const x = order[i];
    if (i > 0) {
      const d = cmp(order[i - 1], x);
      if (d === 0) continue; // the same page in the same bucket, written by a repeated step
      let sameBins = true;
      for (let k = 0; k < BAND_BINS; k++) {
        if (v[order[i - 1] * BAND_BINS + k] !== v[x * BAND_BINS + k]) sameBins = false;
      }
      if (!sameBins) id++;
    } else id++;
    bucket[out] = id;
    hash[out++] = h[x];
  }
  return { bucket: bucket.subarray(0, out), hash: hash.subarray(0, out) };
}

/**
 * Pages with a near-duplicate, from the LSH band index (page_recorder.ts `NearRuns`): one band at
 * a time, its entries sorted by bins and then page, so each bucket of pages sharing a band is
 * contiguous; every page is compared with the first NEAR_MAX_COMPARE pages of its bucket (the
 * only signatures held), skipping pairs of identical text and pairs already both known.
 * Signatures are read per ENTRIES_PER_READ entries, only for pages that share their bucket, and
 * the last NEAR_SIG_CACHE read are kept. A page with an identical twin (`twins`: text hashes) can
 * make a third page a near-duplicate but is not counted itself (duplicate_content counts it).
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
  let bucket = -1;
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
  let nextBucket = 0;
  for (let band = 0; band < BANDS; band++) {
    const sorted = await sortedBand(kv, auditId, band, nextBucket);
    const buckets = sorted.bucket;
    const n = buckets.length;
    if (n > 0) nextBucket = buckets[n - 1] + 1;
    const hashes = sorted.hash;
    // Whether the bucket of the entry at `i` can change anything: it holds two pages or more, and
    // not every one is already known near (found() ignores a known page, and a pair of known
    // pages is never compared), decided once per bucket, where it starts. A site of alike pages
    // is mostly known after its first band: its other bands then cost no reads.
    let decided = -1;
    let live = false;
    const needed = (i: number): boolean => {
      if (buckets[i] === decided) return live;
      decided = buckets[i];
      live = false;
      if (i + 1 >= n || buckets[i + 1] !== decided) return live;
      for (let j = i; j < n && buckets[j] === decided; j++) {
        if (!near.has(hashes[j])) return (live = true);
      }
      return live;
    };
    for (let from = 0; from < n; from += ENTRIES_PER_READ) {
      const to = Math.min(n, from + ENTRIES_PER_READ);
      const use = new Uint8Array(to - from);
      const byHash = new Map<number, NearSig | null>();
      const want: number[] = [];
      for (let i = from; i < to; i++) {
        const h = hashes[i];
        if (!needed(i)) continue;
        use[i - from] = 1;
        if (byHash.has(h)) continue;
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
      for (let i = from; i < to; i++) {
        if (buckets[i] !== bucket) {
          bucket = buckets[i];
          held = [];
          open = 0;
        }
        const v = use[i - from] ? byHash.get(hashes[i]) : null;
        if (!v) continue;
        if (pace.due(held.length)) await yieldToLoop();
        const a: Entry = { url: v.u, hash: hashes[i], text: v.h, sig: v.s };
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
}
