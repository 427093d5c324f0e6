import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import type { RateDecision } from "../../kv/rate_limiter.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "./request_id.ts";

function setHeaders(c: Context<AppEnv>, d: RateDecision): void {
  c.header("X-RateLimit-Limit", String(d.limit));
  c.header("X-RateLimit-Remaining", String(d.remaining));
  c.header("X-RateLimit-Reset", String(d.reset));
}

/** The 429 of a refused decision. */
export function rateLimited(d: RateDecision): ApiError {
  return new ApiError(
    "rate_limited",
    429,
    `Rate limit of ${d.limit} requests exceeded; retry in ${d.retryAfter} s`,
    undefined,
    { "Retry-After": String(d.retryAfter) },
  );
}

/**
 * Hits the budgets in order, stopping at the first refusal (so a refused request does not spend
 * the wider budgets), and returns the decision the headers show: the refusal, else the tightest.
 */
function hitAll(
  hits: (() => RateDecision | Promise<RateDecision>)[],
): RateDecision | Promise<RateDecision> {
  let shown: RateDecision | null = null;
  for (let i = 0; i < hits.length; i++) {
    const d = hits[i]();
    if (d instanceof Promise) {
      return d.then(async (first) => {
        let s = shown === null || first.remaining < shown.remaining ? first : shown;
        if (!first.allowed) return first;
        for (let j = i + 1; j < hits.length; j++) {
          const next = await hits[j]();
          if (!next.allowed) return next;
          if (next.remaining < s.remaining) s = next;
        }
        return s;
      });
    }
    if (!d.allowed) return d;
    if (shown === null || d.remaining < shown.remaining) shown = d;
  }
  return shown!;
}

/**
 * Counts the request against its budgets and puts the `X-RateLimit-*` headers on every `/v1`
 * response, errors included: per API key and per account (all its keys together, so five keys
 * or revoke-and-mint gain nothing) when a key resolved, otherwise per client IP. Signups have their
 * own strict budgets (`signup` option): per client IP, then all signups together.
 */
export function rateLimit(
  services: Services,
  options: { signup?: boolean } = {},
): MiddlewareHandler<AppEnv> {
  const { limits } = services;
  const config = services.deps.config;
  return async function rateLimitMiddleware(c, next) {
    const principal = c.get("principal");
    let hit: RateDecision | Promise<RateDecision>;
    if (options.signup) {
      const ip = clientIp(c, config);
      hit = hitAll([() => limits.signup.hit(ip), () => limits.signupGlobal.hit("all")]);
    } else if (principal) {
      hit = hitAll([
        () => limits.key.hit(principal.key.id),
        () => limits.account.hit(principal.account.id),
      ]);
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
