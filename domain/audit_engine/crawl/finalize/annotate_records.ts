/**
 * Pass 4, the records again: orphans (sitemap pages no crawled page links to or shows in a
 * frame) and pages with a single inlink are found, and each record gets its inlinks, link score
 * and the site checks that hit it (written only when something changed). Then, only when single-inlink pages were found,
 * pass 5 reads the records once more to name each one's linking page.
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
import { FINDINGS_CAP, listInPages, type PageRecord, type WriteBatch } from "../store.ts";
import type { Facts } from "./facts.ts";
import type { LinkGraph } from "./links.ts";
import { is2xx } from "./record.ts";

/** A single-inlink item waiting for its linking page's URL, known by hash. */
interface Single {
  item: Evidence;
  linker: number;
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

/**
 * Fills `f.orphans` and `f.singleInlink` and queues each changed record's update in `batch`.
 * Frees the first linkers (url_table.ts).
 */
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
            singles.push({ item, linker: urls.firstLinkerOf(r.hash) });
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
  }
  sink?.end(batch);
  urls.releaseLinkers();
  await nameLinkers(kv, auditId, singles, splits);
}

/**
 * Pass 5, only when single-inlink pages were found: one more read of the records to name each
 * one's linking page (at most FINDINGS_CAP hashes held).
 */
async function nameLinkers(
  kv: Deno.Kv,
  auditId: string,
  singles: Single[],
  splits?: readonly string[],
): Promise<void> {
  if (singles.length === 0) return;
  const wanted = new Map<number, Evidence[]>();
  for (const s of singles) {
    const list = wanted.get(s.linker);
    if (list) list.push(s.item);
    else wanted.set(s.linker, [s.item]);
  }
  for await (const page of listInPages(kv, keys.auditPages(auditId), 500, splits)) {
    for (const { value: r } of page) {
      for (const item of wanted.get(r.hash) ?? []) item.linked_from = r.url;
    }
  }
}
