/**
 * Fetch outcomes on the records pass: failing URLs (failing.ts), broken targets (failed fetches
 * and error statuses that do not redirect), internal redirects, and the sitemap entries that fail
 * or redirect (their failure is charged by the sitemap check: `markLater`).
 *
 * @module
 */
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
      pass.failing.record(r);
      if (r.state === "failed" || (r.location === null && r.status >= 400)) {
        pass.broken.set(r.hash, { url: r.url, status: r.status, failure: r.failure });
      }
      if (r.location !== null && !r.externalLocation) pass.redirects.set(r.url, r.location);
      if (r.inSitemap && (pass.failing.has(r.hash) || pass.redirects.has(r.url))) {
        pass.markLater.add(r.url);
      }
    },
  }),
};
