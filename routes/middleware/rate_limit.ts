import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import type { RateDecision, RateLimiter } from "../../kv/rate_limiter.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";

function setHeaders(c: Context<AppEnv>, d: RateDecision): void {
  c.header("X-RateLimit-Limit", String(d.limit));
  c.header("X-RateLimit-Remaining", String(d.remaining));
  c.header("X-RateLimit-Reset", String(d.reset));
}

/**
 * Counts the request against its budget and puts the `X-RateLimit-*` headers on every `/v1`
 * response, errors included: per API key when one resolved, otherwise per client IP. Signups
 * use their own strict per-IP limiter (`limiter` option).
 */
export function rateLimit(
  services: Services,
  options: { limiter?: RateLimiter } = {},
): MiddlewareHandler<AppEnv> {
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    const hit = options.limiter
      ? options.limiter.hit(clientIp(c, services.deps.config.trustProxy))
      : principal
      ? services.limits.key.hit(principal.key.id)
      : services.limits.ip.hit(clientIp(c, services.deps.config.trustProxy));
    const decision = hit instanceof Promise ? await hit : hit;
    setHeaders(c, decision);
    if (!decision.allowed) {
      throw new ApiError(
        "rate_limited",
        429,
        `Rate limit of ${decision.limit} requests exceeded; retry in ${decision.retryAfter} s`,
        undefined,
        { "Retry-After": String(decision.retryAfter) },
      );
    }
    await next();
    // Handlers that build their own Response bypass Hono's prepared headers.
    if (!c.res.headers.has("X-RateLimit-Limit")) setHeaders(c, decision);
  };
}
