import type { OpenAPIHono } from "@hono/zod-openapi";
import { API_KEY_OPERATIONS } from "../app/operations/api_keys.ts";
import { CONNECTED_APP_OPERATIONS } from "../app/operations/connected_apps.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Endpoints 3–5, and beside them the connected apps (OAuth grants) the keys approved. */
export function apiKeyRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, [...API_KEY_OPERATIONS, ...CONNECTED_APP_OPERATIONS]);
}
