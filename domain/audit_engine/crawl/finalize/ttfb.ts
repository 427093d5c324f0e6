/**
 * Time to first byte of the site's HTML pages as a histogram of whole milliseconds (one bucket
 * per ms up to 60 s, the last one open), so the median costs 240 KB whatever the site's size.
 *
 * @example
 * ```ts
 * const h = new TtfbHistogram();
 * h.add(120.4); h.add(300); h.add(95);
 * h.median(); // 120
 * ```
 *
 * @module
 */
import { is2xx } from "./record.ts";
import type { RecordReducer } from "./reducer.ts";

const TTFB_BUCKETS = 60_001;

/** Counts pages per millisecond of TTFB. */
export class TtfbHistogram {
  #hist = new Uint32Array(TTFB_BUCKETS);
  #n = 0;

  /** Counts one page; answers the TTFB as counted (rounded, at most 60,000 ms). */
  add(ttfbMs: number): number {
    const ms = Math.min(TTFB_BUCKETS - 1, Math.max(0, Math.round(ttfbMs)));
    this.#hist[ms]++;
    this.#n++;
    return ms;
  }

  /** The median in ms (the mean of the two middle pages for an even count); 0 with no page. */
  median(): number {
    const hist = this.#hist;
    const n = this.#n;
    if (n === 0) return 0;
    const lo = (n - 1) >> 1;
    const hi = n >> 1;
    let seen = 0;
    let a = -1;
    for (let ms = 0; ms < hist.length; ms++) {
      seen += hist[ms];
      if (a < 0 && seen > lo) a = ms;
      if (seen > hi) return (a + ms) / 2;
    }
    return a;
  }
}

/** The records pass's TTFB reduction: the median and the slow pages (slow_ttfb, very_slow_ttfb). */
export const ttfbReducer: RecordReducer = {
  id: "ttfb",
  start: (pass) => {
    const hist = new TtfbHistogram();
    const t = pass.f.ttfb;
    return {
      add(r) {
        if (!r.html || !is2xx(r)) return;
        const ms = hist.add(r.ttfbMs);
        t.pages++;
        if (r.ttfbMs > 800) t.over800.add({ url: r.url, ttfb_ms: ms });
        if (r.ttfbMs > 1800) t.over1800.add({ url: r.url, ttfb_ms: ms });
      },
      finish() {
        t.medianMs = hist.median();
      },
    };
  },
};
