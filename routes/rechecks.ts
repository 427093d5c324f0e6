import type { OpenAPIHono } from "@hono/zod-openapi";
import { RECHECK_OPERATIONS } from "../app/operations/rechecks.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Re-checking a fix (additive), from the application layer's re-check operations. */
export function recheckRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, RECHECK_OPERATIONS);
}
