/**
 * The sign-in page's state, carried in the page instead of the store: `GET /oauth/authorize`
 * writes nothing, so an anonymous caller cannot grow the store by opening sign-in pages. The
 * checked authorization request travels as a ticket in a hidden form field: AES-256-GCM over its
 * JSON, under a key derived (HKDF-SHA256) from the operator's `WEBHOOK_ENCRYPTION_KEY`, so a
 * ticket cannot be read, forged or altered without the service's secret. The store gets a record
 * only once an API key has signed in on the page (authorization.ts).
 *
 * Without `WEBHOOK_ENCRYPTION_KEY` the key is derived from a random secret kept in the store
 * (`oauth_ticket_secret`), made once per store on first use, not per request.
 *
 * @module
 */
import { atomic, type Deps, keys, read } from "../../platform/mod.ts";
import type { AuthTicket } from "./types.ts";

const encoder = new TextEncoder();
const INFO = "serpwright oauth authorization ticket v1";
/** The additional data of every ticket, so no other AES-GCM text of the service opens as one. */
const AAD = encoder.encode(INFO);

const derived = new WeakMap<Deno.Kv, Promise<CryptoKey>>();

async function deriveKey(secret: Uint8Array): Promise<CryptoKey> {
  const ikm = await crypto.subtle.importKey("raw", secret as BufferSource, "HKDF", false, [
    "deriveKey",
  ]);
  return await crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode(INFO) },
    ikm,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** The store's own ticket secret, made once (first writer wins). */
async function storeSecret(kv: Deno.Kv): Promise<Uint8Array> {
  const key = keys.oauthTicketSecret();
  for (let i = 0; i < 5; i++) {
    const entry = await read(kv, key, "strong");
    if (entry.value) return Uint8Array.from(atob(entry.value), (c) => c.charCodeAt(0));
    const fresh = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
    await atomic(kv).check(entry).set(key, fresh).commit();
  }
  throw new Error("oauth ticket secret: could not be read or created");
}

function ticketKey(deps: Deps): Promise<CryptoKey> {
  let key = derived.get(deps.kv);
  if (!key) {
    const operator = deps.config.webhookEncryptionKey;
    key = operator ? deriveKey(operator) : storeSecret(deps.kv).then(deriveKey);
    key.catch(() => derived.delete(deps.kv));
    derived.set(deps.kv, key);
  }
  return key;
}

function toBase64Url(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    return Uint8Array.from(
      atob(text.replaceAll("-", "+").replaceAll("_", "/")),
      (c) => c.charCodeAt(0),
    );
  } catch {
    return null;
  }
}

/**
 * The largest sealed ticket accepted: the request's fields are capped (client id, redirect URI
 * and state 2,000 characters each, the name 100), about 23 KB sealed if every character of the
 * state needs a JSON escape; a form body may hold 64 KB.
 */
export const MAX_TICKET_LENGTH = 32_768;

/** Seals a ticket: base64url of the 12-byte IV and the ciphertext. */
export async function sealTicket(deps: Deps, ticket: AuthTicket): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: AAD },
    await ticketKey(deps),
    encoder.encode(JSON.stringify(ticket)),
  );
  const out = new Uint8Array(12 + ct.byteLength);
  out.set(iv);
  out.set(new Uint8Array(ct), 12);
  return toBase64Url(out);
}

/** The ticket a sealed text holds, or null when it is not one this service sealed. */
export async function openTicket(deps: Deps, sealed: string): Promise<AuthTicket | null> {
  if (sealed.length > MAX_TICKET_LENGTH) return null;
  const bytes = fromBase64Url(sealed);
  if (!bytes || bytes.length < 12 + 16) return null;
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: bytes.subarray(0, 12) as BufferSource, additionalData: AAD },
      await ticketKey(deps),
      bytes.subarray(12) as BufferSource,
    );
    const ticket = JSON.parse(new TextDecoder().decode(plain)) as AuthTicket;
    return ticket?.v === 1 ? ticket : null;
  } catch {
    return null;
  }
}
