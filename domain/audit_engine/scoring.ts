/**
 * Audit scoring: transparent, monotone and deterministic (docs/audit.md "Scoring in short"), and it
 * keeps telling sites apart below the first serious finding.
 *
 * 1. Per check: eligible E, affected A, r = A/E. Check score s = 1 when A = 0, else
 *    1 - (BASE_PENALTY + SPREAD_PENALTY * r): any occurrence costs, spread costs more, and a big
 *    site is not punished for size. Checks with E = 0 are not applicable and drop out.
 * 2. Category score = 100 * product over its fired checks of (1 - p * (1 - s)), p by severity.
 *    Each fired check takes a share of what is left, so a second and a third defect still lower
 *    a category that already has one (a weighted mean of check scores floors at 0 as soon as
 *    every weighted check it has fails, and then stops discriminating). Passing checks change
 *    nothing. A category with no applicable scored check is 100 and carries no weight overall.
 * 3. Overall = weighted mean of the categories, then scaled by the lowest fired cap (cap/100):
 *    the cap is still a ceiling, and two capped sites still differ by everything else.
 * Every step is non-increasing in A and in severity; rounding happens once, at the end.
 *
 * @module
 */
import type { Category, CheckBase, CheckTally, ScoreResult, Severity, TopIssue } from "./types.ts";
import { CATEGORIES } from "./types.ts";

/** THE weight table. docs/audit.md mirrors it ("Scoring in short" and "Scoring"); change them together. */
export const SCORING = {
  /**
   * Share of its category's remaining score one check takes when it affects every eligible
   * page (info weighs 0: listed and counted, never scored).
   */
  severityPenalty: { critical: 0.5, warning: 0.2, info: 0 } as Record<Severity, number>,
  basePenalty: 0.25,
  spreadPenalty: 0.75,
  categoryWeight: {
    indexability: 0.30,
    structure: 0.25,
    security: 0.15,
    performance: 0.15,
    mobile: 0.15,
    // Added after the five (issue 32): the others keep their weights, so a site whose agents
    // category is 100 gains a little, and one with a broken discovery document loses a little.
    agents: 0.10,
  } as Record<Category, number>,
  /** Overall score ceilings when these checks fire (the overall is scaled by cap/100). */
  caps: {
    start_url_blocked: 30,
    home_page_error: 30,
    noindex_sitewide: 30,
    robots_txt_unreachable: 79,
    tls_invalid: 79,
    very_slow_ttfb: 79,
  } as Record<string, number>,
  topIssues: 10,
} as const;

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

export type { TopIssue };

export type { ScoreResult };

/** Score of one check in [0, 1]. */
export function checkScore(t: CheckTally): number {
  if (t.affected <= 0) return 1;
  const r = Math.min(1, t.affected / t.eligible);
  return 1 - (SCORING.basePenalty + SCORING.spreadPenalty * r);
}

/** Scores a finished audit from each check's tally (missing tally = not applicable). */
export function scoreAudit(
  checks: readonly CheckBase[],
  tallies: ReadonlyMap<string, CheckTally>,
): ScoreResult {
  /** Remaining share of each category (product of fired checks' factors). */
  const share: Record<string, number> = {};
  /** The category has at least one applicable check that could cost something. */
  const scored: Record<string, boolean> = {};
  for (const c of CATEGORIES) {
    share[c] = 1;
    scored[c] = false;
  }
  const counts: Record<Severity, number> = { critical: 0, warning: 0, info: 0 };
  const fired: TopIssue[] = [];
  let cap = 100;
  for (const check of checks) {
    const t = tallies.get(check.id);
    if (!t || t.eligible <= 0) continue;
    const p = SCORING.severityPenalty[check.severity];
    if (p > 0) scored[check.category] = true;
    if (t.affected > 0) {
      share[check.category] *= 1 - p * (1 - checkScore(t));
      counts[check.severity] += t.affected;
      fired.push({
        check: check.id,
        severity: check.severity,
        title: check.title,
        affected_count: t.affected,
      });
      const c = SCORING.caps[check.id];
      if (c !== undefined) cap = Math.min(cap, c);
    }
  }
  const categories = {} as Record<Category, number>;
  let overallNum = 0;
  let overallDen = 0;
  for (const c of CATEGORIES) {
    if (scored[c]) {
      const s = share[c];
      categories[c] = Math.round(100 * s);
      overallNum += SCORING.categoryWeight[c] * s;
      overallDen += SCORING.categoryWeight[c];
    } else categories[c] = 100;
  }
  const overall = overallDen > 0 ? (100 * overallNum) / overallDen : 100;
  fired.sort((a, b) =>
    SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] ||
    b.affected_count - a.affected_count ||
    (a.check < b.check ? -1 : a.check > b.check ? 1 : 0)
  );
  return {
    score: Math.max(0, Math.round((overall * cap) / 100)),
    summary: {
      issues_critical: counts.critical,
      issues_warning: counts.warning,
      issues_info: counts.info,
      top_issues: fired.slice(0, SCORING.topIssues),
      categories,
    },
  };
}
