/**
 * `PUT|GET|DELETE /v1/projects/{projectId}/schedule`: a project's audit schedule, from the
 * application layer's schedule operations (app/operations/schedules.ts). PUT replaces the whole
 * schedule, so repeating it is harmless and it takes no Idempotency-Key.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { SCHEDULE_OPERATIONS } from "../app/operations/schedules.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

export function scheduleRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, SCHEDULE_OPERATIONS);
}
