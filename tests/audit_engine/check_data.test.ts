/**
 * A check's own working data (domain/audit_engine/check_data.ts), with the library banners of
 * vulnerable_js_library as the check that keeps its data there: what a script showed is stored
 * under the check's id, found again by a later step without a second read, still found under
 * the key audits used before (an audit running across the change), and pruned with the crawl's
 * working state.
 */
import assert from "node:assert/strict";
import { BannerReader, BANNERS } from "../../domain/audit_engine/crawl/banners.ts";
import { RobotsSource } from "../../domain/audit_engine/crawl/robots_source.ts";
import { WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import type { FetchSettings } from "../../domain/audit_engine/crawl/fetcher.ts";
import { workingStatePrefixes } from "../../domain/audit_engine/prune.ts";
import { keys } from "../../kv/keys.ts";
import { serveSite } from "../helpers/sites.ts";
import { openTestKv } from "../helpers/kv.ts";

const JQUERY_OLD = {
  body: "/*! jQuery v1.8.3 jquery.com | jquery.org/license */\n!function(){}",
  headers: { "content-type": "application/javascript" },
};

Deno.test("check data: banners kept under the check's id, the old key still read, pruned with the crawl", async () => {
  const site = serveSite({
    "/robots.txt": { body: "User-agent: *\nDisallow:\n" },
    "/a.js": JQUERY_OLD,
    "/b.js": JQUERY_OLD,
  });
  const kv = await openTestKv();
  try {
    const auditId = "aud_check_data";
    const settings: FetchSettings = { allowPrivate: true, timeoutMs: 3_000, maxBytes: 1 << 20 };
    const [a, b] = [site.url("/a.js"), site.url("/b.js")];
    // An audit that started before the change stored what b.js showed under the old key.
    const old = { library: "jquery", version: "9.9.9", from: "banner" } as const;
    await kv.set(keys.auditBanner(auditId, b), { lib: old });
    const step = async () => {
      const batch = new WriteBatch(kv);
      const robots = new RobotsSource(kv, auditId, settings, {}, batch);
      const state = { banners: 0 } as CrawlState;
      const reader = new BannerReader(kv, auditId, settings, robots, state, batch);
      const libs = await reader.librariesOf([a, b]);
      await batch.flush();
      return { libs, reads: state.banners };
    };

    const first = await step();
    const shown = { library: "jquery", version: "1.8.3", from: "banner" };
    assert.deepEqual(first.libs?.get(a), shown);
    assert.deepEqual(first.libs?.get(b), old, "old key read");
    assert.equal(first.reads, 1);
    assert.deepEqual(site.hits.filter((p) => p.endsWith(".js")), ["/a.js"]);
    const stored = (await kv.get(BANNERS.key(auditId, a))).value;
    assert.deepEqual(stored, { lib: shown });
    assert.deepEqual(BANNERS.key(auditId, a), [
      "audit_check_data",
      auditId,
      "vulnerable_js_library",
      a,
    ]);

    // A later step (another process) reads nothing again: the check's data answers.
    const second = await step();
    assert.equal(second.reads, 0);
    assert.deepEqual(second.libs?.get(a), first.libs?.get(a));
    assert.equal(site.hits.filter((p) => p.endsWith(".js")).length, 1);

    // Pruning's working-state prefixes cover every check's data (and the old banners).
    const covered = (key: Deno.KvKey) =>
      workingStatePrefixes(auditId).some((p) => p.every((part, i) => key[i] === part));
    assert.ok(covered(BANNERS.key(auditId, a)));
    assert.ok(covered(keys.auditCheckData(auditId, "any_future_check", "x", 1)));
    assert.ok(covered(keys.auditBanner(auditId, b)));
  } finally {
    kv.close();
    await site.close();
  }
});
