/**
 * The public, CAPTCHA-free signup as one use case: the only way an adapter (`POST /v1/accounts`,
 * the MCP `signup` tool) opens an account, so the two cannot apply different abuse limits. Every
 * limit, in this order:
 *
 * 1. the client IP's hourly signups (`SIGNUP_RATE_PER_IP_PER_HOUR`);
 * 2. everyone's hourly signups (`SIGNUP_RATE_GLOBAL_PER_HOUR`), spent only when 1 allowed;
 * 3. a disposable address, when `SIGNUP_DISPOSABLE_EMAILS=refuse`;
 * 4. an email already registered (409 `account_exists`);
 * 5. the client's address block's sandbox accounts today (`SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY`),
 *    checked and counted in the account's own commit.
 *
 * An adapter replays an idempotent retry (same key, body and client IP) before calling it: a
 * replay opens nothing, so it spends nothing.
 *
 * @module
 */
import type { RateDecision } from "../../kv/rate_limiter.ts";
import { signup } from "./accounts.ts";
import { ApiError, type Deps } from "../platform/mod.ts";
import type { AccountRecord, ApiKeyRecord } from "./types.ts";
import { addressBlock } from "./signup_limits.ts";

/** A rate budget (kv/rate_limiter.ts's `RateLimiter`): synchronous when it answers from memory. */
export interface RateBudget {
  hit(bucket: string): RateDecision | Promise<RateDecision>;
}

/** The two hourly signup budgets: per client IP, and everyone together. */
export interface SignupRates {
  perIp: RateBudget;
  global: RateBudget;
}

export interface PublicSignupRequest {
  /** The client IP as the adapter's HTTP layer computes it (`TRUST_PROXY`, `CLIENT_IP_HEADER`). */
  ip: string;
  email: string;
  companyName: string | null;
  origin: "agent" | "human";
}

/**
 * Opens a sandbox account for a client of the public signup, applying every limit above in order.
 * `onRate` gets the rate decision shown to the client (the refusal, else the tighter budget) before
 * anything is refused or created, for `X-RateLimit-*` headers.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, rates: Parameters<typeof publicSignup>[1];
 * const { account, raw } = await publicSignup(deps, rates, {
 *   ip: "203.0.113.7", email: "a@b.co", companyName: null, origin: "agent",
 * });
 * ```
 */
export async function publicSignup(
  deps: Deps,
  rates: SignupRates,
  request: PublicSignupRequest,
  onRate?: (decision: RateDecision) => void,
): Promise<{ account: AccountRecord; key: ApiKeyRecord; raw: string }> {
  const perIp = await rates.perIp.hit(request.ip);
  if (!perIp.allowed) {
    onRate?.(perIp);
    throw signupsRefused(perIp, "from this address");
  }
  const global = await rates.global.hit("all");
  const shown = !global.allowed || global.remaining < perIp.remaining ? global : perIp;
  onRate?.(shown);
  if (!global.allowed) throw signupsRefused(global, "on this server");
  return await signup(deps, {
    email: request.email,
    companyName: request.companyName,
    origin: request.origin,
    addressBlock: addressBlock(request.ip),
  });
}

/** 429 when an hourly signup budget is spent. */
function signupsRefused(d: RateDecision, where: string): ApiError {
  return new ApiError(
    "rate_limited",
    `Rate limit of ${d.limit} signups per hour ${where} exceeded; retry in ${d.retryAfter} s`,
    undefined,
    { "Retry-After": String(d.retryAfter) },
  );
}
