/**
 * The site-wide passes (crawl/finalize.ts) in a fixed memory budget: a 50,000-page crawl written
 * straight to KV (tests/helpers/synthetic_crawl.ts) where one page in ten redirects and one in
 * ten answers 404 (so the redirect, broken-target and failing-URL tables are a fifth of the
 * site) and every HTML page is in the near-duplicate index (its LSH bands; one page in a
 * thousand a near-duplicate), its passes run in a child process whose V8 old space is capped at
 * 24 MiB, so a pass that keeps per-page JS objects past the budget ends the child with an
 * out-of-memory crash and fails the test; and the findings the child reports must be the ones the site's rules give,
 * their evidence naming the right URLs (read back from KV by hash). `SERPWRIGHT_DEEP=1` runs it
 * at 1,000,000 pages under the same cap (minutes: writing the pages is most of it).
 */
import assert from "node:assert/strict";
import { tempKvPath } from "../proof/process.ts";
import {
  redirectAt,
  runFinalizeChild,
  synthExpected,
  synthKind,
  synthPage,
  synthUrl,
  writeSyntheticCrawl,
} from "../helpers/synthetic_crawl.ts";

/** The old-space cap: V8's heap for everything the passes hold, whatever the site's size. */
const HEAP_MIB = 24;
/** One page in PERIOD redirects, one answers 404. */
const PERIOD = 10;

async function passesWithin(n: number): Promise<void> {
  const kvFile = await tempKvPath();
  try {
    const kv = await Deno.openKv(kvFile.path);
    await writeSyntheticCrawl(kv, "a1", n, PERIOD, true);
    kv.close();
    // The start page, plain pages, the page after a redirect, a redirect's source, one far page.
    const redirect = redirectAt(PERIOD);
    const probe = [0, 1, 2, 3, redirect + 1, redirect, n - 2];
    const run = await runFinalizeChild(kvFile.path, "a1", n, probe, [
      "--max-semi-space-size=2",
      `--max-old-space-size=${HEAP_MIB}`,
    ]);
    const want = synthExpected(n, probe, PERIOD);
    const affected = (id: string) => run.tallies[id]?.[1];
    const eligible = (id: string) => run.tallies[id]?.[0];
    assert.equal(eligible("broken_internal_links"), want.htmlPages);
    assert.equal(affected("broken_internal_links"), want.pagesLinkingBroken);
    assert.equal(affected("internal_redirect_links"), want.pagesLinkingRedirects);
    assert.equal(affected("title_duplicate"), want.duplicateTitles);
    assert.equal(affected("near_duplicate_content"), want.nearDuplicates);
    assert.ok(want.pagesLinkingBroken > 0 && want.duplicateTitles > 0 && want.nearDuplicates > 0);
    for (const p of probe) {
      assert.equal(run.records[p]?.inlinks, want.inlinks.get(p), `inlinks of page ${p}`);
    }
    // Every page links the start page: it ranks first. Redirects have no score.
    assert.equal(run.records[0].linkScore, 100);
    assert.ok((run.records[1].linkScore ?? -1) >= 0);
    assert.equal(run.records[redirect].linkScore, null);
    // Evidence names its URLs (kept by hash, read back from KV): a 404 page, a redirect and
    // where it goes.
    const broken = run.first.broken_internal_links;
    assert.equal(synthKind(synthPage(broken.target), n, PERIOD), "broken", String(broken.target));
    assert.equal(broken.status, 404);
    const via = run.first.internal_redirect_links;
    const from = synthPage(via.target);
    assert.equal(synthKind(from, n, PERIOD), "redirect", String(via.target));
    assert.equal(via.redirects_to, synthUrl(from + 1));
  } finally {
    await kvFile.remove();
  }
}

const PAGES = Deno.env.get("SERPWRIGHT_DEEP") === "1" ? 1_000_000 : 50_000;

Deno.test(`the site-wide passes over ${PAGES} pages fit a ${HEAP_MIB} MiB heap and find what the site has`, async () => {
  await passesWithin(PAGES);
});
