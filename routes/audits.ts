import type { OpenAPIHono } from "@hono/zod-openapi";
import { AUDIT_OPERATIONS } from "../app/operations/audits.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

/** Endpoints 9–10 and the findings listings, from the application layer's audit operations. */
export function auditRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, AUDIT_OPERATIONS);
}
