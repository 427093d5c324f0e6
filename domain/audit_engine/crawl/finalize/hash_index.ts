/**
 * URL hashes in the order they were added, found by hash in a sorted index: the key column of the
 * site-wide passes' per-URL tables (redirects.ts, targets.ts, failing.ts), whose other columns
 * are typed arrays by the same position. 20 bytes per URL (8 for the hash in order, 8 sorted, 4
 * for the position) outside V8's heap, where a JS Map keyed by URL string or by a 53-bit hash (a
 * heap number) cost 100–200 bytes of heap per entry.
 *
 * Every hash comes before the first lookup (the records pass adds, the passes after it look up);
 * the first lookup sorts once.
 *
 * @example
 * ```ts
 * const ix = new HashIndex();
 * ix.push(30); ix.push(10);
 * ix.indexOf(10); // 1: its position in the order added
 * ix.indexOf(20); // -1
 * ```
 *
 * @module
 */
import { grown, sortedIndexOf } from "../sorted_hashes.ts";

/** Positions of URL hashes, in the order added. */
export class HashIndex {
  #hashes = new Float64Array(256);
  #n = 0;
  #sorted: Float64Array | null = null;
  #slot: Int32Array | null = null;

  /** Adds a hash; answers its position. */
  push(hash: number): number {
    if (this.#sorted) throw new Error("HashIndex: every hash comes before the first lookup");
    this.#hashes = grown(this.#hashes, this.#n + 1);
    this.#hashes[this.#n] = hash;
    return this.#n++;
  }

  /** Hashes added. */
  get size(): number {
    return this.#n;
  }

  /** The hash at a position. */
  hashAt(i: number): number {
    return this.#hashes[i];
  }

  #seal(): { sorted: Float64Array; slot: Int32Array } {
    if (this.#sorted && this.#slot) return { sorted: this.#sorted, slot: this.#slot };
    const n = this.#n;
    // The doubling's slack is given back.
    const hashes = this.#hashes = this.#hashes.slice(0, n);
    const slot = new Int32Array(n);
    for (let i = 0; i < n; i++) slot[i] = i;
    // Ties keep the order added, so a repeated hash answers its first position (as a Map would).
    slot.sort((a, b) => hashes[a] - hashes[b] || a - b);
    const sorted = new Float64Array(n);
    for (let i = 0; i < n; i++) sorted[i] = hashes[slot[i]];
    this.#sorted = sorted;
    this.#slot = slot;
    return { sorted, slot };
  }

  /** The position of a hash, or -1. */
  indexOf(hash: number): number {
    const { sorted, slot } = this.#seal();
    let k = sortedIndexOf(sorted, hash);
    if (k < 0) return -1;
    while (k > 0 && sorted[k - 1] === hash) k--;
    return slot[k];
  }
}
