/**
 * `idempotency_key` on creating tools: the one implementation of idempotent requests
 * (`domain/idempotent_request.ts`) under the `/v1` endpoint name and body of each tool's REST twin
 * (`POST /v1/projects`, …), so a key used over REST and retried over MCP (or the other way round)
 * replays the same answer, and the same key on another operation or body is 409
 * `idempotency_conflict`.
 */
import {
  checkIdempotencyKey,
  idempotencyScope,
  runIdempotent,
} from "../../domain/idempotent_request.ts";
import type { Services } from "../env.ts";
import type { McpCaller } from "./caller.ts";

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
 * Runs `run` at most once per idempotency key and scope; without a key it just runs. `body` is
 * what the REST twin would have received (`{}` when it takes none), so fingerprints agree.
 */
export async function idempotent<T>(
  services: Services,
  caller: McpCaller,
  request: { key: string | undefined; endpoint: string; body?: unknown },
  run: () => Promise<ApiAnswer<T>>,
): Promise<IdempotentAnswer<T>> {
  const { key, endpoint } = request;
  if (key === undefined) return { ...await run(), replayed: false };
  checkIdempotencyKey(key, "idempotency_key");
  const p = caller.principal;
  const answer = await runIdempotent(services.deps, {
    key,
    scope: idempotencyScope(p, caller.ip),
    endpoint,
    body: request.body ?? {},
    keyId: p?.key.id ?? null,
    callerSecret: p ? caller.bearer ?? "" : "",
    pepper: services.deps.config.webhookEncryptionKey,
  }, async () => {
    const a = await run();
    return {
      status: a.status,
      headers: [["content-type", "application/json"]],
      body: JSON.stringify(a.body),
    };
  });
  return { status: answer.status, body: JSON.parse(answer.body) as T, replayed: answer.replayed };
}
