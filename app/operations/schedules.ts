/**
 * Schedules (additive endpoints): a project's audit schedule, read, set (a PUT: the whole schedule,
 * 201 created, 200 replaced; repeating it changes nothing, so it takes no idempotency key) and
 * removed. Setting and removing re-read the calling key strongly first (`sensitive`).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { CADENCES } from "../../domain/billing/mod.ts";
import {
  deleteSchedule,
  getSchedule,
  putSchedule,
  type ScheduleInput,
  WEEKDAYS,
} from "../../domain/monitoring/mod.ts";
import { defineOperation } from "../operation.ts";
import { AuditOptionsFields, auditOptionsOf, AuditOptionsView } from "./audits.ts";
import type { SiteAuth } from "../../domain/audit_engine/mod.ts";
import { scheduleView } from "../views.ts";
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
  // The audit options, the same as POST /v1/projects/{projectId}/audits takes: each run uses them.
  ...AuditOptionsFields,
}).strict().openapi("PutScheduleRequest");

export const Schedule = z.object({
  project_id: z.string(),
  cadence: z.enum(CADENCES),
  hour_utc: z.number().int(),
  day_of_week: z.enum(WEEKDAYS).nullable(),
  day_of_month: z.number().int().nullable(),
  status: z.enum(["active", "paused"]),
  render: z.boolean().openapi({ description: "Each run is a rendered audit" }),
  options: AuditOptionsView,
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

/** The domain input of a validated body. */
function scheduleInput(body: z.infer<typeof PutScheduleBody>): ScheduleInput {
  return {
    cadence: body.cadence,
    hourUtc: body.hour_utc,
    dayOfWeek: body.day_of_week,
    dayOfMonth: body.day_of_month,
    render: body.render,
    options: auditOptionsOf(body),
    ...(body.auth ? { auth: body.auth as SiteAuth } : {}),
    ...(body.max_rps !== undefined ? { maxRps: body.max_rps } : {}),
  };
}

const SCHEDULE_PATH = "/v1/projects/{projectId}/schedule";

export const setScheduleOp = defineOperation({
  id: "schedules.set",
  method: "put",
  path: SCHEDULE_PATH,
  tags: ["Schedules"],
  summary: "Create or replace the project's audit schedule (201 created, 200 replaced)",
  description: "Scheduled audits run like `POST /v1/projects/{projectId}/audits` (included " +
    "in a subscription, else charged in credits), never while an audit is queued or running, " +
    "and once per due time even after downtime. A PUT of a paused schedule resumes it.",
  access: "key",
  tokens: "refuse",
  sandbox: { refuse: "schedule_not_allowed" },
  leaves: "a schedule that starts audits (and spends) with no caller present",
  params: ProjectIdParam,
  body: PutScheduleBody,
  status: 201,
  otherStatuses: { 200: "The schedule, replaced" },
  output: Schedule,
  outputDescription: "The schedule, created",
  errors: [
    "not_found",
    "schedule_not_allowed",
    "payload_too_large",
    "rendering_unavailable",
    "site_auth_not_configured",
  ],
  sensitive: true,
  async run({ params, body }, { services, actor, status }) {
    const { schedule, funding, created } = await putSchedule(
      services.deps,
      actor,
      params.projectId,
      scheduleInput(body),
    );
    if (!created) status(200);
    return scheduleView(schedule, funding);
  },
});

export const getScheduleOp = defineOperation({
  id: "schedules.get",
  method: "get",
  path: SCHEDULE_PATH,
  tags: ["Schedules"],
  summary: "The project's audit schedule: next run, last run, funding",
  access: "key",
  tokens: "allow",
  params: ProjectIdParam,
  status: 200,
  output: Schedule,
  outputDescription: "The schedule",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    const { schedule, funding } = await getSchedule(
      services.deps,
      actor.accountId,
      params.projectId,
      actor.mode,
    );
    return scheduleView(schedule, funding);
  },
});

export const deleteScheduleOp = defineOperation({
  id: "schedules.delete",
  method: "delete",
  path: SCHEDULE_PATH,
  tags: ["Schedules"],
  summary: "Remove the schedule; an audit it already started runs to its end",
  access: "key",
  tokens: "allow",
  params: ProjectIdParam,
  status: 200,
  output: ScheduleDeleted,
  outputDescription: "Removed",
  errors: ["not_found"],
  sensitive: true,
  async run({ params }, { services, actor }) {
    await deleteSchedule(services.deps, actor.accountId, params.projectId, actor.mode);
    return { deleted: true as const, project_id: params.projectId };
  },
});

/** The schedule operations, in the order the API reference lists them. */
export const SCHEDULE_OPERATIONS = [setScheduleOp, getScheduleOp, deleteScheduleOp];
