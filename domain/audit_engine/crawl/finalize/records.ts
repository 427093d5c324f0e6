/**
 * Pass 1, the records: every URL's record read in pages of 500, counting statuses, failures and
 * robots blocks, reconciling the sitemap with what the crawl found, the TTFB of HTML pages, and
 * judging canonical and hreflang targets page by page. It keeps the internal redirects, the
 * broken link targets and the URLs whose failure another check charges (`markLater`), all by URL
 * hash in typed arrays, names those URLs in KV (url_names.ts), and registers the link score's
 * pages. Each of those reductions registers itself (reducer.ts) in its
 * own file; this pass is their dispatcher.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { FailingUrls } from "./failing.ts";
 * import type { CrawlState } from "../state.ts";
 * declare const kv: Deno.Kv, auditId: string, state: CrawlState, f: Facts, failing: FailingUrls;
 * declare const linkScores: Parameters<typeof readRecords>[5];
 * const read = await readRecords(kv, auditId, state.startUrl, f, failing, linkScores);
 * read.redirects.size; // internal redirects
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/mod.ts";
import type { UrlSummary } from "../../types.ts";
import type { LinkScores } from "../link_score.ts";
import { listInPages, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import { type FailingUrls, HashList } from "./failing.ts";
import { Redirects } from "./redirects.ts";
import { BrokenTargets } from "./targets.ts";
import { UrlNames } from "./url_names.ts";
import { UrlTable } from "./url_table.ts";
import type { RecordReducer, RecordsPass } from "./reducer.ts";
import { crawlCounts } from "./crawl_counts.ts";
import { fetchOutcomes } from "./fetch_outcomes.ts";
import { indexablePages } from "./indexable.ts";
import { ttfbReducer } from "./ttfb.ts";
import { nonHtmlFiles } from "./non_html.ts";
import { sitemapStatus } from "./sitemap_status.ts";
import { canonicalReducer } from "./canonical_targets.ts";
import { hreflangReducer } from "./hreflang_targets.ts";

/**
 * Every reduction on the records pass, in the order each record meets them (fetch outcomes
 * record failures before they mark failing sitemap entries; after each KV page the canonical
 * targets are judged before the hreflang alternates).
 */
export const RECORD_REDUCERS: readonly RecordReducer[] = [
  crawlCounts,
  fetchOutcomes,
  indexablePages,
  ttfbReducer,
  canonicalReducer,
  hreflangReducer,
  nonHtmlFiles,
  sitemapStatus,
];

/** What the records pass keeps for the passes after it. */
export interface RecordsRead {
  /** Internal redirects, by URL hash. */
  redirects: Redirects;
  /** Failed fetches and error statuses that do not redirect, by URL hash. */
  broken: BrokenTargets;
  /**
   * URLs (hashes) whose failure another check charges (the start URL, failing or redirecting
   * sitemap entries, canonical targets and hreflang alternates): see failing.ts.
   */
  markLater: HashList;
  /** The strings of the redirecting and failing URLs, in KV, flushed. */
  names: UrlNames;
  /** The first fetched https URL (for the records sample). */
  firstHttps: UrlSummary | null;
  /** Failed fetches, a sample (crawl_counts.ts; for the records sample). */
  failedSample: UrlSummary[];
  /** Every recorded URL, for the link pass to count inlinks into (10 bytes per URL). */
  urls: UrlTable;
}

/** Reads every record once, handing it to each of RECORD_REDUCERS; fills `f` and `failing`. */
export async function readRecords(
  kv: Deno.Kv,
  auditId: string,
  startUrl: string,
  f: Facts,
  failing: FailingUrls,
  linkScores: LinkScores,
  /** Where the records' keys are cut into ranges read side by side (store.ts `listInPages`). */
  splits: readonly string[] = [],
  /** The URL table to fill (its keys may be the link score's: finalize.ts). */
  urls: UrlTable = new UrlTable(),
): Promise<RecordsRead> {
  const pass: RecordsPass = {
    kv,
    auditId,
    f,
    failing,
    linkScores,
    redirects: new Redirects(),
    broken: new BrokenTargets(),
    markLater: new HashList(),
    names: new UrlNames(kv, auditId),
    firstHttps: null,
    failedSample: [],
  };
  pass.markLater.add(urlHash(startUrl));
  const reductions = RECORD_REDUCERS.map((r) => r.start(pass));
  for await (const page of listInPages(kv, keys.auditPages(auditId), 500, splits)) {
    for (const { value: r } of page) {
      urls.add(r.hash);
      for (const red of reductions) red.add(r);
    }
    for (const red of reductions) await red.endPage?.();
    pass.names.endPage();
  }
  for (const red of reductions) red.finish?.();
  await pass.names.flush();
  const { redirects, broken, markLater, names, firstHttps, failedSample } = pass;
  return { redirects, broken, markLater, names, firstHttps, failedSample, urls };
}
