import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { createProject, getProject, listProjects } from "../domain/projects.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";
import { projectView } from "./views.ts";

const Counts = z.object({
  keywords: z.number().int(),
  articles: z.number().int(),
  audits: z.number().int(),
});

const LatestAudit = z.object({
  audit_id: z.string(),
  status: z.string(),
  completed_at: z.string().nullable(),
  score: z.number().int().nullable(),
  summary: z.any(),
}).openapi("LatestAudit");

export const Project = z.object({
  project_id: z.string(),
  url: z.string(),
  name: z.string(),
  status: z.string().openapi({ example: "setup" }),
  language: z.string(),
  country: z.string(),
  sandbox: z.boolean(),
  access: z.string().openapi({ example: "pending_payment" }),
  created_at: z.string(),
  counts: Counts.optional(),
  latest_audit: LatestAudit.nullable().optional(),
}).openapi("Project");

export const CreateProjectBody = z.object({
  url: z.string().min(1).max(500).openapi({ example: "https://example.com" }),
  name: z.string().min(1).max(120).optional(),
  language: z.string().min(2).max(10).regex(/^[A-Za-z0-9-]+$/).optional().openapi({
    example: "en",
  }),
  country: z.string().min(2).max(10).regex(/^[A-Za-z0-9-]+$/).optional().openapi({
    example: "US",
  }),
}).strict().openapi("CreateProjectRequest");

export const ProjectIdParam = z.object({
  projectId: z.string().min(1).max(100).openapi({
    param: { name: "projectId", in: "path" },
    example: "proj_0abc",
  }),
});

export function projectRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/projects",
      tags: ["Projects"],
      summary: "Register a site",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: {
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: CreateProjectBody } }, required: true },
      },
      responses: responses(
        { 201: { description: "The project (without counts)", schema: Project } },
        [...AUTH_ERRORS, "sandbox_limit_reached", "idempotency_conflict", "payload_too_large"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const project = await createProject(
        deps,
        { accountId: caller.account.id, mode: caller.key.mode },
        c.req.valid("json"),
      );
      s.resolver.invalidateAccount(caller.account.id);
      return c.json(projectView(project, null, deps.clock.now(), "create"), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/projects",
      tags: ["Projects"],
      summary: "The account's projects, newest first",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      responses: responses(
        { 200: { description: "Projects", schema: z.object({ projects: z.array(Project) }) } },
        AUTH_ERRORS,
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const now = deps.clock.now();
      const rows = await listProjects(deps, caller.account.id, caller.key.mode);
      return c.json({
        projects: rows.map((r) => projectView(r.project, r.subscription, now, "list")),
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/projects/{projectId}",
      tags: ["Projects"],
      summary: "One project with counts and its latest completed audit",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: { params: ProjectIdParam },
      responses: responses(
        { 200: { description: "The project", schema: Project } },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { entry, subscription } = await getProject(
        deps,
        caller.account.id,
        c.req.valid("param").projectId,
        caller.key.mode,
      );
      return c.json(projectView(entry.value, subscription, deps.clock.now(), "detail"), 200);
    },
  );
}
