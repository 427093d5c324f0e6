/**
 * The crawl's request queue, kept in KV. Its positions live in the crawl state: `head` is the next
 * entry to take, `tail` the next position to allocate; entries sit under `audit_frontier/<seq>`
 * and each URL's record under `audit_pages/<url>` (the seen set). A URL counts as seen only when a
 * committed state covers its position (seq < tail as the step began): a step that dies leaves
 * records and entries the repeated step allocates again, never trusts. A chain's step does not read
 * the records of URLs this process saw the audit's committed steps allocate (known_urls.ts), nor,
 * when this process saw every such step from the first, of URLs none allocated and no sitemap
 * listed: they have none. An entry written with its URL's fresh record says so (`rec`): whoever
 * takes it rebuilds the record rather than read it.
 *
 * The sitemap's URLs wait in chunks (`audit_sitemap_urls/<n>`) from the first step until the links
 * run out, then are seeded with depth -1, which is how orphans are found.
 *
 * What a hostile site can make the queue hold is capped here, each hit noted on the state: the
 * frontier (a few page budgets, so an endless calendar or a link bomb stops), URL length (a KV key
 * holds 2 KiB) and redirect hops (a redirect maze).
 *
 * A scoped crawl (audit options, ../scope.ts) allocates only URLs in its scope: one outside is
 * given no position and no record, and each occurrence is counted under the rule that left it
 * out (`state.scope.leftOut`), as the frontier cap counts the links it leaves out.
 *
 * @example
 * ```ts
 * import { capsOf } from "./caps.ts";
 * import type { CrawlInput, CrawlState } from "./state.ts";
 * import type { WriteBatch } from "./store.ts";
 * declare const kv: Deno.Kv, auditId: string, input: CrawlInput, state: CrawlState;
 * declare const batch: WriteBatch, caps: ReturnType<typeof capsOf>;
 * const frontier = new Frontier(kv, auditId, state, batch, caps, input.maxPages);
 * const { entries, records } = await frontier.next(50);
 * // …fetch and record the entries, calling frontier.discover(url, depth) for each link found…
 * frontier.advance(entries.length);
 * await frontier.allocate(); // the links found get positions, in the order found
 * await batch.flush(); // then the step commits the state that covers them
 * ```
 *
 * @module
 */
import type { FrontierEntry } from "../types.ts";
import { keys, KvMemo, list, read } from "../../platform/mod.ts";
import { type CrawlCaps, frontierCap, noteCap } from "./caps.ts";
import type { CrawlState } from "./state.ts";
import { getMany, newRecord, type PageRecord, urlHash, type WriteBatch } from "./store.ts";
import { knownUrls, UrlHashSet } from "./known_urls.ts";
import { Pacer, yieldToLoop } from "./event_loop.ts";
import type { Scope, ScopeRule } from "../scope.ts";

export type { FrontierEntry };

/** Entries taken from the head of the frontier, each with its page record (same index). */
export interface TakenEntries {
  entries: FrontierEntry[];
  records: PageRecord[];
}

/** URLs per sitemap chunk, at most. */
const SITEMAP_CHUNK = 500;
/** Characters of URLs per sitemap chunk, at most (two bytes each in a KV value of 64 KiB). */
const SITEMAP_CHUNK_CHARS = 24_000;
/** Sitemap chunks seeded into the frontier per step. */
const SEED_CHUNKS_PER_STEP = 20;
/** Allocations between looks at the clock for a yield (a seeding step allocates up to 10,000 URLs). */
const ALLOCATIONS_PER_YIELD = 256;
/**
 * Entries a step keeps of those it allocated, with their records, for a later round of the same
 * step to take without reading them back (a grown step takes at most 800 in all, step_size.ts).
 */
const HELD_ENTRIES = 2_048;
/** URLs whose records are read at once when read ahead (`readAhead`). */
const AHEAD_CHUNK = 200;
/** Positions per read of a range of the frontier (one list batch each, read side by side). */
const RANGE_CHUNK = 100;

/** Audits per KV whose last step's held entries this process keeps for their next step. */
const KEPT_AUDITS = 4;

type Held = Map<number, { entry: FrontierEntry; record: PageRecord }>;

/**
 * The entries a committed step of this process held when it ended, by audit, per KV, and the
 * versionstamp of the state commit that covers them: the audit's next step, when it reads that
 * very state, takes them without reading them (frontier.ts `resume`).
 */
const kept = new KvMemo<{ versionstamp: string; held: Held }>(KEPT_AUDITS);

/** A URL found this step; `via`: how, when it is worth keeping on its record (a rendered DOM). */
type Discovered = Omit<FrontierEntry, "rec">;

/**
 * The record an entry's allocation wrote with it (`FrontierEntry.rec`), rebuilt: the allocation
 * wrote it fresh, and nothing writes a queued record before its entry is taken, save a step that
 * died having taken it (whose record, fetched, the taker writes again) or a retry (its entry
 * carries no `rec`).
 */
function entryRecord(e: FrontierEntry, seq: number): PageRecord {
  const r = newRecord(e.url, seq, e.depth, e.rec === 2);
  if (e.via) r.discoveredBy = e.via;
  return r;
}

/** The frontier of one audit's crawl, for the length of one step (see the module comment). */
export class Frontier {
  /** Frontier positions this audit may allocate. */
  readonly cap: number;
  /** URLs found this step, in the order found, waiting for `allocate`. */
  private discovered: Discovered[] = [];
  /** Entries a 429/503 sent back this step, waiting for `allocate`. */
  private retries: FrontierEntry[] = [];
  /**
   * Entries this step allocated, by position, with the fresh record written for each: `next`
   * takes them from here, not from KV (see `next`). At most HELD_ENTRIES, the first allocated.
   */
  private held: Held = new Map();
  /**
   * A chain's step reads the records of the URLs it discovers while it records its pages
   * (`readAhead`): each URL's chunk of reads and its place in it. Null: read at `allocate`.
   */
  private ahead: Map<string, { chunk: number; at: number }> | null = null;
  private aheadChunks: Promise<(PageRecord | null)[]>[] = [];
  private aheadQueue: string[] = [];
  /** The entries this round took, by URL, with their records (when reading ahead). */
  private taking = new Map<string, PageRecord>();
  /** This step allocated entries (`next` reads any it does not hold once they are committed). */
  private allocated = false;
  /**
   * URLs the audit's committed steps allocated, as this process saw them commit (known_urls.ts),
   * when this step read the state the last of them committed: their records are not read.
   */
  private known: UrlHashSet | null = null;
  /**
   * When `known` is complete (known_urls.ts): the sitemap URLs the first step wrote unqueued,
   * whose records are read. A URL in neither set has no record. Null: every URL not known is read.
   */
  private unqueued: UrlHashSet | null = null;
  /** The versionstamp of the state this step read (`resume`); undefined: not a chain's step. */
  private readAs: string | null | undefined = undefined;
  /**
   * URLs found in `known` this step (a link repeated on many pages is hashed once), and those
   * this chain's step allocated in an earlier round or allocation (they are as good as read).
   */
  private knownSeen = new Set<string>();
  /** URLs this step found in neither of the memo's sets (complete memo only): no record. */
  private newSeen = new Set<string>();
  /** The first step, which found no record of the audit, starts a complete memo (`startsMemo`). */
  private startsMemoAt: number[] | null = null;
  /** Hashes of the URLs this step allocated or found allocated, for `known` once it commits. */
  private allocatedHashes: number[] = [];
  /** The sitemap chunk being filled (first step). */
  private chunk: string[] = [];
  private chunkChars = 0;

  constructor(
    private readonly kv: Deno.Kv,
    private readonly auditId: string,
    private readonly state: CrawlState,
    private readonly batch: WriteBatch,
    private readonly caps: CrawlCaps,
    maxPages: number,
    /** The crawl's scope (audit options); null: the whole site. */
    private readonly scope: Scope | null = null,
  ) {
    this.cap = frontierCap(caps, maxPages);
  }

  /** Counts one URL (link occurrence or sitemap entry) left out by `rule`. */
  private leaveOut(rule: ScopeRule): void {
    const left = (this.state.scope ??= { list: false, leftOut: {} }).leftOut;
    left[rule] = (left[rule] ?? 0) + 1;
  }

  /** Entries allocated and not yet taken. */
  get queued(): number {
    return Math.max(0, this.state.tail - this.state.head);
  }

  /** Sitemap chunks not yet seeded. */
  get sitemapLeft(): boolean {
    return this.state.seedChunk < this.state.sitemapChunks;
  }

  /**
   * Reads the records of the URLs discovered from here on in chunks while the step records its
   * pages, so `allocate` does not wait a round trip for them. For a chain's step only: the step
   * holds the audit, and what it writes meanwhile is the records of the entries the round took
   * (their position is the same before and after, and `allocate` takes them as taken) and what
   * an earlier round sent (the caller waits for it before recording). A partitioned crawl's
   * other workers allocate at the same time: its slices read at `allocate`.
   */
  readAhead(): void {
    this.ahead ??= new Map();
  }

  /**
   * Up to `limit` entries from the head, in frontier order, with their records (a record the
   * entry's allocation did not leave behind is a fresh one at the entry's position). Nothing is
   * taken until `advance`.
   *
   * A later round of a step (engine.ts) takes what this step allocated: those entries and their
   * records are held as the allocation wrote them (nothing else writes them meanwhile: the step
   * holds the audit), so they are not read back, and the round does not wait for their commits
   * (a round trip each on a remote KV). Any other entry is read from KV once this step's writes
   * are in.
   */
  async next(limit: number): Promise<TakenEntries> {
    const out = await this.take(limit);
    for (const r of out.records) this.allocatedHashes.push(r.hash);
    if (this.ahead) {
      this.taking = new Map(out.entries.map((e, i) => [e.url, out.records[i]]));
    }
    return out;
  }

  private async take(limit: number): Promise<TakenEntries> {
    const { head, tail } = this.state;
    const count = Math.max(0, Math.min(Math.max(1, limit), tail - head));
    const out: TakenEntries = { entries: [], records: [] };
    for (let seq = head; seq < head + count; seq++) {
      const h = this.held.get(seq);
      if (!h) break;
      this.held.delete(seq);
      out.entries.push(h.entry);
      out.records.push(h.record);
    }
    const from = head + out.entries.length;
    if (from === head + count) return out;
    if (this.allocated) await this.batch.flush();
    const rest = await this.range(from, head + count);
    out.entries.push(...rest.entries);
    out.records.push(...rest.records);
    return out;
  }

  /**
   * The entries at positions `start`…`end`-1 (a partitioned crawl's claimed range), with their
   * records, as `next` reads them: every position holds an entry, so the range is read in
   * chunks side by side, each chunk's records as soon as its entries are in (two round trips on
   * a remote KV, where one list of 600 entries took two before its records).
   */
  async range(start: number, end: number): Promise<TakenEntries> {
    const chunks: Promise<TakenEntries>[] = [];
    for (let from = start; from < end; from += RANGE_CHUNK) {
      chunks.push(this.readChunk(from, Math.min(end, from + RANGE_CHUNK)));
    }
    const out: TakenEntries = { entries: [], records: [] };
    for (const c of await Promise.all(chunks)) {
      out.entries.push(...c.entries);
      out.records.push(...c.records);
    }
    return out;
  }

  private async readChunk(start: number, end: number): Promise<TakenEntries> {
    const entries: FrontierEntry[] = [];
    for await (
      const e of list(this.kv, {
        start: keys.auditFrontier(this.auditId, start),
        end: keys.auditFrontier(this.auditId, end),
      }, { limit: end - start })
    ) entries.push(e.value);
    // Entries that carry their record (`rec`) are not read.
    const read = entries.filter((e) => e.rec === undefined);
    const found = read.length === 0 ? [] : await getMany(
      this.kv,
      read.map((e) => keys.auditPage(this.auditId, e.url)),
    );
    let k = 0;
    const records = entries.map((e, i) =>
      e.rec !== undefined
        ? entryRecord(e, start + i)
        : found[k++] ?? newRecord(e.url, start + i, e.depth, false)
    );
    return { entries, records };
  }

  /**
   * Queues an entry a step took and did not fetch (its time ran out) again at the tail, as it
   * was: a partitioned crawl's claimed range is resolved whole.
   */
  putBack(e: FrontierEntry): void {
    this.retries.push(e);
  }

  /**
   * Keeps the entries this step holds and has not taken for the audit's next step in this
   * process, and the URLs it allocated with those `known` before (a chain's step only), once the
   * step's state committed as `versionstamp` (see `resume`). A crawl that left its crawl phase,
   * or a partitioned one, keeps nothing.
   */
  keepFor(versionstamp: string): void {
    // A partitioned crawl's slices (partition.ts) read every record: a memo would only linger.
    if (this.state.phase !== "crawl" || (this.state.partitions ?? 1) > 1) {
      knownUrls.forget(this.kv, this.auditId);
      return;
    }
    if (this.startsMemoAt !== null) {
      knownUrls.start(this.kv, this.auditId, versionstamp, this.allocatedHashes, this.startsMemoAt);
    } else if (this.readAs !== undefined) {
      knownUrls.commit(this.kv, this.auditId, this.readAs, versionstamp, this.allocatedHashes);
    }
    const { head } = this.state;
    for (const seq of this.held.keys()) if (seq < head) this.held.delete(seq);
    if (this.held.size === 0) return;
    kept.set(this.kv, this.auditId, { versionstamp, held: this.held });
  }

  /**
   * A step that read the state at `versionstamp` takes the entries the step that committed it
   * kept (`keepFor`): that commit wrote them and no step has committed since, so the entries and
   * their records are as KV has them, save what a step that died wrote meanwhile (a record it
   * fetched, which this step fetches and writes again).
   */
  resume(versionstamp: string | null): void {
    if (this.startsMemoAt !== null) {
      // The first step crawls on (engine.ts): the memo it starts is complete already, with what
      // it queued and the sitemap URLs it left unqueued, as the next step's will be.
      this.readAs = versionstamp;
      this.known = new UrlHashSet();
      for (const h of this.allocatedHashes) this.known.add(h);
      this.unqueued = new UrlHashSet();
      for (const h of this.startsMemoAt) this.unqueued.add(h);
      return;
    }
    const last = kept.take(this.kv, this.auditId);
    if (last?.versionstamp === versionstamp) this.held = last.held;
    this.readAs = versionstamp;
    const memo = knownUrls.memo(this.kv, this.auditId, versionstamp);
    this.known = memo?.set ?? null;
    this.unqueued = memo?.unqueued ?? null;
  }

  /**
   * The crawl's first step, once it found no record of the audit (`noPageRecords`, read before
   * it wrote any): the URLs it queues and the sitemap URLs it writes unqueued start the audit's
   * complete memo when its state commits (`keepFor`).
   */
  startsMemo(): void {
    this.startsMemoAt = [];
  }

  /**
   * Whether a committed step (or this chain's step) allocated `url` (it is in `known`): no need
   * to read its record. A URL never allocated is read (its record may say it is in the
   * sitemap) unless the memo is complete (`isNew`), as is one not kept.
   */
  private isKnown(url: string): boolean {
    if (this.known === null) return false;
    if (this.knownSeen.has(url)) return true;
    if (!this.known.has(urlHash(url))) return false;
    this.knownSeen.add(url);
    return true;
  }

  /**
   * For a URL not known: whether the memo is complete and says no record of it exists, as a
   * read would have answered (known_urls.ts; a record a step that died wrote is not trusted).
   */
  private isNew(url: string): boolean {
    if (this.unqueued === null) return false;
    if (this.newSeen.has(url)) return true;
    if (this.unqueued.has(urlHash(url))) return false;
    this.newSeen.add(url);
    return true;
  }

  /** Marks the first `taken` entries of the head as done. */
  advance(taken: number): void {
    this.state.head += taken;
  }

  /**
   * The first step's only entry: the start URL at position 0, held with its record (which the
   * caller writes) for the next step (`keepFor`), whose first round then reads nothing.
   */
  queueStart(record: PageRecord): void {
    const entry: FrontierEntry = { url: record.url, depth: 0 };
    this.batch.set(keys.auditFrontier(this.auditId, 0), entry);
    this.held.set(0, { entry, record });
    this.allocatedHashes.push(record.hash);
    this.state.tail = 1;
  }

  /**
   * The first step of list mode: the listed URLs at positions 0…n-1, in order, each with its
   * record (depth 0 for the start URL, else -1: no click path was followed to it).
   */
  queueList(urls: readonly string[], startUrl: string, inSitemap: ReadonlySet<string>): void {
    urls.forEach((url, seq) => {
      const depth = url === startUrl ? 0 : -1;
      this.batch.set(keys.auditFrontier(this.auditId, seq), { url, depth });
      this.batch.set(
        keys.auditPage(this.auditId, url),
        newRecord(url, seq, depth, inSitemap.has(url)),
      );
    });
    this.state.tail = urls.length;
  }

  /**
   * Notes a URL found this step (a link, a redirect target, a canonical…), to be allocated by
   * `allocate`; a URL over the length cap, or reached through more redirects than the hop cap,
   * is left out and the cap hit noted. `via: "render"` (a link in a rendered DOM) is kept on the
   * record of a URL this allocation queues for the first time (`discoveredBy`).
   */
  discover(url: string, depth: number, hops = 0, via?: "render"): void {
    const hits = this.state.capsHit!;
    if (url.length > this.caps.maxUrlLength) noteCap(hits, "url_length", this.caps.maxUrlLength);
    else if (hops > this.caps.redirectHops) {
      noteCap(hits, "redirect_hops", this.caps.redirectHops);
    } else {
      const d: Discovered = hops > 0 ? { url, depth, hops } : { url, depth };
      if (via) d.via = via;
      this.discovered.push(d);
      if (
        this.ahead && !this.ahead.has(url) && !this.taking.has(url) && !this.isKnown(url) &&
        !this.isNew(url)
      ) {
        this.ahead.set(url, { chunk: this.aheadChunks.length, at: this.aheadQueue.length });
        this.aheadQueue.push(url);
        if (this.aheadQueue.length >= AHEAD_CHUNK) this.sendAhead();
      }
    }
  }

  /** Starts reading the records of the URLs queued for reading ahead. */
  private sendAhead(): void {
    if (this.aheadQueue.length === 0) return;
    const chunk = getMany(this.kv, this.aheadQueue.map((u) => keys.auditPage(this.auditId, u)));
    chunk.catch(() => {}); // awaited by `allocate`; a step that fails first leaves it behind
    this.aheadChunks.push(chunk);
    this.aheadQueue = [];
  }

  /** The records of `urls` (distinct), read ahead where they were (`readAhead`). */
  private async recordsOf(urls: string[]): Promise<(PageRecord | null)[]> {
    const ahead = this.ahead;
    if (!ahead) return await getMany(this.kv, urls.map((u) => keys.auditPage(this.auditId, u)));
    this.sendAhead();
    const chunks = await Promise.all(this.aheadChunks);
    const taking = this.taking;
    this.ahead = new Map();
    this.aheadChunks = [];
    this.taking = new Map();
    // Any other URL (none is, unless discovered before `readAhead`) is read now.
    const missed = urls.filter((u) => !ahead.has(u) && !taking.has(u));
    const late = new Map<string, PageRecord | null>();
    if (missed.length > 0) {
      const read = await getMany(this.kv, missed.map((u) => keys.auditPage(this.auditId, u)));
      missed.forEach((u, i) => late.set(u, read[i]));
    }
    return urls.map((u) => {
      const at = ahead.get(u);
      return at ? chunks[at.chunk][at.at] : taking.get(u) ?? late.get(u) ?? null;
    });
  }

  /**
   * Queues an entry again at the tail after a 429/503 (its `retry` count one up): its record stays
   * as it is (its URL is seen) until the retry is fetched. Not bounded by the frontier cap: each
   * URL comes back at most MAX_RETRIES times (politeness.ts).
   */
  requeue(e: FrontierEntry): void {
    this.retries.push({ ...e, retry: (e.retry ?? 0) + 1 });
  }

  /**
   * Gives the URLs discovered so far frontier positions, in discovery order, each URL once. A URL
   * counts as already seen only when a committed state covers its position (seq < tail as this
   * allocation began): a record left by a step that died is re-allocated, never trusted. Past the
   * frontier cap nothing is allocated and the cap hit is noted per URL left out.
   */
  async allocate(): Promise<void> {
    const discovered = this.discovered;
    this.discovered = [];
    const { auditId, batch, state } = this;
    // URLs a committed step allocated are left out of the reads: they are skipped below as
    // a URL allocated earlier in this step is. So are those a complete memo says have no record.
    const distinct = [...new Set(discovered.map((d) => d.url))].filter((u) => !this.isKnown(u));
    const unread = distinct.filter((u) => this.isNew(u));
    const read = unread.length === 0 ? distinct : distinct.filter((u) => !this.newSeen.has(u));
    const found = await this.recordsOf(read);
    const existing = new Map<string, PageRecord | null>();
    for (const u of unread) existing.set(u, null);
    read.forEach((u, i) => existing.set(u, found[i]));
    // What a committed state covers: positions taken below are not (a step may die first).
    const committedTail = state.tail;
    this.allocated = true;
    for (const { rec: _, via: __, ...r } of this.retries) {
      // At another position than its record's: the record is read when taken.
      batch.set(keys.auditFrontier(auditId, state.tail++), r);
    }
    this.retries = [];
    const pace = new Pacer(ALLOCATIONS_PER_YIELD);
    /** URLs this allocation left out of the scope, and by which rule (every occurrence counts). */
    const outside = new Map<string, ScopeRule>();
    for (let i = 0; i < discovered.length; i++) {
      if (pace.due()) await yieldToLoop();
      const d = discovered[i];
      const rec = existing.get(d.url);
      if (rec === undefined) {
        // Allocated (or left out) earlier in this step, or by a committed step (`known`).
        const rule = outside.get(d.url);
        if (rule !== undefined) this.leaveOut(rule);
        continue;
      }
      existing.delete(d.url);
      if (rec && rec.seq >= 0 && rec.seq < committedTail) {
        this.allocatedHashes.push(rec.hash);
        continue;
      }
      const rule = this.scope?.leftOutBy(d.url, d.depth, rec?.inSitemap ?? false) ?? null;
      if (rule !== null) {
        outside.set(d.url, rule);
        this.leaveOut(rule);
        continue;
      }
      if (state.tail >= this.cap) {
        // An endless calendar or a link bomb stops here: the frontier is a few page budgets.
        noteCap(state.capsHit!, "frontier", this.cap);
        continue;
      }
      const seq = state.tail++;
      const entry: FrontierEntry = d.hops
        ? { url: d.url, depth: d.depth, hops: d.hops, rec: rec?.inSitemap ? 2 : 1 }
        : { url: d.url, depth: d.depth, rec: rec?.inSitemap ? 2 : 1 };
      if (d.via) entry.via = d.via;
      const fresh = entryRecord(entry, seq);
      batch.set(keys.auditPage(auditId, d.url), fresh);
      batch.set(keys.auditFrontier(auditId, seq), entry);
      this.allocatedHashes.push(fresh.hash);
      // A chain's later round or allocation finds it allocated without a read (see `isKnown`).
      if (this.known !== null) this.knownSeen.add(d.url);
      // Written already (a set serialises its value): the taker's changes stay its own.
      if (this.held.size < HELD_ENTRIES) this.held.set(seq, { entry, record: fresh });
    }
  }

  /**
   * Keeps a URL read from the sitemaps (first step): its record (not queued: seq -1) and its place
   * in a chunk, for `seedSitemap` once the links run out. Returns false when the URL is over the
   * length cap (left out, the hit noted). Call `closeSitemapChunk` after the last URL.
   */
  keepSitemapUrl(url: string): boolean {
    if (url.length > this.caps.maxUrlLength) {
      noteCap(this.state.capsHit!, "url_length", this.caps.maxUrlLength);
      return false;
    }
    // A scoped crawl keeps only the sitemap URLs its path rules let in (list mode: none; its
    // listed URLs learn they are in the sitemap from the first step).
    if (this.scope !== null) {
      if (this.scope.list !== null) return false;
      const rule = this.scope.pathRule(url);
      if (rule !== null) {
        this.leaveOut(rule);
        return false;
      }
    }
    // The start URL's record is written by the first step, which knows it is in the sitemap.
    if (url !== this.state.startUrl) {
      const rec = newRecord(url, -1, -1, true);
      this.batch.set(keys.auditPage(this.auditId, url), rec);
      this.startsMemoAt?.push(rec.hash);
    }
    this.chunk.push(url);
    this.chunkChars += url.length;
    if (this.chunk.length >= SITEMAP_CHUNK || this.chunkChars >= SITEMAP_CHUNK_CHARS) {
      this.closeSitemapChunk();
    }
    return true;
  }

  /** Writes the sitemap chunk being filled, if it holds any URL. */
  closeSitemapChunk(): void {
    if (this.chunk.length === 0) return;
    this.batch.set(keys.auditSitemapChunk(this.auditId, this.state.sitemapChunks++), this.chunk);
    this.chunk = [];
    this.chunkChars = 0;
  }

  /** Marks every sitemap chunk as seeded: a crawl that never starts has no orphans to find. */
  skipSitemap(): void {
    this.state.seedChunk = this.state.sitemapChunks;
  }

  /**
   * Seeds the next sitemap chunks (SEED_CHUNKS_PER_STEP at most) into the frontier with depth -1:
   * the sitemap URLs the links never reached, which is how orphans are found.
   */
  async seedSitemap(): Promise<void> {
    const { state } = this;
    const end = Math.min(state.sitemapChunks, state.seedChunk + SEED_CHUNKS_PER_STEP);
    for (let c = state.seedChunk; c < end; c++) {
      const chunk = await read(this.kv, keys.auditSitemapChunk(this.auditId, c));
      for (const url of chunk.value ?? []) this.discovered.push({ url, depth: -1 });
    }
    await this.allocate();
    state.seedChunk = end;
  }
}

/**
 * Whether the audit has no page record (one short read): the crawl's first step asks before it
 * writes any, so its memo starts complete only when no earlier attempt left records (`startsMemo`).
 */
export async function noPageRecords(kv: Deno.Kv, auditId: string): Promise<boolean> {
  for await (const _ of list(kv, { prefix: keys.auditPages(auditId) }, { limit: 1 })) return false;
  return true;
}
