import type { OpenAPIHono } from "@hono/zod-openapi";
import { WEBHOOK_OPERATIONS } from "../app/operations/webhooks.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Endpoints 18–20, from the application layer's webhook operations. */
export function webhookRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, WEBHOOK_OPERATIONS);
}
