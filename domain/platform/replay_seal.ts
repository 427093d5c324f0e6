/**
 * Sealing of stored idempotent answers. A replay may carry a one-time secret (the raw API key of
 * signup or `POST /v1/api-keys`, a webhook secret), and the idempotency store keeps answers for 24
 * hours, so bodies are stored as AES-GCM ciphertext under a key the store never holds: derived
 * (HKDF-SHA256) from the request's own Idempotency-Key and, on authenticated requests, the
 * caller's raw API key. The store keeps only a hash of the Idempotency-Key and of the API key, so
 * reading KV (a backup, the SQLite file) does not give the answers back; only a request that
 * presents the same Idempotency-Key (and the same API key) can open them. The operator's
 * `WEBHOOK_ENCRYPTION_KEY`, when set, is mixed in as the salt, so the KV file alone never suffices.
 *
 * Signup has no API key yet: its answers are as secret as its Idempotency-Key is unguessable
 * (the docs use random keys) plus the operator key, if set.
 *
 * @module
 */

const encoder = new TextEncoder();

export interface SealedText {
  iv: string;
  ct: string;
}

/** Hex SHA-256, for the store's key of an Idempotency-Key and for body fingerprints. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The fingerprint of a request body: JSON with object keys sorted, so whitespace and key order do
 * not make a retry look like another request, while any change of a value does.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/**
 * The fingerprint of a request body as stored: an HMAC-SHA256 of its canonical JSON keyed by the
 * request's own Idempotency-Key and the caller's raw API key, neither of which the store holds. A
 * body may carry a secret (an audit's staging password), and a plain hash of it would let whoever
 * reads the store test guesses against it offline. `v2:` tells it from the plain SHA-256 of records
 * written before (`legacyFingerprint`, still matched for their 24 hours).
 */
export async function bodyFingerprint(
  idempotencyKey: string,
  callerSecret: string,
  body: unknown,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(`serpwright body fingerprint v2\u0000${idempotencyKey}\u0000${callerSecret}`),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(canonicalJson(body)));
  return "v2:" + Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The AES-GCM key of one stored answer. `context` (scope, endpoint, fingerprint) is bound as HKDF
 * info, so a ciphertext moved to another record does not open.
 */
export async function replayKey(input: {
  idempotencyKey: string;
  /** The raw bearer key, or "" on signup. */
  callerSecret: string;
  context: string;
  pepper: Uint8Array | null;
}): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey(
    "raw",
    encoder.encode(`${input.idempotencyKey}\u0000${input.callerSecret}`),
    "HKDF",
    false,
    ["deriveKey"],
  );
  return await crypto.subtle.deriveKey(
    {
      name: "HKDF",
      hash: "SHA-256",
      salt: (input.pepper ?? new Uint8Array(0)) as BufferSource,
      info: encoder.encode(`serpwright idempotent replay v1\u0000${input.context}`),
    },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

export async function sealText(key: CryptoKey, text: string): Promise<SealedText> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, encoder.encode(text));
  return { iv: toBase64(iv), ct: toBase64(new Uint8Array(ct)) };
}

/** The plain text, or null when the key does not open it. */
export async function openText(key: CryptoKey, sealed: SealedText): Promise<string | null> {
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(sealed.iv) as BufferSource },
      key,
      fromBase64(sealed.ct) as BufferSource,
    );
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}
