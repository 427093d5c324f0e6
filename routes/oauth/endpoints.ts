/**
 * The machine-facing OAuth endpoints: discovery (RFC 9728, RFC 8414), the token endpoint
 * (OAuth 2.1 §3.2), dynamic registration (RFC 7591) and revocation (RFC 7009). They answer the
 * RFCs' JSON error shape, `Cache-Control: no-store` where a secret can be in the answer, and CORS
 * to any origin (no cookie is involved), so a host running in a browser can call them. The use
 * cases are app/oauth/endpoints.ts's; these parse the body, call one and answer.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../domain/platform/mod.ts";
import {
  exchangeToken,
  registerOAuthClient,
  revokeOAuthToken,
  spendRegistrationBudget,
} from "../../app/oauth/endpoints.ts";
import {
  authorizationServerMetadata,
  MCP_RESOURCE_PATH,
  OAUTH_PATHS,
  OAuthError,
  protectedResourceMetadata,
} from "../../domain/identity/mod.ts";
import type { AppEnv, Services } from "../env.ts";
import { MAX_BODY_BYTES, readTextCapped } from "../middleware/json_body.ts";
import { clientIp } from "../middleware/request_id.ts";

const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
  "Access-Control-Allow-Headers": "Content-Type, Authorization, MCP-Protocol-Version",
  "Access-Control-Max-Age": "600",
};
const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };

/** An OAuth error as its JSON answer. */
export function oauthErrorResponse(c: Context<AppEnv>, err: OAuthError): Response {
  return c.json(err.body(), err.status, { ...CORS, ...NO_STORE, ...err.headers });
}

/** Runs an endpoint, answering an `OAuthError` (or a body error) in the RFC shape. */
async function answering(c: Context<AppEnv>, fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorResponse(c, err);
    if (err instanceof ApiError && err.status < 500) {
      const code = err.code === "rate_limited" ? "temporarily_unavailable" : "invalid_request";
      return oauthErrorResponse(
        c,
        new OAuthError(code, err.message, err.status === 429 ? 429 : 400, err.headers ?? {}),
      );
    }
    throw err;
  }
}

/**
 * The parameters of a form-encoded body (RFC 6749 §3.2: each at most once). Throws
 * `invalid_request` for another media type or a repeated parameter.
 */
export async function formParams(
  c: Context<AppEnv>,
  s: Services,
): Promise<Record<string, string>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw new OAuthError(
      "invalid_request",
      "Content-Type must be application/x-www-form-urlencoded",
    );
  }
  const text = await readTextCapped(c.req.raw, MAX_BODY_BYTES, s.deps.config.bodyTimeoutMs);
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (k in out) throw new OAuthError("invalid_request", `${k}: sent more than once`);
    out[k] = v;
  }
  return out;
}

/** Spends one unit of the client IP's unauthenticated request budget (`/v1`'s). */
export async function spendIpBudget(c: Context<AppEnv>, s: Services): Promise<void> {
  const decision = await s.limits.ip.hit(clientIp(c, s.deps.config));
  if (!decision.allowed) {
    throw new OAuthError(
      "temporarily_unavailable",
      `Too many requests from this address; retry in ${decision.retryAfter} s`,
      429,
      { "Retry-After": String(decision.retryAfter) },
    );
  }
}

export function oauthEndpoints(app: OpenAPIHono<AppEnv>, s: Services): void {
  const base = s.deps.config.publicBaseUrl;
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const resourceDoc = json(protectedResourceMetadata(base));
  const serverDoc = json(authorizationServerMetadata(base));
  const discovery = {
    ...CORS,
    "Content-Type": "application/json",
    "Cache-Control": "public, max-age=300",
  };
  // RFC 9728 §3.1: the path-suffixed URL of the resource `/mcp`, and the root one MCP clients try.
  for (
    const path of [
      "/.well-known/oauth-protected-resource",
      `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`,
    ]
  ) {
    app.get(path, (c) => c.body(resourceDoc, 200, discovery));
  }
  app.get("/.well-known/oauth-authorization-server", (c) => c.body(serverDoc, 200, discovery));

  const preflight = (c: Context<AppEnv>) => c.body(null, 204, CORS);
  for (const path of [OAUTH_PATHS.token, OAUTH_PATHS.register, OAUTH_PATHS.revoke]) {
    app.options(path, preflight);
  }
  for (
    const path of [
      "/.well-known/oauth-protected-resource",
      `/.well-known/oauth-protected-resource${MCP_RESOURCE_PATH}`,
      "/.well-known/oauth-authorization-server",
    ]
  ) {
    app.options(path, preflight);
  }

  app.post(OAUTH_PATHS.token, (c) =>
    answering(c, async () => {
      await spendIpBudget(c, s);
      const tokens = await exchangeToken(s, await formParams(c, s));
      return c.json(tokens, 200, { ...CORS, ...NO_STORE });
    }));

  app.post(OAUTH_PATHS.register, (c) =>
    answering(c, async () => {
      await spendRegistrationBudget(s, clientIp(c, s.deps.config));
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/json\s*(;|$)/i.test(type)) {
        throw new OAuthError("invalid_client_metadata", "Content-Type must be application/json");
      }
      const text = await readTextCapped(c.req.raw, MAX_BODY_BYTES, s.deps.config.bodyTimeoutMs);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new OAuthError("invalid_client_metadata", "The body is not valid JSON");
      }
      return c.json(await registerOAuthClient(s, body), 201, { ...CORS, ...NO_STORE });
    }));

  app.post(OAUTH_PATHS.revoke, (c) =>
    answering(c, async () => {
      await spendIpBudget(c, s);
      await revokeOAuthToken(s, await formParams(c, s));
      // RFC 7009 §2.2: 200 whether or not the token was known.
      return c.body(null, 200, { ...CORS, ...NO_STORE });
    }));
}
