/**
 * The regression report of a completed audit against the project's previous completed audit:
 * new critical and warning issues, fixed issues, and the score and category deltas. Pure: the
 * audit pipeline hands it the issue comparison it stores (new / persisting / fixed per check)
 * and both audits' scores; it decides whether the audit regressed (`audit.regressed`).
 *
 * @module
 */

export type Severity = "critical" | "warning" | "info";

/** One check of the current audit's comparison, with the catalogue's severity and title. */
export interface ComparedIssue {
  check: string;
  severity: Severity;
  title: string;
  /** Affected items now (0 for a fixed check). */
  affected: number;
  change: "new" | "persisting" | "fixed";
}

export interface ScoredAudit {
  auditId: string;
  score: number;
  categories: Record<string, number>;
}

export interface Delta {
  before: number;
  after: number;
  delta: number;
}

export interface RegressionReport {
  audit_id: string;
  previous_audit_id: string;
  score: Delta;
  categories: Record<string, Delta>;
  new_critical: { check: string; title: string; affected_count: number }[];
  new_warning: { check: string; title: string; affected_count: number }[];
  fixed: { check: string; severity: Severity; title: string }[];
  /** True sizes of the three lists above (each lists at most `MAX_LISTED`). */
  counts: { new_critical: number; new_warning: number; fixed: number };
  /** The score dropped, or a critical issue appeared that the previous audit did not have. */
  regressed: boolean;
  /** Why it regressed, in the order checked: `score_dropped`, `new_critical_issues`. */
  reasons: ("score_dropped" | "new_critical_issues")[];
}

/** At most this many issues per list in an event, so a payload stays small (counts stay true). */
export const MAX_LISTED = 25;

/**
 * The report, or null when there is no previous completed audit to compare with.
 *
 * @example
 * ```ts
 * const r = regressionReport(prev, curr, issues);
 * if (r?.regressed) recordEvent(op, queue, { event: "audit.regressed", data: { ...r }, ... });
 * ```
 */
export function regressionReport(
  previous: ScoredAudit | null,
  current: ScoredAudit,
  issues: readonly ComparedIssue[],
): RegressionReport | null {
  if (!previous) return null;
  const categories: Record<string, Delta> = {};
  for (const name of Object.keys(current.categories).sort()) {
    const before = previous.categories[name];
    if (typeof before !== "number") continue;
    const after = current.categories[name];
    categories[name] = { before, after, delta: after - before };
  }
  const listed = (severity: Severity) =>
    issues.filter((i) => i.change === "new" && i.severity === severity)
      .map((i) => ({ check: i.check, title: i.title, affected_count: i.affected }));
  const newCritical = listed("critical");
  const newWarning = listed("warning");
  const fixed = issues.filter((i) => i.change === "fixed")
    .map((i) => ({ check: i.check, severity: i.severity, title: i.title }));
  const score = {
    before: previous.score,
    after: current.score,
    delta: current.score - previous.score,
  };
  const reasons: RegressionReport["reasons"] = [];
  if (score.delta < 0) reasons.push("score_dropped");
  if (newCritical.length > 0) reasons.push("new_critical_issues");
  return {
    audit_id: current.auditId,
    previous_audit_id: previous.auditId,
    score,
    categories,
    new_critical: newCritical.slice(0, MAX_LISTED),
    new_warning: newWarning.slice(0, MAX_LISTED),
    fixed: fixed.slice(0, MAX_LISTED),
    counts: {
      new_critical: newCritical.length,
      new_warning: newWarning.length,
      fixed: fixed.length,
    },
    regressed: reasons.length > 0,
    reasons,
  };
}
