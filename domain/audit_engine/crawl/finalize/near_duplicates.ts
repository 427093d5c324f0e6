/**
 * Pass 3b, near-duplicates: pages whose texts are alike but not identical (estimated Jaccard
 * similarity of word 3-shingles ≥ NEAR_SIMILARITY), found through the LSH band index the crawl
 * writes (page_recorder.ts `NearRuns`): pages sharing a band are compared, and only those.
 *
 * Memory: the band being compared (12 bytes per page with enough words, 32 while it is sorted, in
 * typed arrays) and the bands read ahead of it (at most READ_AHEAD_ENTRIES entries: none once a
 * band is larger), at most NEAR_MAX_COMPARE signatures per band bucket (and their sketches), two
 * batches of ENTRIES_PER_READ signatures, the last NEAR_SIG_CACHE signatures read (`SigCache`:
 * up to ~9.4 MB of typed arrays and their URLs), and 16 to 32 bytes per near-duplicate page (a
 * typed hash table).
 *
 * Round trips (a remote KV): a band's runs are listed in RUN_RANGES key ranges side by side (run
 * names are random hex), bands are read ahead of the one compared, and the signatures of the next
 * batch are read while the current one is compared: a small site's pass waits about three round
 * trips, not a few per band.
 *
 * @example
 * ```ts
 * import { duplicateGroups } from "./duplicates.ts";
 * import type { Facts } from "./facts.ts";
 * declare const kv: Deno.Kv, auditId: string, f: Facts;
 * // The pass starts once the content groups are in, beside the title and description groups.
 * const near = (twins: Twins) => nearDuplicates(kv, auditId, twins, f.nearDupContent);
 * await duplicateGroups(kv, auditId, f, near);
 * ```
 *
 * @module
 */
import type { NearSig } from "../../types.ts";
import { keys } from "../../../platform/mod.ts";
import {
  mayReach,
  SIG_BINS,
  similarity,
  SKETCH_WORDS,
  sketchInto,
} from "../../text_fingerprint.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { BAND_BINS, BANDS } from "../page_recorder.ts";
import { UrlHashSet } from "../known_urls.ts";
import { release } from "../sorted_hashes.ts";
import { getMany, listRangeInPages } from "../store.ts";
import type { Group } from "./facts.ts";

/** Estimated Jaccard similarity of word 3-shingles from which pages are near-duplicates. */
const NEAR_SIMILARITY = 0.8;
/** Signatures held per band bucket: each page is compared with at most this many. */
export const NEAR_MAX_COMPARE = 200;
/**
 * Signatures kept read in the near-duplicate pass (`SigCache`, 144 bytes each in typed arrays,
 * plus the URL: ~9.4 MB of typed arrays when full; the arrays grow with what is read, so a small
 * site's stay small). A page sits in 16 bands: a site of templated pages (every page in some
 * shared bucket) read each signature up to 16 times when this held 4,096 (10 reads per page at
 * 10,000 pages, a tenth of the crawl's CPU), and 6 times at 100,000 pages when it held 16,384; a
 * site of up to this many pages reads each once.
 */
const NEAR_SIG_CACHE = 65_536;
/**
 * Signature comparisons between two yields: one page of the index may compare 500 pages with 200
 * each when a hostile site puts every page in one bucket.
 */
const COMPARES_PER_YIELD = 8_192;

export type { NearSig };

/** The text hashes that have an identical twin (the content groups'; duplicates.ts). */
export interface Twins {
  has(textHash: number): boolean;
}

/** Entries per batch of signature reads (at most ~0.6 MB of signatures a batch). */
const ENTRIES_PER_READ = 2_048;
/** Runs listed per KV read (a run's value is up to 32 KB). */
const RUNS_PER_LIST = 16;
/**
 * Band entries read ahead of the band being compared, at most: a site of up to 8,000 pages reads
 * all its bands at once, one of up to 131,072 the next band, a larger one none (~32 bytes an
 * entry while it is sorted: at a million pages, a band ahead was 32 MB beside the one compared).
 */
const READ_AHEAD_ENTRIES = 131_072;
/**
 * Where a band's runs are split to be listed side by side: run names start with a hex digit
 * (page_recorder.ts `NearRuns`), so each range holds about a quarter of them, and the first and
 * last ranges are open-ended, so together they cover the band's whole prefix whatever a name is.
 */
const RUN_RANGES = ["4", "8", "c"];

/** A band's entries sorted: see `sortedBand`. */
interface SortedBand {
  bucket: Uint32Array;
  hash: Float64Array;
}

/** Every run of one band, its key ranges (RUN_RANGES) listed side by side. */
async function bandRuns(
  kv: Deno.Kv,
  auditId: string,
  band: number,
): Promise<{ v: Uint16Array; h: Float64Array }[]> {
  const prefix = keys.auditNearRunsOfBand(auditId, band);
  const at = (name: string) => keys.auditNearRun(auditId, band, name);
  const ranges = [
    { prefix, end: at(RUN_RANGES[0]) },
    ...RUN_RANGES.slice(1).map((to, i) => ({ start: at(RUN_RANGES[i]), end: at(to) })),
    { prefix, start: at(RUN_RANGES[RUN_RANGES.length - 1]) },
  ];
  const parts = await Promise.all(ranges.map(async (selector) => {
    const runs: { v: Uint16Array; h: Float64Array }[] = [];
    for await (const page of listRangeInPages(kv, selector, RUNS_PER_LIST)) {
      for (const e of page) runs.push(e.value);
    }
    return runs;
  }));
  return parts.flat();
}

/**
 * One band's entries, in the order its keys had when each entry was a key (bin values, then URL
 * hash), a repeat (a step written twice) dropped: `bucket[i]` numbers the bucket of the `i`th
 * (equal bins, equal number; numbers start at 0), `hash[i]` is its page.
 */
async function sortedBand(kv: Deno.Kv, auditId: string, band: number): Promise<SortedBand> {
  // A crawl that began before the runs wrote one key per page and band, `<band>:<bins in hex>`
  // then the URL hash: its entries join the band (a deploy does not lose its earlier pages).
  const base = keys.auditNearBands(auditId);
  const bb = String(band).padStart(2, "0");
  const legacy: { v: number[]; h: number[] } = { v: [], h: [] };
  const readLegacy = async () => {
    for await (
      const e of kv.list({ start: [...base, `${bb}:`], end: [...base, `${bb};`] }, {
        batchSize: 500,
      })
    ) {
      const hex = String(e.key[2]).slice(3);
      for (let k = 0; k < BAND_BINS; k++) {
        legacy.v.push(parseInt(hex.slice(4 * k, 4 * k + 4), 16));
      }
      legacy.h.push(Number(e.key[3]));
    }
  };
  // Runs are sorted below: the order they are read in does not matter.
  const [runs] = await Promise.all([bandRuns(kv, auditId, band), readLegacy()]);
  let n = 0;
  for (const r of runs) n += r.h.length;
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
    // Copied: given back at once, so a band's runs and its copy are not both held.
    release(r.v, r.h);
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
  let id = -1;
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
  release(v, h, order);
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
  twins: Twins,
  g: Group,
  /** Signatures kept read (tests: a small cache finds the same). */
  cacheSize = NEAR_SIG_CACHE,
): Promise<void> {
  interface Entry {
    url: string;
    hash: number;
    text: number;
    sig: Uint16Array;
  }
  // Pages known near, by URL hash: 16 to 32 bytes each outside V8's heap where a Set took ~58 in
  // it (a site of templated pages can be all near-duplicates). A URL hash of 0, which the table
  // cannot keep, has odds of 2^-53.
  const near = new UrlHashSet();
  // A page sits in up to 16 buckets: recently read signatures are kept (bounded, oldest out).
  const cache = new SigCache(cacheSize);
  let bucket = -1;
  let held: Entry[] = [];
  // The held entries' sketches (`sketchInto`), the i-th at word i * SKETCH_WORDS, and the
  // sketch of the entry compared with them: most pairs are told apart by these alone.
  const heldSketches = new Int32Array(NEAR_MAX_COMPARE * SKETCH_WORDS);
  const sketch = new Int32Array(SKETCH_WORDS);
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
  // Bands read ahead of the one compared: the first alone, then as many as READ_AHEAD_ENTRIES
  // allows at the first one's size (every band holds about the same pages), maybe none. A small
  // site waits for two band reads in a row either way: the first, then all the others at once.
  const bands: (Promise<SortedBand> | null)[] = [];
  let ahead = 0;
  const readAhead = (upTo: number) => {
    while (bands.length < Math.min(BANDS, upTo)) {
      const p = sortedBand(kv, auditId, bands.length);
      // A read still ahead when a band before it fails is nobody's to report.
      p.catch(() => {});
      bands.push(p);
    }
  };
  for (let band = 0; band < BANDS; band++) {
    readAhead(band + 1 + ahead);
    const sorted = await bands[band]!;
    bands[band] = null;
    const buckets = sorted.bucket;
    const n = buckets.length;
    if (band === 0) {
      ahead = Math.min(BANDS - 1, Math.floor(READ_AHEAD_ENTRIES / Math.max(1, n)));
      readAhead(band + 1 + ahead);
    }
    const hashes = sorted.hash;
    // Bucket numbers start again in each band: the first entry starts a new bucket.
    bucket = -1;
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
    // The signatures a batch needs are read while the batch before it is compared. Deciding a
    // bucket early can only find it live where it would not be later, and a bucket whose pages
    // are all known near changes nothing when compared: the findings are the same.
    const plan = (from: number) => {
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
      const sigs = getMany(kv, want.map((h) => keys.auditNearSig(auditId, h)));
      sigs.catch(() => {}); // awaited below; a batch left behind by a failure is not reported
      return { from, to, use, byHash, want, sigs };
    };
    let next = n > 0 ? plan(0) : null;
    while (next) {
      const { from, to, use, byHash, want } = next;
      const sigs = await next.sigs;
      next = to < n ? plan(to) : null;
      want.forEach((h, i) => {
        byHash.set(h, sigs[i]);
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
        sketchInto(a.sig, sketch, 0);
        for (let j = 0; j < held.length; j++) {
          const o = held[j];
          if (open === 0 && near.has(a.hash)) break;
          if (o.text === a.text || (near.has(a.hash) && near.has(o.hash))) continue;
          if (!mayReach(sketch, 0, heldSketches, j * SKETCH_WORDS, NEAR_SIMILARITY)) continue;
          const sim = similarity(a.sig, o.sig, NEAR_SIMILARITY);
          if (sim >= NEAR_SIMILARITY) {
            found(a, o, sim, false);
            found(o, a, sim, true);
          }
        }
        if (held.length < NEAR_MAX_COMPARE) {
          heldSketches.set(sketch, held.length * SKETCH_WORDS);
          held.push(a);
          if (!near.has(a.hash)) open++;
        }
      }
    }
    // The band is done (its last batch compared): its arrays go back before the next is sorted.
    release(buckets, hashes);
  }
  // Up to ~9.4 MB, given back now rather than at V8's next collection: pass 5 comes next.
  cache.release();
}

/**
 * The last `capacity` signatures read, by page hash (a page without one kept as null), oldest out:
 * bins and text hashes in typed arrays, so the cache costs V8's heap little more than its URLs.
 * The arrays grow (doubling) with what is kept, up to `capacity`: a small site's pass holds its
 * own signatures, not the cache's whole size. `get` answers a copy: a slot is written again once
 * its signature is the oldest, and a bucket may still hold the signature it answered.
 */
export class SigCache {
  #bins = new Uint16Array(0);
  #text = new Float64Array(0);
  #hash = new Float64Array(0);
  readonly #url: (string | null)[] = [];
  readonly #slot = new Map<number, number>();
  #next = 0;

  constructor(readonly capacity: number) {}

  /** The signature kept for page `h`, null when its page had none, undefined when not kept. */
  get(h: number): NearSig | null | undefined {
    const at = this.#slot.get(h);
    if (at === undefined) return undefined;
    const u = this.#url[at];
    if (u === null) return null;
    return { u, h: this.#text[at], s: this.#bins.slice(at * SIG_BINS, (at + 1) * SIG_BINS) };
  }

  /** Keeps page `h`'s signature (or its absence) as the newest, in the oldest's slot when full. */
  set(h: number, sig: NearSig | null): void {
    // A signature of another length (none is written) is read again rather than kept cut.
    if (this.capacity <= 0 || this.#slot.has(h) || (sig && sig.s.length !== SIG_BINS)) return;
    const at = this.#next;
    this.#next = (at + 1) % this.capacity;
    if (this.#slot.size >= this.capacity) this.#slot.delete(this.#hash[at]);
    else if (at >= this.#hash.length) this.#grow(at + 1);
    this.#slot.set(h, at);
    this.#hash[at] = h;
    this.#url[at] = sig?.u ?? null;
    if (sig) {
      this.#text[at] = sig.h;
      this.#bins.set(sig.s, at * SIG_BINS);
    }
  }

  /** Empties the cache, its arrays given back at once (sorted_hashes.ts `release`). */
  release(): void {
    release(this.#bins, this.#text, this.#hash);
    [this.#bins, this.#text, this.#hash] = [
      new Uint16Array(0),
      new Float64Array(0),
      new Float64Array(0),
    ];
    this.#slot.clear();
    this.#url.length = 0;
    this.#next = 0;
  }

  /** Room for at least `n` signatures (doubling, at most `capacity`), what is kept kept. */
  #grow(n: number): void {
    const size = Math.min(this.capacity, Math.max(n, 2 * this.#hash.length, 1_024));
    const bins = new Uint16Array(size * SIG_BINS);
    const text = new Float64Array(size);
    const hash = new Float64Array(size);
    bins.set(this.#bins);
    text.set(this.#text);
    hash.set(this.#hash);
    release(this.#bins, this.#text, this.#hash);
    [this.#bins, this.#text, this.#hash] = [bins, text, hash];
  }
}
