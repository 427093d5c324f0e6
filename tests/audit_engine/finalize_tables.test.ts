/**
 * The site-wide passes' per-URL tables (domain/audit_engine/crawl/finalize/): hashes found by
 * position whatever their order, redirects followed to their end or to a loop, broken targets
 * and the redirects that end on one, the list of URLs to charge that drops its repeats, URL
 * names written to a real KV and read back into the evidence kept, and the URL table's keys and
 * inlink counts.
 */
import assert from "node:assert/strict";
import { HashIndex } from "../../domain/audit_engine/crawl/finalize/hash_index.ts";
import { MAX_HOPS, Redirects } from "../../domain/audit_engine/crawl/finalize/redirects.ts";
import { BrokenTargets } from "../../domain/audit_engine/crawl/finalize/targets.ts";
import { HashList } from "../../domain/audit_engine/crawl/finalize/failing.ts";
import { UrlNames } from "../../domain/audit_engine/crawl/finalize/url_names.ts";
import { UrlTable } from "../../domain/audit_engine/crawl/finalize/url_table.ts";
import { urlHash } from "../../domain/audit_engine/crawl/store.ts";
import { openTestKv } from "../helpers/kv.ts";

Deno.test("a hash index answers each hash's position, the first of a repeat, -1 for none", () => {
  const ix = new HashIndex();
  // More than the first allocation, in no order: positions survive the growth and the sort.
  const hashes = Array.from({ length: 5000 }, (_, i) => (i * 7_919_003) % 9_999_991);
  hashes.forEach((h) => ix.push(h));
  ix.push(hashes[42]);
  for (const i of [0, 1, 42, 4999]) assert.equal(ix.indexOf(hashes[i]), i);
  assert.equal(ix.indexOf(10_000_000), -1);
  assert.throws(() => ix.push(1), /before the first lookup/);
});

Deno.test("the URL table: keys over several chunks, repeats once; inlinks past 65,535 counted", () => {
  const t = new UrlTable();
  // More than one fill chunk (65,536), in no order, every tenth twice.
  const n = 150_000;
  const hashes = Array.from({ length: n }, (_, i) => ((i * 7_919_003) % 9_999_991) * 1_000_003);
  hashes.forEach((h, i) => {
    t.add(h);
    if (i % 10 === 0) t.add(h);
  });
  t.link(hashes[0]);
  assert.equal(t.size, n);
  assert.throws(() => t.add(1), /before links/);
  for (let k = 0; k < 70_000; k++) t.link(hashes[7]);
  t.link(hashes[n - 1]);
  t.link(12345); // not a recorded URL: not kept
  assert.equal(t.inlinksOf(hashes[7]), 70_000);
  assert.equal(t.inlinksOf(hashes[0]), 1);
  assert.equal(t.inlinksOf(hashes[n - 1]), 1);
  assert.equal(t.inlinksOf(hashes[1]), 0);
  assert.equal(t.inlinksOf(12345), 0);
  assert.ok(t.has(hashes[123_456]) && !t.has(12345));
  const sorted = [...t.keys.seal()];
  assert.deepEqual(sorted, [...new Set(hashes)].sort((a, b) => a - b));
  t.release();
  assert.throws(() => t.inlinksOf(hashes[7]), /used after release/);
});

Deno.test("redirects are followed to their end; a loop or too many hops ends nowhere", () => {
  const r = new Redirects();
  r.add(1, 2);
  r.add(2, 3);
  r.add(10, 11);
  r.add(11, 10);
  // A chain one hop longer than followed.
  for (let i = 0; i <= MAX_HOPS; i++) r.add(100 + i, 101 + i);
  assert.equal(r.follow(1), 3);
  assert.equal(r.follow(3), 3);
  assert.equal(r.targetOf(2), 3);
  assert.equal(r.targetOf(3), -1);
  assert.equal(r.follow(10), -1);
  assert.equal(r.follow(100), -1);
  assert.equal(r.follow(101), 100 + MAX_HOPS + 1);
});

Deno.test("broken targets keep their answer; a redirect ending on one answers the same", () => {
  const b = new BrokenTargets();
  b.add(7, 404, null);
  b.add(8, 0, "timeout");
  b.add(9, 0, "dns");
  assert.ok(b.hasOwn(8) && !b.hasOwn(5));
  b.alias(5, 8);
  assert.deepEqual(b.get(7), { status: 404, failure: null });
  assert.deepEqual(b.get(5), { status: 0, failure: "timeout" });
  assert.deepEqual(b.get(9), { status: 0, failure: "dns" });
  assert.equal(b.get(6), undefined);
});

Deno.test("the list of URLs to charge keeps every distinct hash and at most about twice them", () => {
  const l = new HashList();
  for (let i = 0; i < 100_000; i++) l.add(i % 300);
  for (let i = 0; i < 1000; i++) l.add(1e6 + i);
  const got = new Set(Array.from({ length: l.size }, (_, i) => l.at(i)));
  assert.equal(got.size, 1300);
  assert.ok(l.size <= 2 * 1300, `${l.size} held`);
});

Deno.test("URL names are written to KV by hash and fill the evidence kept", async () => {
  const kv = await openTestKv();
  try {
    const names = new UrlNames(kv, "a1");
    const urls = Array.from({ length: 30 }, (_, i) => `https://a.test/p/${i}`);
    for (const u of urls) names.remember(urlHash(u), u);
    names.remember(urlHash(urls[0]), urls[0]); // a repeat within a page is one write
    names.endPage();
    names.remember(urlHash(urls[1]), urls[1]); // and across pages, an equal one
    await names.flush();
    assert.deepEqual(await names.get([urlHash(urls[3]), 12345]), [urls[3], ""]);
    const item = { url: "", hops: ["", ""], status: 404 };
    names.later(item, "url", urlHash(urls[5]));
    names.later(item.hops, 0, urlHash(urls[5]));
    names.later(item.hops, 1, urlHash(urls[29]));
    await names.fill();
    assert.deepEqual(item, { url: urls[5], hops: [urls[5], urls[29]], status: 404 });
  } finally {
    kv.close();
  }
});
