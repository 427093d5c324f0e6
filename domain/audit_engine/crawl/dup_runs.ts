/**
 * The exact-duplicate index (pages by title, description and text), written as runs: a crawl step
 * writes one value per kind and digest bucket (the digest's first hex digit), not one key per page
 * and kind. A key per page was a write at a random place of KV's B-tree, which costs SQLite a page
 * of its own to rewrite: those 3 writes of a page's ~14 took about a quarter of the CPU of KV's
 * SQLite thread in a crawl (tests/bench/crawl_cpu_bench.ts).
 * A run's name is random: a repeated step writes its entries again under another name, and the
 * reader drops the repeats.
 *
 * The reader (`dupGroups`, for finalize/duplicates.ts) yields a kind's groups (pages under one
 * text) in the order the keys had (by digest), each page once, a bucket at a time, and takes in the
 * keys a crawl begun before the runs wrote (`audit_dups/<kind>/<digest>/<url>`), so a deploy
 * mid-crawl loses no page. It holds at most PASS_ENTRIES entries: a larger bucket is read again
 * for each batch of its texts that fits, and a text shared by more pages than that (a site whose
 * every page has one title) is summed up in one more read, holding its first `keep` URLs and 8
 * bytes a page to count them once.
 *
 * @example
 * ```ts
 * import type { WriteBatch } from "./store.ts";
 * declare const kv: Deno.Kv, batch: WriteBatch;
 * const runs = new DupRuns();
 * runs.add("title", "Home", "https://example.com/");
 * runs.add("title", "Home", "https://example.com/index.html");
 * runs.write(batch, "audit-1");
 * await batch.flush();
 * for await (const g of dupGroups(kv, "audit-1", "title")) console.log(g.text, g.size, g.first);
 * ```
 *
 * @module
 */
import { keys, list } from "../../platform/mod.ts";
import type { DupRun } from "../types.ts";
import { HashKeys } from "./sorted_hashes.ts";
import { dupDigest, urlHash, type WriteBatch } from "./store.ts";

export type { DupRun };

/** The kinds of text the index groups pages by. */
export type DupKind = "title" | "description" | "content";

/** A run's value is closed once its estimated size passes this (KV values hold 64 KiB). */
const RUN_BYTES = 48 * 1024;
/** Entries the reader holds at most, per bucket read (see `bucketsAhead` for reads ahead). */
export const PASS_ENTRIES = 8_192;
const HEX = "0123456789abcdef";
/** Runs read per list batch. */
const RUNS_PER_READ = 16;
/** URLs a group names by default (`DupGroupsOptions.keep`). */
export const KEEP_URLS = 50;

/** One page under one text: its digest (dupDigest), URL and the text itself. */
export interface DupItem {
  digest: string;
  url: string;
  text: string;
}

/** A step's entries of the index, held until `write`. */
export class DupRuns {
  readonly #held = new Map<
    string,
    { kind: DupKind; bucket: string; runs: DupRun[]; bytes: number }
  >();

  /** Indexes a page under a text of `kind`. */
  add(kind: DupKind, text: string, url: string): void {
    const digest = dupDigest(text);
    const bucket = digest[0];
    const id = `${kind}/${bucket}`;
    let held = this.#held.get(id);
    if (!held) this.#held.set(id, held = { kind, bucket, runs: [], bytes: 0 });
    // As valueBytes counts: three strings of 7 bytes and two per UTF-16 unit each.
    const size = 21 + 2 * (digest.length + url.length + text.length);
    let run = held.runs.at(-1);
    if (!run || held.bytes + size > RUN_BYTES) {
      held.runs.push(run = { d: [], u: [], v: [] });
      held.bytes = 64;
    }
    run.d.push(digest);
    run.u.push(url);
    run.v.push(text);
    held.bytes += size;
  }

  /** Writes the runs held into `batch` (nothing when no page was indexed). */
  write(batch: WriteBatch, auditId: string): void {
    if (this.#held.size === 0) return;
    const name = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
    for (const { kind, bucket, runs } of this.#held.values()) {
      runs.forEach((run, n) =>
        batch.set(keys.auditDupRun(auditId, kind, bucket, `${name}:${n}`), run)
      );
    }
  }
}

/** Where a URL's duplicates would be one page (finalize/duplicates.ts): its key and query. */
export type VariantOf = (url: string) => { key: string; query: string };

/** Pages under one text. */
export interface DupGroup {
  digest: string;
  text: string;
  /** Pages, each counted once. */
  size: number;
  /** The first `keep` of them in URL order. */
  first: string[];
  /** With `variantOf`: whether every page has the same variant key. */
  oneKey: boolean;
  /** With `variantOf`, when `oneKey`: whether their queries differ. */
  queriesDiffer: boolean;
}

/** What `dupGroups` is told: see each option. */
export interface DupGroupsOptions {
  /** Buckets read ahead of the one handed out (a slow KV; `bucketsAhead`), default none. */
  ahead?: number;
  /** Entries held per bucket read, at most (tests lower it). */
  limit?: number;
  /** URLs named per group (`DupGroup.first`), default KEEP_URLS. */
  keep?: number;
  /** Fills `oneKey` and `queriesDiffer`. */
  variantOf?: VariantOf;
  /** Told of the entries each read held (tests check the bound). */
  onHeld?: (entries: number) => void;
}

/**
 * The buckets a slow KV's reader reads ahead for an audit of `pages` pages: as many as keep what
 * it holds within twice `limit` (a bucket holds about a sixteenth of the pages, each page at most
 * once a kind; a bucket past `limit` holds only its counts), at least one, all on a small site.
 *
 * @example
 * ```ts
 * bucketsAhead(2_000); // 15: a small site's buckets are read at once
 * bucketsAhead(100_000); // 1
 * ```
 */
export function bucketsAhead(pages: number, limit = PASS_ENTRIES): number {
  const perBucket = Math.max(1, pages / HEX.length);
  return Math.min(HEX.length - 1, Math.max(1, Math.floor(limit / perBucket) - 1));
}

/**
 * A kind's groups in the order of their digests, holding at most `limit` entries per read (see
 * the module comment), with `ahead` reads of the next buckets under way meanwhile.
 */
export async function* dupGroups(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  opts: DupGroupsOptions = {},
): AsyncGenerator<DupGroup> {
  const { ahead = 0, limit = PASS_ENTRIES } = opts;
  const reads: Promise<BucketRead>[] = [];
  const readUpTo = (last: number) => {
    while (reads.length <= Math.min(HEX.length - 1, last)) {
      const read = readBucket(kv, auditId, kind, HEX[reads.length], limit);
      read.catch(() => {}); // a read ahead of a pass that ended is nobody's to report
      reads.push(read);
    }
  };
  for (let b = 0; b < HEX.length; b++) {
    readUpTo(b + ahead);
    const read = await reads[b];
    delete reads[b]; // its entries go with it
    if (read.items) {
      opts.onHeld?.(read.items.length);
      yield* groupsOf(read.items, opts);
      continue;
    }
    yield* overLimit(kv, auditId, kind, HEX[b], read.counts, limit, opts);
  }
}

/**
 * A bucket past the limit, under one digest prefix: its texts in batches of consecutive ranges
 * that fit together, each batch one more read of the bucket; a range past the limit alone is one
 * text (summed up by `largeGroup`) or is counted again, one level finer.
 */
async function* overLimit(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  counts: PrefixCounts,
  limit: number,
  opts: DupGroupsOptions,
): AsyncGenerator<DupGroup> {
  const ranges = counts.entries.length;
  for (let i = 0; i < ranges;) {
    const n = counts.entries[i];
    if (n > limit) {
      const one = counts.only(i);
      if (one !== null) yield await largeGroup(kv, auditId, kind, bucket, one, opts);
      else {
        const finer = await countUnder(kv, auditId, kind, bucket, counts.prefixOf(i));
        yield* overLimit(kv, auditId, kind, bucket, finer, limit, opts);
      }
      i++;
      continue;
    }
    let held = 0;
    let j = i;
    while (j < ranges && held + counts.entries[j] <= limit) held += counts.entries[j++];
    if (held > 0) {
      const items: DupItem[] = [];
      const within = { lo: counts.prefixOf(i), hi: counts.prefixOf(j - 1) };
      await eachEntry(kv, auditId, kind, bucket, within, (digest, url, text) => {
        items.push({ digest, url, text });
      });
      opts.onHeld?.(items.length);
      yield* groupsOf(items, opts);
    }
    i = j;
  }
}

/** Hex digits of a digest (dupDigest). */
const DIGEST_DIGITS = 32;
/** Hex digits of a digest one level of `PrefixCounts` tells apart (256 ranges). */
const LEVEL_DIGITS = 2;

/**
 * How many entries fall under a digest prefix, by its next LEVEL_DIGITS hex digits, and whether
 * each such range holds one digest only: a few kilobytes whatever the site's size. (A count per
 * digest held a string and a map entry per distinct text: at a million pages, ~60,000 of them a
 * bucket and kind, past a worker's heap.) Digests are dupDigest's, 32 hex digits.
 */
class PrefixCounts {
  readonly entries: Uint32Array;
  readonly #digits: number;
  /** The first digest seen in each range, and whether another one was seen there since. */
  readonly #first: (string | null)[];
  readonly #mixed: Uint8Array;

  constructor(readonly prefix: string) {
    this.#digits = Math.max(1, Math.min(LEVEL_DIGITS, DIGEST_DIGITS - prefix.length));
    const ranges = 16 ** this.#digits;
    this.entries = new Uint32Array(ranges);
    this.#first = new Array(ranges).fill(null);
    this.#mixed = new Uint8Array(ranges);
  }

  /** Counts an entry whose digest starts with the prefix. */
  add(digest: string): void {
    const at = this.prefix.length;
    const i = parseInt(digest.slice(at, at + this.#digits), 16) || 0;
    this.entries[i]++;
    const first = this.#first[i];
    if (first === null) this.#first[i] = digest;
    else if (first !== digest) this.#mixed[i] = 1;
  }

  /** The prefix of range `i`. */
  prefixOf(i: number): string {
    return this.prefix + i.toString(16).padStart(this.#digits, "0");
  }

  /** The one digest of range `i`, or null when it holds none or several. */
  only(i: number): string | null {
    return this.#mixed[i] ? null : this.#first[i];
  }
}

/** One more read of a bucket, counting the entries under `prefix` one level finer. */
async function countUnder(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  prefix: string,
): Promise<PrefixCounts> {
  const counts = new PrefixCounts(prefix);
  await eachEntry(kv, auditId, kind, bucket, { lo: prefix, hi: prefix }, (d) => counts.add(d));
  return counts;
}

/** A bucket's entries when they fit `limit` (else null), and how many fall under each prefix. */
interface BucketRead {
  items: DupItem[] | null;
  counts: PrefixCounts;
}

async function readBucket(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  limit: number,
): Promise<BucketRead> {
  let items: DupItem[] | null = [];
  const counts = new PrefixCounts(bucket);
  let total = 0;
  await eachEntry(kv, auditId, kind, bucket, null, (digest, url, text) => {
    counts.add(digest);
    if (++total > limit) items = null;
    else items?.push({ digest, url, text });
  });
  return { items, counts };
}

/** Digest, then URL: the order of the index's keys (both ASCII, so code units sort as bytes). */
function byKey(a: DupItem, b: DupItem): number {
  if (a.digest !== b.digest) return a.digest < b.digest ? -1 : 1;
  return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
}

/** The groups of held entries, sorted into key order, a page written twice counted once. */
function* groupsOf(items: DupItem[], opts: DupGroupsOptions): Generator<DupGroup> {
  items.sort(byKey);
  let group = null as Fold | null;
  let last: DupItem | null = null;
  for (const e of items) {
    if (last && last.digest === e.digest && last.url === e.url) continue;
    last = e;
    if (group?.digest !== e.digest) {
      if (group) yield group.done();
      group = new Fold(e.digest, e.text, opts);
    }
    group.add(e.url);
  }
  if (group) yield group.done();
}

/**
 * One text shared by more pages than a read holds, summed up in one more read of its bucket: its
 * first `keep` URLs kept in order, and a hash per page (8 bytes) so a page written twice counts
 * once.
 */
async function largeGroup(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  digest: string,
  opts: DupGroupsOptions,
): Promise<DupGroup> {
  let group = null as Fold | null;
  const pages = new HashKeys();
  await eachEntry(kv, auditId, kind, bucket, { lo: digest, hi: digest }, (_, url, text) => {
    group ??= new Fold(digest, text, opts);
    group.add(url);
    pages.add(urlHash(url));
  });
  // The pages came in any order, repeats among them: the distinct hashes count them.
  pages.seal();
  group!.size = pages.size;
  pages.release();
  opts.onHeld?.(group!.first.length);
  return group!.done();
}

/**
 * A group as its pages come: in URL order, each once (held entries), or in any order with repeats
 * (a large group, whose caller counts its pages itself).
 */
class Fold {
  size = 0;
  readonly first: string[] = [];
  #variant: { key: string; query: string } | null = null;
  oneKey = true;
  queriesDiffer = false;

  constructor(
    readonly digest: string,
    readonly text: string,
    private readonly opts: DupGroupsOptions,
  ) {}

  /**
   * A page: counted, kept while among the first `keep` URLs (once), and its variant key compared.
   * Whether all pages share one key, and then whether their queries are not all one, is the same
   * whichever page comes first.
   */
  add(url: string): void {
    this.size++;
    const keep = this.opts.keep ?? KEEP_URLS;
    const first = this.first;
    if (first.length < keep || url < first[first.length - 1]) {
      let at = first.length;
      while (at > 0 && first[at - 1] > url) at--;
      if (first[at - 1] !== url) {
        first.splice(at, 0, url);
        if (first.length > keep) first.pop();
      }
    }
    const variantOf = this.opts.variantOf;
    if (!variantOf || !this.oneKey) return;
    const k = variantOf(url);
    if (this.#variant === null) this.#variant = k;
    else if (k.key !== this.#variant.key) this.oneKey = false;
    else if (k.query !== this.#variant.query) this.queriesDiffer = true;
  }

  done(): DupGroup {
    const { digest, text, size, first, oneKey } = this;
    // Whether queries differ means something only when every page shares one key; then it is the
    // same whichever page came first.
    return { digest, text, size, first, oneKey, queriesDiffer: oneKey && this.queriesDiffer };
  }
}

/** Digests from the prefix `lo` to the prefix `hi`, both included (a digest is a prefix of itself). */
interface DigestRange {
  lo: string;
  hi: string;
}

/** Whether a digest is in `r`: at or after `lo`, and its first digits at or before `hi`. */
const inRange = (d: string, r: DigestRange) => d >= r.lo && d.slice(0, r.hi.length) <= r.hi;

/**
 * Every entry of a bucket (`within` a range of digests when given), from its runs (which hold a
 * bucket's digests mixed: they are read whole and filtered) and the keys of a crawl begun before
 * them.
 */
async function eachEntry(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  within: DigestRange | null,
  see: (digest: string, url: string, text: string) => void,
): Promise<void> {
  const runs = async () => {
    const prefix = keys.auditDupRunsOfBucket(auditId, kind, bucket);
    // A run holds up to 48 KiB: a list batch of KV's default 100 could hold ~5 MB at once.
    for await (const e of list(kv, { prefix }, { batchSize: RUNS_PER_READ })) {
      const { d, u, v } = e.value;
      for (let i = 0; i < d.length; i++) {
        if (within === null || inRange(d[i], within)) see(d[i], u[i], v[i]);
      }
    }
  };
  const legacy = async () => {
    const prefix = keys.auditDups(auditId, kind);
    // Digests are hex: the digests under a prefix sort before the prefix followed by "g".
    const at = (digest: string) =>
      [...prefix, digest] as unknown as ReturnType<typeof keys.auditDup>;
    const { lo, hi } = within ?? { lo: bucket, hi: bucket };
    for await (const e of list(kv, { start: at(lo), end: at(hi + "g") })) {
      // A number: an entry of the format before the digest, which no running crawl still has.
      if (typeof e.value !== "number") see(e.key[3], e.key[4], e.value.v);
    }
  };
  await Promise.all([runs(), legacy()]);
}
