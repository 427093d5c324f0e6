const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/**
 * An opaque random id prefixed by kind, time-ordered so KV prefix lists come out chronologically.
 *
 * @example
 * ```ts
 * newId("proj"); // "proj_0m3x9k2a7c1f4z8q2w6e5r"
 * ```
 */
export function newId(prefix: string, nowMs = Date.now()): string {
  return `${prefix}_${timePart(nowMs)}${randomPart(14)}`;
}

/** Random lowercase alphanumerics from the CSPRNG. */
export function randomPart(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const b of bytes) out += ALPHABET[b % 36];
  return out;
}

function timePart(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).padStart(9, "0");
}
