/**
 * Adds `audit.regressed` to the commit that completes an audit, when the audit regressed against
 * the project's previous completed audit (see `regression.ts`). Called from the audit pipeline
 * with the project as it was before this audit replaced its `latestAudit`.
 *
 * @module
 */
import { keys } from "../../kv/keys.ts";
import type { JobQueue } from "../deps.ts";
import { recordEvent } from "../events.ts";
import type { ProjectRecord } from "../records.ts";
import { type ComparedIssue, type RegressionReport, regressionReport } from "./regression.ts";
import type { ScheduleRecord } from "./schedules.ts";

/** What a completed audit's summary holds that the comparison needs. */
export interface SummaryLike {
  categories: Record<string, number>;
  top_issues: { check: string; severity: string; title: string; affected_count: number }[];
}

/**
 * The issue comparison from two summaries' `top_issues` (the worst 10 checks of each): the
 * fallback while an audit pipeline stores no per-check comparison of its own.
 */
export function compareTopIssues(
  previous: SummaryLike | null,
  current: SummaryLike,
): ComparedIssue[] {
  const before = new Map((previous?.top_issues ?? []).map((i) => [i.check, i]));
  const now = new Set(current.top_issues.map((i) => i.check));
  const out: ComparedIssue[] = current.top_issues.map((i) => ({
    check: i.check,
    severity: i.severity as ComparedIssue["severity"],
    title: i.title,
    affected: i.affected_count,
    change: before.has(i.check) ? "persisting" : "new",
  }));
  for (const [check, i] of before) {
    if (!now.has(check)) {
      out.push({
        check,
        severity: i.severity as ComparedIssue["severity"],
        title: i.title,
        affected: 0,
        change: "fixed",
      });
    }
  }
  return out;
}

/**
 * Computes the regression report of `auditId` and, when it regressed, records `audit.regressed`
 * in `op`. Returns the report (null without a previous completed audit).
 */
export async function addRegressionEvent(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  queue: JobQueue,
  input: {
    accountId: string;
    /** The project before this audit became its latest. */
    project: ProjectRecord;
    auditId: string;
    score: number;
    summary: SummaryLike;
    issues: readonly ComparedIssue[];
    now: number;
  },
): Promise<RegressionReport | null> {
  const prev = input.project.latestAudit;
  const prevSummary = prev?.summary as SummaryLike | null | undefined;
  const report = regressionReport(
    prev && prev.audit_id !== input.auditId && prev.score !== null && prevSummary
      ? { auditId: prev.audit_id, score: prev.score, categories: prevSummary.categories }
      : null,
    { auditId: input.auditId, score: input.score, categories: input.summary.categories },
    input.issues,
  );
  if (!report?.regressed) return report;
  const schedule = (await kv.get<ScheduleRecord>(keys.schedule(input.project.id))).value;
  recordEvent(op, queue, {
    accountId: input.accountId,
    event: "audit.regressed",
    now: input.now,
    data: {
      project_id: input.project.id,
      project_name: input.project.name,
      scheduled: schedule?.lastRun?.auditId === input.auditId,
      completed_at: new Date(input.now).toISOString(),
      ...report,
    },
  });
  return report;
}
