/**
 * "Fix first": the few findings of an audit worth fixing before the others, ranked by what they
 * cost in search times how much of the site they reach (docs/audit.md "Fix first"). Severity and
 * counts alone put hygiene headers missing on every page above a missing title or a broken link
 * on two; the impact each check declares beside its definition (checks/*.ts) turns that around.
 *
 * priority = IMPACT_WEIGHT[impact] × √reach, reach = affected ÷ eligible (the share of what the
 * check examined that it found affected; a site-wide finding has reach 1). The weights grow by
 * 4 per impact level and reach counts by its square root, so a finding one level costlier
 * outranks one on up to 16 times as much of the site: a broken path on a few pages of a large
 * site still leads a minor site-wide finding, which a linear reach would let it trail. Impact 0
 * (a fact to know, often intended) never leads.
 *
 * @example
 * ```ts
 * import { fixFirst } from "./fix_first.ts";
 * const items = fixFirst([
 *   { check: "csp_missing", eligible: 27, affected: 23 },
 *   { check: "broken_internal_links", eligible: 27, affected: 2 },
 * ]);
 * console.log(items.map((i) => i.title)); // the broken links first
 * ```
 *
 * @module
 */
import { checkDoc } from "./check_docs.ts";
import { CHECKS_BY_ID } from "./checks/index.ts";
import type { Effort, FixFirstItem, Impact, Severity } from "./types.ts";

export type { FixFirstItem };

/** Items a "Fix first" list holds, at most. */
export const FIX_FIRST_SIZE = 5;

/** Weight of each impact level in the priority (docs/audit.md mirrors it). */
export const IMPACT_WEIGHT: Readonly<Record<Impact, number>> = {
  0: 0,
  1: 1,
  2: 4,
  3: 16,
  4: 64,
  5: 256,
};

/** What each impact level means, in plain words (the report and docs show them). */
export const IMPACT_NAMES: Readonly<Record<Impact, string>> = {
  0: "no search cost",
  1: "hygiene",
  2: "minor",
  3: "moderate",
  4: "high",
  5: "blocks indexing",
};

/** A check's count in an audit (a stored issue or a tally). */
export interface FixFirstInput {
  check: string;
  eligible: number;
  affected: number;
}

/** A finding's priority: its impact's weight times the square root of its reach. */
export function priorityOf(impact: Impact, reach: number): number {
  return IMPACT_WEIGHT[impact] * Math.sqrt(reach);
}

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
const EFFORT_RANK: Record<Effort, number> = { low: 0, medium: 1, high: 2 };
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/**
 * The `size` findings with the largest priority (`priorityOf`), best first; ties go to the costlier
 * impact, then the cheaper fix, the graver severity, the larger count and the id.
 */
export function fixFirst(
  counts: Iterable<FixFirstInput>,
  size: number = FIX_FIRST_SIZE,
): FixFirstItem[] {
  const ranked: { item: FixFirstItem; exact: number }[] = [];
  for (const t of counts) {
    const check = CHECKS_BY_ID.get(t.check);
    if (!check || t.affected <= 0 || t.eligible <= 0 || check.impact === 0) continue;
    const reach = Math.min(1, t.affected / t.eligible);
    const exact = priorityOf(check.impact, reach);
    const doc = checkDoc(check);
    ranked.push({
      exact,
      item: {
        check: check.id,
        title: check.title,
        category: check.category,
        severity: check.severity,
        impact: check.impact,
        effort: check.effort,
        affected_count: t.affected,
        eligible_count: t.eligible,
        reach: round3(reach),
        priority: round3(exact),
        cost: doc.meaning,
        fix: doc.fix,
      },
    });
  }
  ranked.sort((a, b) =>
    b.exact - a.exact || b.item.impact - a.item.impact ||
    EFFORT_RANK[a.item.effort] - EFFORT_RANK[b.item.effort] ||
    SEVERITY_RANK[a.item.severity] - SEVERITY_RANK[b.item.severity] ||
    b.item.affected_count - a.item.affected_count ||
    (a.item.check < b.item.check ? -1 : a.item.check > b.item.check ? 1 : 0)
  );
  return ranked.slice(0, size).map((r) => r.item);
}
