/**
 * The opaque secrets of the authorization server and how they are stored: random base62 from the
 * CSPRNG behind a prefix that says what each is, kept in KV only as SHA-256 hex (the same digest
 * as API keys, synchronous because a token is hashed on every `/mcp` request).
 *
 * Opaque rather than JWT: the one resource server is this same service, which reads KV anyway,
 * so a self-contained token would buy no round trip while making revocation (RFC 7009, a revoked
 * key, a reused refresh token) wait for the token's expiry or need a deny list.
 *
 * @module
 */

/** What a secret is, by its prefix (access tokens are refused on `/v1` by the prefix). */
export const PREFIX = {
  access: "mcp_at_",
  refresh: "mcp_rt_",
  code: "mcp_ac_",
  request: "oar_",
  client: "mcp_client_",
  grant: "app_",
} as const;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` uniformly random base62 characters (rejection sampling; 40 ≈ 238 bits). */
export function randomBase62(length = 40): string {
  let out = "";
  while (out.length < length) {
    for (const b of crypto.getRandomValues(new Uint8Array(length + 8))) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

/** A new secret of a kind. */
export function newSecret(kind: keyof typeof PREFIX, length = 40): string {
  return PREFIX[kind] + randomBase62(length);
}

/** SHA-256 hex: what is stored and looked up (the one digest of domain/identity/key_hash.ts). */
export { hashKey as digest } from "../key_hash.ts";

/** True when a bearer is one of our OAuth access tokens (not an API key). */
export function isAccessToken(bearer: string): boolean {
  return bearer.startsWith(PREFIX.access);
}

/** Lifetimes. Short access tokens bound what a leaked one can do; refresh tokens rotate. */
export const LIFETIME = {
  /** An access token: one hour. */
  accessMs: 3_600_000,
  /** A refresh token: 30 days from its issue; every refresh issues a new one. */
  refreshMs: 30 * 86_400_000,
  /** An authorization code: one minute, one use. */
  codeMs: 60_000,
  /** The consent page's request: fifteen minutes to sign in and approve. */
  requestMs: 15 * 60_000,
  /** A dynamic registration no approval used: a day. */
  unusedClientMs: 86_400_000,
  /** A client (registration, or a metadata document's approval mark) after its last grant. */
  clientAfterGrantsMs: 86_400_000,
  /** How long a revoked or expired grant stays listed. */
  endedGrantMs: 30 * 86_400_000,
} as const;

/** KV `expireIn` for a record whose own expiry is `expiresAt`: a margin past it, never < 1 min. */
export function expireInFor(expiresAt: number, now: number, marginMs = 3_600_000): number {
  return Math.max(60_000, expiresAt - now + marginMs);
}
