/**
 * `listInPages` with split points (crawl/store.ts) and the URL sample they come from
 * (crawl/url_sample.ts): the ranges read side by side yield exactly what one list yields, in
 * the same order, whatever the split points; their reads overlap on a slow KV; a failed read
 * surfaces where its page would have been; a caller that stops early leaves nothing behind.
 */
import assert from "node:assert/strict";
import { listInPages, urlHash } from "../../domain/audit_engine/crawl/store.ts";
import {
  rangeSplits,
  sampleUrl,
  splitsOf,
  URL_SAMPLE_SIZE,
} from "../../domain/audit_engine/crawl/url_sample.ts";
import { keys } from "../../domain/platform/mod.ts";
import { type RoundTrips, withLatency } from "../helpers/latency_kv.ts";
import { openTestKv } from "../helpers/kv.ts";

const AUDIT = "aud_ranges";

/** Links of `n` pages (a URL's chunks side by side), some pages with two chunks. */
async function seedLinks(kv: Deno.Kv, urls: string[]): Promise<number> {
  let n = 0;
  for (let i = 0; i < urls.length; i += 200) {
    const op = kv.atomic();
    for (const [k, u] of urls.slice(i, i + 200).entries()) {
      op.set(keys.auditLinks(AUDIT, u, 0), { t: [k], a: [""], f: 1 });
      n++;
      if (k % 7 === 0) {
        op.set(keys.auditLinks(AUDIT, u, 1), { t: [k + 1], a: [""], f: 0 });
        n++;
      }
    }
    await op.commit();
  }
  return n;
}

async function keysOf(it: AsyncGenerator<{ key: Deno.KvKey }[]>): Promise<string[]> {
  const out: string[] = [];
  for await (const page of it) for (const e of page) out.push(JSON.stringify(e.key));
  return out;
}

const site = (n: number) =>
  Array.from({ length: n }, (_, i) => `https://shop.test/${i % 3 ? "p" : "blog"}/${i}`)
    .concat(["https://shop.test/"]);

Deno.test("split ranges yield every key once, in key order, whatever the splits", async () => {
  const kv = await openTestKv();
  try {
    const urls = site(1_700);
    const stored = await seedLinks(kv, urls);
    const prefix = keys.auditLinksAll(AUDIT);
    const whole = await keysOf(listInPages(kv, prefix, 100));
    assert.equal(whole.length, stored);
    const sample = { h: [] as number[], u: [] as string[] };
    for (const u of urls) sampleUrl(sample, urlHash(u), u);
    const cases = [
      splitsOf(sample), // from the sample: the usual case
      [urls[5]], // a split on a URL with two chunks: both stay in one range
      ["a", "b"], // every key in the last range
      ["zzz"], // every key in the first
      ["https://shop.test/blog/5", "https://shop.test/p/1", "https://shop.test/p/8"],
    ];
    assert.equal(cases[0].length, 3);
    for (const splits of cases) {
      assert.deepEqual(await keysOf(listInPages(kv, prefix, 100, splits)), whole, String(splits));
    }
  } finally {
    kv.close();
  }
});

Deno.test("the sample is the smallest hashes, the same in any order, and small", () => {
  const urls = site(5_000);
  const a = { h: [] as number[], u: [] as string[] };
  const b = { h: [] as number[], u: [] as string[] };
  for (const u of urls) sampleUrl(a, urlHash(u), u);
  for (const u of [...urls].reverse()) sampleUrl(b, urlHash(u), u);
  for (const u of urls.slice(0, 100)) sampleUrl(b, urlHash(u), u); // a step taken twice
  assert.equal(a.h.length, URL_SAMPLE_SIZE);
  assert.deepEqual([...a.h].sort(), [...b.h].sort());
  const smallest = urls.map(urlHash).sort((x, y) => x - y).slice(0, URL_SAMPLE_SIZE);
  assert.deepEqual([...a.h].sort((x, y) => x - y), smallest);
  // Four ranges of about equal size: no range holds more than half the site.
  const splits = splitsOf(a);
  const sorted = [...urls].sort();
  const bounds = [0, ...splits.map((s) => sorted.findIndex((u) => u >= s)), sorted.length];
  for (let i = 1; i < bounds.length; i++) assert.ok(bounds[i] - bounds[i - 1] < urls.length / 2);
  // Ranges only where KV answers slowly (the smallest of the last steps' round trips counts):
  // on a local file a list's next page is there before the pass wants it.
  assert.deepEqual(rangeSplits({ urlSample: a, kvRttMs: [0.4, 9] }), []);
  assert.deepEqual(rangeSplits({ urlSample: a }), []);
  assert.deepEqual(rangeSplits({ urlSample: a, kvRttMs: [31, 30] }), splits);
  // Too small a sample says nothing.
  assert.deepEqual(splitsOf({ h: [1, 2], u: ["a", "b"] }), []);
  assert.deepEqual(splitsOf(undefined), []);
  // A long URL is kept clipped.
  const c = { h: [] as number[], u: [] as string[] };
  sampleUrl(c, 1, `https://shop.test/${"x".repeat(2_000)}`);
  assert.ok(c.u[0].length <= 120);
});

Deno.test("on a slow KV the ranges' reads overlap: fewer list round trips in a row", async () => {
  const base = await openTestKv();
  try {
    const urls = site(1_999);
    await seedLinks(base, urls);
    const sample = { h: [] as number[], u: [] as string[] };
    for (const u of urls) sampleUrl(sample, urlHash(u), u);
    const prefix = keys.auditLinksAll(AUDIT);
    // Round trips one after another: each list batch waits 60 ms (long beside a busy machine's
    // pauses between one batch and the next read, so overlapping reads stay overlapped); count
    // waits that overlap none.
    const inARow = async (splits: string[]) => {
      let inFlight = 0;
      let serial = 0;
      const trips: RoundTrips = { reads: 0, writes: 0, commits: 0, listBatches: 0 };
      const slow = withLatency(base, 60, trips, {
        begin: () => {
          if (inFlight++ === 0) serial++;
          return () => void inFlight--;
        },
      } as never);
      const n = (await keysOf(listInPages(slow, prefix, 500, splits))).length;
      return { n, serial, batches: trips.listBatches };
    };
    const one = await inARow([]);
    const four = await inARow(splitsOf(sample));
    assert.equal(four.n, one.n);
    assert.ok(one.serial >= 5, `one range: ${one.serial} in a row`);
    assert.ok(four.serial <= 3, `four ranges: ${four.serial} in a row (one range: ${one.serial})`);
  } finally {
    base.close();
  }
});

Deno.test("a failed read surfaces in order; stopping early leaves no read unhandled", async () => {
  const base = await openTestKv();
  try {
    const urls = site(1_200);
    await seedLinks(base, urls);
    const splits = ["https://shop.test/blog/5", "https://shop.test/p/5"];
    // The third range's list fails: the first two ranges' pages come first, then the failure.
    const failing = new Proxy(base, {
      get(target, prop) {
        if (prop === "list") {
          return (sel: Deno.KvListSelector, opts?: Deno.KvListOptions) => {
            if ("start" in sel && !("end" in sel)) throw new Error("range read failed");
            return target.list(sel, opts);
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const seen: string[] = [];
    await assert.rejects(async () => {
      for await (const page of listInPages(failing, keys.auditLinksAll(AUDIT), 100, splits)) {
        for (const e of page) seen.push(e.key[2] as string);
      }
    }, /range read failed/);
    // Every key of the first two ranges came, and none past them.
    assert.deepEqual(
      seen,
      urls.filter((u) => u < splits[1]).sort().flatMap((u) => {
        const k = urls.indexOf(u) % 200;
        return k % 7 === 0 ? [u, u] : [u];
      }),
    );
    // Stopping after the first page: the other ranges' reads end on their own (an unhandled
    // rejection or a leaked read would fail this test under Deno's sanitizers).
    for await (const page of listInPages(base, keys.auditLinksAll(AUDIT), 100, splits)) {
      assert.ok(page.length > 0);
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    base.close();
  }
});

Deno.test("big values: the ranges ahead stop reading once they hold about 4 MiB", async () => {
  const base = await openTestKv();
  try {
    // 800 records of ~60 KB as KV counts them (a site of long hreflang lists): a page of 100 is
    // ~6 MB, past the ranges' budget alone.
    const urls = Array.from({ length: 800 }, (_, i) => `https://big.test/${1000 + i}`);
    for (let i = 0; i < urls.length; i += 10) {
      const op = base.atomic();
      for (const u of urls.slice(i, i + 10)) op.set(keys.auditPage(AUDIT, u), "x".repeat(30_000));
      await op.commit();
    }
    // Entries read from KV so far, counted as the list iterators hand them over.
    let read = 0;
    const counting = new Proxy(base, {
      get(target, prop) {
        if (prop === "list") {
          return (sel: Deno.KvListSelector, opts?: Deno.KvListOptions) => {
            const it = target.list(sel, opts);
            return {
              cursor: "",
              async next() {
                const r = await it.next();
                if (!r.done) read++;
                (this as { cursor: string }).cursor = it.cursor;
                return r;
              },
              [Symbol.asyncIterator]() {
                return this;
              },
            };
          };
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const splits = ["https://big.test/1200", "https://big.test/1400", "https://big.test/1600"];
    let taken = 0;
    let most = 0;
    for await (
      const page of listInPages(counting, keys.auditPages(AUDIT), 100, splits)
    ) {
      taken++;
      // Let every read that may start do so before looking.
      await new Promise((r) => setTimeout(r, 20));
      most = Math.max(most, read / 100 - taken);
      assert.equal(page.length, 100);
    }
    assert.equal(taken, 8);
    // Without the byte budget the three ranges ahead would hold two pages each (six, ~36 MB)
    // beside the one being read; with it, their first pages and no more: four pages
    // ahead of the caller at most, with the next page of the range being read.
    assert.ok(most <= 4, `${most} pages held ahead of the caller`);
  } finally {
    base.close();
  }
});
