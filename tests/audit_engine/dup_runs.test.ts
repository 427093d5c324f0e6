/**
 * The exact-duplicate index as runs (crawl/dup_runs.ts, one value per crawl step, kind and digest
 * bucket) gives the pass what one key per page and kind gave: the groups in the order KV kept
 * those keys, each page counted once, whether the pages came in runs, in the keys a crawl begun
 * before the runs wrote, or both; a step written twice counts once; a bucket past the reader's
 * limit is read in batches, and a text more pages share than the limit is summed up, with the same
 * groups, never holding more entries than the limit; and the pass's duplicate groups are those the
 * texts make.
 */
import assert from "node:assert/strict";
import { keys } from "../../domain/platform/mod.ts";
import {
  bucketsAhead,
  type DupGroup,
  dupGroups,
  DupRuns,
  PASS_ENTRIES,
  type VariantOf,
} from "../../domain/audit_engine/crawl/dup_runs.ts";
import { dupDigest, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { duplicateGroups } from "../../domain/audit_engine/crawl/finalize/duplicates.ts";
import { type Facts, Group } from "../../domain/audit_engine/crawl/finalize/facts.ts";
import { openTestKv } from "../helpers/kv.ts";

interface Page {
  url: string;
  title: string;
}

const AUDIT = "aud_dups";

/**
 * Pages whose titles repeat in groups of 1 to 5, a third of them under one title, a few long URLs
 * and titles (they fill runs quickly), and pairs that differ only in letter case or query.
 */
function pages(n: number): Page[] {
  const out: Page[] = [];
  for (let i = 0; i < n; i++) {
    const long = i % 97 === 0 ? "/" + "x".repeat(1_200) : "";
    const title = i % 3 === 0
      ? "One title for a third of the site"
      : i % 11 === 0
      ? `Unique ${i} ${"t".repeat(250)}`
      : `Shared ${Math.floor(i / 5)}`;
    out.push({ url: `https://site.test/p/${i}${long}`, title });
  }
  for (let i = 0; i < 20; i++) {
    out.push({ url: `https://site.test/Case/${i}`, title: `Case pair ${i}` });
    out.push({ url: `https://site.test/case/${i}`, title: `Case pair ${i}` });
    out.push({ url: `https://site.test/q?id=${i}&a=1`, title: `Query pair ${i}` });
    out.push({ url: `https://site.test/q?id=${i}&a=2`, title: `Query pair ${i}` });
  }
  return out;
}

const variantOf: VariantOf = (url) => {
  const u = new URL(url);
  return { key: (u.origin + u.pathname).toLowerCase(), query: u.search };
};

/**
 * Writes the pages' titles, `step` pages a step: as runs, or (`legacy`) as the old keys; steps
 * `twice` says are written a second time.
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
        batch.set(keys.auditDup(AUDIT, "title", dupDigest(p.title), p.url), { v: p.title });
      });
      runs.write(batch, AUDIT);
    }
  }
  await batch.flush();
  return kv;
}

/**
 * The oracle: the groups of one key per page, in the order KV keeps the keys, folded as the pass
 * folded them before the runs (every member in URL order, the first's variant key compared).
 */
async function keyOrder(all: Page[], keep: number): Promise<DupGroup[]> {
  const kv = await write(all, { step: 50, legacy: () => true });
  try {
    const out: DupGroup[] = [];
    let cur = null as DupGroup | null;
    let firstVariant: { key: string; query: string } | null = null;
    for await (const e of kv.list<{ v: string }>({ prefix: keys.auditDups(AUDIT, "title") })) {
      const [digest, url] = [String(e.key[3]), String(e.key[4])];
      if (cur?.digest !== digest) {
        cur = { digest, text: e.value.v, size: 0, first: [], oneKey: true, queriesDiffer: false };
        out.push(cur);
        firstVariant = null;
      }
      cur.size++;
      if (cur.first.length < keep) cur.first.push(url);
      const k = variantOf(url);
      if (!cur.oneKey) continue;
      if (firstVariant === null) firstVariant = k;
      else if (k.key !== firstVariant.key) cur.oneKey = false;
      else if (k.query !== firstVariant.query) cur.queriesDiffer = true;
    }
    // Whether queries differ says something only when every page shares one key.
    return out.map((g) => ({ ...g, queriesDiffer: g.oneKey && g.queriesDiffer }));
  } finally {
    kv.close();
  }
}

Deno.test("dup runs: the groups in key order, each page once, from runs, old keys or both", async () => {
  const all = pages(1_500);
  const expected = await keyOrder(all, 50);
  // With 5 URLs named per group, what a read holds is the limit's alone (a summed-up group
  // holds its 5).
  const expected5 = await keyOrder(all, 5);
  assert.equal(expected.reduce((n, g) => n + g.size, 0), all.length);
  const big = expected.find((g) => g.text.startsWith("One title"))!;
  assert.equal(big.size, 500);
  assert.ok(expected.some((g) => g.oneKey && g.queriesDiffer), "a query pair");
  assert.ok(expected.some((g) => g.size === 2 && g.oneKey && !g.queriesDiffer), "a case pair");
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
      // The default limit holds each bucket (~100 entries); 40 reads most buckets in batches
      // and sums up the shared title (500 pages); 5 sums up every group of more than 5.
      const runs: [number | undefined, number][] = [[undefined, 50], [40, 5], [5, 5]];
      for (const [limit, keep] of runs) {
        for (const ahead of [0, 1, 15]) {
          let held = 0;
          const got: DupGroup[] = [];
          const onHeld = (n: number) => (held = Math.max(held, n));
          const opts = { limit, keep, ahead, variantOf, onHeld };
          for await (const g of dupGroups(kv, AUDIT, "title", opts)) got.push(g);
          const what = JSON.stringify({ ...layout, limit, ahead });
          assert.deepEqual(got, keep === 5 ? expected5 : expected, what);
          assert.ok(held <= (limit ?? Infinity), `${what}: ${held} entries held`);
        }
      }
    } finally {
      kv.close();
    }
  }
});

Deno.test("dup runs: on a slow KV the reader reads so many buckets ahead, not more", async () => {
  // Titles none of whose digests is in bucket 0: a guess from the first bucket's size would have
  // read every bucket at once. (finalize.ts reads as many ahead as the audit's pages allow.)
  const titles: string[] = [];
  for (let t = 0; titles.length < 15; t++) {
    if (!dupDigest(`Template ${t}`).startsWith("0")) titles.push(`Template ${t}`);
  }
  const all = titles.flatMap((title, t) =>
    Array.from({ length: 9 }, (_, i) => ({ url: `https://site.test/${t}/${i}`, title }))
  );
  const kv = await write(all, { step: 20 });
  try {
    const buckets = new Set<string>();
    const counting = new Proxy(kv, {
      get(target, prop) {
        if (prop === "list") {
          return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
            const prefix = "prefix" in selector ? selector.prefix : [];
            if (prefix[0] === "audit_dup_runs") buckets.add(String(prefix[3]));
            return target.list(selector, options);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    for (const ahead of [1, 3]) {
      buckets.clear();
      const groups = dupGroups(counting, AUDIT, "title", { ahead, limit: 10 });
      // Each group's bucket and those before it are read, and `ahead` more: never more.
      let n = 0;
      for (let g = await groups.next(); !g.done; g = await groups.next()) {
        n++;
        const at = parseInt(g.value.digest[0], 16);
        assert.equal(g.value.size, 9);
        assert.ok(buckets.size <= at + 1 + ahead, `${buckets.size} buckets read at bucket ${at}`);
      }
      assert.equal(n, titles.length);
      assert.equal(buckets.size, 16);
    }
  } finally {
    kv.close();
  }
});

Deno.test("dup runs: the buckets read ahead keep a slow KV's reader within twice its limit", () => {
  for (const pages of [0, 1, 2_000, 8_192, 30_000, 100_000, 1_000_000]) {
    const ahead = bucketsAhead(pages);
    assert.ok(ahead >= 1 && ahead <= 15, `${pages} pages: ${ahead}`);
    // Each read holds about a sixteenth of the pages (a larger one only its counts).
    if (ahead > 1) assert.ok((ahead + 1) * (pages / 16) <= PASS_ENTRIES, `${pages} pages`);
  }
  assert.equal(bucketsAhead(2_000), 15);
  assert.equal(bucketsAhead(100_000), 1);
});

Deno.test("dup runs: a step's runs stay within KV's value limit and hold every entry", async () => {
  // URLs of ~1,400 characters: ~37 pages a bucket hold ~100 KB, more than one value takes.
  const all = pages(600).map((p) => ({ ...p, url: `${p.url}/${"y".repeat(1_400)}` }));
  const kv = await write(all, { step: all.length });
  try {
    let runs = 0;
    let held = 0;
    for await (const e of kv.list<{ d: string[] }>({ prefix: ["audit_dup_runs", AUDIT] })) {
      runs++;
      held += e.value.d.length;
    }
    // The strict KV guard (openTestKv) failed any value past 64 KiB.
    assert.equal(held, all.length);
    assert.ok(runs > 32 && runs <= 90, `${runs} runs: buckets of ~100 KB cut in values`);
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
    const grouped = [...byTitle.values()].filter((urls) => urls.length > 1);
    // Each group's first 50 URLs are named, the rest counted.
    const named = grouped.flatMap((urls) => urls.sort().slice(0, 50)).sort();
    assert.deepEqual(f.dupTitle.items.map((i) => String(i.url)).sort(), named);
    assert.equal(f.dupTitle.count, grouped.reduce((n, urls) => n + urls.length, 0));
    for (const item of f.dupTitle.items) {
      const members = byTitle.get(String(item.title))!;
      assert.equal(item.group_size, members.length);
      assert.ok(members.includes(String(item.url)));
    }
  } finally {
    kv.close();
  }
});

Deno.test("dup runs: texts whose digests share their first digits are read in batches that fit", async () => {
  // Titles whose digests all begin "abc": at a limit of 5 the reader's first count (by the two
  // digits after the bucket's) holds them in one range past the limit, which it counts again one
  // level finer, where each text, or the one text of 8 pages, stands alone.
  const titles: string[] = [];
  for (let t = 0; titles.length < 13; t++) {
    if (dupDigest(`Prefixed ${t}`).startsWith("abc")) titles.push(`Prefixed ${t}`);
  }
  const all = titles.flatMap((title, t) =>
    Array.from(
      { length: t === 0 ? 8 : 2 },
      (_, i) => ({ url: `https://site.test/${t}/${i}`, title }),
    )
  );
  const expected = await keyOrder(all, 5);
  assert.equal(expected.length, 13);
  for (const layout of [{ step: 6 }, { step: 10, legacy: (i: number) => i % 2 === 0 }]) {
    const kv = await write(all, layout);
    try {
      let held = 0;
      const onHeld = (n: number) => (held = Math.max(held, n));
      const got: DupGroup[] = [];
      for await (
        const g of dupGroups(kv, AUDIT, "title", { limit: 5, keep: 5, variantOf, onHeld })
      ) {
        got.push(g);
      }
      assert.deepEqual(got, expected, JSON.stringify(layout));
      assert.ok(held <= 5, `${held} entries held`);
      assert.equal(got.find((g) => g.text === titles[0])?.size, 8);
    } finally {
      kv.close();
    }
  }
});
