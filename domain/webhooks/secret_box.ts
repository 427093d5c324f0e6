/**
 * The webhook signing secret: minted once, stored only as AES-GCM ciphertext under the operator's
 * `WEBHOOK_ENCRYPTION_KEY`, opened just before a delivery is signed.
 *
 * @module
 */
import { ApiError } from "../platform/mod.ts";
import type { SealedSecret } from "./types.ts";

const encoder = new TextEncoder();
const aesKeys = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function aesKey(raw: Uint8Array): Promise<CryptoKey> {
  let key = aesKeys.get(raw);
  if (!key) {
    key = crypto.subtle.importKey("raw", raw as BufferSource, "AES-GCM", false, [
      "encrypt",
      "decrypt",
    ]);
    aesKeys.set(raw, key);
  }
  return key;
}

/** 32 random bytes as 64 lowercase hex characters. */
export function newSigningSecret(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Encrypts the secret. `binding` (account and endpoint id) is authenticated data, so a ciphertext
 * copied onto another endpoint's record does not open.
 */
export async function sealSecret(
  key: Uint8Array,
  secret: string,
  binding: string,
): Promise<SealedSecret> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(binding) },
    await aesKey(key),
    encoder.encode(secret),
  );
  return { v: 1, iv: toBase64(iv), ct: toBase64(new Uint8Array(ct)) };
}

/** Decrypts the secret; throws when the key is wrong or the record was tampered with. */
export async function openSecret(
  key: Uint8Array,
  sealed: SealedSecret,
  binding: string,
): Promise<string> {
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(sealed.iv), additionalData: encoder.encode(binding) },
    await aesKey(key),
    fromBase64(sealed.ct),
  );
  return new TextDecoder().decode(plain);
}

/** The encryption key, or the 500 the interface promises when the operator has not set one. */
export function requireEncryptionKey(key: Uint8Array | null): Uint8Array {
  if (!key) {
    throw new ApiError(
      "webhooks_not_configured",
      "Webhook endpoints are not available on this server: it has no WEBHOOK_ENCRYPTION_KEY to " +
        "encrypt signing secrets with",
    );
  }
  return key;
}

/**
 * Lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the secret's text (the 64 hex
 * characters as given to the caller, which is what a receiver passes to its HMAC function).
 */
export async function signHex(secret: string, body: Uint8Array): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  return toHex(new Uint8Array(await crypto.subtle.sign("HMAC", key, body as BufferSource)));
}

/** The list form of a secret: never more than its last four characters. */
export function maskSecret(secret: string | null): string {
  return secret ? `••••${secret.slice(-4)}` : "••••";
}

function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b.toString(16).padStart(2, "0");
  return out;
}

function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
}
