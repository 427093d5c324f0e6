/**
 * The site-wide checks' last pass hands every record, once it is final, to what the job layer
 * counts page groups with (finalize.ts `finalRecords`, annotate_records.ts `FinalRecordSink`):
 * each record exactly once, with the checks it is stored with, its writes in the pass's batch,
 * and `end` after the last one, on a local KV and on one far enough away for ranges read side by
 * side.
 */
import assert from "node:assert/strict";
import { finalizeCrawl } from "../../domain/audit_engine/crawl/finalize.ts";
import type { WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { keys } from "../../kv/keys.ts";
import { openTestKv } from "../helpers/kv.ts";
import { synthState, synthUrl, writeSyntheticCrawl } from "../helpers/synthetic_crawl.ts";
import { sampleUrl } from "../../domain/audit_engine/crawl/url_sample.ts";
import { urlHash } from "../../domain/audit_engine/crawl/store.ts";

const PAGES = 1_500;

for (const slow of [false, true]) {
  Deno.test(`final records: every record seen once, final, then the end (${slow ? "ranges" : "local"})`, async () => {
    const kv = await openTestKv();
    try {
      const auditId = "aud_final_records";
      await writeSyntheticCrawl(kv, auditId, PAGES, 100);
      const state = synthState(PAGES);
      if (slow) {
        // A crawl that measured a remote KV, with its URL sample: the passes read in ranges.
        state.kvRttMs = [30];
        state.urlSample = { h: [], u: [] };
        for (let i = 0; i < PAGES; i++) {
          sampleUrl(state.urlSample, urlHash(synthUrl(i)), synthUrl(i));
        }
      }
      const seen = new Map<string, readonly string[]>();
      let ended = 0;
      let splitsTold: readonly string[] | null = null;
      await finalizeCrawl(kv, auditId, state, {
        finalRecords: (splits) => {
          splitsTold = splits;
          return Promise.resolve({
            see(url: string, checks: readonly string[], batch: WriteBatch) {
              assert.equal(ended, 0, "seen before the end");
              assert.ok(!seen.has(url), `${url} seen twice`);
              seen.set(url, [...checks]);
              batch.set(["test_sink", url], checks.length);
            },
            end(batch: WriteBatch) {
              ended++;
              batch.set(["test_sink_end"], seen.size);
            },
          });
        },
      });
      assert.equal(ended, 1);
      assert.equal(splitsTold!.length > 0, slow, "ranges only on the slow KV");
      let records = 0;
      let withChecks = 0;
      for await (
        const e of kv.list<{ url: string; checks: string[] }>({
          prefix: keys.auditPages(auditId),
        })
      ) {
        records++;
        assert.deepEqual(seen.get(e.value.url), e.value.checks, e.value.url);
        if (e.value.checks.length > 0) withChecks++;
        // The sink's writes went with the pass's.
        assert.equal((await kv.get(["test_sink", e.value.url])).value, e.value.checks.length);
      }
      assert.equal(records, PAGES);
      assert.equal(seen.size, PAGES);
      assert.ok(withChecks > 0, "some records carry checks");
      assert.equal((await kv.get(["test_sink_end"])).value, PAGES);
    } finally {
      kv.close();
    }
  });
}
