import type { IdempotencyRecord, RequestIdentity, StoredResponse } from "./types.ts";
import { keys } from "./keys.ts";
import { atomic, read } from "./typed.ts";

/** Retention of idempotency records (the interface's 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a claim may stay in progress before another request may take it over (crashed process). */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export type { RequestIdentity, StoredResponse };

export type { IdempotencyRecord };

/** Why a key cannot serve this request. */
export type ConflictReason = "endpoint" | "body" | "api_key";

export type ClaimResult =
  | { kind: "claimed"; versionstamp: string }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "conflict"; reason: ConflictReason }
  | { kind: "in_progress" };

function mismatch(
  rec: RequestIdentity,
  req: RequestIdentity & { legacyFingerprint?: string },
): ConflictReason | null {
  if (rec.endpoint !== req.endpoint) return "endpoint";
  // Before the body: the fingerprint is keyed by the caller's API key, so another key's
  // fingerprint of the same body differs, and "another API key" is what the caller must hear.
  if (rec.keyId !== req.keyId) return "api_key";
  if (rec.fingerprint !== req.fingerprint && rec.fingerprint !== req.legacyFingerprint) {
    return "body";
  }
  return null;
}

/**
 * Claims an idempotency key for one request: a `versionstamp: null` check makes the claim
 * exclusive, so two concurrent requests with one key never both execute. A live record answers
 * only a request that matches it (endpoint, body fingerprint and API key), as Stripe does;
 * anything else is a conflict, never a replay of someone else's answer. `keyDigest` is a hash
 * of the Idempotency-Key, so the store does not hold the key the sealed body is opened with.
 */
export async function claimIdempotencyKey(
  kv: Deno.Kv,
  input: RequestIdentity & {
    scope: string;
    keyDigest: string;
    now: number;
    /** The body's plain SHA-256, matched against records stored before keyed fingerprints. */
    legacyFingerprint?: string;
  },
): Promise<ClaimResult> {
  const k = keys.idempotency(input.scope, input.keyDigest);
  for (let i = 0; i < 10; i++) {
    const entry = await read(kv, k);
    const rec = entry.value;
    // `expireIn` is the earliest deletion, not a deadline: treat old records as gone ourselves.
    const live = rec !== null && input.now - rec.createdAt < IDEMPOTENCY_TTL_MS;
    if (live) {
      const reason = mismatch(rec, input);
      if (reason) return { kind: "conflict", reason };
      if (rec.state === "done") return { kind: "replay", response: rec.response };
      if (rec.leaseUntil > input.now) return { kind: "in_progress" };
    }
    const claim: IdempotencyRecord = {
      state: "in_progress",
      endpoint: input.endpoint,
      fingerprint: input.fingerprint,
      keyId: input.keyId,
      createdAt: input.now,
      leaseUntil: input.now + IDEMPOTENCY_LEASE_MS,
    };
    const res = await atomic(kv).check(entry).set(k, claim, { expireIn: IDEMPOTENCY_TTL_MS })
      .commit();
    if (res.ok) return { kind: "claimed", versionstamp: res.versionstamp };
  }
  return { kind: "in_progress" };
}

/** Stores the finished (sealed) response for replay, if the claim is still ours. */
export async function completeIdempotencyKey(
  kv: Deno.Kv,
  input: RequestIdentity & {
    scope: string;
    keyDigest: string;
    versionstamp: string;
    now: number;
    response: StoredResponse;
  },
): Promise<void> {
  const k = keys.idempotency(input.scope, input.keyDigest);
  const rec: IdempotencyRecord = {
    state: "done",
    endpoint: input.endpoint,
    fingerprint: input.fingerprint,
    keyId: input.keyId,
    createdAt: input.now,
    response: input.response,
  };
  await atomic(kv).check({ key: k, versionstamp: input.versionstamp })
    .set(k, rec, { expireIn: IDEMPOTENCY_TTL_MS }).commit();
}

/** Drops a claim whose request failed, so a retry runs afresh. */
export async function releaseIdempotencyKey(
  kv: Deno.Kv,
  input: { scope: string; keyDigest: string; versionstamp: string },
): Promise<void> {
  const k = keys.idempotency(input.scope, input.keyDigest);
  await kv.atomic().check({ key: k, versionstamp: input.versionstamp }).delete(k).commit();
}
