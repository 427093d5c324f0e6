/**
 * Fetch outcomes on the records pass: failing URLs (failing.ts), broken targets (failed fetches
 * and error statuses that do not redirect), internal redirects, and the sitemap entries that fail
 * or redirect (their failure is charged by the sitemap check: `markLater`). Each such URL, and
 * each redirect's target, is named in KV (url_names.ts): the tables keep hashes.
 *
 * @module
 */
import { urlHash } from "../store.ts";
import { attempted } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

export const fetchOutcomes: RecordReducer = {
  id: "fetch_outcomes",
  start: (pass) => ({
    add(r) {
      if (!attempted(r)) return;
      // A 402 is a price (pay per crawl, x402), not a broken page: pay_per_crawl's alone.
      if (r.state !== "failed" && r.status === 402) {
        return void pass.f.paid.add({ url: r.url, status: 402 });
      }
      const failing = pass.failing.record(r);
      const broken = r.state === "failed" || (r.location === null && r.status >= 400);
      if (broken) pass.broken.add(r.hash, r.status, r.failure);
      const redirects = r.location !== null && !r.externalLocation;
      if (redirects) {
        const to = urlHash(r.location!);
        pass.redirects.add(r.hash, to);
        pass.names.remember(to, r.location!);
      }
      if (failing || broken || redirects) pass.names.remember(r.hash, r.url);
      if (r.inSitemap && (failing || redirects)) pass.markLater.add(r.hash);
    },
  }),
};
