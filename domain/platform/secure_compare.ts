import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Compares two secrets in constant time. Both sides are hashed first so that inputs of different
 * lengths take the same path and their lengths leak nothing.
 *
 * @example
 * ```ts
 * declare const given: string, expected: string;
 * secureEqual(given, expected); // true only when identical
 * ```
 */
export function secureEqual(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
}
