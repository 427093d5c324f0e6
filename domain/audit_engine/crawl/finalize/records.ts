/**
 * Pass 1, the records: every URL's record read in pages of 500, counting statuses, failures and
 * robots blocks, reconciling the sitemap with what the crawl found, the TTFB of HTML pages, and
 * judging canonical and hreflang targets page by page. It keeps the internal redirect map, the
 * broken link targets and the URLs whose failure another check charges (`markLater`), and
 * registers the link score's pages.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { FailingUrls } from "./failing.ts";
 * import type { CrawlState } from "../state.ts";
 * declare const kv: Deno.Kv, auditId: string, state: CrawlState, f: Facts, failing: FailingUrls;
 * declare const linkScores: Parameters<typeof readRecords>[5];
 * const read = await readRecords(kv, auditId, state.startUrl, f, failing, linkScores);
 * read.redirects; // url -> internal redirect target
 * ```
 *
 * @module
 */
import { keys } from "../../../platform/store.ts";
import type { UrlSummary } from "../../types.ts";
import type { LinkScores } from "../link_score.ts";
import { listInPages, type PageRecord } from "../store.ts";
import { canonicalTargets } from "./canonical_targets.ts";
import type { Facts } from "./facts.ts";
import type { FailingUrls } from "./failing.ts";
import { hreflangAlternates } from "./hreflang_targets.ts";
import { attempted, is2xx, summary } from "./record.ts";
import type { BrokenTarget } from "./targets.ts";
import { TtfbHistogram } from "./ttfb.ts";
// Text signatures only pages with this many words get (the page recorder indexes them).
import { DUP_MIN_WORDS } from "../page_recorder.ts";

/** Failed fetches kept in `SiteFacts.records` (a sample for checks that read URLs one by one). */
const RECORD_SAMPLE = 200;

/** What the records pass keeps for the passes after it. */
export interface RecordsRead {
  /** Internal redirects: url → target. */
  redirects: Map<string, string>;
  /** Failed fetches and error statuses that do not redirect, by URL hash. */
  broken: Map<number, BrokenTarget>;
  /**
   * URLs whose failure another check charges (the start URL, failing or redirecting sitemap
   * entries, canonical targets and hreflang alternates): see failing.ts.
   */
  markLater: Set<string>;
  /** The first fetched https URL (for the records sample). */
  firstHttps: UrlSummary | null;
  /** Failed fetches, at most RECORD_SAMPLE (for the records sample). */
  failedSample: UrlSummary[];
}

/** A non-HTML file kept out of the index by its X-Robots-Tag (noindex or none). */
const nonHtmlNoindex = (r: PageRecord) =>
  !r.html && r.nonHtmlRobots !== undefined && /\b(noindex|none)\b/.test(r.nonHtmlRobots.tag);

/** Why a sitemap entry the crawl reached is not an indexable canonical 200 page, or null. */
function sitemapProblem(r: PageRecord): string | null {
  return r.state === "blocked"
    ? "blocked by robots.txt"
    : r.state === "failed"
    ? "fetch failed"
    : !is2xx(r)
    ? (r.location !== null ? "redirects" : "error status")
    : r.noindex
    ? "noindex"
    : nonHtmlNoindex(r)
    ? "noindex (X-Robots-Tag)"
    : r.canonicalOther !== null
    ? "canonicalised to another URL"
    : null;
}

/** Reads every record once; fills the record-level facts of `f` and `failing`. */
export async function readRecords(
  kv: Deno.Kv,
  auditId: string,
  startUrl: string,
  f: Facts,
  failing: FailingUrls,
  linkScores: LinkScores,
): Promise<RecordsRead> {
  const redirects = new Map<string, string>();
  const broken = new Map<number, BrokenTarget>();
  const markLater = new Set<string>([startUrl]);
  const ttfb = new TtfbHistogram();
  let firstHttps: UrlSummary | null = null;
  const failedSample: UrlSummary[] = [];
  for await (const page of listInPages(kv, keys.auditPages(auditId))) {
    const canon: PageRecord[] = [];
    const alternates: PageRecord[] = [];
    for (const { value: r } of page) {
      if (attempted(r)) {
        f.attempted++;
        if (firstHttps === null && r.url.startsWith("https:")) firstHttps = summary(r);
        failing.record(r);
        if (r.state === "failed" && failedSample.length < RECORD_SAMPLE) {
          failedSample.push(summary(r));
        }
        if (r.state === "failed" || (r.location === null && r.status >= 400)) {
          broken.set(r.hash, { url: r.url, status: r.status, failure: r.failure });
        }
        if (r.location !== null && !r.externalLocation) redirects.set(r.url, r.location);
        if (r.inSitemap && (failing.has(r.hash) || redirects.has(r.url))) markLater.add(r.url);
      }
      if (r.state !== "unvisited" && r.state !== "queued") {
        f.known++;
        if (r.state === "blocked") f.blocked.add({ url: r.url });
      }
      if (r.html && is2xx(r)) {
        f.html2xx++;
        if (r.state === "fetched") linkScores.addPage(r.hash);
        if (r.noindex) f.noindexPages++;
        else if (r.canonicalOther === null) {
          f.dupCandidates++;
          if (r.words >= DUP_MIN_WORDS) f.nearCandidates++;
          // Indexable, self-canonical and reached through links: it belongs in the sitemap.
          if (r.state === "fetched" && r.depth >= 0) {
            f.sitemapCandidates++;
            if (!r.inSitemap) f.sitemapMissing.add({ url: r.url, depth: r.depth });
          }
        }
        const ms = ttfb.add(r.ttfbMs);
        f.ttfb.pages++;
        if (r.ttfbMs > 800) f.ttfb.over800.add({ url: r.url, ttfb_ms: ms });
        if (r.ttfbMs > 1800) f.ttfb.over1800.add({ url: r.url, ttfb_ms: ms });
        if (r.canonicalOther !== null) canon.push(r);
        if (r.hreflang?.length) alternates.push(r);
      }
      if (r.state === "fetched" && !r.html && is2xx(r)) {
        f.nonHtml2xx++;
        if (r.nonHtmlRobots) {
          f.xRobotsNonHtml.add({
            url: r.url,
            x_robots_tag: r.nonHtmlRobots.tag,
            content_type: r.nonHtmlRobots.type,
          });
        }
      }
      if (r.inSitemap && (attempted(r) || r.state === "blocked")) {
        f.sitemapListed++;
        const reason = sitemapProblem(r);
        if (reason !== null) {
          f.sitemapBad.add({ url: r.url, status: r.status || null, reason });
        }
      }
    }
    await canonicalTargets(kv, auditId, canon, f, markLater);
    await hreflangAlternates(kv, auditId, alternates, f, markLater);
  }
  f.ttfb.medianMs = ttfb.median();
  return { redirects, broken, markLater, firstHttps, failedSample };
}
