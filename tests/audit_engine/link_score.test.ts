/**
 * The link score (domain/audit_engine/crawl/link_score.ts): a PageRank over the internal link graph on a
 * 0–100 logarithmic scale, checked on graphs whose ranks are known, with links counted once per
 * page, links to non-pages ignored, and no score at all past the cap; the link pass's one lookup
 * per link in the keys it shares with the URL table.
 */
import assert from "node:assert/strict";
import { LinkScores } from "../../domain/audit_engine/crawl/link_score.ts";
import { HashKeys } from "../../domain/audit_engine/crawl/sorted_hashes.ts";
import { finalizeCrawl } from "../../domain/audit_engine/crawl/finalize.ts";
import {
  synthKind,
  synthLinks,
  synthState,
  writeSyntheticCrawl,
} from "../helpers/synthetic_crawl.ts";

/** Builds a graph from `page → targets` and returns each page's score. */
async function scores(graph: Record<number, number[]>, opts?: { maxEdges?: number }) {
  const g = new LinkScores(opts);
  for (const p of Object.keys(graph)) g.addPage(Number(p));
  for (const [p, targets] of Object.entries(graph)) {
    g.beginPage(Number(p));
    for (const t of targets) g.addLink(t);
  }
  await g.compute();
  return { g, of: (p: number) => g.scoreOf(p) };
}

Deno.test("a cycle ranks every page alike; a hub linked by all ranks first", async () => {
  const cycle = await scores({ 1: [2], 2: [3], 3: [1] });
  assert.deepEqual([cycle.of(1), cycle.of(2), cycle.of(3)], [100, 100, 100]);

  // 1 links 2, 3, 4; each links back only to 1. PageRank: 1 gets 0.85 of everything plus its
  // share of the teleport; r1 = (0.15/4 + 0.85 * 3 * r_leaf), r_leaf = 0.15/4 + 0.85 * r1 / 3.
  const star = await scores({ 1: [2, 3, 4], 2: [1], 3: [1], 4: [1] });
  const r1 = (0.15 / 4 + (0.85 * 3 * 0.15) / 4) / (1 - 0.85 * 0.85);
  const leaf = 0.15 / 4 + (0.85 * r1) / 3;
  const expected = Math.round(100 * Math.log10(1 + (9 * leaf) / r1));
  assert.equal(star.of(1), 100);
  assert.equal(star.of(2), expected);
  assert.deepEqual([star.of(3), star.of(4)], [expected, expected]);
  assert.ok(expected < 100 && expected > 0);
});

Deno.test("a link counts once per page; self links, unknown targets and unknown sources count not", async () => {
  const once = await scores({ 1: [2, 3], 2: [1], 3: [1] });
  // Page 1 links 2 three times and itself; 9 is not a page; page 8 (not a page) links to 3.
  const g = new LinkScores();
  for (const p of [1, 2, 3]) g.addPage(p);
  g.beginPage(1);
  for (const t of [2, 2, 1, 3, 2, 9]) g.addLink(t);
  g.beginPage(2);
  g.addLink(1);
  g.beginPage(3);
  g.addLink(1);
  g.beginPage(8);
  g.addLink(3);
  await g.compute();
  for (const p of [1, 2, 3]) assert.equal(g.scoreOf(p), once.of(p));
  assert.equal(g.scoreOf(9), null);
  assert.equal(g.overflow, false);
});

Deno.test("pages without outgoing links spread their rank: nothing leaks, the order holds", async () => {
  // 1 → 2 → 3, 3 links nowhere: 3 collects the most, then 2, then 1.
  const chain = await scores({ 1: [2], 2: [3], 3: [] });
  assert.equal(chain.of(3), 100);
  assert.ok(chain.of(2)! < 100 && chain.of(1)! < chain.of(2)!);
});

Deno.test("past the cap of links no page gets a score (never a partial graph's)", async () => {
  const capped = await scores({ 1: [2, 3], 2: [1, 3], 3: [1] }, { maxEdges: 4 });
  assert.equal(capped.g.overflow, true);
  assert.deepEqual([capped.of(1), capped.of(2), capped.of(3)], [null, null, null]);
  const fits = await scores({ 1: [2, 3], 2: [1, 3], 3: [1] }, { maxEdges: 5 });
  assert.equal(fits.g.overflow, false);
  assert.equal(fits.of(1), 100);
});

Deno.test("a large graph's computation lets timers run meanwhile (it yields to the event loop)", async () => {
  const n = 20_000;
  const g = new LinkScores();
  for (let p = 0; p < n; p++) g.addPage(p);
  for (let p = 0; p < n; p++) {
    g.beginPage(p);
    for (let k = 1; k <= 20; k++) g.addLink((p * 31 + k * 997) % n);
  }
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  try {
    await g.compute();
  } finally {
    clearInterval(timer);
  }
  assert.ok(ticks > 0, "no timer ran during compute()");
  assert.ok(g.scoreOf(0) !== null);
});

/**
 * The same PageRank written plainly (a page's index its rank among the sorted page hashes, the
 * runs summed in the order given), to hold the compact one to.
 */
function plainScores(pages: number[], runs: [number, number[]][]): Map<number, number> {
  const sorted = [...new Set(pages)].sort((a, b) => a - b);
  const index = new Map(sorted.map((h, i) => [h, i]));
  const n = sorted.length;
  const edges: [number, number[]][] = runs.filter(([p]) => index.has(p)).map(([p, ts]) => {
    const seen = new Set<number>();
    const to = ts.map((t) => index.get(t)).filter((t): t is number => {
      if (t === undefined || t === index.get(p) || seen.has(t)) return false;
      seen.add(t);
      return true;
    });
    return [index.get(p)!, to];
  });
  const out = new Array(n).fill(0);
  for (const [p, to] of edges) out[p] += to.length;
  let rank = new Array(n).fill(1 / n);
  for (let it = 0; it < 40; it++) {
    let dangling = 0;
    for (let i = 0; i < n; i++) if (out[i] === 0) dangling += rank[i];
    const next = new Array(n).fill((1 - 0.85) / n + (0.85 * dangling) / n);
    for (const [p, to] of edges) {
      if (to.length === 0) continue;
      const share = (0.85 * rank[p]) / out[p];
      for (const t of to) next[t] += share;
    }
    let delta = 0;
    for (let i = 0; i < n; i++) delta += Math.abs(next[i] - rank[i]);
    rank = next;
    if (delta < 1e-9) break;
  }
  const max = Math.max(...rank);
  return new Map(sorted.map((h, i) => [h, Math.round(100 * Math.log10(1 + (9 * rank[i]) / max))]));
}

Deno.test("pages among shared URL keys score as a plain PageRank: runs, repeats, non-pages, a page with 65,536+ links", async () => {
  // URLs 0..n-1 (hashes spread out); every third is not a page, every fifth links nowhere; the
  // others link the hub, page 0, which is met in two runs: every other page, then as many
  // again as make its links 65,537, which a 2-byte count would hold as 1.
  const n = 60_000;
  const hash = (i: number) => i * 7_919 + 13;
  const isPage = (i: number) => i % 3 !== 1;
  const keys = new HashKeys();
  const pages: number[] = [];
  for (let i = n - 1; i >= 0; i--) {
    keys.add(hash(i));
    if (isPage(i)) pages.push(hash(i));
  }
  const others = Array.from({ length: n - 1 }, (_, i) => i + 1).filter(isPage).map(hash);
  const runs: [number, number[]][] = [[hash(0), others]];
  for (let i = 1; i < n; i++) {
    const far = hash((i * 31) % n);
    runs.push([hash(i), i % 5 === 0 ? [] : [hash(0), far, far, hash(i), hash((i + 1) % n)]]);
  }
  runs.push([hash(0), others.slice(0, 65_537 - others.length)]);
  const g = new LinkScores({ keys });
  for (const p of pages) g.addPage(p);
  for (const [p, targets] of runs) {
    g.beginPage(p);
    for (const t of targets) g.addLink(t);
  }
  await g.compute();
  const want = plainScores(pages, runs);
  let differ = 0;
  for (let i = 0; i < n; i++) {
    if (g.scoreOf(hash(i)) !== (want.get(hash(i)) ?? null)) differ++;
  }
  assert.equal(differ, 0);
  assert.equal(g.scoreOf(hash(1)), null);
  assert.ok(new Set(want.values()).size > 1, "the scores spread");
});

Deno.test("a released hash table throws on use rather than answering as if empty", () => {
  const keys = new HashKeys();
  keys.add(5);
  keys.add(9);
  assert.equal(keys.indexOf(9), 1);
  keys.release();
  assert.throws(() => keys.indexOf(9), /used after release/);
  assert.throws(() => keys.at(0), /used after release/);
  assert.throws(() => keys.add(3), /used after release|before the first lookup/);
});

Deno.test("a link added by its slot among the shared keys counts as one added by hash", async () => {
  const keys = new HashKeys();
  for (const h of [10, 20, 30, 40, 50]) keys.add(h);
  const byHash = new LinkScores({ keys });
  const bySlot = new LinkScores({ keys });
  assert.equal(bySlot.sharesKeys(keys), true);
  assert.equal(bySlot.sharesKeys(new HashKeys()), false);
  // 30 is a URL but not a page; 99 is not even a URL (no slot).
  for (const g of [byHash, bySlot]) for (const p of [10, 20, 40, 50]) g.addPage(p);
  const runs: [number, number[]][] = [[10, [20, 30, 99, 20]], [20, [10, 40]], [40, [50]], [
    50,
    [10],
  ]];
  for (const [p, targets] of runs) {
    byHash.beginPage(p);
    bySlot.beginPage(p);
    for (const t of targets) {
      assert.equal(bySlot.addLinkAt(keys.indexOf(t)), byHash.addLink(t), `link to ${t}`);
    }
  }
  await byHash.compute();
  await bySlot.compute();
  for (const h of [10, 20, 30, 40, 50, 99]) assert.equal(bySlot.scoreOf(h), byHash.scoreOf(h));
});

Deno.test("the link pass looks each followable link up once in the URL keys it shares with the link score", async () => {
  const kv = await Deno.openKv(":memory:");
  const n = 2_000;
  const lookup = HashKeys.prototype.indexOf;
  let lookups = 0;
  try {
    await writeSyntheticCrawl(kv, "aud_lookups", n, 100);
    let followable = 0;
    for (let i = 0; i < n; i++) {
      if (synthKind(i, n, 100) === "html") followable += synthLinks(i, n).length;
    }
    HashKeys.prototype.indexOf = function (hash: number) {
      lookups++;
      return lookup.call(this, hash);
    };
    await finalizeCrawl(kv, "aud_lookups", synthState(n));
    // Each followable link once (the URL table's count and the link score both take its slot),
    // then about three lookups a URL (its link score run, inlinks and score as it is annotated).
    // Two searches a link, as before, would pass 2 × the links (the site has ~3.7 a page).
    assert.ok(lookups >= followable, `${lookups} lookups`);
    assert.ok(lookups < followable + 3.5 * n, `${lookups} lookups, ${followable} links`);
  } finally {
    HashKeys.prototype.indexOf = lookup;
    kv.close();
  }
});
