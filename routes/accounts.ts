import type { OpenAPIHono } from "@hono/zod-openapi";
import { ACCOUNT_OPERATIONS } from "../app/operations/accounts.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Endpoints 1–2, from the application layer's account operations. */
export function accountRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, ACCOUNT_OPERATIONS);
}
