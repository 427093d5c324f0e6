import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import {
  canonicalJson,
  openText,
  replayKey,
  sealText,
  sha256Hex,
} from "../../domain/replay_seal.ts";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  type ConflictReason,
  releaseIdempotencyKey,
} from "../../kv/idempotency_store.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";

const MAX_KEY_LENGTH = 200;
/** How long a request waits for a concurrent twin with the same key before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000;
const POLL_MS = 25;
/** Headers that describe the response itself and are replayed verbatim. */
const REPLAYED_HEADERS = ["content-type", "location", "cache-control"];

const CONFLICT_TEXT: Record<ConflictReason, string> = {
  endpoint: "This Idempotency-Key was already used on a different endpoint; " +
    "use a new key for a new request",
  body: "This Idempotency-Key was already used with a different request body; " +
    "use a new key for a new request",
  api_key: "This Idempotency-Key was already used by another API key of this account; " +
    "its answer is replayed only to the key that sent it",
};

/**
 * `Idempotency-Key` on POSTs: the first request with a key claims it, runs, and stores its 2xx
 * response for 24 hours; a later request with the key gets that response verbatim with
 * `Idempotent-Replayed: true`, but only when it is the same request: same endpoint, same body
 * (canonical JSON fingerprint) and same API key, as Stripe does. Anything else is 409
 * `idempotency_conflict` saying why, so a key another client picked (two agents behind one NAT
 * choosing `signup-1`) can never hand over someone else's answer.
 *
 * Scope: the account and the calling key's mode (a sandbox key never shares a record with a live
 * key), or the client IP on unauthenticated signup. Stored bodies are sealed (`replay_seal.ts`).
 * Error responses are not stored: every error leaves state unchanged, a retry after
 * `internal_error` is safe, and an agent that fixes the cause may retry with the same key.
 */
export function idempotency(services: Services): MiddlewareHandler<AppEnv> {
  const { kv, clock, config } = services.deps;
  return async function idempotencyMiddleware(c, next) {
    const key = c.req.header("idempotency-key");
    if (key === undefined || c.req.method !== "POST") return await next();
    if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
      throw new ApiError(
        "invalid_request",
        400,
        `Idempotency-Key: must be 1 to ${MAX_KEY_LENGTH} characters`,
      );
    }
    const principal = c.get("principal");
    const scope = principal
      ? `acct:${principal.account.id}:${principal.key.mode}`
      : `ip:${clientIp(c, config)}`;
    const identity = {
      endpoint: `${c.req.method} ${c.req.path}`,
      fingerprint: await sha256Hex(canonicalJson(await bodyOf(c))),
      keyId: principal?.key.id ?? null,
    };
    const keyDigest = await sha256Hex(key);
    const sealKey = await replayKey({
      idempotencyKey: key,
      callerSecret: principal ? bearerOf(c) : "",
      context: `${scope}\u0000${identity.endpoint}\u0000${identity.fingerprint}`,
      pepper: config.webhookEncryptionKey,
    });

    const deadline = Date.now() + WAIT_FOR_TWIN_MS;
    while (true) {
      const claim = await claimIdempotencyKey(kv, {
        ...identity,
        scope,
        keyDigest,
        now: clock.now(),
      });
      if (claim.kind === "conflict") {
        throw new ApiError("idempotency_conflict", 409, CONFLICT_TEXT[claim.reason]);
      }
      if (claim.kind === "replay") {
        const body = await openText(sealKey, claim.response);
        if (body === null) {
          // Same key hash, endpoint, body and API key id, yet it does not open: not this caller's.
          throw new ApiError("idempotency_conflict", 409, CONFLICT_TEXT.api_key);
        }
        const headers = new Headers(claim.response.headers);
        headers.set("Idempotent-Replayed", "true");
        c.res = new Response(body, { status: claim.response.status, headers });
        return;
      }
      if (claim.kind === "in_progress") {
        if (Date.now() > deadline) {
          throw new ApiError(
            "idempotency_conflict",
            409,
            "A request with this Idempotency-Key is still in progress; retry shortly",
          );
        }
        await new Promise((r) => setTimeout(r, POLL_MS));
        continue;
      }

      let ok = false;
      try {
        await next();
        ok = true;
      } finally {
        const res = c.res;
        if (ok && res.status >= 200 && res.status < 300) {
          const sealed = await sealText(sealKey, await res.clone().text());
          const headers: [string, string][] = [];
          for (const name of REPLAYED_HEADERS) {
            const v = res.headers.get(name);
            if (v !== null) headers.push([name, v]);
          }
          await completeIdempotencyKey(kv, {
            ...identity,
            scope,
            keyDigest,
            versionstamp: claim.versionstamp,
            now: clock.now(),
            response: { status: res.status, headers, ...sealed },
          });
        } else {
          await releaseIdempotencyKey(kv, { scope, keyDigest, versionstamp: claim.versionstamp });
        }
      }
      return;
    }
  };
}

/** The parsed body `jsonBody` cached (`{}` for an empty one). */
async function bodyOf(c: Context<AppEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch {
    return null;
  }
}

function bearerOf(c: Context<AppEnv>): string {
  return /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
}
