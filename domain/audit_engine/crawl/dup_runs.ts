/**
 * The exact-duplicate index (pages by title, description and text), written as runs: a crawl step
 * writes one value per kind and digest bucket (the digest's first hex digit), not one key per page
 * and kind. A key per page was a write at a random place of KV's B-tree, which costs SQLite a page
 * of its own to rewrite: those 3 writes of a page's ~14 took about a quarter of the CPU of KV's
 * SQLite thread in a crawl (tests/bench/crawl_cpu_bench.ts).
 * A run's name is random: a repeated step writes its entries again under another name, and the
 * reader drops the repeats.
 *
 * The reader (`sortedDupEntries`, for finalize/duplicates.ts) yields a kind's entries in the order
 * the keys had (digest, then URL), a bucket at a time, and takes in the keys a crawl begun before
 * the runs wrote (`audit_dups/<kind>/<digest>/<url>`), so a deploy mid-crawl loses no page. It
 * holds one bucket's entries, at most PASS_ENTRIES: a larger bucket is read once more for each of
 * the parts (by the digest's second hex digit) it is cut into.
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
 * for await (const e of sortedDupEntries(kv, "audit-1", "title")) console.log(e.url, e.text);
 * ```
 *
 * @module
 */
import { keys, list } from "../../platform/mod.ts";
import type { DupRun } from "../types.ts";
import { dupDigest, type WriteBatch } from "./store.ts";

export type { DupRun };

/** The kinds of text the index groups pages by. */
export type DupKind = "title" | "description" | "content";

/** A run's value is closed once its estimated size passes this (KV values hold 64 KiB). */
const RUN_BYTES = 48 * 1024;
/** Entries of one bucket (or part of one) the reader holds at most. */
export const PASS_ENTRIES = 8_192;
/** Parts a bucket is cut into at most (by the digest's second hex digit). */
const MAX_PARTS = 16;
const HEX = "0123456789abcdef";

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

/**
 * A kind's entries in the order the one-key-per-entry index had (digest, then URL), each once,
 * holding one bucket (or part of one) at a time: see the module comment. `ahead` (a slow KV):
 * later buckets are read while one is handed out, as many as keep the entries held within
 * PASS_ENTRIES at the first bucket's size (every bucket holds about as many), at least one.
 */
export async function* sortedDupEntries(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  { ahead = false, limit = PASS_ENTRIES }: { ahead?: boolean; limit?: number } = {},
): AsyncGenerator<DupItem> {
  const reads: Promise<{ items: DupItem[]; count: number }>[] = [];
  const readUpTo = (n: number) => {
    while (reads.length < Math.min(HEX.length, n)) {
      const read = readPart(kv, auditId, kind, HEX[reads.length], 0, MAX_PARTS, limit);
      read.catch(() => {}); // a read ahead of a pass that ended is nobody's to report
      reads.push(read);
    }
  };
  let window = 0;
  for (let b = 0; b < HEX.length; b++) {
    readUpTo(b + 1);
    const first = await reads[b];
    if (b === 0 && ahead) window = Math.max(1, Math.floor(limit / Math.max(1, first.count)));
    readUpTo(b + 1 + window);
    let parts = 1;
    while (parts < MAX_PARTS && first.count > limit * parts) parts *= 2;
    for (let p = 0; p < parts; p++) {
      const width = MAX_PARTS / parts;
      const { items } = parts === 1
        ? first
        : await readPart(kv, auditId, kind, HEX[b], p * width, (p + 1) * width, Infinity);
      items.sort(byKey);
      let last: DupItem | null = null;
      for (const e of items) {
        if (last && last.digest === e.digest && last.url === e.url) continue;
        last = e;
        yield e;
      }
    }
    delete reads[b]; // its entries go with it
  }
}

/** Digest, then URL: the order of the index's keys (both ASCII, so code units sort as bytes). */
function byKey(a: DupItem, b: DupItem): number {
  if (a.digest !== b.digest) return a.digest < b.digest ? -1 : 1;
  return a.url < b.url ? -1 : a.url > b.url ? 1 : 0;
}

/**
 * The entries of a bucket whose digest's second hex digit is in [from, to), from its runs and the
 * keys of a crawl begun before them, and how many there are. Past `limit` entries only the count
 * goes on (the items are dropped): the caller reads the bucket again in parts.
 */
async function readPart(
  kv: Deno.Kv,
  auditId: string,
  kind: DupKind,
  bucket: string,
  from: number,
  to: number,
  limit: number,
): Promise<{ items: DupItem[]; count: number }> {
  let items: DupItem[] = [];
  let count = 0;
  const keep = (item: DupItem) => {
    if (++count <= limit) items.push(item);
    else items = [];
  };
  const whole = from === 0 && to === MAX_PARTS;
  const runs = async () => {
    for await (const e of list(kv, { prefix: keys.auditDupRunsOfBucket(auditId, kind, bucket) })) {
      const { d, u, v } = e.value;
      for (let i = 0; i < d.length; i++) {
        if (!whole) {
          const second = HEX.indexOf(d[i][1]);
          if (second < from || second >= to) continue;
        }
        keep({ digest: d[i], url: u[i], text: v[i] });
      }
    }
  };
  const legacy = async () => {
    const prefix = keys.auditDups(auditId, kind);
    // Digests are hex: a bucket's part is a range of the keys' digest part.
    const at = (digestFrom: string) =>
      [...prefix, digestFrom] as unknown as ReturnType<typeof keys.auditDup>;
    const end = at(to < MAX_PARTS ? bucket + HEX[to] : bucket + "g");
    for await (const e of list(kv, { start: at(bucket + HEX[from]), end })) {
      // A number: an entry of the format before the digest, which no running crawl still has.
      if (typeof e.value !== "number") keep({ digest: e.key[3], url: e.key[4], text: e.value.v });
    }
  };
  await Promise.all([runs(), legacy()]);
  return { items, count };
}
