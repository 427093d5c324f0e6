/**
 * The crawl's last step: the site-wide checks computed from the stored facts, reading KV in pages
 * and keeping only counters, capped item lists and compact aggregates (URL hash → inlink count,
 * the redirect map, the set of broken targets). One module per pass, in finalize/, run in this
 * order (each reads what the ones before it kept):
 *
 * 1. records (records.ts): statuses, failures, robots blocks, sitemap entries, TTFB, redirects
 *    and broken targets; canonical (canonical_targets.ts) and hreflang (hreflang_targets.ts)
 *    targets page by page; then the start and home page (start_and_home.ts);
 * 2. redirects (redirects.ts): chains and loops, redirects as link targets; the failing URLs
 *    other checks charge (failing.ts);
 * 3. link graph (links.ts): inlink counts, links to broken and redirecting URLs (with anchor
 *    texts), the link score (link_score.ts); the resources pages load (resources.ts: broken
 *    images, scripts, stylesheets, fonts, media, frames); then the failing URLs no other check
 *    charges (each defect is counted once, where it is fixed);
 * 4. duplicate index (duplicates.ts): groups of equal titles, descriptions and text
 *    fingerprints; then the LSH band index for near-duplicates (near_duplicates.ts);
 * 5. records again (annotate_records.ts): orphans, single-inlink pages, and each record gets its
 *    inlinks, link score and the site checks that hit it;
 * 6. every site check reads the resulting `SiteFacts`, its evidence is stored, and the audit is
 *    scored (outcome.ts).
 *
 * Passes that need nothing from each other run side by side, so on a remote KV their round trips
 * overlap: 4 (which reads only the duplicate index and fills only the duplicate groups) beside 1
 * to 3, the three kinds of 4 beside each other, and the three reads of 3 beside each other (each
 * fills its own groups; the failing URLs they charge are a set, so the order is no matter). Each
 * pass's own order, and so every group's items, is what it was one after another.
 *
 * Memory besides the capped item lists, per URL with a record, all in typed arrays: 10 bytes for
 * its hash and inlinks (finalize/url_table.ts; the link score marks its pages among those
 * hashes) and, per HTML 200 page, 19 for the link score while it iterates plus 4 per linking
 * page and 4 per distinct link (link_score.ts): about 50 MB at a million pages of 4 links,
 * outside V8's heap (ArrayBuffers), plus the near-duplicate pass's bands beside it
 * (near_duplicates.ts: 12 to 32 bytes per page per band held). Each is given back the moment
 * its last reader is done (sorted_hashes.ts `release`), not at V8's next collection. Per
 * redirecting URL ~32 bytes, per broken or failing URL ~28 (redirects.ts, targets.ts, failing.ts
 * over hash_index.ts), also typed arrays: their URL strings are in KV by hash (url_names.ts), read
 * back in batches for the evidence kept and the URLs a pass opens. The pages found near-duplicate
 * and the texts with an identical twin are typed too (16 to 32 and 8 bytes each); a page's facts
 * are never held. Loops over a whole site's URLs yield to the event loop as they go (event_loop.ts).
 * Repeating this step (a process died in it) gives the same result.
 *
 * @example
 * ```ts
 * import type { CrawlState } from "./state.ts";
 * declare const kv: Deno.Kv, auditId: string, state: CrawlState;
 * if (state.phase === "finalize") state.result = await finalizeCrawl(kv, auditId, state);
 * ```
 *
 * @module
 */
import { LinkScores } from "./link_score.ts";
import { type CrawlOutcome, type CrawlState, linkGraphPartial } from "./state.ts";
import { FindingsWriter, WriteBatch } from "./store.ts";
import { annotateRecords, type FinalRecordSink } from "./finalize/annotate_records.ts";
import { duplicateGroups } from "./finalize/duplicates.ts";
import { bucketsAhead } from "./dup_runs.ts";
import { emptyFacts } from "./finalize/facts.ts";
import { FailingUrls } from "./finalize/failing.ts";
import { readLinks } from "./finalize/links.ts";
import { nearDuplicates } from "./finalize/near_duplicates.ts";
import { scoreOutcome } from "./finalize/outcome.ts";
import { readRecords } from "./finalize/records.ts";
import { readFragments } from "./finalize/fragments.ts";
import { readResources } from "./finalize/resources.ts";
import { brokenRedirects, redirectChains } from "./finalize/redirects.ts";
import { checksByUrl, evaluateSite } from "./finalize/site_checks.ts";
import { startAndHome } from "./finalize/start_and_home.ts";
import { UrlTable } from "./finalize/url_table.ts";
import { rangeSplits } from "./url_sample.ts";

export { NEAR_MAX_COMPARE } from "./finalize/near_duplicates.ts";
export type { FinalRecordSink };

/**
 * Computes the site checks, stores their evidence and returns the scored outcome. From a crawl
 * step (engine.ts), `step.batch` is the step's: the last writes are sent, not waited for, and the
 * step's commit waits for them (else every write is in KV when this resolves).
 * `step.finalRecords` is asked, as the passes start, for what sees every record once it is final
 * (pass 5, `FinalRecordSink`: the job layer's page groups, written in this step), with the split
 * points the passes read the records with; pass 5 waits for it.
 */
export async function finalizeCrawl(
  kv: Deno.Kv,
  auditId: string,
  state: CrawlState,
  step: {
    batch?: WriteBatch;
    finalRecords?: (splits: readonly string[]) => Promise<FinalRecordSink>;
  } = {},
): Promise<CrawlOutcome> {
  const f = emptyFacts(state);
  const batch = step.batch ?? new WriteBatch(kv);
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const failing = new FailingUrls();
  // The link score's pages are among the records' URLs: one table of their hashes for both.
  const urls = new UrlTable();
  const linkScores = new LinkScores({ keys: urls.keys });
  // On a slow KV the passes over every record (and every page's links) read their keys in
  // ranges side by side.
  const splits = rangeSplits(state);
  // Made while passes 1 to 4 run (the page groups' detection reads the records).
  const sinking = step.finalRecords?.(splits);
  sinking?.catch(() => {}); // awaited before pass 5; a failure of 1 to 4 is the one reported

  // 4. Duplicate groups, and near-duplicates once the content groups are in (identical twins
  // are duplicate_content's), beside 1 to 3: it reads the duplicate index only and fills the
  // duplicate groups only.
  const dups = duplicateGroups(
    kv,
    auditId,
    f,
    (twins) => nearDuplicates(kv, auditId, twins, f.nearDupContent),
    splits.length > 0 ? bucketsAhead(state.completed) : 0,
  );
  // Awaited below; a failure of 1 to 3 leaves it behind, and that failure is the one reported.
  dups.catch(() => {});

  // 1. Records, then the start and home page.
  const read = await readRecords(
    kv,
    auditId,
    state.startUrl,
    f,
    failing,
    linkScores,
    splits,
    urls,
  );
  await startAndHome(kv, auditId, state.startUrl, read, f);

  // 2. Redirect chains and loops; redirects as link targets (one ending broken is broken too);
  // the failing URLs the start, sitemap, canonical and hreflang checks charge.
  await redirectChains(read.redirects, read.broken, f, read.names);
  await brokenRedirects(read.redirects, read.broken);
  await failing.chargeAll(read.markLater, read.redirects);
  read.markLater.clear();

  // 3. The link graph and link score; the resources pages load (frame sources charged there);
  // the fragment links and the anchors of their targets, side by side;
  // then the failing URLs left to the status checks.
  const [graph, framed] = await Promise.all([
    readLinks(kv, auditId, f, { ...read, failing, linkScores, splits }),
    readResources(kv, auditId, f, { ...read, failing }),
    readFragments(kv, auditId, f, read.redirects, read.names),
  ]);
  await failing.leftToStatusChecks(f, read.names);
  // The URLs of the evidence kept so far (read from KV, url_names.ts): the checks read them.
  await read.names.fill();
  await dups;

  // 5. Which site checks hit which page (before orphans are known), onto each record.
  const marks = checksByUrl(evaluateSite(f));
  await annotateRecords(kv, auditId, linkGraphPartial(state), f, batch, {
    ...graph,
    framed,
    linkScores,
    marks,
    splits,
    sink: await sinking,
  });
  // Their last reader is done: their megabytes go back now, not at V8's next collection.
  linkScores.release();
  urls.release();
  // The records go out while the site checks are scored; a write that failed fails the step
  // (`flush` before its commit).
  batch.send();

  // 6. Every site check, with its evidence stored; the score.
  return await scoreOutcome(state, f, findings, batch, step.batch === undefined);
}
