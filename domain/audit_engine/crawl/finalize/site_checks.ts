/**
 * Running the site checks over the facts, and reading their outcomes back per URL (which site
 * checks hit which page, for the inventory).
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * declare const f: Facts;
 * const byUrl = checksByUrl(evaluateSite(f));
 * byUrl.get("https://example.com/a"); // Set { "title_duplicate", ... }
 * ```
 *
 * @module
 */
import { SITE_CHECKS } from "../../checks/index.ts";
import type { SiteFacts, SiteOutcome } from "../../types.ts";

/** Every site check's outcome (null: not applicable), by check id. */
export function evaluateSite(f: SiteFacts): Map<string, SiteOutcome | null> {
  return new Map(SITE_CHECKS.map((c) => [c.id, c.evaluate(f)] as const));
}

/** URL → ids of the site checks whose stored items name it (items are capped per check). */
export function checksByUrl(outcomes: Map<string, SiteOutcome | null>): Map<string, Set<string>> {
  const marks = new Map<string, Set<string>>();
  for (const [id, o] of outcomes) {
    if (!o || o.affected === 0 || !o.items) continue;
    for (const item of o.items) {
      if (typeof item.url !== "string") continue;
      let set = marks.get(item.url);
      if (!set) marks.set(item.url, set = new Set());
      set.add(id);
    }
  }
  return marks;
}
