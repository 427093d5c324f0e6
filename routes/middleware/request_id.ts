import type { Context, MiddlewareHandler } from "hono";
import { randomPart } from "../../domain/platform/mod.ts";
import type { AppEnv } from "../env.ts";

/** A random per-process prefix and a counter: unique ids without a CSPRNG call per request. */
const PROCESS_PREFIX = randomPart(8);
let counter = 0;

/**
 * Gives every request an id (echoing a sane `X-Request-Id` from the caller), exposes it in the
 * response header and in logs. Also the headers every answer carries: `X-Content-Type-Options:
 * nosniff`, and `Cache-Control: no-store` on JSON unless a route chose otherwise (`/v1/plans`),
 * because JSON answers carry raw keys, webhook secrets and account data that no shared or
 * browser cache may keep (replays included).
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
    c.header("X-Content-Type-Options", "nosniff");
    // API answers are JSON; a route that may be cached says so itself (`GET /v1/plans`).
    const api = c.req.path.startsWith("/v1/") || c.req.path.startsWith("/admin/");
    if (api) c.header("Cache-Control", "no-store");
    await next();
    // Responses built outright (idempotent replays) bypass Hono's prepared headers.
    const headers = c.res.headers;
    if (!headers.has("X-Request-Id")) {
      c.header("X-Request-Id", id);
      c.header("X-Content-Type-Options", "nosniff");
      if (api && !headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
    }
  };
}

/**
 * The client's IP, for signup limits, unauthenticated rate limits and signup idempotency scope.
 *
 * Without a trusted proxy (`TRUST_PROXY` unset) it is the socket's remote address. Behind
 * `TRUST_PROXY=n` proxies, each of which appends the address it saw to `X-Forwarded-For`, it is
 * the n-th entry from the right: the address the outermost trusted proxy saw. Entries left of it
 * are whatever the client wrote and are never believed (taking the first entry let any client
 * pick its own address). `CLIENT_IP_HEADER` names a header the proxy overwrites instead (such as
 * `cf-connecting-ip`). A missing or malformed value falls back to the socket address, which the
 * client cannot choose either.
 */
export function clientIp(
  c: Context<AppEnv>,
  config: { trustProxyHops: number; clientIpHeader: string | null },
): string {
  if (config.trustProxyHops > 0) {
    const fromProxy = config.clientIpHeader
      ? c.req.header(config.clientIpHeader)?.trim()
      : forwardedClient(c.req.header("x-forwarded-for"), config.trustProxyHops);
    if (fromProxy && isIpText(fromProxy)) return fromProxy.toLowerCase();
  }
  const addr = (c.env as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr;
  return addr?.hostname ?? "unknown";
}

/** The entry `hops` places from the right of an `X-Forwarded-For` list, if there are that many. */
export function forwardedClient(header: string | undefined, hops: number): string | null {
  if (!header) return null;
  const entries = header.split(",").map((e) => e.trim());
  return entries.length >= hops ? entries[entries.length - hops] : null;
}

function isIpText(s: string): boolean {
  return s.length <= 64 && /^[0-9A-Fa-f:.]+$/.test(s) && /[0-9]/.test(s);
}
