import type { OpenAPIHono } from "@hono/zod-openapi";
import { FIX_OPERATIONS } from "../app/operations/fixes.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Fixes an agent can apply and the redirect map (additive), from the fix operations. */
export function fixRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, FIX_OPERATIONS);
}
