/**
 * Failing URLs (4xx, 5xx, failed fetches) and which of them another check already charges, so
 * each defect counts once, where it is fixed: the start and home page (home_page_error), URLs
 * crawled pages link to, directly or through redirects (broken_internal_links, on the linking
 * pages), sitemap entries (sitemap_bad_entries), canonical targets (canonical_target_bad) and
 * hreflang alternates (hreflang_target_bad). Each hop of a URL's redirects is charged too (a link
 * to a redirect to a 404 is a broken link). What is left (a redirect or meta-refresh target
 * nothing else points at) goes to the status checks.
 *
 * Memory: one entry per failing URL and one number per charged one.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { PageRecord } from "../store.ts";
 * declare const f: Facts, rec: PageRecord, url: string, redirects: Map<string, string>;
 * const failing = new FailingUrls();
 * failing.record(rec);                  // records pass
 * failing.chargeFrom(url, redirects);   // a sitemap entry, a link target, ...
 * await failing.leftToStatusChecks(f);  // http_4xx, http_5xx, fetch_failed
 * ```
 *
 * @module
 */
import type { Evidence } from "../../types.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import { type PageRecord, urlHash } from "../store.ts";
import type { Facts } from "./facts.ts";
import { MAX_HOPS } from "./redirects.ts";

/** A failing URL and the status check that charges it unless another check does. */
interface Failing {
  url: string;
  kind: "4xx" | "5xx" | "failed";
  item: Evidence;
}

/** The failing URLs of the crawl by URL hash, and those another check charges. */
export class FailingUrls {
  #failing = new Map<number, Failing>();
  #charged = new Set<number>();

  /** Notes an attempted record if it failed or answered 4xx/5xx. */
  record(r: PageRecord): void {
    if (r.state === "failed") {
      // TLS failures are tls_invalid's (it reads the sample), not fetch_failed's.
      if (r.failure !== "tls") {
        this.#failing.set(r.hash, {
          url: r.url,
          kind: "failed",
          item: { url: r.url, failure: r.failure },
        });
      }
    } else if (r.status >= 400) {
      this.#failing.set(r.hash, {
        url: r.url,
        kind: r.status < 500 ? "4xx" : "5xx",
        item: { url: r.url, status: r.status },
      });
    }
  }

  /** Whether the URL with this hash failed (TLS failures aside). */
  has(hash: number): boolean {
    return this.#failing.has(hash);
  }

  /** Another check charges this URL (when it fails). */
  charge(hash: number): void {
    if (this.#failing.has(hash)) this.#charged.add(hash);
  }

  /** Another check charges this URL and every hop of its internal redirects. */
  chargeFrom(url: string, redirects: ReadonlyMap<string, string>): void {
    let cur = url;
    for (let i = 0; i <= MAX_HOPS; i++) {
      this.charge(urlHash(cur));
      const next = redirects.get(cur);
      if (next === undefined) return;
      cur = next;
    }
  }

  /** `chargeFrom` for each URL of a whole-site set (yielding as it goes). */
  async chargeAll(urls: Iterable<string>, redirects: ReadonlyMap<string, string>): Promise<void> {
    const pace = new Pacer();
    for (const url of urls) {
      if (pace.due()) await yieldToLoop();
      this.chargeFrom(url, redirects);
    }
  }

  /** Adds the failing URLs no other check charges to the status checks' groups; then forgets. */
  async leftToStatusChecks(f: Facts): Promise<void> {
    const pace = new Pacer();
    for (const [h, x] of this.#failing) {
      if (pace.due()) await yieldToLoop();
      if (this.#charged.has(h)) continue;
      (x.kind === "4xx" ? f.status4xx : x.kind === "5xx" ? f.status5xx : f.failed).add(x.item);
    }
    this.#failing.clear();
    this.#charged.clear();
  }
}
