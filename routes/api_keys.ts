import type { OpenAPIHono } from "@hono/zod-openapi";
import { API_KEY_OPERATIONS } from "../app/operations/api_keys.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** The operator endpoint (routes/admin.ts) answers the same ApiKey resource. */
export { ApiKey } from "../app/operations/api_keys.ts";

/** Endpoints 3–5, from the application layer's API key operations. */
export function apiKeyRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, API_KEY_OPERATIONS);
}
