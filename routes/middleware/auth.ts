import type { MiddlewareHandler } from "hono";
import { expiredSandboxPrincipal, isAccessToken } from "../../domain/identity/mod.ts";
import { ApiError, secureEqual } from "../../domain/platform/mod.ts";
import type { AppEnv, Services } from "../env.ts";
import { noRoute } from "./errors.ts";
import { rateLimited } from "./rate_limit.ts";
import { clientIp } from "./request_id.ts";

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

const TOKEN_ON_V1 = "OAuth access tokens are accepted only at /mcp; the HTTP API takes API keys " +
  "(Authorization: Bearer sk_…)";

/**
 * Resolves the bearer key, if any, without failing the request: the rate limiter needs to know
 * whose budget a request spends before the request is refused or served. With `tokens` (`/mcp`
 * only) an OAuth access token resolves too, to the principal of the key that approved it;
 * elsewhere a token is refused with a message saying where it works.
 */
export function identify(
  services: Services,
  options: { tokens?: boolean } = {},
): MiddlewareHandler<AppEnv> {
  const tokens = options.tokens ?? false;
  return async function identifyMiddleware(c, next) {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) {
        c.set(
          "authError",
          new ApiError(
            "unauthorized",
            "Malformed Authorization header; expected 'Bearer <API_KEY>'",
          ),
        );
      } else if (!tokens && isAccessToken(match[1])) {
        c.set("authError", new ApiError("unauthorized", TOKEN_ON_V1));
      } else {
        try {
          const bearer = match[1];
          const found = tokens && isAccessToken(bearer)
            ? services.tokens.resolve(bearer)
            : services.resolver.resolve(bearer);
          const principal = found instanceof Promise ? await found : found;
          c.set("principal", principal);
          services.keyUsage.touch(principal.key.id, services.deps.clock.now());
        } catch (err) {
          c.set("authError", err as Error);
        }
      }
    }
    await next();
  };
}

/**
 * Refuses the request unless `identify` resolved a usable key; with `expiredSandbox`, an expired
 * (not revoked) sandbox key passes too, for the operations that admit one (upgrades).
 */
export function requireKey(
  options: { expiredSandbox?: boolean } = {},
): MiddlewareHandler<AppEnv> {
  return async function requireKeyMiddleware(c, next) {
    const admitted = options.expiredSandbox && expiredSandboxPrincipal(c.get("authError"));
    if (!c.get("principal") && !admitted) {
      throw c.get("authError") ??
        new ApiError(
          "unauthorized",
          "Missing Authorization header; expected 'Bearer <API_KEY>'",
        );
    }
    await next();
  };
}

export { ADMIN_AUTH_FAILURES_PER_WINDOW, ADMIN_AUTH_WINDOW_MS } from "../../domain/identity/mod.ts";

/**
 * Guards operator endpoints with `ADMIN_TOKEN`; without one configured, `/admin/*` does not exist.
 * Runs before any body is read or parsed. Failed tokens are counted per client IP (a checked KV
 * write each, shared by processes); past 10 in 10 minutes that IP gets 429 `rate_limited` with
 * `Retry-After`, right token or not, so guessing is throttled rather than answered.
 */
export function requireAdmin(services: Services): MiddlewareHandler<AppEnv> {
  const { adminToken } = services.deps.config;
  const failures = services.limits.adminFailures;
  return async function requireAdminMiddleware(c, next) {
    if (!adminToken) throw noRoute();
    const ip = clientIp(c, services.deps.config);
    const state = await failures.peek(ip);
    if (!state.allowed) throw rateLimited(state);
    const given = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
    if (!secureEqual(given, adminToken)) {
      await failures.hit(ip);
      throw new ApiError("unauthorized", "Invalid operator token");
    }
    await next();
  };
}
