/**
 * The one digest of every bearer secret the service stores (API keys, OAuth tokens and codes,
 * share tokens): SHA-256 hex, synchronous because a bearer is hashed on every request. A leaf
 * module, so the credential modules that need it (auth, api_keys, oauth) import it without
 * importing each other.
 *
 * @example
 * ```ts
 * const stored = hashKey("sk_live_…"); // 64 hex characters
 * ```
 *
 * @module
 */
import { createHash } from "node:crypto";

/** SHA-256 hex of a raw secret: what is stored and looked up. */
export function hashKey(raw: string): string {
  return createHash("sha256").update(raw).digest("hex");
}
