/**
 * `PUT|GET|DELETE /v1/projects/{projectId}/schedule`: a project's audit schedule. PUT replaces
 * the whole schedule, so repeating it is harmless and it takes no Idempotency-Key.
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { CADENCES } from "../domain/billing/catalog.ts";
import { iso } from "../domain/clock.ts";
import { WEEKDAYS } from "../domain/monitoring/schedule_time.ts";
import {
  deleteSchedule,
  getSchedule,
  putSchedule,
  type ScheduleFunding,
  type ScheduleInput,
  type ScheduleRecord,
} from "../domain/monitoring/schedules.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { AUTH_ERRORS, bearerSecurity, responses } from "./openapi_helpers.ts";
import { ProjectIdParam } from "./projects.ts";

export const PutScheduleBody = z.object({
  cadence: z.enum(CADENCES).openapi({
    description: "How often: the project's funding limits it (basic weekly, pro daily, credits " +
      "daily; see GET /v1/plans)",
    example: "weekly",
  }),
  hour_utc: z.number().int().min(0).max(23).openapi({
    description: "The hour (UTC) the run starts in; each project starts at a fixed minute " +
      "within it, so runs are spread over the hour",
    example: 6,
  }),
  day_of_week: z.enum(WEEKDAYS).optional().openapi({
    description: "Weekly only; default monday",
    example: "monday",
  }),
  day_of_month: z.number().int().min(1).max(28).optional().openapi({
    description: "Monthly only, 1-28 (every month has it); default 1",
  }),
  render: z.boolean().optional().openapi({
    description: "Each run is a rendered audit, priced as one started by POST /v1/projects/" +
      "{projectId}/audits with render (pro included, basic the add-on, otherwise the rendered " +
      "audit's credits); 503 rendering_unavailable where this server cannot render. Default false",
    example: false,
  }),
}).strict().openapi("PutScheduleRequest");

export const Schedule = z.object({
  project_id: z.string(),
  cadence: z.enum(CADENCES),
  hour_utc: z.number().int(),
  day_of_week: z.enum(WEEKDAYS).nullable(),
  day_of_month: z.number().int().nullable(),
  status: z.enum(["active", "paused"]),
  render: z.boolean().openapi({ description: "Each run is a rendered audit" }),
  paused_reason: z.enum(["insufficient_credits", "plan_limit", "rendering_unavailable"])
    .nullable().openapi({
      description: "Why it paused: a run the credit balance could not pay, a cadence the " +
        "project's plan no longer includes, or a rendered schedule on a server that can no " +
        "longer render. A PUT resumes it.",
    }),
  paused_at: z.string().nullable(),
  next_run_at: z.string().nullable().openapi({
    description: "When the next scheduled audit starts; null while paused",
    example: "2026-11-30T06:37:11.000Z",
  }),
  funding: z.object({
    kind: z.enum(["subscription", "credits"]),
    plan: z.string().nullable(),
    max_cadence: z.enum(CADENCES),
    credits_per_run: z.number().int().openapi({ description: "0 when included in the plan" }),
  }).openapi({ description: "How runs are paid as of now (decided again at each run)" }),
  last_run: z.object({
    due_at: z.string(),
    ran_at: z.string(),
    audit_id: z.string().nullable(),
    outcome: z.enum(["started", "audit_in_progress", "paused"]).openapi({
      description: "`audit_in_progress`: an audit was already queued or running and served " +
        "the slot; `paused`: the run could not be paid",
    }),
  }).nullable(),
  runs: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
}).openapi("Schedule");

export const ScheduleDeleted = z.object({ deleted: z.literal(true), project_id: z.string() });

/** The domain input of a validated PUT body (the route's and the MCP tool's). */
export function scheduleInput(body: z.infer<typeof PutScheduleBody>): ScheduleInput {
  return {
    cadence: body.cadence,
    hourUtc: body.hour_utc,
    dayOfWeek: body.day_of_week,
    dayOfMonth: body.day_of_month,
    render: body.render,
  };
}

export function scheduleView(s: ScheduleRecord, f: ScheduleFunding) {
  return {
    project_id: s.projectId,
    cadence: s.cadence,
    hour_utc: s.hourUtc,
    day_of_week: s.dayOfWeek,
    day_of_month: s.dayOfMonth,
    render: s.render === true,
    status: s.status,
    paused_reason: s.pausedReason,
    paused_at: iso(s.pausedAt),
    next_run_at: iso(s.nextRunAt),
    funding: {
      kind: f.kind,
      plan: f.plan,
      max_cadence: f.maxCadence,
      credits_per_run: f.creditsPerRun,
    },
    last_run: s.lastRun
      ? {
        due_at: iso(s.lastRun.dueAt)!,
        ran_at: iso(s.lastRun.at)!,
        audit_id: s.lastRun.auditId,
        outcome: s.lastRun.outcome,
      }
      : null,
    runs: s.runs,
    created_at: iso(s.createdAt)!,
    updated_at: iso(s.updatedAt)!,
  };
}

const path = "/v1/projects/{projectId}/schedule";

export function scheduleRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "put",
      path,
      tags: ["Schedules"],
      summary: "Create or replace the project's audit schedule (201 created, 200 replaced)",
      description: "Scheduled audits run like `POST /v1/projects/{projectId}/audits` (included " +
        "in a subscription, else charged in credits), never while an audit is queued or running, " +
        "and once per due time even after downtime. A PUT of a paused schedule resumes it.",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: {
        params: ProjectIdParam,
        body: { content: { "application/json": { schema: PutScheduleBody } }, required: true },
      },
      responses: responses(
        {
          200: { description: "The schedule, replaced", schema: Schedule },
          201: { description: "The schedule, created", schema: Schedule },
        },
        [
          ...AUTH_ERRORS,
          "not_found",
          "schedule_not_allowed",
          "payload_too_large",
          "rendering_unavailable",
        ],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const body = c.req.valid("json");
      const { schedule, funding, created } = await putSchedule(
        deps,
        caller,
        c.req.valid("param").projectId,
        scheduleInput(body),
      );
      return c.json(scheduleView(schedule, funding), created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path,
      tags: ["Schedules"],
      summary: "The project's audit schedule: next run, last run, funding",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: { params: ProjectIdParam },
      responses: responses(
        { 200: { description: "The schedule", schema: Schedule } },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { schedule, funding } = await getSchedule(
        deps,
        caller.account.id,
        c.req.valid("param").projectId,
        caller.key.mode,
      );
      return c.json(scheduleView(schedule, funding), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path,
      tags: ["Schedules"],
      summary: "Remove the schedule; an audit it already started runs to its end",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: { params: ProjectIdParam },
      responses: responses(
        {
          200: {
            description: "Removed",
            schema: ScheduleDeleted,
          },
        },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { projectId } = c.req.valid("param");
      await deleteSchedule(deps, caller.account.id, projectId, caller.key.mode);
      return c.json({ deleted: true as const, project_id: projectId }, 200);
    },
  );
}
