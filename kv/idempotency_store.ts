import { keys } from "./keys.ts";

/** Retention of idempotency records (the interface's 24 hours). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** How long a claim may stay in progress before another request may take it over (crashed process). */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export interface StoredResponse {
  status: number;
  headers: [string, string][];
  body: string;
}

type Record_ =
  | { state: "in_progress"; endpoint: string; createdAt: number; leaseUntil: number }
  | { state: "done"; endpoint: string; createdAt: number; response: StoredResponse };

export type ClaimResult =
  | { kind: "claimed"; versionstamp: string }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "conflict" }
  | { kind: "in_progress" };

/**
 * Claims an idempotency key for one request: a `versionstamp: null` check makes the claim
 * exclusive, so two concurrent requests with one key never both execute.
 */
export async function claimIdempotencyKey(
  kv: Deno.Kv,
  input: { scope: string; key: string; endpoint: string; now: number },
): Promise<ClaimResult> {
  const k = keys.idempotency(input.scope, input.key);
  for (let i = 0; i < 10; i++) {
    const entry = await kv.get<Record_>(k);
    const rec = entry.value;
    // `expireIn` is the earliest deletion, not a deadline: treat old records as gone ourselves.
    const live = rec !== null && input.now - rec.createdAt < IDEMPOTENCY_TTL_MS;
    if (live && rec.endpoint !== input.endpoint) return { kind: "conflict" };
    if (live && rec.state === "done") return { kind: "replay", response: rec.response };
    if (live && rec.state === "in_progress" && rec.leaseUntil > input.now) {
      return { kind: "in_progress" };
    }
    const claim: Record_ = {
      state: "in_progress",
      endpoint: input.endpoint,
      createdAt: input.now,
      leaseUntil: input.now + IDEMPOTENCY_LEASE_MS,
    };
    const res = await kv.atomic().check(entry).set(k, claim, { expireIn: IDEMPOTENCY_TTL_MS })
      .commit();
    if (res.ok) return { kind: "claimed", versionstamp: res.versionstamp };
  }
  return { kind: "in_progress" };
}

/** Stores the finished response for replay, if the claim is still ours. */
export async function completeIdempotencyKey(
  kv: Deno.Kv,
  input: {
    scope: string;
    key: string;
    endpoint: string;
    versionstamp: string;
    now: number;
    response: StoredResponse;
  },
): Promise<void> {
  const k = keys.idempotency(input.scope, input.key);
  const rec: Record_ = {
    state: "done",
    endpoint: input.endpoint,
    createdAt: input.now,
    response: input.response,
  };
  await kv.atomic().check({ key: k, versionstamp: input.versionstamp })
    .set(k, rec, { expireIn: IDEMPOTENCY_TTL_MS }).commit();
}

/** Drops a claim whose request failed with a 5xx, so a retry runs afresh. */
export async function releaseIdempotencyKey(
  kv: Deno.Kv,
  input: { scope: string; key: string; versionstamp: string },
): Promise<void> {
  const k = keys.idempotency(input.scope, input.key);
  await kv.atomic().check({ key: k, versionstamp: input.versionstamp }).delete(k).commit();
}
