import type { Context, MiddlewareHandler } from "hono";
import { randomPart } from "../../domain/ids.ts";
import type { AppEnv } from "../env.ts";

/** A random per-process prefix and a counter: unique ids without a CSPRNG call per request. */
const PROCESS_PREFIX = randomPart(8);
let counter = 0;

/**
 * Gives every request an id (echoing a sane `X-Request-Id` from the caller), exposes it in the
 * response header and in logs.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async function requestIdMiddleware(c, next) {
    const given = c.req.header("x-request-id");
    const id = given && given.length <= 100 && /^[A-Za-z0-9._-]+$/.test(given)
      ? given
      : `req_${PROCESS_PREFIX}${(counter++).toString(36)}`;
    c.set("requestId", id);
    c.set("principal", null);
    c.set("authError", null);
    c.header("X-Request-Id", id);
    await next();
    // Responses built outright (idempotent replays) bypass Hono's prepared headers.
    if (!c.res.headers.has("X-Request-Id")) c.header("X-Request-Id", id);
  };
}

/**
 * The client's IP, for signup limits, unauthenticated rate limits and signup idempotency scope:
 * the first `X-Forwarded-For` entry behind a trusted proxy (`TRUST_PROXY=1`), else the socket's
 * remote address. Computed only where needed, as the socket lookup is not free.
 */
export function clientIp(c: Context<AppEnv>, trustProxy: boolean): string {
  if (trustProxy) {
    const first = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
    if (first && first.length <= 64 && /^[0-9A-Fa-f:.]+$/.test(first)) return first;
  }
  const addr = (c.env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr;
  return addr?.hostname ?? "unknown";
}
