import type { MiddlewareHandler } from "hono";
import { randomPart } from "../../domain/ids.ts";
import type { AppEnv } from "../env.ts";

/**
 * Gives every request an id (echoing a sane `X-Request-Id` from the caller), exposes it in the
 * response header and in logs, and records the client IP used for signup limits and scoping.
 */
export function requestId(options: { trustProxy?: boolean } = {}): MiddlewareHandler<AppEnv> {
  const trustProxy = options.trustProxy ?? false;
  return async function requestIdMiddleware(c, next) {
    const given = c.req.header("x-request-id");
    const id = given && /^[A-Za-z0-9._-]{1,100}$/.test(given) ? given : `req_${randomPart(20)}`;
    c.set("requestId", id);
    c.set("clientIp", clientIp(c.req.raw, c.env, trustProxy));
    c.set("principal", null);
    c.set("authError", null);
    c.header("X-Request-Id", id);
    await next();
  };
}

function clientIp(req: Request, env: unknown, trustProxy: boolean): string {
  if (trustProxy) {
    const first = req.headers.get("x-forwarded-for")?.split(",")[0]?.trim();
    if (first && first.length <= 64 && /^[0-9A-Fa-f:.]+$/.test(first)) return first;
  }
  const addr = (env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr;
  return addr?.hostname ?? "unknown";
}
