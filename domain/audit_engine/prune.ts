/**
 * Retention of an audit's crawl working state. A crawl keeps everything it works with in KV so any
 * process can take the next step (crawl/store.ts, frontier.ts, page_recorder.ts, finalize.ts,
 * post_steps.ts); once the audit has ended, most of it is read by nothing again. The audit's
 * finishing commit (completed, failed, or out of attempts: `AUDIT_JOB.onFinish`) writes a marker
 * `auditPrune(dueAt, id)`, and the audits capability's maintenance works through due markers in
 * short batches.
 *
 * Deleted after every finished audit (crawl-only working state):
 * - `audit_crawl` (the step state: frontier head/tail, robots, tallies; read by `completeAudit`
 *   before the completing commit, by nothing after) and `audit_step` (the step owner's token);
 * - `audit_auth` (sealed staging credentials: the finishing commit itself deletes them);
 * - `audit_frontier` (URLs to fetch), `audit_links` (the link graph, chunks per page);
 * - `audit_dup_runs` and `audit_dups` (duplicate title/description/text index, as runs and as
 *   the keys crawls begun before the runs wrote), `audit_near` (near-duplicate LSH
 *   bands) and `audit_near_sig` (MinHash signatures);
 * - `audit_check_data` (each check's own working data, check_data.ts: e.g. the libraries script
 *   heads showed), `audit_banners` (the same, as audits before it stored them),
 *   `audit_sitemap_urls` (sitemap URL chunks), `audit_blobs` (robots.txt bodies and other large
 *   texts);
 * - `audit_embeds` (the resources each page loads), `audit_resources` and
 *   `audit_resource_queue` (the distinct resources checked for broken_resources);
 * - `audit_anchors` and `audit_frag_links` (each page's anchors and fragment links, for
 *   broken_fragment);
 * - `audit_site_pages` (indexable pages in crawl order: copied into `site_facts` by the
 *   completing commit, which is what articles read).
 *
 * Deleted after a failed audit only (a failed audit serves no findings or pages: 409):
 * - `audit_pages` (seen set and page inventory), `audit_findings` (evidence), `audit_issues`,
 *   `audit_lab` (lab metrics of the rendered lab pages).
 *
 * Kept after a completed audit until the project's next completed audit with stored facts replaces
 * them: `page_reuse` (each HTML page's validators, digest and facts, for an incremental re-audit;
 * crawl/reuse.ts). That audit's completing commit marks the older audit with kind `reuse`, which
 * deletes only them; a failed audit's are deleted with its results.
 *
 * Kept after a completed audit (what the API and the next audit read): `audits` (the record,
 * with score, summary, changes), `audit_owner`, `audit_pages` (`GET /pages`), `audit_findings`
 * (`GET /issues/{check}`, `/pages?check=`), `audit_lab` (the HTML report's lab metrics),
 * `audit_issues` (`GET /issues`, and the next audit's
 * new/persisting/fixed comparison), the project's `latestAudit` and `site_facts` (articles,
 * monitoring's regression comparison reads the records).
 *
 * Safe to die anywhere: each batch deletes what it just listed, the marker goes last, and a
 * second sweeper deleting the same keys does no harm.
 *
 * Audits that ended before markers existed have none: `backfillPruneMarkers` walks the crawl
 * states once, a page per maintenance run, and marks those whose audit ended long ago.
 *
 * @module
 */
import type { BackfillState, PruneKind } from "./types.ts";
import { type Atomic, atomic, type Deps, keys, list, read } from "../platform/mod.ts";
import { keyBytes } from "../../kv/limits_guard.ts";
import { getMany } from "./crawl/store.ts";

/**
 * The sweep starts this long after the audit ended: a worker that lost its claim (the audit was
 * failed by the stale-job sweep) may still be flushing one step's unconditioned writes.
 */
export const PRUNE_GRACE_MS = 15 * 60_000;
/** Deletes per commit (KV allows 1,000 mutations; key bytes are capped separately). */
export const PRUNE_BATCH = 500;
/** Commits one maintenance run makes at most; the rest is left for the next run. */
export const PRUNE_COMMITS_PER_RUN = 40;
/** Bytes of keys per commit, under KV's 80 KiB (page URLs in keys may be 1.5 KB each). */
const MAX_KEY_BYTES = 60_000;

export type { BackfillState, PruneKind };

/** Crawl-only prefixes: deleted after every finished audit. */
export function workingStatePrefixes(auditId: string): Deno.KvKey[] {
  return [
    keys.auditFrontierAll(auditId),
    keys.auditLinksAll(auditId),
    keys.auditDupsAll(auditId),
    keys.auditDupRunsAll(auditId),
    keys.auditNearBands(auditId),
    keys.auditNearSigs(auditId),
    keys.auditBanners(auditId),
    keys.auditCheckDataAll(auditId),
    keys.auditSitemapChunks(auditId),
    keys.auditBlobsAll(auditId),
    keys.auditSitePages(auditId),
    keys.auditEmbedsAll(auditId),
    keys.auditResources(auditId),
    keys.auditResourceQueueAll(auditId),
    keys.auditAnchorsAll(auditId),
    keys.auditFragLinksAll(auditId),
    keys.auditUrlNames(auditId),
    keys.auditSlices(auditId),
  ];
}

/**
 * What a failed audit also loses: it never serves pages, findings or page groups (counted in its
 * last step before it could fail, domain/audits/job.ts).
 */
function resultPrefixes(auditId: string): Deno.KvKey[] {
  return [
    keys.auditPages(auditId),
    keys.auditFindingsAll(auditId),
    keys.auditLabs(auditId),
    keys.pageReuseAll(auditId),
    keys.auditGroupsAll(auditId),
    keys.auditGroupPagesAll(auditId),
  ];
}

/** Single keys deleted with the marker, after every prefix is empty. */
function singleKeys(auditId: string, kind: PruneKind): Deno.KvKey[] {
  if (kind === "reuse") return [];
  // audit_auth is deleted by the finishing commit already; again here, in case.
  const out: Deno.KvKey[] = [
    keys.auditCrawl(auditId),
    keys.auditStep(auditId),
    keys.auditAuth(auditId),
  ];
  if (kind === "failed") out.push(keys.auditIssues(auditId));
  return out;
}

/** Adds the prune marker to an audit's finishing commit. */
export function markForPruning(
  op: Atomic,
  auditId: string,
  kind: PruneKind,
  now: number,
): void {
  op.set(keys.auditPrune(now + PRUNE_GRACE_MS, auditId), kind);
}

/**
 * Deletes up to `budget.commits` batches of one audit's working state. Returns true when
 * everything is gone (the marker included), false when the budget ran out first.
 */
async function pruneOne(
  kv: Deno.Kv,
  marker: Deno.KvKey,
  auditId: string,
  kind: PruneKind,
  budget: { commits: number },
): Promise<boolean> {
  const prefixes = kind === "reuse"
    ? [keys.pageReuseAll(auditId)]
    : kind === "failed"
    ? [...workingStatePrefixes(auditId), ...resultPrefixes(auditId)]
    : workingStatePrefixes(auditId);
  for (const prefix of prefixes) {
    while (true) {
      if (budget.commits <= 0) return false;
      const listed: Deno.KvKey[] = [];
      for await (const e of kv.list({ prefix }, { limit: PRUNE_BATCH, batchSize: PRUNE_BATCH })) {
        listed.push(e.key);
      }
      if (listed.length === 0) break;
      let op = kv.atomic();
      let bytes = 0;
      for (const key of listed) {
        const kb = keyBytes(key);
        if (bytes + kb > MAX_KEY_BYTES) {
          await op.commit();
          budget.commits--;
          op = kv.atomic();
          bytes = 0;
        }
        op.delete(key);
        bytes += kb;
      }
      await op.commit();
      budget.commits--;
      if (listed.length < PRUNE_BATCH) break;
    }
  }
  if (budget.commits <= 0) return false;
  const op = kv.atomic();
  for (const key of singleKeys(auditId, kind)) op.delete(key);
  await op.delete(marker).commit();
  budget.commits--;
  return true;
}

/**
 * The maintenance sweep: works through the due prune markers, oldest first, within a budget of
 * commits, so one run stays short and a large audit is finished over several runs. Returns the
 * audits whose working state is now gone.
 */
export async function pruneFinishedAudits(
  deps: Pick<Deps, "kv" | "clock">,
  commits = PRUNE_COMMITS_PER_RUN,
): Promise<number> {
  const { kv, clock } = deps;
  const budget = { commits };
  let done = 0;
  const due = list(kv, {
    start: keys.auditPrune(0, ""),
    end: keys.auditPrune(clock.now() + 1, ""),
  });
  for await (const e of due) {
    if (budget.commits <= 0) break;
    const auditId = e.key[2];
    if (await pruneOne(kv, e.key, auditId, e.value, budget)) done++;
  }
  return done;
}

/** Crawl states the backfill reads per maintenance run. */
export const BACKFILL_PAGE = 200;

/**
 * Starts the backfill's clock the first time a process with prune markers starts (nothing if it
 * has started before): audits ending from now on get their own markers. Should this write fail,
 * the first backfill run starts the clock instead (audits that ended in between are swept twice,
 * which deletes nothing more).
 */
export async function beginPruneBackfill(deps: Pick<Deps, "kv" | "clock">): Promise<void> {
  const state: BackfillState = { startedAt: deps.clock.now(), after: null, done: false };
  await atomic(deps.kv).check({ key: keys.pruneBackfill(), versionstamp: null })
    .set(keys.pruneBackfill(), state).commit();
}

/**
 * The one-time backfill of prune markers for audits that ended before markers existed: one pass
 * over the crawl states still in KV, `page` per call from where the last call stopped, in one
 * checked commit (two processes cannot both advance it). An audit that ended before the pass
 * began is marked (one that already had a marker is swept twice, which deletes nothing more);
 * one still running or ending later gets its marker from its own finishing commit. Returns the
 * audits it marked.
 */
export async function backfillPruneMarkers(
  deps: Pick<Deps, "kv" | "clock">,
  page = BACKFILL_PAGE,
): Promise<number> {
  const { kv, clock } = deps;
  const now = clock.now();
  const entry = await read(kv, keys.pruneBackfill());
  const state = entry.value ?? { startedAt: now, after: null, done: false };
  if (state.done) return 0; // one small read per run once done; no in-process state to go stale
  const ids: string[] = [];
  const prefix = keys.auditCrawls();
  const selector = state.after === null
    ? { prefix }
    : { prefix, start: [...prefix, state.after, ""] as Deno.KvKey };
  for await (const e of list(kv, selector, { limit: page, batchSize: page })) {
    ids.push(e.key[1]);
  }
  const owners = await getMany(kv, ids.map((id) => keys.auditOwner(id)));
  const audits = await getMany(
    kv,
    ids.map((id, i) => keys.audit(owners[i] ?? "", id)),
  );
  const op = atomic(kv).check(entry);
  let marked = 0;
  audits.forEach((a, i) => {
    if (!a || (a.status !== "completed" && a.status !== "failed")) return;
    if (a.completedAt === null || a.completedAt >= state.startedAt) return;
    op.set(keys.auditPrune(Math.max(now, a.completedAt + PRUNE_GRACE_MS), ids[i]), a.status);
    marked++;
  });
  const next: BackfillState = {
    startedAt: state.startedAt,
    after: ids.length > 0 ? ids[ids.length - 1] : state.after,
    done: ids.length < page,
  };
  const res = await op.set(entry.key, next).commit();
  return res.ok ? marked : 0;
}
