/**
 * Every URL's followable inlinks and first linking page, in typed arrays: 8 bytes for the URL
 * hash, 4 for the count and 4 for the first linker's index, 16 bytes per URL with a record
 * (16 MB at a million). A JS Map of 53-bit hashes (which are heap numbers, not small integers)
 * cost about 95 bytes per URL for the same two facts, and its garbage made V8 grow the heap with
 * the site (measured: tests/bench/crawl_memory_bench.ts).
 *
 * The records pass registers each record's hash (`add`, any order, repeats allowed); the first
 * `link` sorts them once, and a URL's slot is found by binary search.
 *
 * @example
 * ```ts
 * const t = new UrlTable();
 * t.add(10); t.add(20);
 * t.link(20, 10); // page 10 links page 20
 * t.inlinksOf(20); // 1
 * t.firstLinkerOf(20); // 10
 * ```
 *
 * @module
 */
import { grown, sortedIndexOf, sortUnique } from "../sorted_hashes.ts";

/** Inlinks and first linkers of the URLs the crawl recorded, by URL hash. */
export class UrlTable {
  #hashes = new Float64Array(1024);
  #n = 0;
  #sealed = false;
  #inlinks = new Int32Array(0);
  #first: Int32Array | null = null;

  /** Registers a URL (by hash); every URL comes before the first link. */
  add(hash: number): void {
    if (this.#sealed) throw new Error("UrlTable: URLs are registered before links");
    this.#hashes = grown(this.#hashes, this.#n + 1);
    this.#hashes[this.#n++] = hash;
  }

  /** URLs registered (distinct once links started). */
  get size(): number {
    return this.#n;
  }

  #seal(): void {
    if (this.#sealed) return;
    this.#sealed = true;
    const n = sortUnique(this.#hashes.subarray(0, this.#n));
    // A copy of the used part: the doubling's slack is given back.
    this.#hashes = this.#hashes.slice(0, n);
    this.#n = n;
    this.#inlinks = new Int32Array(n);
    this.#first = new Int32Array(n).fill(-1);
  }

  #indexOf(hash: number): number {
    this.#seal();
    return sortedIndexOf(this.#hashes, hash);
  }

  /** One followable link from `from` to `to` (hashes); a target without a record is not kept. */
  link(to: number, from: number): void {
    const i = this.#indexOf(to);
    if (i < 0) return;
    if (this.#inlinks[i]++ === 0 && this.#first) this.#first[i] = this.#indexOf(from);
  }

  /** Followable internal links to the URL (0 for a URL without a record). */
  inlinksOf(hash: number): number {
    const i = this.#indexOf(hash);
    return i < 0 ? 0 : this.#inlinks[i];
  }

  /** The hash of the first page seen linking the URL, or -1. */
  firstLinkerOf(hash: number): number {
    const i = this.#indexOf(hash);
    const j = i < 0 || !this.#first ? -1 : this.#first[i];
    return j < 0 ? -1 : this.#hashes[j];
  }

  /** Frees the first linkers once they have been read. */
  releaseLinkers(): void {
    this.#first = null;
  }
}
