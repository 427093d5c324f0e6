/**
 * Indexable pages on the records pass: HTML 200 pages (registered with the link score), noindex
 * pages, the candidates for the duplicate and near-duplicate checks, and the pages that belong in
 * the sitemap (sitemap_missing_indexable).
 *
 * @module
 */
// Text signatures only pages with this many words get (the page recorder indexes them).
import { DUP_MIN_WORDS } from "../page_recorder.ts";
import { is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

export const indexablePages: RecordReducer = {
  id: "indexable",
  start: (pass) => ({
    add(r) {
      if (!r.html || !is2xx(r)) return;
      const f = pass.f;
      f.html2xx++;
      if (r.state === "fetched") pass.linkScores.addPage(r.hash);
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
    },
  }),
};
