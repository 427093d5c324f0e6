/**
 * The typed-array pieces the site-wide passes' per-URL tables share (url_table.ts, link_score.ts,
 * finalize/hash_index.ts and the tables on it): an array grown by doubling, a sort that drops
 * repeats in place, and a binary search.
 *
 * @example
 * ```ts
 * let a = new Float64Array(2);
 * a = grown(a, 5); // 8 slots, the first two kept
 * a.set([30, 10, 30, 20]);
 * const n = sortUnique(a.subarray(0, 4)); // 3: 10, 20, 30
 * sortedIndexOf(a.subarray(0, n), 20); // 1
 * ```
 *
 * @module
 */

/** `a` grown to hold at least `n` (doubling), its content kept. */
export function grown<A extends Float64Array | Int32Array | Uint16Array | Uint8Array>(
  a: A,
  n: number,
): A {
  if (n <= a.length) return a;
  let size = a.length || 64;
  while (size < n) size *= 2;
  const b = new (a.constructor as new (n: number) => A)(size);
  b.set(a);
  return b;
}

/** Sorts `a` in place and moves its distinct values to the front; answers how many there are. */
export function sortUnique(a: Float64Array): number {
  a.sort();
  let n = 0;
  for (let i = 0; i < a.length; i++) if (i === 0 || a[i] !== a[n - 1]) a[n++] = a[i];
  return n;
}

/** Where `value` sits in the ascending `sorted`, or -1 (a binary search). */
export function sortedIndexOf(sorted: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = sorted.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else if (sorted[mid] > value) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/**
 * Gives typed arrays' memory back at once, rather than when V8 next collects: their buffers are
 * detached (every view of them reads empty from then on). The passes' arrays are megabytes on a
 * big site, and those of a finished pass waiting for a collection raised the next pass's peak.
 */
export function release(...arrays: (ArrayBufferView | null | undefined)[]): void {
  for (const a of arrays) {
    const b = a?.buffer;
    if (b instanceof ArrayBuffer && !b.detached) b.transfer(0);
  }
}

/** Hashes per chunk while a `HashKeys` is filled (512 KB each). */
const KEY_CHUNK = 65_536;

/**
 * A set of URL hashes, filled in any order (repeats allowed), then sorted once: a hash's rank in
 * it is a binary search away. Filled in fixed chunks, not a doubled array, so filling leaves no
 * growth copies behind (a doubled array left up to twice the set's size of garbage, which V8
 * collects late); sealing copies the chunks into one array of the exact size. 8 bytes per hash.
 * The site-wide passes' URL table (finalize/url_table.ts) and link score (link_score.ts) share
 * one.
 *
 * @example
 * ```ts
 * const k = new HashKeys();
 * k.add(30); k.add(10); k.add(30);
 * k.indexOf(30); // 1 (sealed on first use: 10, 30)
 * k.size; // 2
 * ```
 */
export class HashKeys {
  #chunks: Float64Array[] = [];
  #n = 0;
  #sorted: Float64Array | null = null;
  #released = false;

  /** Adds a hash; every hash comes before the first lookup. */
  add(hash: number): void {
    if (this.#sorted) throw new Error("HashKeys: every hash comes before the first lookup");
    this.#live();
    const at = this.#n % KEY_CHUNK;
    if (at === 0) this.#chunks.push(new Float64Array(KEY_CHUNK));
    this.#chunks[this.#chunks.length - 1][at] = hash;
    this.#n++;
  }

  /**
   * A lookup after `release` would find nothing (its buffers are detached) and answer as if no
   * hash were there: a pass moved before its readers would report wrong findings, not fail.
   */
  #live(): void {
    if (this.#released) throw new Error("HashKeys: used after release");
  }

  /** Sorts once (repeats dropped); answers the sorted hashes. */
  seal(): Float64Array {
    this.#live();
    if (this.#sorted) return this.#sorted;
    const all = new Float64Array(this.#n);
    for (let c = 0; c < this.#chunks.length; c++) {
      const part = this.#chunks[c];
      all.set(
        c === this.#chunks.length - 1 ? part.subarray(0, all.length - c * KEY_CHUNK) : part,
        c * KEY_CHUNK,
      );
    }
    release(...this.#chunks);
    this.#chunks = [];
    const n = sortUnique(all);
    // Repeats are rare (a step recorded twice): only then is the used part copied.
    this.#sorted = n === all.length ? all : all.slice(0, n);
    if (this.#sorted !== all) release(all);
    this.#n = n;
    return this.#sorted;
  }

  /** Frees the hashes; no lookup may follow. */
  release(): void {
    release(this.#sorted, ...this.#chunks);
    this.#chunks = [];
    this.#released = true;
  }

  /** Whether it is sealed (no hash may be added). */
  get sealed(): boolean {
    return this.#sorted !== null;
  }

  /** Hashes added (distinct once sealed). */
  get size(): number {
    return this.#n;
  }

  /** The rank of a hash among the distinct hashes, or -1; seals. */
  indexOf(hash: number): number {
    return sortedIndexOf(this.seal(), hash);
  }

  /** The hash of a rank (sealed). */
  at(i: number): number {
    return this.seal()[i];
  }
}
