/**
 * The near-duplicate band index as runs (crawl/page_recorder.ts `NearRuns`, one value per crawl
 * step and band) gives the pass (crawl/finalize/near_duplicates.ts) exactly what one key per page
 * and band gave: the same items in the same order, whether the pages came in runs, in the keys a
 * crawl begun before the runs wrote, or both; a step written twice counts once; and the pages
 * found are those a brute-force comparison of every pair sharing a band finds. The pass lists a
 * band's runs in key ranges side by side: runs under any name are read, hex or not.
 */
import assert from "node:assert/strict";
import { keys } from "../../domain/platform/mod.ts";
import {
  BAND_BINS,
  BANDS,
  NEAR_RUN_ENTRIES,
  NearRuns,
} from "../../domain/audit_engine/crawl/page_recorder.ts";
import { urlHash, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { nearDuplicates } from "../../domain/audit_engine/crawl/finalize/near_duplicates.ts";
import { Group } from "../../domain/audit_engine/crawl/finalize/facts.ts";
import {
  EMPTY_BIN,
  fingerprintText,
  similarity,
} from "../../domain/audit_engine/text_fingerprint.ts";
import { openTestKv } from "../helpers/kv.ts";

interface Page {
  url: string;
  hash: number;
  text: number;
  sig: Uint16Array;
}

const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words").split(" ");

/** Families of alike texts (a shared body, a few words of their own), some exact twins. */
function pages(n: number): Page[] {
  const out: Page[] = [];
  for (let i = 0; i < n; i++) {
    const t = i % 7 === 3 ? i - 1 : i; // every 7th page repeats its neighbour's text
    const family = t % 4;
    const words: string[] = [];
    for (let k = 0; k < 150; k++) words.push(`${WORDS[k % WORDS.length]}${family}n${k}`);
    // A page's own words: few in families 0-2 (near their family, or not, by how many), many in
    // family 3 (near nothing).
    const own = family === 3 ? 140 : 1 + (t % 7);
    for (let k = 0; k < own; k++) words[(k * 37 + t) % words.length] = `w${t}x${k}`;
    const fp = fingerprintText([words.join(" ")]);
    const url = `https://site.test/p/${i}`;
    out.push({ url, hash: urlHash(url), text: fp.exact, sig: fp.sig });
  }
  return out;
}

/** The keys one page and band made before the runs (its bins in hex), as that code wrote them. */
function legacyBandKeys(auditId: string, p: Page): Deno.KvKey[] {
  const out: Deno.KvKey[] = [];
  for (let b = 0; b < BANDS; b++) {
    const band = p.sig.subarray(b * BAND_BINS, (b + 1) * BAND_BINS);
    if (band.every((x) => x === EMPTY_BIN)) continue;
    let key = String(b).padStart(2, "0") + ":";
    for (const x of band) key += x.toString(16).padStart(4, "0");
    out.push([...keys.auditNearBands(auditId), key, p.hash]);
  }
  return out;
}

/**
 * Writes the pages' signatures, and their bands as runs of `step` pages (`legacy` pages as the old
 * keys instead; `twice` steps written a second time), then runs the pass.
 */
async function pass(
  all: Page[],
  opts: {
    step: number;
    legacy?: (i: number) => boolean;
    twice?: (step: number) => boolean;
    /** Moves each run (the `n`th written) to another name. */
    rename?: (name: string, n: number) => string;
    /** Signatures the pass keeps read (default its own NEAR_SIG_CACHE). */
    cacheSize?: number;
  },
): Promise<Group> {
  const kv = await openTestKv();
  try {
    const auditId = "aud_near";
    const batch = new WriteBatch(kv);
    const legacy: Deno.KvKey[] = [];
    for (let from = 0, s = 0; from < all.length; from += opts.step, s++) {
      const slice = all.slice(from, from + opts.step);
      for (let round = 0; round < (opts.twice?.(s) ? 2 : 1); round++) {
        const runs = new NearRuns();
        slice.forEach((p, k) => {
          batch.set(keys.auditNearSig(auditId, p.hash), { u: p.url, h: p.text, s: p.sig });
          if (opts.legacy?.(from + k)) legacy.push(...legacyBandKeys(auditId, p));
          else runs.add(p.sig, p.hash);
        });
        runs.write(batch, auditId);
      }
    }
    await batch.flush();
    if (opts.rename) {
      let n = 0;
      for await (const e of kv.list({ prefix: keys.auditNearBands(auditId) })) {
        if (typeof e.key[2] !== "number") continue; // a legacy key
        const name = opts.rename(String(e.key[3]), n++);
        const moved = keys.auditNearRun(auditId, e.key[2], name);
        const op = kv.atomic().delete(e.key).set(moved, e.value);
        assert.ok((await op.commit()).ok);
      }
      assert.ok(n > 100, `${n} runs moved`);
    }
    for (let i = 0; i < legacy.length; i += 500) {
      const op = kv.atomic();
      for (const key of legacy.slice(i, i + 500)) op.set(key, 1);
      assert.ok((await op.commit()).ok);
    }
    const texts = new Map<number, number>();
    for (const p of all) texts.set(p.text, (texts.get(p.text) ?? 0) + 1);
    const twins = new Set([...texts].filter(([, n]) => n > 1).map(([t]) => t));
    const g = new Group();
    await nearDuplicates(kv, auditId, twins, g, opts.cacheSize);
    return g;
  } finally {
    kv.close();
  }
}

/** Pages near another of different text sharing a band, twins left out (buckets under 200 here). */
function bruteForce(all: Page[]): string[] {
  const shareBand = (a: Page, b: Page) => {
    for (let k = 0; k < BANDS; k++) {
      let same = true;
      let empty = true;
      for (let j = k * BAND_BINS; j < (k + 1) * BAND_BINS; j++) {
        if (a.sig[j] !== b.sig[j]) same = false;
        if (a.sig[j] !== EMPTY_BIN) empty = false;
      }
      if (same && !empty) return true;
    }
    return false;
  };
  const texts = new Map<number, number>();
  for (const p of all) texts.set(p.text, (texts.get(p.text) ?? 0) + 1);
  return all.filter((a) =>
    texts.get(a.text) === 1 &&
    all.some((b) => b.text !== a.text && shareBand(a, b) && similarity(a.sig, b.sig) >= 0.8)
  ).map((p) => p.url).sort();
}

Deno.test("near-duplicate runs: the same items as per-page band keys, repeats once, as brute force finds", async () => {
  const all = pages(600);
  const runs = await pass(all, { step: 50 });
  assert.ok(runs.count > 50 && runs.count < 500, `${runs.count} near pages: a mixed site`);
  assert.deepEqual(runs.items.map((i) => i.url).sort(), bruteForce(all));
  // One key per page and band, as a crawl begun before the runs left them: identical evidence.
  assert.deepEqual((await pass(all, { step: 50, legacy: () => true })).items, runs.items);
  // Half and half (a crawl that spanned a deploy), other step sizes, steps written twice.
  const mixed = await pass(all, { step: 7, legacy: (i) => i % 2 === 0, twice: (s) => s % 3 === 0 });
  assert.deepEqual(mixed.items, runs.items);
  assert.equal(mixed.count, runs.count);
  const whole = await pass(all, { step: 600, twice: () => true });
  assert.deepEqual(whole.items, runs.items);
  // Signatures read again (a cache far smaller than the site): the same items, in order.
  assert.deepEqual((await pass(all, { step: 50, cacheSize: 8 })).items, runs.items);
});

Deno.test("near-duplicate runs: a step past NEAR_RUN_ENTRIES pages is cut in chunks, found the same", async () => {
  const all = pages(NEAR_RUN_ENTRIES + 300);
  const one = await pass(all, { step: all.length });
  const many = await pass(all, { step: 100 });
  assert.ok(one.count > 100, `${one.count} near pages`);
  assert.deepEqual(one.items, many.items);
});

Deno.test("near-duplicate runs: runs named at and past the edges of the listed key ranges are all read", async () => {
  const all = pages(600);
  const hex = await pass(all, { step: 7 });
  // The range bounds themselves, names before "0", between ranges, past "f", upper case, empty.
  const names = ["!", "0", "3~", "4", "7z", "8", "c", "f", "fz", "g", "A", "Z", "~~"];
  const odd = await pass(all, {
    step: 7,
    // Each name once (a name written twice would be one run): the first run's is empty.
    rename: (name, n) => n === 0 ? "" : `${names[n % names.length]}${n}:${name}`,
  });
  assert.deepEqual(odd.items, hex.items);
  assert.equal(odd.count, hex.count);
});
