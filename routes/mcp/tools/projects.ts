/** The projects tool over endpoints 6–8: same domain calls and bodies as routes/projects.ts. */
import { z } from "zod";
import { createProject, getProject, listProjects } from "../../../domain/projects.ts";
import { CreateProjectBody, Project } from "../../projects.ts";
import { projectView } from "../../views.ts";
import { idempotent } from "../idempotency.ts";
import { asBody, IdempotencyKeyArg, required, type ToolDef } from "../kit.ts";

const ProjectsInput = z.object({
  action: z.enum(["create", "list", "get"]).describe(
    "create: register a site (url required). list: the account's projects, newest first. " +
      "get: one project (project_id) with counts and its latest completed audit.",
  ),
  url: z.string().optional().describe("create: the site's http(s) URL, e.g. https://example.com"),
  name: z.string().optional().describe("create: a name, 1 to 120 characters (default: hostname)"),
  language: z.string().optional().describe("create: content language, e.g. en (default en)"),
  country: z.string().optional().describe("create: target country, e.g. US (default US)"),
  project_id: z.string().min(1).max(100).optional().describe("get: the project's id (proj_…)"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

export const projectsTool: ToolDef<typeof ProjectsInput> = {
  name: "projects",
  title: "Projects (sites)",
  description: "A project is one site. Create one before auditing or writing for a site; list or " +
    "get them to find ids, counts and the latest audit score. Sandbox keys may create 1 project " +
    "(sandbox_limit_reached after that). Live projects need a subscription or credits to run work.",
  input: ProjectsInput,
  output: z.object({
    project: Project.optional(),
    projects: z.array(Project).optional(),
    idempotent_replayed: z.boolean().optional(),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller } = ctx;
    const { deps } = services;
    const p = caller.principal!;
    switch (args.action) {
      case "create": {
        required(args.url, "url", "create");
        const body = asBody(CreateProjectBody, {
          url: args.url,
          name: args.name,
          language: args.language,
          country: args.country,
        });
        const answer = await idempotent(
          services,
          caller,
          { key: args.idempotency_key, endpoint: "POST /v1/projects", body },
          async () => {
            const project = await createProject(
              deps,
              { accountId: p.account.id, mode: p.key.mode },
              body,
            );
            services.resolver.invalidateAccount(p.account.id);
            return { status: 201, body: projectView(project, null, deps.clock.now(), "create") };
          },
        );
        const project = answer.body;
        return {
          structured: { project, ...(answer.replayed ? { idempotent_replayed: true } : {}) },
          summary:
            `Project ${project.project_id} for ${project.url} (access: ${project.access}). ` +
            `Next: audits with action start and project_id ${project.project_id}.`,
        };
      }
      case "list": {
        const now = deps.clock.now();
        const rows = await listProjects(deps, p.account.id, p.key.mode);
        const projects = rows.map((r) => projectView(r.project, r.subscription, now, "list"));
        return {
          structured: { projects },
          summary: projects.length === 0
            ? "No projects yet; create one with action create and a url."
            : `${projects.length} project(s): ` +
              projects.map((x) => `${x.project_id} ${x.url} (${x.access})`).join(", "),
        };
      }
      case "get": {
        const id = required(args.project_id, "project_id", "get");
        const { entry, subscription } = await getProject(deps, p.account.id, id, p.key.mode);
        const project = projectView(entry.value, subscription, deps.clock.now(), "detail");
        const latest = "latest_audit" in project ? project.latest_audit : null;
        return {
          structured: { project },
          summary: `Project ${project.project_id} ${project.url}, access ${project.access}; ` +
            (latest
              ? `latest audit ${latest.audit_id} scored ${latest.score}.`
              : "no completed audit yet."),
        };
      }
    }
  },
};
