/**
 * The frontier's memo of allocated URLs (crawl/known_urls.ts): a crawl step does not read the
 * record of a URL this process saw a committed step allocate, nor, the memo kept from the first
 * step on, of a URL no step allocated and no sitemap listed. Through the API on a KV that counts
 * the page records read: an audit of a site whose pages link each other over many steps reads far
 * fewer records with the memo than without it (capacity 0: every record read, as before), none
 * of a URL without a record, and finds exactly the same (issues, evidence, pages, orphans from the
 * sitemap included).
 */
import assert from "node:assert/strict";
import { startTestApp } from "../helpers/app.ts";
import { completedLiveAudit } from "../helpers/credits.ts";
import { auditFindings } from "../helpers/findings.ts";
import { openTestKv } from "../helpers/kv.ts";
import { html, page, robotsRoute, type Route, serveSite, sitemapRoute } from "../helpers/sites.ts";
import { KnownUrls, knownUrls, UrlHashSet } from "../../domain/audit_engine/crawl/known_urls.ts";
import { newRecord, urlHash } from "../../domain/audit_engine/crawl/store.ts";
import { noPageRecords } from "../../domain/audit_engine/crawl/frontier.ts";
import { keys } from "../../domain/platform/mod.ts";

const PAGES = 40;

/**
 * Forty pages that link eight others each (most links lead to pages queued steps before), a 404,
 * a redirect, two untitled pages and a duplicate pair; the sitemap lists pages the links reach
 * late (their records say they are in the sitemap) and an orphan.
 */
function routes(origin: () => string): (path: string) => Route | undefined {
  return (path) => {
    if (path === "/robots.txt") {
      return robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${origin()}/sitemap.xml\n`);
    }
    if (path === "/sitemap.xml") {
      return sitemapRoute(["/", "/p1", "/p37", "/p39", "/orphan"].map((p) => origin() + p));
    }
    if (path === "/old") return { status: 301, headers: { location: "/p3" } };
    if (path === "/orphan") return html(page({ title: "An orphan page of the linked site" }));
    const m = /^\/p(\d+)$/.exec(path);
    if (path !== "/" && !m) return undefined;
    const i = m ? Number(m[1]) : 0;
    if (i >= PAGES) return undefined;
    const links = Array.from({ length: 8 }, (_, k) => `/p${(i * 3 + k * 7 + 1) % PAGES}`);
    if (i + 1 < PAGES) links.push(`/p${i + 1}`);
    if (i % 10 === 4) links.push("/missing", "/old");
    return html(page({
      title: i % 17 === 5 ? null : `Linked page number ${i} of the memo site`,
      key: i === 20 || i === 21 ? "twin" : `p${i}`,
      links,
    }));
  };
}

/** Page records a KV's reads asked for, and how many of them it had none of. */
interface Reads {
  records: number;
  absent: number;
}

/** `kv`, with the page records its reads asked for counted in `reads`. */
function countingRecords(kv: Deno.Kv, reads: Reads): Deno.Kv {
  const count = (entries: readonly Deno.KvEntryMaybe<unknown>[]) => {
    for (const e of entries) {
      if (e.key[0] !== "audit_pages") continue;
      reads.records++;
      if (e.versionstamp === null) reads.absent++;
    }
  };
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "get") {
        return async (key: Deno.KvKey, o?: unknown) => {
          const e = await value.call(target, key, o);
          count([e]);
          return e;
        };
      }
      if (prop === "getMany") {
        return async (keys: Deno.KvKey[], o?: unknown) => {
          const es = await value.call(target, keys, o);
          count(es);
          return es;
        };
      }
      return value.bind(target);
    },
  });
}

/** Audits `origin` with steps of 4 pages; answers what it found and the records it read. */
async function audit(origin: string) {
  const reads: Reads = { records: 0, absent: 0 };
  const app = await startTestApp({
    kv: countingRecords(await openTestKv(), reads),
    env: { CRAWL_STEP_PAGES: "4" },
  });
  try {
    const { key, id, done } = await completedLiveAudit(app, origin, 120_000);
    assert.equal(done.body.status, "completed", done.text);
    const { records, absent } = reads;
    return { found: await auditFindings(app, key, id), reads: records, absent };
  } finally {
    await app.close();
  }
}

Deno.test("a crawl step skips the records of URLs committed steps allocated, and finds the same", async () => {
  let origin = "";
  const site = serveSite(routes(() => origin));
  origin = site.origin;
  const capacity = knownUrls.capacity;
  try {
    const memo = await audit(origin);
    knownUrls.capacity = 0;
    const plain = await audit(origin);
    knownUrls.capacity = capacity;
    // deno-lint-ignore no-explicit-any
    const fired = (plain.found as any).issues as { check: string }[];
    for (
      const check of ["title_missing", "broken_internal_links", "orphan_page", "duplicate_content"]
    ) {
      assert.ok(fired.some((f) => f.check === check), `${check} in ${JSON.stringify(fired)}`);
    }
    console.log(
      `records read: ${memo.reads} with the memo (${memo.absent} absent), ` +
        `${plain.reads} without (${plain.absent} absent)`,
    );
    assert.deepEqual(memo.found, plain.found);
    // Kept from the first step on, the memo knows every URL without a record: none is read.
    assert.equal(memo.absent, 0);
    assert.ok(plain.absent > 30, `${plain.absent} absent records read without the memo`);
    // Without the memo every step reads the record of each URL its pages link (~10 steps, a
    // few dozen each); with it, mostly the URLs never queued before.
    assert.ok(plain.reads > 150, `${plain.reads} records read without the memo`);
    assert.ok(
      memo.reads * 2 < plain.reads,
      `${memo.reads} records read with the memo, ${plain.reads} without`,
    );
  } finally {
    knownUrls.capacity = capacity;
    await site.close();
  }
});

Deno.test("the memo is trusted only by a step that read the state its last commit covers", async () => {
  const kv = await openTestKv();
  try {
    const known = new KnownUrls(100);
    const a = urlHash("https://example.test/a");
    known.commit(kv, "aud_1", null, "v1", [a]);
    assert.equal(known.covering(kv, "aud_1", "v1")?.has(a), true);
    // A step that died left the state as it was: the next step still trusts the set.
    assert.equal(known.covering(kv, "aud_1", "v1")?.has(a), true);
    // A commit this process did not see (another worker's step, a crawl started again): dropped.
    assert.equal(known.covering(kv, "aud_1", "v9"), null);
    assert.equal(known.covering(kv, "aud_1", "v1"), null);
    // A step whose read state the set did not cover starts it again with its own URLs only.
    const b = urlHash("https://example.test/b");
    known.commit(kv, "aud_1", null, "v2", [a]);
    known.commit(kv, "aud_1", "v7", "v8", [b]);
    assert.equal(known.covering(kv, "aud_1", "v8")?.has(a), false);
    // Another KV database's memo is its own.
    const other = await openTestKv();
    assert.equal(known.covering(other, "aud_1", "v8"), null);
    other.close();
  } finally {
    kv.close();
  }
});

Deno.test("a memo kept from the first step is complete until a commit it did not see or its capacity", async () => {
  const kv = await openTestKv();
  try {
    const known = new KnownUrls(100);
    const h = (p: string) => urlHash(`https://example.test/${p}`);
    known.start(kv, "aud_1", "v1", [h("start")], [h("s1"), h("s2")]);
    let memo = known.memo(kv, "aud_1", "v1")!;
    assert.equal(memo.set.has(h("start")), true);
    assert.equal(memo.unqueued?.has(h("s1")), true);
    // Steps this process saw commit keep it complete.
    known.commit(kv, "aud_1", "v1", "v2", [h("a"), h("s1")]);
    memo = known.memo(kv, "aud_1", "v2")!;
    assert.ok(memo.unqueued !== null && memo.set.has(h("a")) && memo.set.has(h("start")));
    // A step that read a state it did not cover starts an incomplete one.
    known.commit(kv, "aud_1", "v7", "v8", [h("b")]);
    assert.equal(known.memo(kv, "aud_1", "v8")?.unqueued, null);
    // Hashes past the capacity left out: no longer complete (a URL not kept is read).
    known.start(kv, "aud_2", "w1", [], [h("s1")]);
    known.commit(kv, "aud_2", "w1", "w2", Array.from({ length: 150 }, (_, i) => h(`p${i}`)));
    assert.equal(known.memo(kv, "aud_2", "w2")?.unqueued, null);
    assert.equal(known.memo(kv, "aud_2", "w2")?.set.size, 99);
  } finally {
    kv.close();
  }
});

Deno.test("noPageRecords: true only for an audit with no page record", async () => {
  const kv = await openTestKv();
  try {
    assert.equal(await noPageRecords(kv, "aud_x"), true);
    await kv.set(
      keys.auditPage("aud_x", "https://example.test/"),
      newRecord("https://example.test/", -1, -1, true),
    );
    assert.equal(await noPageRecords(kv, "aud_x"), false);
    assert.equal(await noPageRecords(kv, "aud_y"), true);
  } finally {
    kv.close();
  }
});

Deno.test("the memo holds at most its capacity per KV, the oldest audits out first", async () => {
  const kv = await openTestKv();
  try {
    const known = new KnownUrls(1_000);
    const hashes = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => urlHash(`https://${tag}.test/p/${i}`));
    known.commit(kv, "old", null, "o1", hashes("old", 400));
    known.commit(kv, "mid", null, "m1", hashes("mid", 400));
    known.commit(kv, "new", null, "n1", hashes("new", 400));
    assert.equal(known.covering(kv, "old", "o1"), null);
    assert.equal(known.covering(kv, "mid", "m1")?.size, 400);
    // One audit past the capacity keeps what fits, every hash it keeps found again.
    known.commit(kv, "big", null, "b1", hashes("big", 3_000));
    const big = known.covering(kv, "big", "b1")!;
    assert.equal(big.size, 1_000);
    assert.equal(known.covering(kv, "mid", "m1"), null);
    assert.equal(hashes("big", 3_000).filter((h) => big.has(h)).length, 1_000);
    assert.equal(hashes("else", 3_000).filter((h) => big.has(h)).length, 0);
    const none = new KnownUrls(0);
    none.commit(kv, "x", null, "x1", hashes("x", 10));
    assert.equal(none.covering(kv, "x", "x1"), null);
  } finally {
    kv.close();
  }
});

Deno.test("UrlHashSet: grows past its first table, keeps no hash 0", () => {
  const set = new UrlHashSet();
  const hs = Array.from({ length: 5_000 }, (_, i) => urlHash(`https://s.test/${i}`));
  for (const h of hs) assert.equal(set.add(h), true);
  for (const h of hs) assert.equal(set.add(h), false);
  assert.equal(set.size, 5_000);
  assert.ok(hs.every((h) => set.has(h)));
  assert.equal(set.has(urlHash("https://s.test/5000")), false);
  assert.equal(set.add(0), false);
  assert.equal(set.has(0), false);
  assert.equal(set.has(2 ** 53 - 1), false);
});
