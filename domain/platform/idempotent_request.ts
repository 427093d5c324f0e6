/**
 * The one implementation of idempotent requests, shared by the `Idempotency-Key` header of `/v1`
 * and the `idempotency_key` argument of the MCP tools: the first request with a key claims it,
 * runs, and stores its 2xx answer (sealed) for 24 hours; a later request gets that answer back
 * verbatim only when it is the same request (same endpoint, same body fingerprint, same API key),
 * as Stripe does. Anything else is 409 `idempotency_conflict` saying why, so a key another client
 * picked can never hand over someone else's answer. A concurrent twin waits for the first to
 * finish and replays it, or answers 409 after 10 s.
 *
 * Scope: the account and the calling key's mode (`acct:<id>:<mode>`), or the client IP on
 * unauthenticated signup (`ip:<addr>`). Error answers are not stored: every error leaves state
 * unchanged, a retry after `internal_error` is safe, and a caller that fixes the cause may retry
 * with the same key.
 *
 * @example
 * ```ts
 * import type { Deps } from "./deps.ts";
 * declare const deps: Deps, request: Parameters<typeof runIdempotent>[1], view: object;
 * const answer = await runIdempotent(deps, request, async () => ({
 *   status: 201, headers: [["content-type", "application/json"]], body: JSON.stringify(view),
 * }));
 * if (answer.replayed) console.log("stored answer", answer.body);
 * ```
 *
 * @module
 */
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type ConflictReason,
  releaseIdempotencyKey,
} from "../../kv/idempotency_store.ts";
import type { Deps } from "./deps.ts";
import { ApiError } from "./errors.ts";
import {
  bodyFingerprint,
  canonicalJson,
  openText,
  replayKey,
  sealText,
  sha256Hex,
} from "./replay_seal.ts";

export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;
/** How long a request waits for a concurrent twin with the same key before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000;
const POLL_MS = 25;

const CONFLICT_TEXT: Record<ConflictReason, string> = {
  endpoint: "This idempotency key was already used on a different endpoint; " +
    "use a new key for a new request",
  body: "This idempotency key was already used with a different request body; " +
    "use a new key for a new request",
  api_key: "This idempotency key was already used by another API key of this account; " +
    "its answer is replayed only to the key that sent it",
};

/** One request as the idempotency rules see it. */
export interface IdempotentRequest {
  /** The raw idempotency key (checked here: 1 to 200 characters). */
  key: string;
  /** Where the key lives: `acct:<account>:<mode>` or `ip:<client address>`. */
  scope: string;
  /** Method and concrete path of the `/v1` endpoint (`POST /v1/projects`). */
  endpoint: string;
  /** The parsed request body (`{}` for none); its canonical JSON is fingerprinted. */
  body: unknown;
  /** The calling API key's id; null on signup. */
  keyId: string | null;
  /** The raw bearer key ("" on signup): part of the sealing key, held by no store. */
  callerSecret: string;
  /** Optional extra secret mixed into the sealing key (the operator's encryption key). */
  pepper: Uint8Array | null;
}

/** An answer as stored and replayed. */
export interface Answer {
  status: number;
  headers: [string, string][];
  body: string;
}

/** Names the field in the message when a key is out of bounds. */
export function checkIdempotencyKey(key: string, field: string): void {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError(
      "invalid_request",
      `${field}: must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`,
    );
  }
}

/** Scope of a caller: the account and key mode, or the client address when anonymous. */
export function idempotencyScope(
  principal: { account: { id: string }; key: { mode: string } } | null,
  clientIp: string,
): string {
  return principal ? `acct:${principal.account.id}:${principal.key.mode}` : `ip:${clientIp}`;
}

/**
 * Runs `run` at most once per key and scope and returns its answer, or the stored answer of the
 * same earlier request (`replayed: true`). Throws 409 `idempotency_conflict` for a different
 * request with the key, or while a twin is still running after 10 s.
 */
export async function runIdempotent(
  deps: Pick<Deps, "kv" | "clock">,
  request: IdempotentRequest,
  run: () => Promise<Answer>,
): Promise<Answer & { replayed: boolean }> {
  const { kv, clock } = deps;
  const { key, scope } = request;
  const identity = {
    endpoint: request.endpoint,
    fingerprint: await bodyFingerprint(key, request.callerSecret, request.body),
    keyId: request.keyId,
  };
  // The body's plain SHA-256: never stored now (records from before keyed fingerprints hold it,
  // and are still matched by it); it stays part of the sealing key's context, as before.
  const legacyFingerprint = await sha256Hex(canonicalJson(request.body));
  const keyDigest = await sha256Hex(key);
  const sealKey = await replayKey({
    idempotencyKey: key,
    callerSecret: request.callerSecret,
    context: `${scope}\u0000${identity.endpoint}\u0000${legacyFingerprint}`,
    pepper: request.pepper,
  });

  const deadline = Date.now() + WAIT_FOR_TWIN_MS;
  while (true) {
    const claim = await claimIdempotencyKey(kv, {
      ...identity,
      legacyFingerprint,
      scope,
      keyDigest,
      now: clock.now(),
    });
    if (claim.kind === "conflict") {
      throw new ApiError("idempotency_conflict", CONFLICT_TEXT[claim.reason]);
    }
    if (claim.kind === "replay") {
      const body = await openText(sealKey, claim.response);
      // Same key hash, endpoint, body and API key id, yet it does not open: not this caller's.
      if (body === null) throw new ApiError("idempotency_conflict", CONFLICT_TEXT.api_key);
      return {
        status: claim.response.status,
        headers: claim.response.headers,
        body,
        replayed: true,
      };
    }
    if (claim.kind === "in_progress") {
      if (Date.now() > deadline) {
        throw new ApiError(
          "idempotency_conflict",
          "A request with this idempotency key is still in progress; retry shortly",
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      continue;
    }

    const release = () =>
      releaseIdempotencyKey(kv, { scope, keyDigest, versionstamp: claim.versionstamp });
    let answer: Answer;
    try {
      answer = await run();
    } catch (err) {
      await release();
      throw err;
    }
    if (answer.status >= 200 && answer.status < 300) {
      const sealed = await sealText(sealKey, answer.body);
      await completeIdempotencyKey(kv, {
        ...identity,
        scope,
        keyDigest,
        versionstamp: claim.versionstamp,
        now: clock.now(),
        response: { status: answer.status, headers: answer.headers, ...sealed },
      });
    } else {
      await release();
    }
    return { ...answer, replayed: false };
  }
}
