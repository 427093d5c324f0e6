/**
 * `idempotency_key` on creating tools: the same store, scope, endpoint names and replay rules as
 * the `Idempotency-Key` header of `/v1` (routes/middleware/idempotency.ts). A tool stores exactly
 * the body its `/v1` twin answers, under the `/v1` endpoint name (`POST /v1/projects`, …), so a key
 * used over REST and retried over MCP (or the other way round) replays the same answer, and the
 * same key on another operation is 409 `idempotency_conflict`.
 *
 * The waiting loop mirrors the middleware's (it answers a Hono context, this a value); when the
 * store's interface changes, both move together.
 */
import { ApiError } from "../../domain/errors.ts";
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  releaseIdempotencyKey,
} from "../../kv/idempotency_store.ts";
import type { Services } from "../env.ts";
import type { McpCaller } from "./caller.ts";

const MAX_KEY_LENGTH = 200;
/** As the middleware: how long a call waits for a concurrent twin before answering 409. */
const WAIT_FOR_TWIN_MS = 10_000;
const POLL_MS = 25;

/** A `/v1`-shaped answer: the status its REST twin would send and the JSON body. */
export interface ApiAnswer<T = unknown> {
  status: number;
  body: T;
}

export interface IdempotentAnswer<T> extends ApiAnswer<T> {
  /** True when the body is a stored answer (the `Idempotent-Replayed: true` of `/v1`). */
  replayed: boolean;
}

/**
 * Runs `run` at most once per idempotency key and scope; without a key it just runs. Only 2xx
 * answers are stored (every error leaves state unchanged, so running again is equivalent).
 */
export async function idempotent<T>(
  services: Services,
  caller: McpCaller,
  request: { key: string | undefined; endpoint: string },
  run: () => Promise<ApiAnswer<T>>,
): Promise<IdempotentAnswer<T>> {
  const { key, endpoint } = request;
  if (key === undefined) return { ...await run(), replayed: false };
  if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new ApiError(
      "invalid_request",
      400,
      `idempotency_key: must be 1 to ${MAX_KEY_LENGTH} characters`,
    );
  }
  const { kv, clock } = services.deps;
  const scope = caller.principal ? `acct:${caller.principal.account.id}` : `ip:${caller.ip}`;
  const deadline = Date.now() + WAIT_FOR_TWIN_MS;
  while (true) {
    const claim = await claimIdempotencyKey(kv, { scope, key, endpoint, now: clock.now() });
    if (claim.kind === "conflict") {
      throw new ApiError(
        "idempotency_conflict",
        409,
        "This idempotency key was already used on a different endpoint",
      );
    }
    if (claim.kind === "replay") {
      return {
        status: claim.response.status,
        body: JSON.parse(claim.response.body) as T,
        replayed: true,
      };
    }
    if (claim.kind === "in_progress") {
      if (Date.now() > deadline) {
        throw new ApiError(
          "idempotency_conflict",
          409,
          "A call with this idempotency key is still in progress; retry shortly",
        );
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
      continue;
    }

    let answer: ApiAnswer<T>;
    try {
      answer = await run();
    } catch (err) {
      await releaseIdempotencyKey(kv, { scope, key, versionstamp: claim.versionstamp });
      throw err;
    }
    if (answer.status >= 200 && answer.status < 300) {
      await completeIdempotencyKey(kv, {
        scope,
        key,
        endpoint,
        versionstamp: claim.versionstamp,
        now: clock.now(),
        response: {
          status: answer.status,
          headers: [["content-type", "application/json"]],
          body: JSON.stringify(answer.body),
        },
      });
    } else {
      await releaseIdempotencyKey(kv, { scope, key, versionstamp: claim.versionstamp });
    }
    return { ...answer, replayed: false };
  }
}
