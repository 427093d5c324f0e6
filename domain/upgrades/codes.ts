/**
 * User codes (RFC 8628 §6.1): short enough to type from a phone, from an alphabet without
 * look-alikes, shown as `XXXX-XXXX`. 8 characters of 30 give about 6.6 × 10^11 codes; a code
 * lives 30 minutes and wrong ones are rate-limited per address, so guessing one is hopeless.
 * Only a keyed digest is stored: HMAC-SHA256 under the operator's `WEBHOOK_ENCRYPTION_KEY` when
 * set (a copy of the store alone then cannot test guesses offline), SHA-256 otherwise.
 *
 * @module
 */

/**
 * Wrong codes a client may type before its next attempt is refused (429), per client IP and per
 * address block (IPv4 /24, IPv6 /48: one machine's neighbours), in a window.
 */
export const UPGRADE_CODE_FAILURES = { perIp: 10, perBlock: 30, windowMs: 15 * 60_000 } as const;

/** Uppercase letters and digits without 0/O, 1/I/L and U (RFC 8628 §6.1's advice). */
export const CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789";
const CODE_LENGTH = 8;

/** A fresh code from the CSPRNG, as shown: `XXXX-XXXX`. */
export function newUserCode(): string {
  let out = "";
  const n = CODE_ALPHABET.length;
  const limit = 256 - (256 % n);
  while (out.length < CODE_LENGTH) {
    for (const b of crypto.getRandomValues(new Uint8Array(16))) {
      if (b < limit && out.length < CODE_LENGTH) out += CODE_ALPHABET[b % n];
    }
  }
  return `${out.slice(0, 4)}-${out.slice(4)}`;
}

/**
 * The code as typed, normalized: case, spaces and dashes do not matter. Null when it cannot be
 * one of ours (wrong length, or a character the alphabet leaves out), so it costs no store read;
 * it still counts as a wrong code.
 */
export function normalizeUserCode(input: string): string | null {
  const compact = input.toUpperCase().replace(/[\s-]+/g, "");
  if (compact.length !== CODE_LENGTH) return null;
  for (const ch of compact) if (!CODE_ALPHABET.includes(ch)) return null;
  return `${compact.slice(0, 4)}-${compact.slice(4)}`;
}

const encoder = new TextEncoder();

/** The stored digest of a normalized code (hex). */
export async function codeDigest(code: string, pepper: Uint8Array | null): Promise<string> {
  const data = encoder.encode(`serpwright upgrade code v1\u0000${code}`);
  let bytes: ArrayBuffer;
  if (pepper) {
    const key = await crypto.subtle.importKey(
      "raw",
      pepper as BufferSource,
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    bytes = await crypto.subtle.sign("HMAC", key, data);
  } else {
    bytes = await crypto.subtle.digest("SHA-256", data);
  }
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** SHA-256 hex of a browser secret (the page session cookie), as stored on the upgrade. */
export async function browserDigest(secret: string): Promise<string> {
  const bytes = await crypto.subtle.digest(
    "SHA-256",
    encoder.encode(`serpwright upgrade page v1\u0000${secret}`),
  );
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}
