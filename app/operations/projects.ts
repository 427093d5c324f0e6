/**
 * Projects (endpoints 6–8): register a site, list the account's sites, read one.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { createProject, getProject, listProjects } from "../../domain/projects/mod.ts";
import { defineOperation } from "../operation.ts";
import { projectView } from "../views.ts";

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

export const createProjectOp = defineOperation({
  id: "projects.create",
  method: "post",
  path: "/v1/projects",
  tags: ["Projects"],
  summary: "Register a site",
  access: "key",
  tokens: "allow",
  sandbox: { limit: "1 project in the trial" },
  leaves: "a project, kept with the account",
  body: CreateProjectBody,
  status: 201,
  output: Project,
  outputDescription: "The project (without counts)",
  errors: ["sandbox_limit_reached", "idempotency_conflict", "payload_too_large"],
  idempotent: true,
  changesAccount: true,
  async run({ body }, { services, actor }) {
    const { deps } = services;
    const project = await createProject(deps, actor, body);
    return projectView(project, null, deps.clock.now(), "create");
  },
});

export const listProjectsOp = defineOperation({
  id: "projects.list",
  method: "get",
  path: "/v1/projects",
  tags: ["Projects"],
  summary: "The account's projects, newest first",
  access: "key",
  tokens: "allow",
  status: 200,
  output: z.object({ projects: z.array(Project) }),
  outputDescription: "Projects",
  errors: [],
  async run(_input, { services, actor }) {
    const { deps } = services;
    const now = deps.clock.now();
    const rows = await listProjects(deps, actor.accountId, actor.mode);
    return { projects: rows.map((r) => projectView(r.project, r.subscription, now, "list")) };
  },
});

export const getProjectOp = defineOperation({
  id: "projects.get",
  method: "get",
  path: "/v1/projects/{projectId}",
  tags: ["Projects"],
  summary: "One project with counts and its latest completed audit",
  access: "key",
  tokens: "allow",
  params: ProjectIdParam,
  status: 200,
  output: Project,
  outputDescription: "The project",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const { deps } = services;
    const { entry, subscription } = await getProject(
      deps,
      actor.accountId,
      params.projectId,
      actor.mode,
    );
    return projectView(entry.value, subscription, deps.clock.now(), "detail");
  },
});

/** The project operations, in the order the API reference lists them. */
export const PROJECT_OPERATIONS = [createProjectOp, listProjectsOp, getProjectOp];
