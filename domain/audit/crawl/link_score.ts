/**
 * Internal link equity: a PageRank over the crawl's followable internal links (damping 0.85, the
 * model behind Screaming Frog's "Link Score"), reported per page on a 0–100 logarithmic scale.
 *
 * Nodes are the crawled HTML 200 pages; a link counts once per linking page, nofollow links not
 * at all, and a link to a redirect counts for the page the redirect ends on. Pages with no
 * outgoing link spread their rank evenly (the usual treatment of dangling nodes). Memory: one
 * index per page and 4 bytes per distinct link, capped at MAX_EDGES; a larger graph gets no score
 * rather than a partial one.
 *
 * @example
 * ```ts
 * const g = new LinkScores();
 * g.addPage(1); g.addPage(2);
 * g.beginPage(1); g.addLink(2);
 * g.beginPage(2); g.addLink(1);
 * g.compute();
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

/**
 * Collects the link graph page by page, then computes each page's score once. The graph is held
 * compressed: each link as its target's index only, grouped by linking page (a run per page).
 */
export class LinkScores {
  #maxEdges: number;
  #index = new Map<number, number>();
  #chunks: Int32Array[] = [];
  #edges = 0;
  /** Per page with links: its index and the position of its first link (pairs, flat). */
  #runs: number[] = [];
  #overflow = false;
  #current = -1;
  #seen = new Set<number>();
  #scores: Uint8Array | null = null;

  /** `maxEdges` lowers the cap (tests); it cannot raise it above MAX_EDGES. */
  constructor(opts: { maxEdges?: number } = {}) {
    this.#maxEdges = Math.min(MAX_EDGES, opts.maxEdges ?? MAX_EDGES);
  }

  /** Registers a page (by URL hash) as a node; call for every HTML 200 page before links. */
  addPage(hash: number): void {
    if (!this.#index.has(hash)) this.#index.set(hash, this.#index.size);
  }

  /** Whether a URL hash is a node. */
  has(hash: number): boolean {
    return this.#index.has(hash);
  }

  /**
   * Starts the links of one page. A page's links arrive together (in any number of calls); a
   * page met again later starts a second run, which `compute` adds to the first.
   */
  beginPage(hash: number): void {
    this.#current = this.#index.get(hash) ?? -1;
    this.#seen.clear();
    if (this.#current >= 0) this.#runs.push(this.#current, this.#edges);
  }

  /** One followable link of the current page to a node (by URL hash); others are ignored. */
  addLink(target: number): void {
    if (this.#current < 0 || this.#overflow) return;
    const to = this.#index.get(target);
    if (to === undefined || to === this.#current || this.#seen.has(to)) return;
    this.#seen.add(to);
    if (this.#edges >= this.#maxEdges) {
      this.#overflow = true;
      return;
    }
    const at = this.#edges % CHUNK;
    if (at === 0) this.#chunks.push(new Int32Array(CHUNK));
    this.#chunks[this.#chunks.length - 1][at] = to;
    this.#edges++;
  }

  /** Whether the graph outgrew its cap (then no page has a score). */
  get overflow(): boolean {
    return this.#overflow;
  }

  /** Runs the power iteration; afterwards `scoreOf` answers. Frees the link graph. */
  compute(): void {
    const n = this.#index.size;
    const runs = this.#runs;
    const chunks = this.#chunks;
    this.#runs = [];
    this.#chunks = [];
    this.#seen.clear();
    if (n === 0 || this.#overflow) return;
    const edges = this.#edges;
    const out = new Int32Array(n);
    for (let r = 0; r < runs.length; r += 2) {
      const end = r + 2 < runs.length ? runs[r + 3] : edges;
      out[runs[r]] += end - runs[r + 1];
    }
    let rank = new Float64Array(n).fill(1 / n);
    let next = new Float64Array(n);
    for (let it = 0; it < MAX_ITERATIONS; it++) {
      let dangling = 0;
      for (let i = 0; i < n; i++) if (out[i] === 0) dangling += rank[i];
      next.fill((1 - DAMPING) / n + (DAMPING * dangling) / n);
      for (let r = 0; r < runs.length; r += 2) {
        const src = runs[r];
        const end = r + 2 < runs.length ? runs[r + 3] : edges;
        const share = (DAMPING * rank[src]) / out[src];
        for (let e = runs[r + 1]; e < end; e++) next[chunks[e >> 16][e & 0xffff]] += share;
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
    const i = this.#index.get(hash);
    return i === undefined || this.#scores === null ? null : this.#scores[i];
  }
}
