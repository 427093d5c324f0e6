/**
 * Persisted shapes of the storage layer's own families (idempotency records), so the key layout
 * (kv/keys.ts) types them without importing the code that reads them.
 *
 * @module
 */

/** A claimed Idempotency-Key: in progress under a lease, or done with the stored answer. */
export type IdempotencyRecord =
  & RequestIdentity
  & (
    | { state: "in_progress"; createdAt: number; leaseUntil: number }
    | { state: "done"; createdAt: number; response: StoredResponse }
  );

/** What a stored request must match for its answer to be replayed. */
export interface RequestIdentity {
  /** Method and concrete path. */
  endpoint: string;
  /**
   * Keyed digest of the canonical request body (domain/platform/replay_seal.ts `bodyFingerprint`; the plain
   * SHA-256 hex on records written before it).
   */
  fingerprint: string;
  /** The calling API key's id; null on signup, which has none. */
  keyId: string | null;
}

/**
 * A stored answer. The body is sealed by the caller (AES-GCM under a key the store never sees),
 * because replays can hold one-time secrets such as raw API keys.
 */
export interface StoredResponse {
  status: number;
  headers: [string, string][];
  /** base64 nonce and ciphertext of the body. */
  iv: string;
  ct: string;
}
