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
