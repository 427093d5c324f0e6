import type { Principal } from "../domain/auth.ts";
import type { KeyResolver, KeyUsageTracker } from "../domain/auth.ts";
import type { Deps } from "../domain/deps.ts";
import type { RateLimiter } from "../kv/rate_limiter.ts";

/** Long-lived objects the routes share, built once per app. */
export interface Services {
  deps: Deps;
  resolver: KeyResolver;
  keyUsage: KeyUsageTracker;
  limits: {
    /** 600 per minute per API key. */
    key: RateLimiter;
    /** Unauthenticated `/v1` traffic, per client IP. */
    ip: RateLimiter;
    /** 5 signups per hour per client IP. */
    signup: RateLimiter;
  };
}

/** Hono's context variables. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by `identify` when the bearer key resolved; `requireKey` makes it mandatory. */
    principal: Principal | null;
    /** Why the bearer key did not resolve, thrown by `requireKey`. */
    authError: Error | null;
  };
}
