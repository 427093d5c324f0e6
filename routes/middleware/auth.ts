import type { MiddlewareHandler } from "hono";
import { ApiError } from "../../domain/errors.ts";
import { secureEqual } from "../../domain/secure_compare.ts";
import type { AppEnv, Services } from "../env.ts";

const BEARER = /^Bearer ([A-Za-z0-9_]{8,200})$/;

/**
 * Resolves the bearer key, if any, without failing the request: the rate limiter needs to know
 * whose budget a request spends before the request is refused or served.
 */
export function identify(services: Services): MiddlewareHandler<AppEnv> {
  return async function identifyMiddleware(c, next) {
    const header = c.req.header("authorization");
    if (header !== undefined) {
      const match = BEARER.exec(header);
      if (!match) {
        c.set(
          "authError",
          new ApiError(
            "unauthorized",
            401,
            "Malformed Authorization header; expected 'Bearer <API_KEY>'",
          ),
        );
      } else {
        try {
          const found = services.resolver.resolve(match[1]);
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

/** Refuses the request unless `identify` resolved a usable key. */
export function requireKey(): MiddlewareHandler<AppEnv> {
  return async function requireKeyMiddleware(c, next) {
    if (!c.get("principal")) {
      throw c.get("authError") ??
        new ApiError(
          "unauthorized",
          401,
          "Missing Authorization header; expected 'Bearer <API_KEY>'",
        );
    }
    await next();
  };
}

/** Guards operator endpoints with `ADMIN_TOKEN`; without one configured, `/admin/*` does not exist. */
export function requireAdmin(adminToken: string | null): MiddlewareHandler<AppEnv> {
  return async function requireAdminMiddleware(c, next) {
    if (!adminToken) throw new ApiError("not_found", 404, `No route ${c.req.method} ${c.req.path}`);
    const given = /^Bearer (.+)$/.exec(c.req.header("authorization") ?? "")?.[1] ?? "";
    if (!secureEqual(given, adminToken)) {
      throw new ApiError("unauthorized", 401, "Invalid operator token");
    }
    await next();
  };
}
