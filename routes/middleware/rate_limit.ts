import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/platform/mod.ts";
import type { RateDecision } from "../../kv/rate_limiter.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";
import { recordRateLimited } from "../../telemetry/mod.ts";

/** The `X-RateLimit-*` headers of a decision. */
export function setHeaders(c: Context<AppEnv>, d: RateDecision): void {
  c.header("X-RateLimit-Limit", String(d.limit));
  c.header("X-RateLimit-Remaining", String(d.remaining));
  c.header("X-RateLimit-Reset", String(d.reset));
}

/** The 429 of a refused decision. */
export function rateLimited(d: RateDecision): ApiError {
  recordRateLimited();
  return new ApiError(
    "rate_limited",
    `Rate limit of ${d.limit} requests exceeded; retry in ${d.retryAfter} s`,
    undefined,
    { "Retry-After": String(d.retryAfter) },
  );
}

/**
 * Hits `first`, then (only when it allows) `second`, so a refused request does not spend the
 * wider budget; the decision shown is the refusal, else the tighter of the two. Synchronous when
 * both limiters answer from memory (the hot path).
 */
function hitBoth(
  first: RateDecision | Promise<RateDecision>,
  second: () => RateDecision | Promise<RateDecision>,
): RateDecision | Promise<RateDecision> {
  if (first instanceof Promise) return first.then((d) => hitBoth(d, second));
  if (!first.allowed) return first;
  const d = second();
  if (d instanceof Promise) return d.then((s) => tighter(first, s));
  return tighter(first, d);
}

function tighter(a: RateDecision, b: RateDecision): RateDecision {
  if (!b.allowed) return b;
  return b.remaining < a.remaining ? b : a;
}

/**
 * Counts the request against its budgets and puts the `X-RateLimit-*` headers on every `/v1`
 * response, errors included: per API key and per account (all its keys together, so five keys
 * or revoke-and-mint gain nothing) when a key resolved, otherwise per client IP. Signups spend
 * their own strict budgets on top, inside the signup use case (`publicSignup`, run by the signup
 * operation for both adapters); its decision then replaces these headers.
 */
export function rateLimit(services: Services): MiddlewareHandler<AppEnv> {
  const { limits } = services;
  const config = services.deps.config;
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    let hit: RateDecision | Promise<RateDecision>;
    if (principal) {
      hit = hitBoth(
        limits.key.hit(principal.key.id),
        () => limits.account.hit(principal.account.id),
      );
    } else {
      hit = limits.ip.hit(clientIp(c, config));
    }
    const decision = hit instanceof Promise ? await hit : hit;
    setHeaders(c, decision);
    if (!decision.allowed) throw rateLimited(decision);
    await next();
    // Handlers that build their own Response bypass Hono's prepared headers.
    if (!c.res.headers.has("X-RateLimit-Limit")) setHeaders(c, decision);
  };
}
