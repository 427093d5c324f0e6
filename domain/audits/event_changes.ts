/**
 * The comparison an audit's completion events carry: main's `changes` (new / persisting / fixed
 * counts against the previous completed audit) extended with the regression fields
 * (`regression.ts`), built from the stored per-check comparison in the completing commit.
 *
 * @module
 */
import { CHECKS_BY_ID } from "../audit_engine/mod.ts";
import type { ProjectRecord } from "../projects/types.ts";
import { type ComparedIssue, type RegressionFields, regressionFields } from "./regression.ts";
import type { StoredIssue } from "./compare.ts";

/** The per-check comparison as `compareIssues` stores it (compare.ts), as far as events need it. */
export type StoredComparison = Pick<StoredIssue, "check" | "affected" | "change">;

/** The stored comparison with each check's severity and title from the check catalogue. */
export function comparedIssues(issues: readonly StoredComparison[]): ComparedIssue[] {
  const out: ComparedIssue[] = [];
  for (const i of issues) {
    const check = CHECKS_BY_ID.get(i.check);
    if (!check) continue;
    out.push({
      check: i.check,
      severity: check.severity,
      title: check.title,
      affected: i.affected,
      change: i.change,
    });
  }
  return out;
}

/**
 * The regression fields of a completing audit. `project` is the project before this audit
 * became its latest; its `latestAudit` is the previous audit's score when it is the audit the
 * stored comparison was made against (`previousAuditId`).
 */
export function regressionOf(
  project: ProjectRecord,
  previousAuditId: string | null,
  current: { auditId: string; score: number; categories: Record<string, number> },
  issues: readonly StoredComparison[],
): RegressionFields {
  const prev = project.latestAudit;
  const prevCategories = (prev?.summary as { categories?: Record<string, number> } | null)
    ?.categories;
  const previous = previousAuditId && prev?.audit_id === previousAuditId &&
      typeof prev.score === "number" && prevCategories
    ? { auditId: prev.audit_id, score: prev.score, categories: prevCategories }
    : null;
  return regressionFields(previous, current, comparedIssues(issues));
}
