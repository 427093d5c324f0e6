/**
 * Sitemap entries on the records pass: those the crawl reached, and those that are not an
 * indexable canonical 200 page (sitemap_bad_entries), with the reason.
 *
 * @module
 */
import type { PageRecord } from "../store.ts";
import { attempted, is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

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

export const sitemapStatus: RecordReducer = {
  id: "sitemap_status",
  start: (pass) => ({
    add(r) {
      if (!r.inSitemap || !(attempted(r) || r.state === "blocked")) return;
      pass.f.sitemapListed++;
      const reason = sitemapProblem(r);
      if (reason !== null) {
        pass.f.sitemapBad.add({ url: r.url, status: r.status || null, reason });
      }
    },
  }),
};
