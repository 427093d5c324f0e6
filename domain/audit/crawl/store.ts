/**
 * What a crawl keeps in KV, and how it writes it: one compact record per URL, a batched writer
 * that stays inside KV's per-commit limits, and the findings writer that stores each affected
 * item with its evidence (capped per check, the true count kept apart).
 *
 * @module
 */
import { keys } from "../../../kv/keys.ts";
import type { Evidence, UrlState } from "../types.ts";

/** One URL the crawl met: the seen set, the page inventory and the input of the site checks. */
export interface PageRecord {
  url: string;
  /** Hash of the URL: how the link graph names it (see `urlHash`). */
  hash: number;
  /** Frontier position; -1 while only known from the sitemap. */
  seq: number;
  /** Click depth from the start URL; -1 when only reachable through the sitemap. */
  depth: number;
  state: UrlState;
  status: number;
  failure: string | null;
  /** Redirect target (absolute URL, internal or not), or null. */
  location: string | null;
  /** The redirect leaves the site (its target is not crawled). */
  externalLocation: boolean;
  html: boolean;
  noindex: boolean;
  inSitemap: boolean;
  title: string | null;
  description: string | null;
  h1: string | null;
  words: number;
  textHash: number;
  /** Canonical target when it differs from this URL. */
  canonicalOther: string | null;
  ttfbMs: number;
  bytes: number;
  /** Internal links on the page (followable and nofollow). */
  outlinks: number;
  /** Followable internal links pointing here; known once the crawl is finalised. */
  inlinks: number;
  /**
   * Internal link equity, 0–100 (crawl/link_score.ts), for HTML 200 pages once the crawl is
   * finalised; absent otherwise and when the link graph was too large to score.
   */
  linkScore?: number;
  /** Internal hreflang alternates other than the page itself (capped; absent when none). */
  hreflang?: string[];
  /**
   * A non-HTML 2xx response's X-Robots-Tag when it says noindex, nofollow or none (absent
   * otherwise, and on records written before the field existed).
   */
  nonHtmlRobots?: { tag: string; type: string };
  /** Checks that fired on this URL (page checks as crawled, site checks at the end). */
  checks: string[];
}

/** Stored items per check; the true count is kept in the tallies. Documented in docs/audit.md. */
export const FINDINGS_CAP = 2_000;
/** URLs longer than this are not crawled (a KV key holds at most 2 KiB). */
export const MAX_URL_LENGTH = 1_500;
/** Links per stored chunk of a page's link list. */
export const LINKS_PER_CHUNK = 500;

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

/** Limits one commit stays under (KV allows 1,000 mutations, 800 KiB, 80 KiB of keys). */
const MAX_MUTATIONS = 400;
const MAX_BYTES = 500_000;
const MAX_KEY_BYTES = 60_000;

function approxSize(v: unknown): number {
  if (typeof v === "string") return v.length * 3 + 8;
  if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) return 9;
  if (Array.isArray(v)) {
    let n = 8;
    for (const x of v) n += approxSize(x);
    return n;
  }
  let n = 8;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) n += k.length + approxSize(x);
  return n;
}

/**
 * Writes many keys in as few commits as the KV limits allow. Not atomic across commits: crawl
 * writes are idempotent (the same key gets the same value when a step is repeated), and the
 * step's own state commit is what makes its work count.
 */
export class WriteBatch {
  private op: Deno.AtomicOperation;
  private mutations = 0;
  private bytes = 0;
  private keyBytes = 0;
  private pending: Promise<unknown>[] = [];

  constructor(private readonly kv: Deno.Kv) {
    this.op = kv.atomic();
  }

  set(key: Deno.KvKey, value: unknown): void {
    const kb = approxSize(key as unknown[]);
    const vb = approxSize(value);
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
    const kb = approxSize(key as unknown[]);
    if (this.mutations + 1 > MAX_MUTATIONS || this.keyBytes + kb > MAX_KEY_BYTES) {
      this.flushSoon();
    }
    this.op.delete(key);
    this.mutations++;
    this.keyBytes += kb;
  }

  private flushSoon(): void {
    if (this.mutations === 0) return;
    const op = this.op;
    this.pending.push(op.commit());
    this.op = this.kv.atomic();
    this.mutations = this.bytes = this.keyBytes = 0;
    // Bound the commits in flight (and so the memory they hold).
    if (this.pending.length >= 4) {
      const all = this.pending;
      this.pending = [Promise.all(all)];
    }
  }

  /** Commits everything written so far. */
  async flush(): Promise<void> {
    this.flushSoon();
    const all = this.pending;
    this.pending = [];
    await Promise.all(all);
  }
}

/** Stored evidence values are clipped so one item stays small whatever the page holds. */
function clipEvidence(e: Evidence): Evidence {
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
      const u = (typeof item.url === "string" ? item.url : url).slice(0, MAX_URL_LENGTH);
      this.batch.set(
        keys.auditFinding(this.auditId, check, u, n++),
        clipEvidence({ url: u || null, ...item }),
      );
    }
  }
}

/** Reads every entry under a prefix in pages, yielding batches (bounded memory). */
export async function* listInPages<T>(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  pageSize = 500,
): AsyncGenerator<Deno.KvEntry<T>[]> {
  let cursor: string | undefined;
  while (true) {
    const it = kv.list<T>({ prefix }, { limit: pageSize, cursor, batchSize: pageSize });
    const page: Deno.KvEntry<T>[] = [];
    for await (const e of it) page.push(e);
    if (page.length === 0) return;
    yield page;
    if (page.length < pageSize) return;
    cursor = it.cursor;
  }
}

/** Gets many keys, ten per KV read (the read limit), several reads in flight. */
export async function getMany<T>(kv: Deno.Kv, keyList: Deno.KvKey[]): Promise<(T | null)[]> {
  const out: (T | null)[] = new Array(keyList.length).fill(null);
  const jobs: Promise<void>[] = [];
  for (let i = 0; i < keyList.length; i += 10) {
    const slice = keyList.slice(i, i + 10);
    const at = i;
    jobs.push(
      kv.getMany<T[]>(slice).then((entries) => {
        entries.forEach((e, k) => (out[at + k] = e.value as T | null));
      }),
    );
  }
  await Promise.all(jobs);
  return out;
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
  for await (const e of kv.list<string>({ prefix: keys.auditBlobs(auditId, name) })) {
    out += e.value;
  }
  return out;
}
