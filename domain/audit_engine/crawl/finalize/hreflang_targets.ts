/**
 * hreflang alternates, one page of records at a time (the records pass calls it): internal
 * alternates the crawl reached (it follows them) that redirect, fail, are blocked, noindex or
 * canonicalised elsewhere (hreflang_target_bad, one item per alternate), and good alternates
 * that do not list the page among their own (hreflang_no_return). Alternates not crawled (the
 * budget ran out) are not judged.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { PageRecord } from "../store.ts";
 * import type { HashList } from "./failing.ts";
 * declare const kv: Deno.Kv, auditId: string, pages: PageRecord[], f: Facts, markLater: HashList;
 * // `pages`: records of one KV page with hreflang alternates.
 * await hreflangAlternates(kv, auditId, pages, f, markLater);
 * ```
 *
 * @module
 */
import { getPages, type PageRecord, urlHash } from "../store.ts";
import type { HashList } from "./failing.ts";
import type { Facts } from "./facts.ts";
import { is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

/** Why a crawled hreflang alternate cannot stand in a cluster, or null when it can. */
function alternateProblem(t: PageRecord): string | null {
  if (t.state === "blocked") return "blocked by robots.txt";
  if (t.state === "failed") return "fetch failed";
  if (t.location !== null) return "redirects";
  if (!is2xx(t)) return "error status";
  if (!t.html) return "not an HTML page";
  if (t.noindex) return "noindex";
  if (t.canonicalOther !== null) return "canonicalised to another URL";
  return null;
}

/**
 * Judges the alternates of a page of records. A failing or redirecting alternate goes into
 * `markLater` (hreflang_target_bad charges it, the status checks do not).
 */
export async function hreflangAlternates(
  kv: Deno.Kv,
  auditId: string,
  pages: PageRecord[],
  f: Facts,
  markLater: HashList,
): Promise<void> {
  if (pages.length === 0) return;
  const urls = [...new Set(pages.flatMap((p) => p.hreflang ?? []))];
  const got = await getPages(kv, auditId, urls);
  const byUrl = new Map<string, PageRecord>();
  got.forEach((t, i) => {
    if (t && t.state !== "unvisited" && t.state !== "queued") byUrl.set(urls[i], t);
  });
  for (const p of pages) {
    let judged = false;
    let returnsJudged = false;
    let bad = false;
    const missing: string[] = [];
    for (const u of p.hreflang ?? []) {
      const t = byUrl.get(u);
      if (!t) continue;
      judged = true;
      const problem = alternateProblem(t);
      // A failing alternate is charged here, not again by the status checks.
      if (t.state === "failed" || t.status >= 300) markLater.add(urlHash(t.url));
      if (problem !== null) {
        f.hreflangTargetBad.add(
          { url: p.url, alternate: u, target_status: t.status || null, reason: problem },
          !bad,
        );
        bad = true;
        continue;
      }
      returnsJudged = true;
      if (!(t.hreflang ?? []).includes(p.url)) missing.push(u);
    }
    if (judged) f.hreflangTargetPages++;
    if (!returnsJudged) continue;
    f.hreflangPages++;
    if (missing.length > 0) f.hreflangNoReturn.add({ url: p.url, no_return_from: missing });
  }
}

/** The records pass's reduction: HTML 200 pages with hreflang alternates, judged after each KV page of records. */
export const hreflangReducer: RecordReducer = {
  id: "hreflang_targets",
  start: (pass) => {
    let pages: PageRecord[] = [];
    return {
      add(r) {
        if (r.html && is2xx(r) && r.hreflang?.length) pages.push(r);
      },
      async endPage() {
        const batch = pages;
        pages = [];
        await hreflangAlternates(pass.kv, pass.auditId, batch, pass.f, pass.markLater);
      },
    };
  },
};
