/**
 * Crawl counts on the records pass: URLs attempted and known, robots blocks, the first https URL
 * and a sample of failed fetches (the site checks' records sample).
 *
 * @module
 */
import { attempted, summary } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

/** Failed fetches kept in `SiteFacts.records` (a sample for checks that read URLs one by one). */
const RECORD_SAMPLE = 200;

export const crawlCounts: RecordReducer = {
  id: "crawl_counts",
  start: (pass) => ({
    add(r) {
      const f = pass.f;
      if (attempted(r)) {
        f.attempted++;
        if (pass.firstHttps === null && r.url.startsWith("https:")) pass.firstHttps = summary(r);
        if (r.state === "failed" && pass.failedSample.length < RECORD_SAMPLE) {
          pass.failedSample.push(summary(r));
        }
      }
      if (r.state !== "unvisited" && r.state !== "queued") {
        f.known++;
        if (r.state === "blocked") f.blocked.add({ url: r.url });
      }
    },
  }),
};
