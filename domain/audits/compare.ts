/**
 * The per-check comparison of a finished audit with the project's previous completed audit:
 * which checks are new, persisting or fixed, stored under `auditIssues` and read back by the
 * findings listings (domain/audits/results.ts) and the next audit's comparison; and the audit's
 * "Fix first" list as every reader (report, Markdown) takes it.
 *
 * @module
 */
import type { IssueChange, StoredIssue, StoredIssues } from "./types.ts";
import {
  ALL_CHECKS,
  CHECKS_BY_ID,
  fixFirst,
  type FixFirstInput,
  type FixFirstItem,
} from "../audit_engine/mod.ts";
import type { Severity } from "../audit_engine/types.ts";
import type { AuditChanges } from "./record.ts";

const SEVERITY_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

export type { IssueChange };

export type { StoredIssue };

export type { StoredIssues };

/**
 * The issues of a finished crawl against the previous completed audit's: fired checks worst
 * first (severity, affected count, id), then the checks that no longer fire.
 */
export function compareIssues(
  tallies: Record<string, [number, number]>,
  stored: Record<string, number>,
  previous: StoredIssues | null,
  previousAuditId: string | null,
): { issues: StoredIssues; changes: AuditChanges } {
  const before = new Set(
    (previous?.issues ?? []).filter((i) => i.change !== "fixed").map((i) => i.check),
  );
  const fired: StoredIssue[] = [];
  for (const c of ALL_CHECKS) {
    const t = tallies[c.id];
    if (!t || t[1] <= 0) continue;
    fired.push({
      check: c.id,
      affected: t[1],
      eligible: t[0],
      stored: stored[c.id] ?? 0,
      change: before.has(c.id) ? "persisting" : "new",
    });
  }
  const rank = (id: string) => SEVERITY_RANK[CHECKS_BY_ID.get(id)?.severity ?? "info"];
  fired.sort((a, b) =>
    rank(a.check) - rank(b.check) || b.affected - a.affected ||
    (a.check < b.check ? -1 : a.check > b.check ? 1 : 0)
  );
  const now = new Set(fired.map((i) => i.check));
  const fixed: StoredIssue[] = [...before].filter((id) => !now.has(id) && CHECKS_BY_ID.has(id))
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : 1))
    .map((check) => ({
      check,
      affected: 0,
      eligible: tallies[check]?.[0] ?? 0,
      stored: 0,
      change: "fixed" as const,
    }));
  const changes: AuditChanges = {
    previous_audit_id: previousAuditId,
    new: fired.filter((i) => i.change === "new").length,
    persisting: fired.filter((i) => i.change === "persisting").length,
    fixed: fixed.length,
  };
  return { issues: { previousAuditId, issues: [...fired, ...fixed] }, changes };
}

/**
 * The audit's "Fix first" list: the one its summary stored at completion, or, for an audit
 * completed before the list existed, the same ranking over its stored issues' counts.
 */
export function auditFixFirst(
  summary: { fix_first?: FixFirstItem[] } | null,
  issues: readonly (FixFirstInput & { change: IssueChange })[],
): FixFirstItem[] {
  return summary?.fix_first ?? fixFirst(issues.filter((i) => i.change !== "fixed"));
}
