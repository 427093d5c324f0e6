/**
 * The end of the finalize step: every site check run over the finished facts, their evidence
 * stored (a site check that names no item is about the site: its evidence is the start URL),
 * the pending writes flushed, and the audit scored from the page checks' tallies and the site
 * checks' outcomes (with its "Fix first" list, fix_first.ts).
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { CrawlState } from "../state.ts";
 * import type { FindingsWriter, WriteBatch } from "../store.ts";
 * declare const state: CrawlState, f: Facts, findings: FindingsWriter, batch: WriteBatch;
 * const outcome = await scoreOutcome(state, f, findings, batch);
 * ```
 *
 * @module
 */
import { ALL_CHECKS } from "../../checks/index.ts";
import { fixFirst } from "../../fix_first.ts";
import { scoreAudit } from "../../scoring.ts";
import type { CheckTally } from "../../types.ts";
import type { CrawlOutcome, CrawlState } from "../state.ts";
import type { FindingsWriter, WriteBatch } from "../store.ts";
import type { Facts } from "./facts.ts";
import { evaluateSite } from "./site_checks.ts";

/**
 * Stores the site checks' evidence, flushes `batch` (or, unless `flush`, sends it: its owner's
 * commit waits for it) and answers the scored outcome.
 */
export async function scoreOutcome(
  state: CrawlState,
  f: Facts,
  findings: FindingsWriter,
  batch: WriteBatch,
  flush = true,
): Promise<CrawlOutcome> {
  const outcomes = evaluateSite(f);
  const tallies = new Map<string, CheckTally>();
  for (const [id, [eligible, affected]] of Object.entries(state.tallies)) {
    tallies.set(id, { eligible, affected });
  }
  for (const [id, o] of outcomes) {
    if (!o) continue;
    tallies.set(id, { eligible: o.eligible, affected: o.affected });
    if (o.affected > 0) findings.add(id, "", o.items?.length ? o.items : [{ url: state.startUrl }]);
  }
  if (flush) await batch.flush();
  else batch.send();
  const scored = scoreAudit(ALL_CHECKS, tallies);
  const plain: Record<string, [number, number]> = {};
  for (const [id, t] of tallies) plain[id] = [t.eligible, t.affected];
  return {
    score: scored.score,
    summary: {
      ...scored.summary,
      fix_first: fixFirst(
        [...tallies].map(([check, t]) => ({ check, eligible: t.eligible, affected: t.affected })),
      ),
    },
    pagesCrawled: state.completed + state.failed,
    jobsCompleted: state.completed,
    jobsFailed: state.failed,
    tallies: plain,
    host: new URL(state.startUrl).host,
    language: state.language,
    truncated: state.truncated,
    limitsHit: state.capsHit ?? {},
    unfetched: state.unfetched ?? 0,
    ...(state.scope ? { scopeLeftOut: state.scope.leftOut } : {}),
  };
}
