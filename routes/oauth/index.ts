/**
 * The OAuth 2.1 authorization server of `/mcp`, on the same app: discovery, the sign-in and
 * consent page, and the token, registration and revocation endpoints. The connected apps it
 * creates are listed and revoked through `/v1/connected-apps` (routes/api_keys.ts).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Services } from "../env.ts";
import { authorizeRoutes } from "./authorize.ts";
import { oauthEndpoints } from "./endpoints.ts";

export function oauthRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  oauthEndpoints(app, s);
  authorizeRoutes(app, s);
}
