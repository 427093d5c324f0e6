/**
 * What a crawl keeps in KV, and how it writes it: one compact record per URL, a batched writer
 * that stays inside KV's per-commit limits, and the findings writer that stores each affected
 * item with its evidence (capped per check, the true count kept apart).
 *
 * @module
 */
import type { DupEntry, Evidence, LabFigures, LinkChunk, PageRecord } from "../types.ts";
import { createHash } from "node:crypto";
import {
  type Key,
  keys,
  list,
  type ListedEntry,
  type Prefix,
  readAll,
} from "../../platform/mod.ts";
import { keyBytes, keyPrefix, KV_LIMITS, valueBytes } from "../../../kv/limits_guard.ts";
import type { Selector } from "../../../kv/typed.ts";
import type { PageFacts } from "../page_facts.ts";

export type { DupEntry, LinkChunk, PageRecord };

export type { LabFigures };

/** Stored items per check; the true count is kept in the tallies. Documented in docs/audit.md. */
export const FINDINGS_CAP = 2_000;
/** URLs longer than this are not crawled (a KV key holds at most 2 KiB). */
export const MAX_URL_LENGTH = 1_500;
/** Links per stored chunk of a page's link list, at most (a chunk also closes at LINK_CHUNK_BYTES). */
export const LINKS_PER_CHUNK = 500;
/** A chunk of links is closed once its estimated size passes this (KV values hold 64 KiB). */
export const LINK_CHUNK_BYTES = 48 * 1024;
/** Stored anchor text per link, at most (page facts keep less; this bounds the chunk anyway). */
export const ANCHOR_CHARS = 200;

/**
 * A 53-bit hash of a URL (two 32-bit FNV-1a variants): the link graph stores targets as numbers,
 * 8 bytes instead of the URL. At a million distinct URLs the chance of any collision is ~1e-4.
 */
export function urlHash(s: string): number {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 16777619);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  return (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
}

export function newRecord(url: string, seq: number, depth: number, inSitemap: boolean): PageRecord {
  return {
    url,
    hash: urlHash(url),
    seq,
    depth,
    state: seq >= 0 ? "queued" : "unvisited",
    status: 0,
    failure: null,
    location: null,
    externalLocation: false,
    html: false,
    noindex: false,
    inSitemap,
    title: null,
    description: null,
    h1: null,
    words: 0,
    textHash: 0,
    canonicalOther: null,
    ttfbMs: 0,
    bytes: 0,
    outlinks: 0,
    inlinks: 0,
    checks: [],
  };
}

/**
 * Limits one commit stays under (KV allows 1,000 mutations, 800 KiB, 80 KiB of keys), with room
 * for the estimates' slack.
 */
const MAX_MUTATIONS = 400;
/** Commits a pacing pass keeps on their way at once, at most (`WriteBatch.paced`). */
const PACED_COMMITS = 4;
const MAX_BYTES = 500_000;
const MAX_KEY_BYTES = 60_000;

/** A write the batch refuses before it reaches KV: a key or value past KV's limit (a bug). */
export class OversizeWriteError extends Error {
  constructor(what: "key" | "value", key: Deno.KvKey, bytes: number, max: number) {
    super(`WriteBatch: ${what} of ${keyPrefix(key)} is ${bytes} bytes, KV allows ${max}`);
    this.name = "OversizeWriteError";
  }
}

/**
 * Writes many keys in as few commits as the KV limits allow. Not atomic across commits: crawl
 * writes are idempotent (the same key gets the same value when a step is repeated), and the
 * step's own state commit is what makes its work count.
 *
 * Every commit is observed from the moment it starts: the first failure (a rejected commit, or
 * one that is not `ok`, which a commit without checks never should be) is kept and `flush()`
 * rejects with it, so the step fails and is repeated, and nothing is left as an unhandled
 * rejection. A key or value past KV's limit throws `OversizeWriteError` at `set`, where the bug is.
 */
export class WriteBatch {
  private op: Deno.AtomicOperation;
  private mutations = 0;
  private bytes = 0;
  private keyBytes = 0;
  private readonly pending = new Set<Promise<void>>();
  private failure: unknown = null;
  private failed = false;

  constructor(private readonly kv: Deno.Kv) {
    this.op = kv.atomic();
  }

  /**
   * Adds a write; the value must be of the key's family (domain/platform/store.ts). `vb`: its
   * `valueBytes`, when the caller measured it already (a page's reuse entry is measured to decide
   * whether it is kept; walking its facts again cost as much).
   */
  set<T>(key: Key<T>, value: NoInfer<T>, vb: number = valueBytes(value)): void {
    const kb = keyBytes(key);
    if (kb > KV_LIMITS.keyBytes) throw new OversizeWriteError("key", key, kb, KV_LIMITS.keyBytes);
    if (vb > KV_LIMITS.valueBytes) {
      throw new OversizeWriteError("value", key, vb, KV_LIMITS.valueBytes);
    }
    if (
      this.mutations + 1 > MAX_MUTATIONS || this.bytes + vb + kb > MAX_BYTES ||
      this.keyBytes + kb > MAX_KEY_BYTES
    ) this.flushSoon();
    this.op.set(key, value);
    this.mutations++;
    this.bytes += vb + kb;
    this.keyBytes += kb;
  }

  delete(key: Deno.KvKey): void {
    const kb = keyBytes(key);
    if (kb > KV_LIMITS.keyBytes) throw new OversizeWriteError("key", key, kb, KV_LIMITS.keyBytes);
    if (this.mutations + 1 > MAX_MUTATIONS || this.keyBytes + kb > MAX_KEY_BYTES) {
      this.flushSoon();
    }
    this.op.delete(key);
    this.mutations++;
    this.bytes += kb;
    this.keyBytes += kb;
  }

  /**
   * Starts committing what is held without waiting for it: a step sends its records while it
   * reads for its allocation, so on a remote KV the two round trips overlap. `flush` still waits.
   */
  send(): void {
    this.flushSoon();
  }

  /**
   * Hands what is held and not yet sent to the caller, to build its own commit on (a step's state
   * commit: its last writes go with it, not a round trip before it); the batch goes on with a new
   * operation. What is held stays under this batch's limits, which leave the caller room for two
   * values of KV's largest size, a few small ones and ten checks within one commit's limits.
   */
  takeHeld(): Deno.AtomicOperation {
    const op = this.op;
    this.op = this.kv.atomic();
    this.mutations = this.bytes = this.keyBytes = 0;
    return op;
  }

  /**
   * Resolves once the commits sent so far have ended (not those sent later; failures are
   * `flush`'s to report): a step's later round writes and reads what an earlier one sent.
   */
  async settled(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  /**
   * Sends what is held, then waits while more than `inFlight` commits are on their way: a pass
   * that writes as it reads keeps its commits (and the values they hold) bounded on a slow KV,
   * where they would pile up behind its reads. Throws, as `flush` does, once a commit failed.
   */
  async paced(inFlight = PACED_COMMITS): Promise<void> {
    this.flushSoon();
    while (this.pending.size > inFlight && !this.failed) await Promise.race(this.pending);
    if (this.failed) throw this.failure;
  }

  /** Starts committing what is held, observed at once (see the class comment). */
  private flushSoon(): void {
    if (this.mutations === 0) return;
    const op = this.op;
    this.op = this.kv.atomic();
    this.mutations = this.bytes = this.keyBytes = 0;
    const done: Promise<void> = new Promise<Deno.KvCommitResult | Deno.KvCommitError>((r) =>
      r(op.commit())
    )
      .then((res) => {
        if (!res.ok) throw new Error("WriteBatch: a commit without checks was not ok");
      })
      .catch((err) => {
        if (!this.failed) {
          this.failed = true;
          this.failure = err;
        }
      })
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Commits everything written so far; rejects with the first commit failure of this batch. */
  async flush(): Promise<void> {
    this.flushSoon();
    while (this.pending.size > 0) await Promise.all([...this.pending]);
    if (this.failed) throw this.failure;
  }
}

/**
 * The longest text (UTF-8 bytes) a URL may keep as a key part: a URL the crawl stores is ASCII
 * (WHATWG serialisation percent-encodes the rest) and at most MAX_URL_LENGTH long, but evidence
 * may name any text a page held.
 */
const URL_KEY_BYTES = MAX_URL_LENGTH;

/** `s` cut to at most `maxBytes` of UTF-8, never inside a character. */
export function clipUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  let bytes = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
    const pair = c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff;
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + n > maxBytes) return s.slice(0, i);
    bytes += n;
    if (pair) i++;
  }
  return s;
}

/** Stored evidence values are clipped so one item stays small whatever the page holds. */
export function clipEvidence(e: Evidence): Evidence {
  const out: Evidence = {};
  for (const [k, v] of Object.entries(e)) {
    if (typeof v === "string") out[k] = v.length > 300 ? v.slice(0, 300) : v;
    else if (Array.isArray(v)) out[k] = v.slice(0, 10).map((x) => String(x).slice(0, 300));
    else out[k] = v;
  }
  return out;
}

/**
 * Stores the evidence of affected items, at most FINDINGS_CAP per check. `stored` counts what was
 * written per check (persisted with the crawl state, so a later step continues the count); items
 * beyond the cap are counted by the caller's tallies, not stored.
 */
export class FindingsWriter {
  constructor(
    private readonly batch: WriteBatch,
    private readonly auditId: string,
    readonly stored: Record<string, number>,
  ) {}

  /** Writes the items of one check about one URL (`n` numbers them within that URL). */
  add(check: string, url: string, items: Evidence[]): void {
    let n = 0;
    for (const item of items) {
      const count = this.stored[check] ?? 0;
      if (count >= FINDINGS_CAP) return;
      this.stored[check] = count + 1;
      const u = clipUtf8(typeof item.url === "string" ? item.url : url, URL_KEY_BYTES);
      this.batch.set(
        keys.auditFinding(this.auditId, check, u, n++),
        clipEvidence({ url: u || null, ...item }),
      );
    }
  }
}

/**
 * Reads every entry under a prefix in pages, yielding batches (bounded memory: the page yielded
 * and the next one). The next page is read while the caller works on the one it holds, so on a
 * remote KV a site-wide pass waits a round trip per page only when it is faster than KV.
 *
 * `splits` (ascending strings, e.g. crawl/url_sample.ts `splitsOf`) cut the keys by the part
 * after the prefix into ranges that are read side by side and yielded in key order, as one list
 * would: a pass over a few thousand records waits for its ranges' round trips at once, not one
 * after another. Each range reads up to RANGE_PAGES_AHEAD pages ahead of the caller; the ranges
 * after the one being read start no read once the pages held are about RANGES_AHEAD_BYTES, so
 * a site of big records (long hreflang lists, many links with long anchors) holds ahead about
 * that, plus a page per range whose read began under it and a second page of the range being
 * read. Any split points are correct; good ones make the ranges even.
 */
export async function* listInPages<T, K extends Deno.KvKey>(
  kv: Deno.Kv,
  prefix: Prefix<T, K>,
  pageSize = 500,
  splits: readonly string[] = [],
): AsyncGenerator<ListedEntry<T, K>[]> {
  if (splits.length === 0) {
    yield* listRangeInPages(kv, { prefix }, pageSize);
    return;
  }
  const at = (s: string) => [...prefix, s] as unknown as K & Key<T>;
  const selectors: Selector<T, K>[] = [
    { prefix, end: at(splits[0]) },
    ...splits.slice(1).map((to, i) => ({ start: at(splits[i]), end: at(to) })),
    { prefix, start: at(splits[splits.length - 1]) },
  ];
  const reads = new RangeReads();
  const ranges = selectors.map((s, i) =>
    new PagesAhead(listRangeInPages(kv, s, pageSize, false), reads, i)
  );
  reads.ranges.push(...ranges);
  try {
    for (const [i, range] of ranges.entries()) {
      reads.current = i;
      reads.wake();
      yield* range.pages();
    }
  } finally {
    for (const range of ranges) range.close();
  }
}

/** Pages a range of `listInPages` reads ahead of its caller, at most. */
const RANGE_PAGES_AHEAD = 2;
/** Bytes (estimated) of the pages held past which the ranges ahead start no further read. */
const RANGES_AHEAD_BYTES = 4 * 1024 * 1024;

/** What the ranges of one `listInPages` share: the bytes they hold, and which one is read. */
class RangeReads {
  bytes = 0;
  current = 0;
  readonly ranges: { pull(): void }[] = [];

  /** Lets every range read on that may (a page was handed on, or another range is read). */
  wake(): void {
    for (const r of this.ranges) r.pull();
  }
}

/** A page's size, estimated from its first, middle and last entries (as KV serialises them). */
function pageBytes(page: readonly { value: unknown }[]): number {
  const at = [0, page.length >> 1, page.length - 1];
  const sample = at.reduce((n, i) => n + valueBytes(page[i].value), 0);
  return Math.ceil(sample / at.length) * page.length;
}

/** A range's pages, read ahead of the caller: see `listInPages`. */
class PagesAhead<E extends readonly { value: unknown }[]> {
  private readonly held: { page: E; bytes: number }[] = [];
  private ended = false;
  private closed = false;
  private failure: { err: unknown } | null = null;
  private pulling: Promise<void> | null = null;

  constructor(
    private readonly source: AsyncGenerator<E>,
    private readonly reads: RangeReads,
    private readonly index: number,
  ) {}

  /** Starts reading the next page, when this range may (see `listInPages`). */
  pull(): void {
    if (this.pulling || this.ended || this.closed || this.held.length >= RANGE_PAGES_AHEAD) {
      return;
    }
    if (this.index > this.reads.current && this.reads.bytes >= RANGES_AHEAD_BYTES) return;
    this.pulling = this.source.next().then(
      (r) => {
        if (r.done || this.closed) {
          this.ended = true;
          return;
        }
        const bytes = r.value.length > 0 ? pageBytes(r.value) : 0;
        this.held.push({ page: r.value, bytes });
        this.reads.bytes += bytes;
      },
      (err) => {
        this.failure = { err };
        this.ended = true;
      },
    ).finally(() => {
      this.pulling = null;
      this.pull();
    });
  }

  /** The range's pages in order; rethrows a failed read where its page would have been. */
  async *pages(): AsyncGenerator<E> {
    while (true) {
      const next = this.held.shift();
      if (next) {
        this.reads.bytes -= next.bytes;
        this.reads.wake();
        yield next.page;
        continue;
      }
      if (this.failure) throw this.failure.err;
      if (this.ended) return;
      if (!this.pulling) this.pull();
      await this.pulling;
    }
  }

  /** Stops reading ahead (a caller that stopped early, or a range read to its end). */
  close(): void {
    this.closed = true;
    for (const h of this.held) this.reads.bytes -= h.bytes;
    this.held.length = 0;
    // A read still in flight ends on its own; its result (or failure) is nobody's to report.
    void this.source.return(undefined).catch(() => {});
  }
}

/**
 * `listInPages` over any selector: a prefix, part of one, or a range of keys. `ahead`: read the
 * next page while the caller works on this one (a caller that reads ahead itself says false).
 */
export async function* listRangeInPages<T, K extends Deno.KvKey>(
  kv: Deno.Kv,
  selector: Selector<T, K>,
  pageSize = 500,
  ahead = true,
): AsyncGenerator<ListedEntry<T, K>[]> {
  type Read = { page: ListedEntry<T, K>[]; cursor: string | null };
  const readPage = async (cursor: string | undefined): Promise<Read> => {
    const it = list(kv, selector, { limit: pageSize, cursor, batchSize: pageSize });
    const page: ListedEntry<T, K>[] = [];
    for await (const e of it) page.push(e);
    return { page, cursor: page.length < pageSize ? null : it.cursor };
  };
  const readFrom = (cursor: string) => {
    const p = readPage(cursor);
    // A caller that stops early leaves this read behind: its failure is nobody's to report.
    p.catch(() => {});
    return p;
  };
  let next: Promise<Read> | null = readPage(undefined);
  while (next) {
    const { page, cursor }: Read = await next;
    if (page.length === 0) return;
    next = ahead && cursor !== null ? readFrom(cursor) : null;
    yield page;
    if (cursor === null) return;
    next ??= readFrom(cursor);
  }
}

/**
 * Reads in flight in `getMany`, at most. A step's allocation reads the records of every URL its
 * pages linked (~2,000 for 100 pages of 20 links: 200 reads); on a remote KV each wave of reads is
 * one round trip, so the cap lets such a step read in one or two waves, not seven, while a step
 * that discovered 100,000 URLs still holds at most this many reads (2,560 records) at once.
 */
export const READS_IN_FLIGHT = 256;

/** Gets many keys, ten per KV read (the read limit), at most READS_IN_FLIGHT reads in flight. */
export async function getMany<T>(kv: Deno.Kv, keyList: Key<T>[]): Promise<(T | null)[]> {
  const out: (T | null)[] = new Array(keyList.length).fill(null);
  let next = 0;
  const reader = async () => {
    while (next < keyList.length) {
      const at = next;
      next += 10;
      const entries = await readAll(kv, keyList.slice(at, at + 10));
      entries.forEach((e, k) => (out[at + k] = e.value));
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(READS_IN_FLIGHT, Math.ceil(keyList.length / 10)) }, reader),
  );
  return out;
}

/**
 * Page records by URL, ten per read. A URL longer than MAX_URL_LENGTH has no record (the crawl
 * never stores one) and would pass KV's 2 KiB key limit for a read: it is null without a read.
 */
export async function getPages(
  kv: Deno.Kv,
  auditId: string,
  urls: readonly string[],
): Promise<(PageRecord | null)[]> {
  const keyed = urls.map((u, i) => ({ u, i })).filter((x) => x.u.length <= MAX_URL_LENGTH);
  const found = await getMany(kv, keyed.map((x) => keys.auditPage(auditId, x.u)));
  const out: (PageRecord | null)[] = new Array(urls.length).fill(null);
  keyed.forEach((x, k) => (out[x.i] = found[k]));
  return out;
}

/** Characters of hreflang alternates a record keeps (with HREFLANG_TARGETS, page_recorder.ts). */
export const HREFLANG_CHARS = 16_000;

/**
 * A record as stored, within a KV value whatever the page said: a redirect or canonical target
 * longer than MAX_URL_LENGTH (never crawled, so never a record) is cut to MAX_URL_LENGTH + 1
 * characters, still too long to match a record; hreflang alternates are kept while their
 * characters stay under HREFLANG_CHARS. Titles and texts are clipped where they are read.
 */
export function boundRecord(rec: PageRecord): PageRecord {
  const cut = (u: string | null) =>
    u !== null && u.length > MAX_URL_LENGTH ? u.slice(0, MAX_URL_LENGTH + 1) : u;
  rec.location = cut(rec.location);
  rec.canonicalOther = cut(rec.canonicalOther);
  if (rec.hreflang) {
    let chars = 0;
    const kept = rec.hreflang.filter((u) => (chars += u.length) <= HREFLANG_CHARS);
    if (kept.length < rec.hreflang.length) rec.hreflang = kept;
  }
  return rec;
}

/** Stores a text under a name in chunks below the value limit; returns the chunk count. */
export function writeBlob(batch: WriteBatch, auditId: string, name: string, text: string): number {
  const CHUNK = 20_000; // characters: up to 60 KB as UTF-8
  let n = 0;
  for (let i = 0; i < text.length || n === 0; i += CHUNK) {
    batch.set(keys.auditBlob(auditId, name, n++), text.slice(i, i + CHUNK));
  }
  return n;
}

export async function readBlob(kv: Deno.Kv, auditId: string, name: string): Promise<string> {
  let out = "";
  for await (const e of list(kv, { prefix: keys.auditBlobs(auditId, name) })) {
    out += e.value;
  }
  return out;
}

/**
 * A page's internal links as hashed targets with anchor texts, followable first, then nofollow,
 * in chunks of at most LINKS_PER_CHUNK links, each closed once its estimated size passes
 * LINK_CHUNK_BYTES (long anchors in a script other than Latin would otherwise pass KV's 64 KiB).
 * `f` of a chunk: how many of its first links are followable.
 */
export function writeLinks(
  batch: WriteBatch,
  auditId: string,
  url: string,
  facts: Pick<PageFacts, "links" | "nofollowLinks" | "linkAnchors" | "nofollowAnchors">,
): void {
  const targets = [...facts.links, ...facts.nofollowLinks];
  const anchors = [...facts.linkAnchors, ...facts.nofollowAnchors];
  const followable = facts.links.length;
  let chunk = 0;
  let from = 0;
  while (from < targets.length) {
    // Per link: a number (9 bytes) and a string (7 + 2 per UTF-16 unit), as valueBytes counts.
    let size = 64;
    let to = from;
    const a: string[] = [];
    while (to < targets.length && to - from < LINKS_PER_CHUNK && size <= LINK_CHUNK_BYTES) {
      const anchor = (anchors[to] ?? "").slice(0, ANCHOR_CHARS);
      a.push(anchor);
      size += 16 + 2 * anchor.length;
      to++;
    }
    batch.set(keys.auditLinks(auditId, url, chunk++), {
      t: targets.slice(from, to).map(urlHash),
      a,
      f: Math.max(0, Math.min(to, followable) - from),
    });
    from = to;
  }
}

/**
 * What the duplicate index sorts a text by: a digest of it (128 bits of SHA-256, hex), small
 * whatever the page's title holds; equal texts share it, so each group is contiguous once sorted
 * (crawl/dup_runs.ts).
 */
export function dupDigest(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 32);
}
