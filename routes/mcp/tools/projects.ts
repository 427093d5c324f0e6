/** The projects tool: the project operations (app/operations/projects.ts) as actions. */
import { z } from "zod";
import {
  createProjectOp,
  getProjectOp,
  listProjectsOp,
  Project,
} from "../../../app/operations/projects.ts";
import { action, actionTool, IdempotencyKeyArg, required } from "../kit.ts";

const ProjectsInput = z.object({
  action: z.enum(["create", "list", "get"]).describe(
    "create: a site (url). list: the projects. get: one (project_id), its latest audit.",
  ),
  url: z.string().optional().describe("create: the site's http(s) URL, e.g. https://example.com"),
  name: z.string().optional().describe("create: a name, 1 to 120 characters (default: hostname)"),
  language: z.string().optional().describe("create: content language, e.g. en (default en)"),
  country: z.string().optional().describe("create: target country, e.g. US (default US)"),
  project_id: z.string().min(1).max(100).optional().describe("get: the project's id (proj_…)"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

type Args = z.output<typeof ProjectsInput>;
type ProjectOut = z.output<typeof Project>;

export const projectsTool = actionTool({
  name: "projects",
  title: "Projects (sites)",
  description: "A project is one site: create one before auditing or writing for it; list or " +
    "get them for ids and the latest audit score. Sandbox keys may create 1 project.",
  input: ProjectsInput,
  output: z.object({
    project: Project.optional(),
    projects: z.array(Project).optional(),
    idempotent_replayed: z.boolean().optional(),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  actions: {
    create: action(createProjectOp, (a: Args) => ({
      body: { url: a.url, name: a.name, language: a.language, country: a.country },
    }), (project: ProjectOut) => ({
      structured: project,
      summary: `Project ${project.project_id} for ${project.url} (access: ${project.access}). ` +
        `Next: audits with action start and project_id ${project.project_id}.`,
    })),
    list: action(listProjectsOp, () => ({}), ({ projects }: { projects: ProjectOut[] }) => ({
      structured: { projects },
      summary: projects.length === 0
        ? "No projects yet; create one with action create and a url."
        : `${projects.length} project(s): ` +
          projects.map((x) => `${x.project_id} ${x.url} (${x.access})`).join(", "),
    })),
    get: action(getProjectOp, (a: Args) => ({
      params: { projectId: required(a.project_id, "project_id", "get") },
    }), (
      project: ProjectOut,
    ) => {
      const latest = project.latest_audit;
      return {
        structured: project,
        summary: `Project ${project.project_id} ${project.url}, access ${project.access}; ` +
          (latest
            ? `latest audit ${latest.audit_id} scored ${latest.score}.`
            : "no completed audit yet."),
      };
    }),
  },
});
