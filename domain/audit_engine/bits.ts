/**
 * Bit counting on 32-bit words, for the compact structures of the audit (link_score.ts's page
 * bitmap, text_fingerprint.ts's signature sketches): JavaScript has no popcount of its own.
 *
 * @example
 * ```ts
 * popcount(0b1011); // 3
 * popcount(-1); // 32
 * ```
 *
 * @module
 */

/** Set bits of a 32-bit word (a negative number counts as its two's complement). */
export function popcount(x: number): number {
  x >>>= 0;
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
