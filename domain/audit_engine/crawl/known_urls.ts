/**
 * The URLs an audit's committed crawl steps allocated, as this process saw them commit: a step's
 * allocation reads the record of every distinct URL its pages link only to learn whether it is
 * queued already, and most links point to URLs earlier steps queued. A URL kept here is not read
 * (frontier.ts `allocate`), which took most of the records a step read and the CPU they cost
 * (KV's reads and their deserialisation, issue 34).
 *
 * Sound because a committed allocation is never undone while the crawl runs (positions only grow,
 * a record keeps its position), and because the set is trusted only by a step that read the very
 * state whose commit it covers (the versionstamp), as `Frontier.resume` trusts held entries: a
 * step of another process, a commit that failed, a crawl started again after pruning, all leave a
 * versionstamp this process did not see commit, and the set is dropped. A URL not kept is read,
 * as before. Hashes, not URLs (53 bits, store.ts `urlHash`, as the link graph keys its targets):
 * 8 bytes a URL outside V8's heap, at most KNOWN_URLS_CAP per KV database, oldest audits out. A
 * new URL whose hash collides with a kept one would not be queued: ~3e-11 a lookup at the cap, so
 * about 3e-5 for an audit that looks up a million links' URLs, the link graph's own odds.
 *
 * A memo this process kept from the crawl's first step on (`start`: that step found no record of
 * the audit, so no earlier attempt left any) is complete: it saw every commit that allocated, so
 * a URL it does not keep has no record a committed step wrote, save the sitemap's URLs the first
 * step wrote unqueued (seq -1, their `inSitemap` matters), kept apart (`unqueued`) and still read.
 * Such a URL is new without a read (frontier.ts `allocate`): the young crawl's reads, a round trip
 * each on a remote KV, were mostly of URLs never seen. What a step that died wrote is never
 * trusted (its positions are past the committed tail), read or not. A memo that could not keep
 * every hash (its capacity) is no longer complete.
 *
 * @example
 * ```ts
 * declare const kv: Deno.Kv;
 * const known = new KnownUrls(1_000);
 * known.commit(kv, "aud_1", "v1", "v2", [12345]); // a step that read v1 committed v2
 * known.covering(kv, "aud_1", "v2")?.has(12345); // true: the next step read v2
 * known.covering(kv, "aud_1", "v3"); // null: another commit came between, the set is dropped
 * known.start(kv, "aud_2", "w1", [1], [2]); // the first step queued 1, left sitemap URL 2 unqueued
 * known.memo(kv, "aud_2", "w1")?.unqueued?.has(2); // true: complete, 2 is read
 * ```
 *
 * @module
 */

/**
 * URL hashes kept per KV database, at most: a slot table is at least twice and under four times its
 * hashes, so one audit's table holds at most 4 MiB (6 MiB while it grows to that), all audits' 8.
 */
export const KNOWN_URLS_CAP = 1 << 18;

/** Slots of a new table. */
const MIN_SLOTS = 1 << 10;

/**
 * A set of URL hashes (integers below 2^53) in open addressing over a Float64Array, at most half
 * full; 0 marks an empty slot, so a hash of 0 is never kept (it is then read, as any URL not kept).
 */
export class UrlHashSet {
  #slots = new Float64Array(MIN_SLOTS);
  #bits = Math.log2(MIN_SLOTS);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  #home(h: number): number {
    // Both halves of the hash mixed, the table's bits taken from the product's top.
    return Math.imul((h >>> 0) ^ (h / 4294967296), 0x9e3779b1) >>> (32 - this.#bits);
  }

  has(h: number): boolean {
    if (h === 0) return false;
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let i = this.#home(h);; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === h) return true;
      if (s === 0) return false;
    }
  }

  /** Adds `h`; true when it was not kept before. */
  add(h: number): boolean {
    if (h === 0) return false;
    if (2 * (this.#size + 1) > this.#slots.length) this.#grow();
    const slots = this.#slots;
    const mask = slots.length - 1;
    for (let i = this.#home(h);; i = (i + 1) & mask) {
      const s = slots[i];
      if (s === h) return false;
      if (s === 0) {
        slots[i] = h;
        this.#size++;
        return true;
      }
    }
  }

  #grow(): void {
    const old = this.#slots;
    this.#slots = new Float64Array(old.length * 2);
    this.#bits++;
    this.#size = 0;
    for (const h of old) if (h !== 0) this.add(h);
  }
}

/** An audit's memo, and the versionstamp of the state commit it covers. */
interface Kept extends AuditMemo {
  versionstamp: string;
}

/** What a step may trust of an audit's memo. */
export interface AuditMemo {
  /** URLs committed steps allocated. */
  set: UrlHashSet;
  /**
   * Non-null when the memo is complete (see the module comment): the sitemap URLs the first step
   * left unqueued (records with seq -1). A URL in neither set has no record to read.
   */
  unqueued: UrlHashSet | null;
}

/** Hashes a memo keeps, both sets. */
const sizeOf = (k: AuditMemo) => k.set.size + (k.unqueued?.size ?? 0);

/** Per KV database, per audit, the URLs this process saw committed steps allocate. */
export class KnownUrls {
  readonly #byKv = new WeakMap<Deno.Kv, Map<string, Kept>>();

  /** `capacity`: URL hashes kept per KV database, at most (0: none, every record is read). */
  constructor(public capacity: number = KNOWN_URLS_CAP) {}

  /**
   * The audit's set, for a step that read the state committed as `versionstamp`: null (and the
   * set forgotten) unless that commit is the last this process saw add to it.
   */
  covering(kv: Deno.Kv, auditId: string, versionstamp: string | null): UrlHashSet | null {
    return this.memo(kv, auditId, versionstamp)?.set ?? null;
  }

  /** As `covering`, with whether the memo is complete (`unqueued`). */
  memo(kv: Deno.Kv, auditId: string, versionstamp: string | null): AuditMemo | null {
    const audits = this.#byKv.get(kv);
    const kept = audits?.get(auditId);
    if (!kept) return null;
    if (kept.versionstamp === versionstamp) return kept;
    audits!.delete(auditId);
    return null;
  }

  /**
   * The crawl's first step, which found no record of the audit, committed as `to`: it queued
   * `queued` and wrote the sitemap URLs `unqueued` unqueued. The audit's memo starts complete.
   */
  start(
    kv: Deno.Kv,
    auditId: string,
    to: string,
    queued: ArrayLike<number>,
    unqueued: ArrayLike<number>,
  ): void {
    const sitemap = new UrlHashSet();
    for (let i = 0; i < unqueued.length; i++) sitemap.add(unqueued[i]);
    this.#keep(kv, auditId, null, to, queued, sitemap);
  }

  /**
   * A step that read the state committed as `from` committed as `to`, having allocated (or
   * found allocated) the URLs `hashes`: they join the audit's set, which now covers `to`. A set
   * that covered another state than `from` is started again. The audit becomes the newest; the
   * oldest others go while the KV's sets hold more than `capacity` hashes; past it, no more.
   */
  commit(
    kv: Deno.Kv,
    auditId: string,
    from: string | null,
    to: string,
    hashes: ArrayLike<number>,
  ): void {
    this.#keep(kv, auditId, from, to, hashes, undefined);
  }

  /** `commit`; `sitemap`: a complete memo starts (`start`), undefined: it goes on if it was. */
  #keep(
    kv: Deno.Kv,
    auditId: string,
    from: string | null,
    to: string,
    hashes: ArrayLike<number>,
    sitemap: UrlHashSet | undefined,
  ): void {
    if (this.capacity <= 0) return;
    let audits = this.#byKv.get(kv);
    if (!audits) this.#byKv.set(kv, audits = new Map());
    const last = audits.get(auditId);
    audits.delete(auditId);
    const kept: Kept = sitemap !== undefined
      ? { versionstamp: to, set: new UrlHashSet(), unqueued: sitemap }
      : last?.versionstamp === from
      ? { versionstamp: to, set: last!.set, unqueued: last!.unqueued }
      : { versionstamp: to, set: new UrlHashSet(), unqueued: null };
    audits.set(auditId, kept);
    let others = 0;
    for (const [id, k] of audits) if (id !== auditId) others += sizeOf(k);
    for (const [id, k] of audits) {
      if (others + sizeOf(kept) + hashes.length <= this.capacity) break;
      if (id === auditId) continue;
      audits.delete(id);
      others -= sizeOf(k);
    }
    const room = this.capacity - others - (kept.unqueued?.size ?? 0);
    const set = kept.set;
    let i = 0;
    for (; i < hashes.length && set.size < room; i++) set.add(hashes[i]);
    // A hash left out may be of a URL with a record: a URL not kept must be read again.
    if (i < hashes.length || room < 0) kept.unqueued = null;
  }

  /** Forgets the audit's set (its crawl phase ended: the memory is better given back). */
  forget(kv: Deno.Kv, auditId: string): void {
    this.#byKv.get(kv)?.delete(auditId);
  }
}

/** The process's one memo, shared by every crawl step it runs (frontier.ts). */
export const knownUrls = new KnownUrls();
