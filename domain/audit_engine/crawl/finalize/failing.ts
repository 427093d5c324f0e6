/**
 * Failing URLs (4xx, 5xx, failed fetches) and which of them another check already charges, so
 * each defect counts once, where it is fixed: the start and home page (home_page_error), URLs
 * crawled pages link to, directly or through redirects (broken_internal_links, on the linking
 * pages), sitemap entries (sitemap_bad_entries), canonical targets (canonical_target_bad) and
 * hreflang alternates (hreflang_target_bad). Each hop of a URL's redirects is charged too (a link
 * to a redirect to a 404 is a broken link). What is left (a redirect or meta-refresh target
 * nothing else points at) goes to the status checks.
 *
 * Memory, per failing URL, in typed arrays: 20 bytes of hash index (hash_index.ts), 1 for the
 * kind, 2 for the status, 2 for the failure kind, 1 for "charged"; 8 to 16 per distinct URL marked
 * to charge later (`markLater`). The URL strings are in KV (url_names.ts), read for the items kept.
 *
 * @example
 * ```ts
 * import type { Facts } from "./facts.ts";
 * import type { PageRecord } from "../store.ts";
 * import type { Redirects } from "./redirects.ts";
 * import type { UrlNames } from "./url_names.ts";
 * declare const f: Facts, rec: PageRecord, hash: number, redirects: Redirects, names: UrlNames;
 * const failing = new FailingUrls();
 * failing.record(rec);                          // records pass
 * failing.chargeFrom(hash, redirects);          // a sitemap entry, a link target, ...
 * await failing.leftToStatusChecks(f, names);   // http_4xx, http_5xx, fetch_failed
 * ```
 *
 * @module
 */
import type { Evidence } from "../../types.ts";
import { Pacer, yieldToLoop } from "../event_loop.ts";
import type { PageRecord } from "../store.ts";
import type { Facts, Group } from "./facts.ts";
import { grown, sortUnique } from "../sorted_hashes.ts";
import { HashIndex } from "./hash_index.ts";
import type { Redirects } from "./redirects.ts";
import { MAX_HOPS } from "./redirects.ts";
import { FailureKinds } from "./targets.ts";
import type { UrlNames } from "./url_names.ts";

const FAILED = 0, STATUS_4XX = 1, STATUS_5XX = 2;

/**
 * URL hashes in a growable typed array. Repeats are dropped whenever it is full (sorted in place),
 * so it holds at most about twice the distinct hashes: every page of a site may name the same few
 * redirecting hreflang alternates.
 */
export class HashList {
  #a = new Float64Array(64);
  #n = 0;

  add(hash: number): void {
    if (this.#n === this.#a.length) {
      const n = this.#n = sortUnique(this.#a);
      if (n * 2 > this.#a.length) this.#a = grown(this.#a, this.#a.length * 2);
    }
    this.#a[this.#n++] = hash;
  }

  get size(): number {
    return this.#n;
  }

  at(i: number): number {
    return this.#a[i];
  }

  clear(): void {
    this.#a = new Float64Array(64);
    this.#n = 0;
  }
}

/** The failing URLs of the crawl by URL hash, and those another check charges. */
export class FailingUrls {
  #index = new HashIndex();
  #kind = new Uint8Array(256);
  #status = new Uint16Array(256);
  #failure = new Uint16Array(256);
  readonly #kinds = new FailureKinds();
  #charged: Uint8Array | null = null;

  /** Notes an attempted record if it failed or answered 4xx/5xx; answers whether it did. */
  record(r: PageRecord): boolean {
    let kind: number;
    if (r.state === "failed") {
      // TLS failures are tls_invalid's (it reads the sample), not fetch_failed's.
      if (r.failure === "tls") return false;
      kind = FAILED;
    } else if (r.status >= 400) kind = r.status < 500 ? STATUS_4XX : STATUS_5XX;
    else return false;
    const i = this.#index.push(r.hash);
    this.#kind = grown(this.#kind, i + 1);
    this.#status = grown(this.#status, i + 1);
    this.#failure = grown(this.#failure, i + 1);
    this.#kind[i] = kind;
    this.#status[i] = r.status;
    this.#failure[i] = this.#kinds.code(r.failure);
    return true;
  }

  /** Another check charges this URL (when it fails). */
  charge(hash: number): void {
    const i = this.#index.indexOf(hash);
    if (i < 0) return;
    this.#charged ??= new Uint8Array(this.#index.size);
    this.#charged[i] = 1;
  }

  /**
   * Another check charges this URL and every hop of its internal redirects. Answers where they
   * end, as `Redirects.follow` does (itself when none, -1 on a loop): the walk is the same.
   */
  chargeFrom(hash: number, redirects: Redirects): number {
    let cur = hash;
    for (let i = 0; i <= MAX_HOPS; i++) {
      this.charge(cur);
      const next = redirects.targetOf(cur);
      if (next < 0) return cur;
      cur = next;
    }
    return -1;
  }

  /** `chargeFrom` for each URL of a whole-site list (yielding as it goes). */
  async chargeAll(hashes: HashList, redirects: Redirects): Promise<void> {
    const pace = new Pacer();
    for (let i = 0; i < hashes.size; i++) {
      if (pace.due()) await yieldToLoop();
      this.chargeFrom(hashes.at(i), redirects);
    }
  }

  /**
   * Adds the failing URLs no other check charges to the status checks' groups (their URLs filled
   * at the next `names.fill()`); then forgets.
   */
  async leftToStatusChecks(f: Facts, names: UrlNames): Promise<void> {
    const pace = new Pacer();
    for (let i = 0; i < this.#index.size; i++) {
      if (pace.due()) await yieldToLoop();
      if (this.#charged?.[i]) continue;
      const kind = this.#kind[i];
      const item: Evidence = kind === FAILED
        ? { url: "", failure: this.#kinds.of(this.#failure[i]) }
        : { url: "", status: this.#status[i] };
      const g: Group = kind === STATUS_4XX
        ? f.status4xx
        : kind === STATUS_5XX
        ? f.status5xx
        : f.failed;
      if (g.add(item)) names.later(item, "url", this.#index.hashAt(i));
    }
    this.#index = new HashIndex();
    this.#kind = new Uint8Array(0);
    this.#status = new Uint16Array(0);
    this.#failure = new Uint16Array(0);
    this.#charged = null;
  }
}
