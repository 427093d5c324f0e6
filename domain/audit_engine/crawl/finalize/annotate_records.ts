/**
 * Pass 4, the records again: orphans (sitemap pages no crawled page links to or shows in a
 * frame) and pages with a single inlink are found, and each record gets its inlinks, link score
 * and the site checks that hit it (written only when something changed). Then, only when
 * single-inlink pages were found, pass 5 reads the links once more to name the linking page of
 * each one the evidence keeps (rather than keeping every URL's first linker: 4 bytes per URL).
 *
 * @example
 * ```ts
 * import { checksByUrl, evaluateSite } from "./site_checks.ts";
 * import type { Facts } from "./facts.ts";
 * import type { LinkGraph } from "./links.ts";
 * import type { CrawlState } from "../state.ts";
 * import type { WriteBatch } from "../store.ts";
 * declare const kv: Deno.Kv, auditId: string, state: CrawlState, f: Facts, batch: WriteBatch;
 * declare const graph: LinkGraph, linkScores: Annotations["linkScores"];
 * declare const framed: Annotations["framed"];
 * const marks = checksByUrl(evaluateSite(f));
 * await annotateRecords(kv, auditId, state.truncated, f, batch, { ...graph, framed, linkScores, marks });
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/mod.ts";
import { singleInlinkApplies } from "../../checks/structure.ts";
import type { Evidence } from "../../types.ts";
import type { LinkScores } from "../link_score.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { FINDINGS_CAP, listInPages, type PageRecord, urlHash, type WriteBatch } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { LinkGraph } from "./links.ts";
import { is2xx } from "./record.ts";
import type { UrlTable } from "./url_table.ts";

/** Links looked at between two yields while the linking pages are named. */
const LINKS_PER_YIELD = 16_384;

/** A single-inlink item waiting for its linking page's URL; `target`: its own URL's hash. */
interface Single {
  item: Evidence;
  target: number;
}

/**
 * Sees every record as the annotation leaves it (its URL and the checks that hit it: final) and
 * writes beside it in the pass's batch; `end` once every record was seen. What reads every final
 * record (the audit's page groups) then needs no read of its own.
 */
export interface FinalRecordSink {
  see(url: string, checks: readonly string[], batch: WriteBatch): void;
  end(batch: WriteBatch): void;
}

/** What annotating the records reads from the passes before it. */
export interface Annotations extends LinkGraph {
  /** URL hashes crawled pages show in a frame: not orphans (finalize/resources.ts). */
  framed: ReadonlySet<number>;
  linkScores: LinkScores;
  /** URL → site checks whose items name it (site_checks.ts `checksByUrl`). */
  marks: ReadonlyMap<string, ReadonlySet<string>>;
  /** Where the records' keys are cut into ranges read side by side (store.ts `listInPages`). */
  splits?: readonly string[];
  /** Sees each record once annotated. */
  sink?: FinalRecordSink;
}

/** Fills `f.orphans` and `f.singleInlink` and queues each changed record's update in `batch`. */
export async function annotateRecords(
  kv: Deno.Kv,
  auditId: string,
  truncated: boolean,
  f: Facts,
  batch: WriteBatch,
  { urls, framed, linkScores, marks, splits, sink }: Annotations,
): Promise<void> {
  // Single-inlink items wait for their linker's URL (pass 5).
  const singles: Single[] = [];
  for await (const page of listInPages(kv, keys.auditPages(auditId), 500, splits)) {
    for (const { value: r } of page) {
      const inl = urls.inlinksOf(r.hash);
      let orphan = false;
      if (
        !truncated && r.inSitemap && r.state === "fetched" && r.html && is2xx(r) &&
        r.url !== f.start.url && r.url !== f.home?.url
      ) {
        f.orphanCandidates++;
        if (inl === 0 && !framed.has(r.hash)) {
          orphan = true;
          f.orphans.add({ url: r.url, inlinks: 0 });
        }
      }
      let single = false;
      if (
        r.state === "fetched" && r.html && is2xx(r) && !r.noindex && r.canonicalOther === null &&
        r.url !== f.start.url && r.url !== f.home?.url
      ) {
        f.inlinkCandidates++;
        if (inl === 1) {
          single = true;
          const item: Evidence = { url: r.url, inlinks: 1, linked_from: null };
          if (f.singleInlink.items.length < FINDINGS_CAP) {
            singles.push({ item, target: r.hash });
          }
          f.singleInlink.add(item);
        }
      }
      const site = marks.get(r.url);
      const checks = new Set(r.checks);
      if (site) { for (const c of site) checks.add(c); }
      if (orphan) checks.add("orphan_page");
      if (single && singleInlinkApplies(f)) checks.add("single_inlink_pages");
      const linkScore = linkScores.scoreOf(r.hash) ?? undefined;
      if (r.inlinks !== inl || checks.size !== r.checks.length || r.linkScore !== linkScore) {
        const next: PageRecord = { ...r, inlinks: inl, checks: [...checks] };
        if (linkScore === undefined) delete next.linkScore;
        else next.linkScore = linkScore;
        batch.set(keys.auditPage(auditId, r.url), next);
        sink?.see(r.url, next.checks, batch);
      } else sink?.see(r.url, r.checks, batch);
    }
    // Its writes commit while the next page is read, a few at once (a slow KV's commits would
    // pile up, with the values they hold, behind a fast read).
    await batch.paced();
  }
  sink?.end(batch);
  await nameLinkers(kv, auditId, urls, singles, splits);
}

/**
 * Pass 5, only when single-inlink pages were found: one more read of the links to name each
 * one's linking page (at most FINDINGS_CAP hashes held). The one followable link to such a page
 * is the one the link pass counted (links.ts): not from itself, from a page with a record.
 */
async function nameLinkers(
  kv: Deno.Kv,
  auditId: string,
  urls: UrlTable,
  singles: Single[],
  splits?: readonly string[],
): Promise<void> {
  if (singles.length === 0) return;
  const wanted = new Map<number, Evidence[]>();
  for (const s of singles) {
    const list = wanted.get(s.target);
    if (list) list.push(s.item);
    else wanted.set(s.target, [s.item]);
  }
  const pace = new Pacer(LINKS_PER_YIELD);
  for await (const page of listInPages(kv, keys.auditLinksAll(auditId), 500, splits)) {
    for (const e of page) {
      const { t, f: followable } = e.value;
      if (pace.due(followable)) await yieldToLoop();
      const url = e.key[2];
      let self: number | null = null;
      for (let i = 0; i < followable && i < t.length; i++) {
        const items = wanted.get(t[i]);
        if (!items) continue;
        self ??= urlHash(url);
        if (t[i] === self || !urls.has(self)) continue;
        for (const item of items) item.linked_from = url;
      }
    }
  }
}
