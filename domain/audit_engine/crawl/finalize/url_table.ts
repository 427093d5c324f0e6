/**
 * Every URL's followable inlinks, in typed arrays: the URL's hash (8 bytes, in a `HashKeys` the
 * link score shares, so its pages cost no second hash) and a 2-byte count, 10 bytes per URL with
 * a record (10 MB at a million); the few URLs linked 65,535 times or more (a home page on a big
 * site) keep their count in a Map. A JS Map of 53-bit hashes (which are heap numbers, not small
 * integers) cost about 95 bytes per URL, and its garbage made V8 grow the heap with the site
 * (measured: tests/bench/crawl_memory_bench.ts). The page that links a single-inlink URL is not
 * kept per URL (4 bytes each): it is found again in the links for the few such pages the
 * evidence names (annotate_records.ts).
 *
 * The records pass registers each record's hash (`add`, any order, repeats allowed); the first
 * `link` sorts them once, and a URL's slot is found by binary search.
 *
 * @example
 * ```ts
 * const t = new UrlTable();
 * t.add(10); t.add(20);
 * t.link(20); // a page links page 20
 * t.inlinksOf(20); // 1
 * t.has(30); // false
 * ```
 *
 * @module
 */
import { HashKeys, release } from "../sorted_hashes.ts";

/** The largest count a slot holds; past it the count is in `#big`. */
const SATURATED = 0xffff;

/** Inlinks of the URLs the crawl recorded, by URL hash. */
export class UrlTable {
  /** The records' hashes: the link score's pages are among them (link_score.ts). */
  readonly keys: HashKeys = new HashKeys();
  #inlinks: Uint16Array | null = null;
  #big = new Map<number, number>();

  /** Registers a URL (by hash); every URL comes before the first link. */
  add(hash: number): void {
    if (this.keys.sealed) throw new Error("UrlTable: URLs are registered before links");
    this.keys.add(hash);
  }

  /** URLs registered (distinct once links started). */
  get size(): number {
    return this.keys.size;
  }

  #counts(): Uint16Array {
    return this.#inlinks ??= new Uint16Array(this.keys.seal().length);
  }

  /** One followable link to `to` (a hash); a target without a record is not kept. */
  link(to: number): void {
    this.linkAt(this.slotOf(to));
  }

  /** A URL's slot among the keys (-1: no record), for `linkAt` and a sharer's own lookups. */
  slotOf(hash: number): number {
    this.#counts();
    return this.keys.indexOf(hash);
  }

  /** `link` for a URL already looked up (`slotOf`). */
  linkAt(i: number): void {
    const counts = this.#counts();
    if (i < 0) return;
    if (counts[i] < SATURATED) counts[i]++;
    else this.#big.set(i, (this.#big.get(i) ?? SATURATED) + 1);
  }

  /** Whether the URL has a record. */
  has(hash: number): boolean {
    return this.keys.indexOf(hash) >= 0;
  }

  /** Followable internal links to the URL (0 for a URL without a record). */
  inlinksOf(hash: number): number {
    const counts = this.#counts();
    const i = this.keys.indexOf(hash);
    if (i < 0) return 0;
    return counts[i] < SATURATED ? counts[i] : this.#big.get(i) ?? SATURATED;
  }

  /** Frees the table (and its keys); no lookup may follow. */
  release(): void {
    release(this.#inlinks);
    this.keys.release();
  }
}
