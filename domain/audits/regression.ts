/**
 * The regression part of a completed audit's comparison with the project's previous completed
 * audit: new critical and warning issues, fixed issues, and the score and category deltas. Pure:
 * the audit pipeline hands it the per-check comparison it stores (new / persisting / fixed, see
 * `compareIssues` in compare.ts) and both audits' scores; it decides whether the audit
 * regressed (`audit.regressed`). Its fields extend the audit's `changes` object (additively) in
 * the `audit.completed` and `audit.regressed` events. It lives with audits because every
 * completed audit carries it, scheduled or not, and audits import nothing from the schedules.
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

export interface ListedIssue {
  check: string;
  title: string;
  affected_count: number;
}

/** The fields the regression comparison adds to an audit's `changes` in events. */
export interface RegressionFields {
  /** Null when there is no previous completed audit to compare with. */
  score: Delta | null;
  /** Categories both audits scored; empty without a previous audit. */
  categories: Record<string, Delta>;
  /** New critical checks (all fired critical checks on a project's first audit). */
  new_critical: ListedIssue[];
  new_warning: ListedIssue[];
  /** Checks that fired on the previous audit and no longer do (their count is `changes.fixed`). */
  fixed_issues: { check: string; severity: Severity; title: string }[];
  /** True sizes of the two `new_*` lists (each lists at most `MAX_LISTED`). */
  counts: { new_critical: number; new_warning: number };
  /** The score dropped, or a critical issue appeared that the previous audit did not have. */
  regressed: boolean;
  /** Why it regressed, in the order checked: `score_dropped`, `new_critical_issues`. */
  reasons: ("score_dropped" | "new_critical_issues")[];
}

/** At most this many issues per list in an event, so a payload stays small (counts stay true). */
export const MAX_LISTED = 25;

/**
 * The regression fields of `current` against `previous` (null: the project's first compared
 * audit, which never regresses).
 *
 * @example
 * ```ts
 * declare const prev: ScoredAudit | null, curr: ScoredAudit, issues: ComparedIssue[];
 * const r = regressionFields(prev, curr, issues);
 * if (r.regressed) console.log("emit audit.regressed with", r);
 * ```
 */
export function regressionFields(
  previous: ScoredAudit | null,
  current: ScoredAudit,
  issues: readonly ComparedIssue[],
): RegressionFields {
  const categories: Record<string, Delta> = {};
  if (previous) {
    for (const name of Object.keys(current.categories).sort()) {
      const before = previous.categories[name];
      if (typeof before !== "number") continue;
      const after = current.categories[name];
      categories[name] = { before, after, delta: after - before };
    }
  }
  const listed = (severity: Severity) =>
    issues.filter((i) => i.change === "new" && i.severity === severity)
      .map((i) => ({ check: i.check, title: i.title, affected_count: i.affected }));
  const newCritical = listed("critical");
  const newWarning = listed("warning");
  const fixed = issues.filter((i) => i.change === "fixed")
    .map((i) => ({ check: i.check, severity: i.severity, title: i.title }));
  const score = previous
    ? { before: previous.score, after: current.score, delta: current.score - previous.score }
    : null;
  const reasons: RegressionFields["reasons"] = [];
  if (previous && score!.delta < 0) reasons.push("score_dropped");
  if (previous && newCritical.length > 0) reasons.push("new_critical_issues");
  return {
    score,
    categories,
    new_critical: newCritical.slice(0, MAX_LISTED),
    new_warning: newWarning.slice(0, MAX_LISTED),
    fixed_issues: fixed.slice(0, MAX_LISTED),
    counts: { new_critical: newCritical.length, new_warning: newWarning.length },
    regressed: reasons.length > 0,
    reasons,
  };
}
