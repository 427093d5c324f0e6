/**
 * Frontier entries that carry their record (crawl/frontier.ts, `FrontierEntry.rec`): the
 * allocation writes each URL's record fresh beside its entry, so a step that takes the entry
 * rebuilds the record instead of reading it. On a real KV whose page-record reads are counted: a
 * taker that holds nothing (another process, a later step) reads no record for such entries and
 * gets exactly the records KV holds (sitemap URLs, redirect hops and rendered-DOM links
 * included); an entry queued again at another position (a 429's retry) carries no record and its
 * record, which kept its first position, is read.
 */
import assert from "node:assert/strict";
import { openTestKv } from "../helpers/kv.ts";
import { Frontier } from "../../domain/audit_engine/crawl/frontier.ts";
import { capsOf } from "../../domain/audit_engine/crawl/caps.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import { getMany, newRecord, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { keys } from "../../domain/platform/mod.ts";

const AUDIT = "aud_frontier_records";
const SITE = "https://records.test";

/** `kv`, with the page records its reads asked for counted in `reads.records`. */
function countingRecords(kv: Deno.Kv, reads: { records: number }): Deno.Kv {
  const count = (ks: readonly Deno.KvKey[]) => {
    for (const k of ks) if (k[0] === "audit_pages") reads.records++;
  };
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "get") {
        return (key: Deno.KvKey, o?: unknown) => (count([key]), value.call(target, key, o));
      }
      if (prop === "getMany") {
        return (ks: Deno.KvKey[], o?: unknown) => (count(ks), value.call(target, ks, o));
      }
      return value.bind(target);
    },
  });
}

/** A frontier of a fresh step over `kv` (no held entries, no memo), at the state's positions. */
function frontierOf(kv: Deno.Kv, state: CrawlState) {
  const batch = new WriteBatch(kv);
  return { batch, frontier: new Frontier(kv, AUDIT, state, batch, capsOf({}), 1_000) };
}

Deno.test("a taker rebuilds the records the allocation wrote beside its entries, and reads a retry's", async () => {
  const base = await openTestKv();
  const reads = { records: 0 };
  const kv = countingRecords(base, reads);
  try {
    // A sitemap URL the first step left unqueued: its record says it is in the sitemap.
    await base.set(
      keys.auditPage(AUDIT, `${SITE}/listed`),
      newRecord(`${SITE}/listed`, -1, -1, true),
    );
    const state = { head: 0, tail: 0, capsHit: {} } as unknown as CrawlState;
    const first = frontierOf(kv, state);
    first.frontier.discover(`${SITE}/a`, 1);
    first.frontier.discover(`${SITE}/listed`, 2);
    first.frontier.discover(`${SITE}/moved`, 1, 1);
    first.frontier.discover(`${SITE}/rendered`, 3, 0, "render");
    first.frontier.discover(`${SITE}/a`, 4);
    await first.frontier.allocate();
    await first.batch.flush();
    assert.equal(state.tail, 4);

    const stored = async (urls: string[]) =>
      await getMany(base, urls.map((u) => keys.auditPage(AUDIT, u)));
    reads.records = 0;
    const second = frontierOf(kv, state);
    const taken = await second.frontier.range(0, 4);
    assert.equal(reads.records, 0, "no record read for entries that carry theirs");
    const urls = taken.entries.map((e) => e.url);
    assert.deepEqual(urls, ["a", "listed", "moved", "rendered"].map((p) => `${SITE}/${p}`));
    assert.deepEqual(taken.records, await stored(urls));
    assert.equal(taken.records[1].inSitemap, true);
    assert.equal(taken.records[3].discoveredBy, "render");
    assert.equal(taken.entries[2].hops, 1);

    // A 429 sends /listed back: queued again at position 4, its record still at position 1.
    second.frontier.advance(4);
    second.frontier.requeue(taken.entries[1]);
    await second.frontier.allocate();
    await second.batch.flush();
    assert.equal(state.tail, 5);
    reads.records = 0;
    const third = frontierOf(kv, state);
    const retry = await third.frontier.range(4, 5);
    assert.equal(reads.records, 1, "a retry's record is read");
    assert.equal(retry.entries[0].retry, 1);
    assert.equal(retry.entries[0].rec, undefined);
    assert.deepEqual(retry.records, await stored([`${SITE}/listed`]));
    assert.equal(retry.records[0].seq, 1);
  } finally {
    base.close();
  }
});
