import type { OpenAPIHono } from "@hono/zod-openapi";
import { PROJECT_OPERATIONS } from "../app/operations/projects.ts";
import type { AppEnv, Services } from "./env.ts";
import { mountOperations } from "./operation_routes.ts";

export { CreateProjectBody, Project, ProjectIdParam } from "../app/operations/projects.ts";

/** Endpoints 6–8, from the application layer's project operations. */
export function projectRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, PROJECT_OPERATIONS);
}
