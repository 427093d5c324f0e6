import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from "../../kv/idempotency_store.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";

const MAX_KEY_LENGTH = 200;
/** How long a request waits for a concurrent twin with the same key before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000;
const POLL_MS = 25;
/** Headers that describe the response itself and are replayed verbatim. */
const REPLAYED_HEADERS = ["content-type", "location"];

/**
 * `Idempotency-Key` on POSTs: the first request with a key claims it, runs, and stores its 2xx
 * response for 24 hours; later requests with the key get that response verbatim with
 * `Idempotent-Replayed: true`. A concurrent twin waits for the first to finish and replays it (or
 * answers 409 `idempotency_conflict` if the first is still running after 10 s). Error responses
 * are not stored: every error leaves state unchanged, so running the request again is equivalent,
 * a retry after `internal_error` is safe, and an agent that fixes the cause (buys credits, say)
 * can retry with the same key. Scope: the account, or the client IP on unauthenticated signup.
 */
export function idempotency(services: Services): MiddlewareHandler<AppEnv> {
  const { kv, clock } = services.deps;
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
      ? `acct:${principal.account.id}`
      : `ip:${clientIp(c, services.deps.config.trustProxy)}`;
    const endpoint = `${c.req.method} ${c.req.path}`;

    const deadline = Date.now() + WAIT_FOR_TWIN_MS;
    while (true) {
      const claim = await claimIdempotencyKey(kv, { scope, key, endpoint, now: clock.now() });
      if (claim.kind === "conflict") {
        throw new ApiError(
          "idempotency_conflict",
          409,
          "This Idempotency-Key was already used on a different endpoint",
        );
      }
      if (claim.kind === "replay") {
        const headers = new Headers(claim.response.headers);
        headers.set("Idempotent-Replayed", "true");
        c.res = new Response(claim.response.body, { status: claim.response.status, headers });
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
          const body = await res.clone().text();
          const headers: [string, string][] = [];
          for (const name of REPLAYED_HEADERS) {
            const v = res.headers.get(name);
            if (v !== null) headers.push([name, v]);
          }
          await completeIdempotencyKey(kv, {
            scope,
            key,
            endpoint,
            versionstamp: claim.versionstamp,
            now: clock.now(),
            response: { status: res.status, headers, body },
          });
        } else {
          await releaseIdempotencyKey(kv, { scope, key, versionstamp: claim.versionstamp });
        }
      }
      return;
    }
  };
}
