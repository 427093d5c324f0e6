/**
 * Runs every page check on one page: counts where each applied and fired (the tallies scoring
 * reads) and turns each verdict into evidence items (see `PageVerdict` in types.ts).
 *
 * @module
 */
import { PAGE_CHECKS } from "./checks/index.ts";
import type { CheckTally, Evidence, PageCheck, PageContext, PageVerdict } from "./types.ts";

/** A page check that fired on a page, with its items (each names the page in `url`). */
export interface FiredCheck {
  id: string;
  items: Evidence[];
}

/** Evidence items of a verdict, or null when the check did not fire. */
export function verdictItems(v: PageVerdict, url: string): Evidence[] | null {
  if (v === false || v === null || v === undefined) return null;
  if (v === true) return [{ url }];
  if (Array.isArray(v)) return v.length === 0 ? null : v.map((e) => ({ url, ...e }));
  return [{ url, ...v }];
}

/**
 * Whether page check `c` judges this page: "eligible"; "noindex" when the check reads indexable
 * pages only and this one is noindex; "narrowed" when the check's own `applies` leaves the page
 * out. The one rule, shared by the crawl (`PageTally.add`) and a re-check of one check
 * (domain/audit_engine/recheck_eval.ts), so both judge a page alike. Returns constants: no allocation on
 * the crawl's hot path.
 */
export function pageEligibility(
  c: PageCheck,
  ctx: PageContext,
): "eligible" | "noindex" | "narrowed" {
  if (c.eligibility === "indexable" && !ctx.indexable) return "noindex";
  if (c.applies && !c.applies(ctx)) return "narrowed";
  return "eligible";
}

/** Per-page-check eligible/affected counters. */
export class PageTally {
  readonly eligible = new Uint32Array(PAGE_CHECKS.length);
  readonly affected = new Uint32Array(PAGE_CHECKS.length);

  /** Runs every page check on one page; returns the checks that fired with their evidence. */
  add(ctx: PageContext): FiredCheck[] {
    const fired: FiredCheck[] = [];
    const url = ctx.url.href;
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      const c = PAGE_CHECKS[i];
      if (pageEligibility(c, ctx) !== "eligible") continue;
      this.eligible[i]++;
      const items = verdictItems(c.evaluate(ctx), url);
      if (items) {
        this.affected[i]++;
        fired.push({ id: c.id, items });
      }
    }
    return fired;
  }

  into(map: Map<string, CheckTally>): void {
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      map.set(PAGE_CHECKS[i].id, { eligible: this.eligible[i], affected: this.affected[i] });
    }
  }

  /** Plain form for the crawl state: check id → [eligible, affected]. */
  toJSON(): Record<string, [number, number]> {
    const out: Record<string, [number, number]> = {};
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      if (this.eligible[i] > 0) out[PAGE_CHECKS[i].id] = [this.eligible[i], this.affected[i]];
    }
    return out;
  }

  static from(saved: Record<string, [number, number]>): PageTally {
    const t = new PageTally();
    for (let i = 0; i < PAGE_CHECKS.length; i++) {
      const s = saved[PAGE_CHECKS[i].id];
      if (s) [t.eligible[i], t.affected[i]] = s;
    }
    return t;
  }
}
