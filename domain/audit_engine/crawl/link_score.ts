/**
 * Internal link equity: a PageRank over the crawl's followable internal links (damping 0.85, the
 * model behind Screaming Frog's "Link Score"), reported per page on a 0–100 logarithmic scale.
 *
 * Nodes are the crawled HTML 200 pages; a link counts once per linking page, nofollow links not
 * at all, and a link to a redirect counts for the page the redirect ends on. Pages with no
 * outgoing link spread their rank evenly (the usual treatment of dangling nodes).
 *
 * Memory, in typed arrays: the pages' hashes are the URL table's (`keys`, shared with
 * finalize/url_table.ts), a page being marked in a bitmap over them (2 bits per URL with its
 * rank directory), so a page's index is a binary search and a popcount away; the links are one
 * stream of 4-byte targets, each linking page's run opened by its own index (4 bytes per linking
 * page, where a separate array of runs took 8 and its doubling up to 16); then 2 + 16 + 1 bytes
 * per page while the iteration runs. A page's repeated links are told apart with a set of that
 * page's targets only (a mark per page took 4 bytes of every page). Links capped at MAX_EDGES,
 * and a larger graph gets no score rather than a partial one. The power iteration visits every
 * link up to 40 times, so it yields to the event loop every WORK_PER_YIELD links and pages
 * (event_loop.ts).
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

/**
 * Distinct links held (4 bytes each, 32 MB at the cap); beyond this the graph gets no score. The
 * largest audit (100,000 pages, `CRAWL_MAX_PAGES`) of up to 80 links a page gets its scores:
 * with 4,000,000 a common site of 40 to 80 links a page got none near that size.
 */
export const MAX_EDGES = 8_000_000;
const DAMPING = 0.85;
const MAX_ITERATIONS = 40;
/** Iterations stop once the ranks move less than this in total (L1). */
const TOLERANCE = 1e-9;
/** Links are kept in fixed chunks: no doubling, no copy, no peak of two arrays at once. */
const CHUNK = 65_536;
/**
 * Links and pages visited between two yields (about a millisecond of the iteration; links are
 * counted a chunk at a time).
 */
const WORK_PER_YIELD = 262_144;

import { Pacer, yieldToLoop } from "./event_loop.ts";
import { HashKeys, release } from "./sorted_hashes.ts";

/**
 * Collects the link graph page by page, then computes each page's score once. The graph is held
 * compressed: each link as its target's index only, grouped by linking page (a run per page,
 * opened by `-(page index + 1)`).
 */
export class LinkScores {
  #maxEdges: number;
  /** Page hashes, registered in any order; sorted once links start. */
  #nodes: HashKeys | null = new HashKeys();
  /** The URLs the pages are among (shared), or null: the pages are their own keys. */
  #keys: HashKeys | null;
  /** Which of `#keys` are pages, a bit each, and the pages before each 32 (a page's index). */
  #bits: Uint32Array | null = null;
  #before: Int32Array | null = null;
  #pages = 0;
  #sorted = false;
  /** The link stream (targets, and a negative entry opening each run). */
  #chunks: Int32Array[] = [];
  #len = 0;
  #edges = 0;
  #overflow = false;
  #current = -1;
  /** Whether the current run's opening entry is written (only once it has a link). */
  #open = false;
  /** The current page's targets so far: a page's links are counted once. */
  #seen = new Set<number>();
  #scores: Uint8Array | null = null;

  /**
   * `maxEdges` lowers the cap (tests); it cannot raise it above MAX_EDGES. `keys`: hashes every
   * page is among (the URL table's), kept once for both; a page not among them is left out.
   */
  constructor(opts: { maxEdges?: number; keys?: HashKeys } = {}) {
    this.#maxEdges = Math.min(MAX_EDGES, opts.maxEdges ?? MAX_EDGES);
    this.#keys = opts.keys ?? null;
  }

  /** Registers a page (by URL hash) as a node; every page comes before the first link. */
  addPage(hash: number): void {
    if (this.#sorted) throw new Error("LinkScores: pages are registered before links");
    this.#nodes!.add(hash);
  }

  /**
   * Sorts the hashes once (duplicates dropped), so an index is a binary search away; with shared
   * keys, marks the pages among them and frees their own hashes. A page's index is its rank
   * among the pages' sorted hashes either way.
   */
  #seal(): void {
    if (this.#sorted) return;
    this.#sorted = true;
    const nodes = this.#nodes!.seal();
    if (!this.#keys) {
      this.#pages = nodes.length;
      return;
    }
    const keys = this.#keys.seal();
    const bits = new Uint32Array(Math.ceil(keys.length / 32));
    // Both sorted: one walk marks each page's key.
    let k = 0;
    for (let i = 0; i < nodes.length; i++) {
      while (k < keys.length && keys[k] < nodes[i]) k++;
      if (k < keys.length && keys[k] === nodes[i]) bits[k >>> 5] |= 1 << (k & 31);
    }
    const before = new Int32Array(bits.length);
    let pages = 0;
    for (let w = 0; w < bits.length; w++) {
      before[w] = pages;
      pages += popcount(bits[w]);
    }
    this.#nodes!.release();
    this.#nodes = null;
    this.#bits = bits;
    this.#before = before;
    this.#pages = pages;
  }

  /** A page's index, or -1 when the hash is not a page. */
  #indexOf(hash: number): number {
    this.#seal();
    if (!this.#keys) return this.#nodes!.indexOf(hash);
    return this.#pageAt(this.#keys.indexOf(hash));
  }

  /** The index of the page at slot `k` of the shared keys, or -1 (no such slot, not a page). */
  #pageAt(k: number): number {
    if (k < 0) return -1;
    const word = this.#bits![k >>> 5];
    const bit = k & 31;
    if (((word >>> bit) & 1) === 0) return -1;
    return this.#before![k >>> 5] + (bit === 0 ? 0 : popcount(word << (32 - bit)));
  }

  /**
   * Starts the links of one page. A page's links arrive together (in any number of calls); a
   * page met again later starts a second run, which `compute` adds to the first.
   */
  beginPage(hash: number): void {
    this.#current = this.#indexOf(hash);
    this.#open = false;
    this.#seen.clear();
  }

  /**
   * One followable link of the current page (by target URL hash): counted when the target is a
   * page, once per linking page. Answers whether the target is a page (false: the caller may
   * resolve it, e.g. a redirect, and try again).
   */
  addLink(target: number): boolean {
    return this.#addPageLink(this.#indexOf(target));
  }

  /** Whether `keys` are the ones the pages are among (then `addLinkAt` takes their slots). */
  sharesKeys(keys: HashKeys): boolean {
    return this.#keys === keys;
  }

  /**
   * `addLink` for a target found at slot `k` of the shared keys (-1: not among them): a caller
   * that looked the hash up for its own use spares a second binary search.
   */
  addLinkAt(k: number): boolean {
    this.#seal();
    return this.#addPageLink(this.#pageAt(k));
  }

  #addPageLink(to: number): boolean {
    if (to < 0) return false;
    if (this.#current < 0 || this.#overflow || to === this.#current) return true;
    if (this.#seen.has(to)) return true;
    this.#seen.add(to);
    if (this.#edges >= this.#maxEdges) {
      // No page gets a score now: the links held go back at once, not when `compute` runs
      // after the rest of the links pass (a big site's largest arrays, 32 MB at the cap).
      this.#overflow = true;
      release(...this.#chunks);
      this.#chunks = [];
      this.#len = 0;
      return true;
    }
    if (!this.#open) {
      this.#open = true;
      this.#push(-this.#current - 1);
    }
    this.#push(to);
    this.#edges++;
    return true;
  }

  #push(v: number): void {
    const at = this.#len % CHUNK;
    if (at === 0) this.#chunks.push(new Int32Array(CHUNK));
    this.#chunks[this.#chunks.length - 1][at] = v;
    this.#len++;
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
    const chunks = this.#chunks;
    const len = this.#len;
    this.#chunks = [];
    this.#len = 0;
    this.#seen = new Set();
    if (n === 0 || this.#overflow) return release(...chunks);
    const last = chunks.length - 1;
    const used = (c: number) => c === last ? len - c * CHUNK : CHUNK;
    // Links per page, in 2 bytes a page while no page has 65,536 or more (a page's links are
    // capped far below that; only a page met in several runs could pass it), else in 4.
    let out: Uint16Array | Int32Array = new Uint16Array(n);
    for (let wide = false;; wide = true) {
      let src = -1;
      let wrapped = false;
      for (let c = 0; c < chunks.length && !wrapped; c++) {
        const part = chunks[c];
        for (let k = 0, m = used(c); k < m; k++) {
          const v = part[k];
          if (v < 0) src = -v - 1;
          else {
            out[src]++;
            if (out[src] === 0) wrapped = true;
          }
        }
      }
      if (!wrapped || wide) break;
      release(out);
      out = new Int32Array(n);
    }
    const pace = new Pacer(WORK_PER_YIELD);
    let rank = new Float64Array(n).fill(1 / n);
    let next = new Float64Array(n);
    for (let it = 0; it < MAX_ITERATIONS; it++) {
      let dangling = 0;
      for (let i = 0; i < n; i++) if (out[i] === 0) dangling += rank[i];
      next.fill((1 - DAMPING) / n + (DAMPING * dangling) / n);
      if (pace.due(n)) await yieldToLoop();
      // Each link adds its run's share, in the order the links came: the sums are the same
      // whatever the runs' layout.
      let share = 0;
      for (let c = 0; c < chunks.length; c++) {
        const part = chunks[c];
        const m = used(c);
        for (let k = 0; k < m; k++) {
          const v = part[k];
          if (v >= 0) next[v] += share;
          else share = (DAMPING * rank[-v - 1]) / out[-v - 1];
        }
        if (pace.due(m)) await yieldToLoop();
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
    release(out, rank, next, ...chunks);
  }

  /** Frees the scores and pages (not shared keys); `scoreOf` answers null from then on. */
  release(): void {
    release(this.#scores, this.#bits, this.#before);
    this.#nodes?.release();
    this.#scores = null;
  }

  /** A page's score (0–100), or null for a URL that is not a node or when none was computed. */
  scoreOf(hash: number): number | null {
    if (this.#scores === null) return null;
    const i = this.#indexOf(hash);
    return i < 0 ? null : this.#scores[i];
  }
}

/** Set bits of a 32-bit word. */
function popcount(x: number): number {
  x >>>= 0;
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}
