/**
 * The exact-duplicate index as runs (crawl/dup_runs.ts, one value per crawl step, kind and digest
 * bucket) gives the pass what one key per page and kind gave: the entries in the order KV kept
 * those keys, each once, whether the pages came in runs, in the keys a crawl begun before the runs
 * wrote, or both; a step written twice counts once; a bucket past the reader's limit is read in
 * parts and gives the same; and the duplicate groups found are those the texts make.
 */
import assert from "node:assert/strict";
import { keys } from "../../domain/platform/mod.ts";
import {
  type DupItem,
  DupRuns,
  sortedDupEntries,
} from "../../domain/audit_engine/crawl/dup_runs.ts";
import { dupDigest, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { duplicateGroups } from "../../domain/audit_engine/crawl/finalize/duplicates.ts";
import { type Facts, Group } from "../../domain/audit_engine/crawl/finalize/facts.ts";
import { openTestKv } from "../helpers/kv.ts";

interface Page {
  url: string;
  title: string;
}

/** Pages whose titles repeat in groups of 1 to 5; a few long URLs and titles fill runs quickly. */
function pages(n: number): Page[] {
  const out: Page[] = [];
  for (let i = 0; i < n; i++) {
    const long = i % 97 === 0 ? "/" + "x".repeat(1_200) : "";
    out.push({
      url: `https://site.test/p/${i}${long}`,
      title: i % 11 === 0 ? `Unique ${i} ${"t".repeat(250)}` : `Shared ${Math.floor(i / 5)}`,
    });
  }
  return out;
}

/**
 * Writes the pages' titles, `step` pages a step: as runs, or (`legacy`) as the old keys; steps
 * `twice` says are written a second time. Returns the KV and the audit.
 */
async function write(
  all: Page[],
  opts: { step: number; legacy?: (i: number) => boolean; twice?: (step: number) => boolean },
): Promise<Deno.Kv> {
  const kv = await openTestKv();
  const batch = new WriteBatch(kv);
  for (let from = 0, s = 0; from < all.length; from += opts.step, s++) {
    for (let round = 0; round < (opts.twice?.(s) ? 2 : 1); round++) {
      const runs = new DupRuns();
      all.slice(from, from + opts.step).forEach((p, k) => {
        if (!opts.legacy?.(from + k)) return runs.add("title", p.title, p.url);
        const key = keys.auditDup(AUDIT, "title", dupDigest(p.title), p.url);
        batch.set(key, { v: p.title });
      });
      runs.write(batch, AUDIT);
    }
  }
  await batch.flush();
  return kv;
}

const AUDIT = "aud_dups";

async function entries(kv: Deno.Kv, limit?: number): Promise<DupItem[]> {
  const out: DupItem[] = [];
  for await (const e of sortedDupEntries(kv, AUDIT, "title", { limit })) out.push(e);
  return out;
}

/** The order KV itself keeps one key per page in: the oracle. */
async function keyOrder(all: Page[]): Promise<DupItem[]> {
  const kv = await write(all, { step: 50, legacy: () => true });
  try {
    const out: DupItem[] = [];
    for await (const e of kv.list<{ v: string }>({ prefix: keys.auditDups(AUDIT, "title") })) {
      out.push({ digest: String(e.key[3]), url: String(e.key[4]), text: e.value.v });
    }
    return out;
  } finally {
    kv.close();
  }
}

Deno.test("dup runs: the entries in key order, each once, from runs, old keys or both", async () => {
  const all = pages(1_500);
  const expected = await keyOrder(all);
  assert.equal(expected.length, all.length);
  const layouts = [
    { step: 100 },
    { step: 7 },
    { step: 100, legacy: (i: number) => i % 3 === 0 },
    { step: 100, twice: (s: number) => s % 2 === 0 },
    { step: 40, legacy: (i: number) => i < 700, twice: (s: number) => s === 20 },
  ];
  for (const layout of layouts) {
    const kv = await write(all, layout);
    try {
      assert.deepEqual(await entries(kv), expected, JSON.stringify(layout));
      // A limit far under a bucket's ~94 entries: every bucket read in parts, the same result.
      assert.deepEqual(await entries(kv, 8), expected, `in parts: ${JSON.stringify(layout)}`);
    } finally {
      kv.close();
    }
  }
});

Deno.test("dup runs: a step's runs stay within KV's value limit and hold every entry", async () => {
  // URLs of ~1,400 characters: ~37 pages a bucket hold ~100 KB, more than one value takes.
  const all = pages(600).map((p) => ({ ...p, url: `${p.url}/${"y".repeat(1_400)}` }));
  const kv = await write(all, { step: 600 });
  try {
    let runs = 0;
    let held = 0;
    for await (const e of kv.list<{ d: string[] }>({ prefix: ["audit_dup_runs", AUDIT] })) {
      runs++;
      held += e.value.d.length;
    }
    // The strict KV guard (openTestKv) failed any value past 64 KiB.
    assert.equal(held, all.length);
    assert.ok(runs > 32 && runs <= 80, `${runs} runs: buckets of ~100 KB cut in values`);
  } finally {
    kv.close();
  }
});

Deno.test("dup runs: the duplicate groups are those the titles make", async () => {
  const all = pages(400);
  const kv = await write(all, { step: 30, legacy: (i) => i % 5 === 1, twice: (s) => s === 3 });
  try {
    const groups = ["dupTitle", "dupDescription", "dupContent", "caseDuplicates"];
    const f = Object.fromEntries(
      [...groups, "parameterDuplicates"].map((g) => [g, new Group()]),
    ) as unknown as Facts;
    await duplicateGroups(kv, AUDIT, f, async () => {});
    const byTitle = new Map<string, string[]>();
    for (const p of all) byTitle.set(p.title, [...byTitle.get(p.title) ?? [], p.url]);
    const grouped = [...byTitle.values()].filter((urls) => urls.length > 1).flat().sort();
    const items = f.dupTitle.items.map((i) => String(i.url)).sort();
    assert.deepEqual(items, grouped);
    for (const item of f.dupTitle.items) {
      const members = byTitle.get(String(item.title))!;
      assert.equal(item.group_size, members.length);
      assert.ok(members.includes(String(item.url)));
    }
  } finally {
    kv.close();
  }
});
