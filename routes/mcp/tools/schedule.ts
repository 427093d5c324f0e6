/**
 * The schedule tool: a project's audit schedule, the schedule operations
 * (app/operations/schedules.ts) as actions, as `PUT|GET|DELETE /v1/projects/{projectId}/schedule`
 * runs them. `set` is a PUT: repeating it changes nothing, so it takes no idempotency key, as the
 * route takes none.
 */
import { z } from "zod";
import {
  deleteScheduleOp,
  getScheduleOp,
  Schedule,
  setScheduleOp,
} from "../../../app/operations/schedules.ts";
import { action, actionTool, required } from "../kit.ts";
import { AuditOptionArgs, auditOptionsBody } from "./audit_options.ts";

const ScheduleInput = z.object({
  action: z.enum(["get", "set", "delete"]).describe(
    "get: the schedule (next run, funding). set: create or replace it (cadence, hour_utc; " +
      "resumes a paused one). delete: remove it.",
  ),
  project_id: z.string().min(1).max(100).describe("The project (proj_…)"),
  cadence: z.string().optional().describe("set: daily, weekly or monthly"),
  hour_utc: z.number().optional().describe("set: the hour (UTC, 0-23) the run starts in"),
  day_of_week: z.string().optional().describe("set, weekly only: monday … sunday (default monday)"),
  day_of_month: z.number().optional().describe("set, monthly only: 1-28 (default 1)"),
  render: z.boolean().optional().describe(
    "set: each run is a rendered audit (priced as one; pro included). Default false",
  ),
  ...AuditOptionArgs,
}).strict();

type Args = z.output<typeof ScheduleInput>;
type ScheduleOut = z.output<typeof Schedule>;

const project = (a: Args) => ({ projectId: a.project_id });

export const scheduleTool = actionTool({
  name: "schedule",
  title: "Scheduled audits",
  description: "Audit a project on its own daily, weekly or monthly at an hour (UTC), with " +
    "audit.regressed webhooks on a drop. Included in a subscription; otherwise 25 credits a " +
    "run (pauses when unpaid). Not for sandbox keys.",
  input: ScheduleInput,
  output: z.object({
    schedule: Schedule.optional().describe("get, set"),
    created: z.boolean().optional().describe("set: true when it created the schedule"),
    deleted: z.literal(true).optional().describe("delete"),
    project_id: z.string().optional().describe("delete: the project"),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  actions: {
    get: action(getScheduleOp, (a: Args) => ({ params: project(a) }), (view: ScheduleOut) => ({
      structured: view,
      summary: describe(view),
    })),
    set: action(setScheduleOp, (a: Args) => {
      required(a.cadence, "cadence", "set");
      required(a.hour_utc, "hour_utc", "set");
      return {
        params: project(a),
        body: {
          cadence: a.cadence,
          hour_utc: a.hour_utc,
          day_of_week: a.day_of_week,
          day_of_month: a.day_of_month,
          render: a.render,
          ...auditOptionsBody(a),
        },
      };
    }, (view: ScheduleOut, _args, _ctx, outcome) => {
      // The operation answers 201 when it created the schedule, 200 when it replaced it.
      const created = outcome.status === 201;
      return {
        structured: view,
        summary: `${created ? "Created" : "Replaced"}: ${describe(view)}`,
      };
    }),
    delete: action(
      deleteScheduleOp,
      (a: Args) => ({ params: project(a) }),
      (deleted: { deleted: true; project_id: string }) => ({
        structured: deleted,
        summary: `Schedule of project ${deleted.project_id} removed.`,
      }),
    ),
  },
});

function describe(s: ScheduleOut): string {
  const paid = s.funding.credits_per_run > 0
    ? `${s.funding.credits_per_run} credits per run`
    : `included in the ${s.funding.plan} plan`;
  return `Project ${s.project_id} is audited ${s.cadence} at ${s.hour_utc}:00 UTC (${paid}); ` +
    (s.status === "paused"
      ? `paused (${s.paused_reason}); set it again to resume.`
      : `next run ${s.next_run_at}.`) +
    (s.last_run ? ` Last run ${s.last_run.ran_at}: ${s.last_run.outcome}.` : "");
}
