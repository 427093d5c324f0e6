import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { type AuditRecord, createAudit, getAudit } from "../domain/audits.ts";
import { iso } from "../domain/clock.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";
import { ProjectIdParam } from "./projects.ts";

const Severity = z.enum(["critical", "warning", "info"]);

export const AuditSummary = z.object({
  issues_critical: z.number().int(),
  issues_warning: z.number().int(),
  issues_info: z.number().int(),
  top_issues: z.array(z.object({
    check: z.string().openapi({ example: "title_missing" }),
    severity: Severity,
    title: z.string(),
    affected_count: z.number().int(),
  })).max(10),
  categories: z.object({
    performance: z.number().int(),
    security: z.number().int(),
    indexability: z.number().int(),
    mobile: z.number().int(),
    structure: z.number().int(),
  }),
}).openapi("AuditSummary");

export const Audit = z.object({
  audit_id: z.string(),
  project_id: z.string(),
  status: z.enum(["queued", "running", "completed", "failed"]),
  started_at: z.string(),
  completed_at: z.string().optional(),
  score: z.number().int().min(0).max(100).optional(),
  summary: AuditSummary.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
}).openapi("Audit");

const Accepted = z.object({
  audit_id: z.string(),
  status: z.enum(["queued", "running"]),
  poll: z.string().openapi({ example: "/v1/audits/aud_0abc" }),
}).openapi("AuditAccepted");

export function auditView(a: AuditRecord) {
  return {
    audit_id: a.id,
    project_id: a.projectId,
    status: a.status,
    started_at: iso(a.createdAt)!,
    ...(a.completedAt !== null ? { completed_at: iso(a.completedAt)! } : {}),
    ...(a.status === "completed" ? { score: a.score!, summary: a.summary! } : {}),
    ...(a.status === "failed" && a.error ? { error: a.error } : {}),
  };
}

export function auditRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/projects/{projectId}/audits",
      tags: ["Audits"],
      summary:
        "Start a technical audit (202; an audit already queued or running is returned as is). Poll every 30-60 s.",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: { params: ProjectIdParam, headers: IdempotencyHeader },
      responses: responses(
        { 202: { description: "Accepted; poll the `poll` path", schema: Accepted } },
        [
          ...AUTH_ERRORS,
          "not_found",
          "payment_required",
          "insufficient_credits",
          "sandbox_limit_reached",
          "idempotency_conflict",
          "payload_too_large",
        ],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { audit, created } = await createAudit(deps, caller, c.req.valid("param").projectId);
      if (created) s.resolver.invalidateAccount(caller.account.id);
      return c.json({
        audit_id: audit.id,
        status: audit.status as "queued" | "running",
        poll: `/v1/audits/${audit.id}`,
      }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/audits/{auditId}",
      tags: ["Audits"],
      summary: "An audit: status, and score and summary once completed",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: {
        params: z.object({
          auditId: z.string().min(1).max(100).openapi({ param: { name: "auditId", in: "path" } }),
        }),
      },
      responses: responses(
        { 200: { description: "The audit", schema: Audit } },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const audit = await getAudit(deps, caller.account.id, c.req.valid("param").auditId);
      return c.json(auditView(audit), 200);
    },
  );
}
