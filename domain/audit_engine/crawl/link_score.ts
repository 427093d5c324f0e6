/**
 * Internal link equity: a PageRank over the crawl's followable internal links (damping 0.85, the
 * model behind Screaming Frog's "Link Score"), reported per page on a 0–100 logarithmic scale.
 *
 * Nodes are the crawled HTML 200 pages; a link counts once per linking page, nofollow links not
 * at all, and a link to a redirect counts for the page the redirect ends on. Pages with no
 * outgoing link spread their rank evenly (the usual treatment of dangling nodes). Memory: an
 * 8-byte hash and a 4-byte mark per page, 8 bytes per linking page and 4 per distinct link, all
 * in typed arrays, then 4 + 16 + 1 bytes per page while the iteration runs
 * (a page's index is found by binary search, not a Map: about 17 MB less heap churn at 100,000
 * pages); links capped at MAX_EDGES, and a larger graph gets no score rather than a partial one.
 * The power iteration visits every link up to 40 times, so it yields to the event loop every
 * WORK_PER_YIELD links and pages (event_loop.ts).
 *
 * @example
 * ```ts
 * const g = new LinkScores();
 * g.addPage(1); g.addPage(2);
 * g.beginPage(1); g.addLink(2);
 * g.beginPage(2); g.addLink(1);
 * await g.compute();
 * g.scoreOf(1); // 100: two pages linking each other rank alike
 * ```
 *
 * @module
 */

/** Distinct links held (4 bytes each); beyond this the graph gets no score. */
export const MAX_EDGES = 4_000_000;
const DAMPING = 0.85;
const MAX_ITERATIONS = 40;
/** Iterations stop once the ranks move less than this in total (L1). */
const TOLERANCE = 1e-9;
/** Links are kept in fixed chunks: no doubling, no copy, no peak of two arrays at once. */
const CHUNK = 65_536;
/** Links and pages visited between two yields (about a millisecond of the iteration). */
const WORK_PER_YIELD = 262_144;

import { Pacer, yieldToLoop } from "./event_loop.ts";
import { grown, sortedIndexOf, sortUnique } from "./sorted_hashes.ts";

/**
 * Collects the link graph page by page, then computes each page's score once. The graph is held
 * compressed: each link as its target's index only, grouped by linking page (a run per page).
 */
export class LinkScores {
  #maxEdges: number;
  /** Page hashes, registered in any order; sorted once links start (a page's index = its rank). */
  #hashes = new Float64Array(1024);
  #pages = 0;
  #sorted = false;
  #chunks: Int32Array[] = [];
  #edges = 0;
  /**
   * Per page with links: its index and the position of its first link (pairs, flat, `#runLen`
   * used): 8 bytes per linking page, where a JS array of numbers took 16 and more.
   */
  #runs = new Int32Array(2048);
  #runLen = 0;
  #overflow = false;
  #current = -1;
  /**
   * Which targets the current page already links (`#mark[i] === #stamp`): a page's links are
   * counted once without allocating a set per page.
   */
  #mark: Int32Array | null = null;
  #stamp = 0;
  #scores: Uint8Array | null = null;

  /** `maxEdges` lowers the cap (tests); it cannot raise it above MAX_EDGES. */
  constructor(opts: { maxEdges?: number } = {}) {
    this.#maxEdges = Math.min(MAX_EDGES, opts.maxEdges ?? MAX_EDGES);
  }

  /** Registers a page (by URL hash) as a node; every page comes before the first link. */
  addPage(hash: number): void {
    if (this.#sorted) throw new Error("LinkScores: pages are registered before links");
    this.#hashes = grown(this.#hashes, this.#pages + 1);
    this.#hashes[this.#pages++] = hash;
  }

  /** Sorts the hashes once (duplicates dropped), so an index is a binary search away. */
  #seal(): void {
    if (this.#sorted) return;
    this.#sorted = true;
    const n = sortUnique(this.#hashes.subarray(0, this.#pages));
    this.#hashes = this.#hashes.slice(0, n);
    this.#pages = n;
    this.#mark = new Int32Array(n);
  }

  /** A page's index, or -1 when the hash is not a page. */
  #indexOf(hash: number): number {
    this.#seal();
    return sortedIndexOf(this.#hashes, hash);
  }

  /**
   * Starts the links of one page. A page's links arrive together (in any number of calls); a
   * page met again later starts a second run, which `compute` adds to the first.
   */
  beginPage(hash: number): void {
    this.#current = this.#indexOf(hash);
    this.#stamp++;
    if (this.#current < 0) return;
    this.#runs = grown(this.#runs, this.#runLen + 2);
    this.#runs[this.#runLen++] = this.#current;
    this.#runs[this.#runLen++] = this.#edges;
  }

  /**
   * One followable link of the current page (by target URL hash): counted when the target is a
   * page, once per linking page. Answers whether the target is a page (false: the caller may
   * resolve it, e.g. a redirect, and try again).
   */
  addLink(target: number): boolean {
    const to = this.#indexOf(target);
    if (to < 0) return false;
    if (this.#current < 0 || this.#overflow || to === this.#current) return true;
    const mark = this.#mark!;
    if (mark[to] === this.#stamp) return true;
    mark[to] = this.#stamp;
    if (this.#edges >= this.#maxEdges) {
      this.#overflow = true;
      return true;
    }
    const at = this.#edges % CHUNK;
    if (at === 0) this.#chunks.push(new Int32Array(CHUNK));
    this.#chunks[this.#chunks.length - 1][at] = to;
    this.#edges++;
    return true;
  }

  /** Whether the graph outgrew its cap (then no page has a score). */
  get overflow(): boolean {
    return this.#overflow;
  }

  /**
   * Runs the power iteration, yielding to the event loop as it goes; afterwards `scoreOf`
   * answers. Frees the link graph. No page or link may be added meanwhile.
   */
  async compute(): Promise<void> {
    this.#seal();
    const n = this.#pages;
    const runs = this.#runs.subarray(0, this.#runLen);
    const chunks = this.#chunks;
    this.#runs = new Int32Array(0);
    this.#runLen = 0;
    this.#chunks = [];
    this.#mark = null;
    if (n === 0 || this.#overflow) return;
    const edges = this.#edges;
    const out = new Int32Array(n);
    for (let r = 0; r < runs.length; r += 2) {
      const end = r + 2 < runs.length ? runs[r + 3] : edges;
      out[runs[r]] += end - runs[r + 1];
    }
    const pace = new Pacer(WORK_PER_YIELD);
    let rank = new Float64Array(n).fill(1 / n);
    let next = new Float64Array(n);
    for (let it = 0; it < MAX_ITERATIONS; it++) {
      let dangling = 0;
      for (let i = 0; i < n; i++) if (out[i] === 0) dangling += rank[i];
      next.fill((1 - DAMPING) / n + (DAMPING * dangling) / n);
      if (pace.due(n)) await yieldToLoop();
      for (let r = 0; r < runs.length; r += 2) {
        const src = runs[r];
        const end = r + 2 < runs.length ? runs[r + 3] : edges;
        const share = (DAMPING * rank[src]) / out[src];
        for (let e = runs[r + 1]; e < end; e++) next[chunks[e >> 16][e & 0xffff]] += share;
        if (pace.due(end - runs[r + 1] + 1)) await yieldToLoop();
      }
      let delta = 0;
      for (let i = 0; i < n; i++) delta += Math.abs(next[i] - rank[i]);
      [rank, next] = [next, rank];
      if (delta < TOLERANCE) break;
    }
    let max = 0;
    for (let i = 0; i < n; i++) if (rank[i] > max) max = rank[i];
    const scores = new Uint8Array(n);
    // Logarithmic, so the long tail stays readable: the best-linked page scores 100.
    for (let i = 0; i < n; i++) scores[i] = Math.round(100 * Math.log10(1 + (9 * rank[i]) / max));
    this.#scores = scores;
  }

  /** A page's score (0–100), or null for a URL that is not a node or when none was computed. */
  scoreOf(hash: number): number | null {
    if (this.#scores === null) return null;
    const i = this.#indexOf(hash);
    return i < 0 ? null : this.#scores[i];
  }
}
