/**
 * The writes of one crawl step: turns the fetch pool's results into what the audit keeps, in
 * frontier order, so URL discovery (and so frontier positions) is deterministic. Per URL: its
 * record; per fetched HTML page also its findings (evidence, capped per check), its links (hashed
 * targets with anchors), its entries in the duplicate indexes, its place among the site pages
 * articles link to, the cap it hit, and the URLs it leads to, handed to the frontier.
 *
 * @module
 */
import { keys } from "../../platform/mod.ts";
import { MAX_RESOURCES_PER_PAGE, type PageFacts, siteKeyOf } from "../page_facts.ts";
import { EMPTY_BIN, SIG_BINS } from "../text_fingerprint.ts";
import { canonicalUrl } from "../urls.ts";
import { type CrawlCaps, noteCap } from "./caps.ts";
import type { Fetched } from "./fetch_pool.ts";
import type { Frontier, FrontierEntry } from "./frontier.ts";
import { MAX_RETRIES } from "./politeness.ts";
import type { CrawlState } from "./state.ts";
import {
  boundRecord,
  FindingsWriter,
  MAX_URL_LENGTH,
  type PageRecord,
  type WriteBatch,
  writeLinks,
} from "./store.ts";
import { Pacer, yieldToLoop } from "./event_loop.ts";
import { ResourceQueue, writeEmbeds } from "./resource_checks.ts";
import { writeFragmentFacts } from "./anchors.ts";
import { sampleUrl } from "./url_sample.ts";
import { DupRuns } from "./dup_runs.ts";

/** Pages kept for article internal links (AuditReport.site.pages). */
export const MAX_SITE_PAGES = 200;
/** LSH banding of the MinHash signature: 16 bands of 4 bins (pairs at 0.8 meet with p > 0.999). */
export const BAND_BINS = 4;
/** Bands of a signature. */
export const BANDS = SIG_BINS / BAND_BINS;
/** Entries of one band a run's value holds at most (16 bytes each: within KV's 64 KiB). */
export const NEAR_RUN_ENTRIES = 2_000;
/** Pages with fewer visible words are not compared for duplicate text. */
export const DUP_MIN_WORDS = 20;
/** hreflang alternates kept per page for the return-link check (a cluster rarely has more). */
const HREFLANG_TARGETS = 30;
/** Pages recorded between looks at the clock for a yield (a page can carry a thousand links). */
const PAGES_PER_YIELD = 8;

/** Where one step's records go. */
export interface RecordTarget {
  batch: WriteBatch;
  auditId: string;
  /** The crawl state: its counters, tallies of stored findings, cap hits, language, site pages. */
  state: CrawlState;
  caps: CrawlCaps;
  /** Hands a URL found on a page (or a redirect's target) to the frontier. */
  discover: (url: string, depth: number, hops?: number) => void;
  /** Sends an entry a 429/503 answered back to the frontier (politeness.ts). */
  requeue: (e: FrontierEntry) => void;
  /** Where a page's same-site resources are queued for broken_resources (absent: not checked). */
  resources?: ResourceQueue;
}

/**
 * Records a step's fetched entries into the audit through `frontier`, with the state's resource
 * queue: the one way a chain's step (engine.ts) and a partitioned range (partition.ts) record.
 * Returns the queue, whose discovered resources the caller allocates once its links are.
 */
export async function recordFromFrontier(
  kv: Deno.Kv,
  frontier: Frontier,
  entries: readonly FrontierEntry[],
  records: readonly PageRecord[],
  results: readonly Fetched[],
  to: Omit<RecordTarget, "discover" | "requeue" | "resources">,
): Promise<ResourceQueue> {
  const { batch, auditId, state, caps } = to;
  const resources = new ResourceQueue(
    kv,
    auditId,
    state.resources ??= { tail: 0, checked: 0, unchecked: 0 },
    batch,
    caps.resources ?? 0,
    state.capsHit!,
  );
  await recordPages(entries, records, results, {
    ...to,
    discover: (url, depth, hops) => frontier.discover(url, depth, hops),
    requeue: (e) => frontier.requeue(e),
    resources,
  });
  return resources;
}

/**
 * Records the results of entries taken from the frontier (`results[i]` is what `entries[i]`, whose
 * record is `records[i]`, produced). An entry skipped for the byte budget is not recorded: it
 * stays queued; one a 429/503 sent back is queued again, its record untouched. Counts fetches
 * (and retries) on the state; writes go to the step's batch.
 *
 * @example
 * ```ts
 * import { fetchBatch } from "./fetch_pool.ts";
 * import type { Frontier } from "./frontier.ts";
 * declare const frontier: Frontier, limits: { pages: number };
 * declare const poolOptions: Parameters<typeof fetchBatch>[1];
 * declare const { batch, auditId, state, caps }: RecordTarget;
 * const { entries, records } = await frontier.next(limits.pages);
 * const results = await fetchBatch(entries, poolOptions);
 * await recordPages(entries, records, results, {
 *   batch, auditId, state, caps,
 *   discover: (url, depth, hops) => frontier.discover(url, depth, hops),
 *   requeue: (e) => frontier.requeue(e),
 * });
 * ```
 */
export async function recordPages(
  entries: readonly FrontierEntry[],
  records: readonly PageRecord[],
  results: readonly Fetched[],
  to: RecordTarget,
): Promise<void> {
  const { batch, auditId, state, caps, discover, requeue, resources } = to;
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const near = new NearRuns();
  const dups = new DupRuns();
  const pace = new Pacer(PAGES_PER_YIELD);
  for (let i = 0; i < results.length; i++) {
    // Let the process answer its HTTP requests between pages (the API shares the event loop).
    if (pace.due()) await yieldToLoop();
    const e = entries[i];
    const res = results[i];
    const rec = records[i];
    const seq = rec.seq;
    if (res.kind === "skipped") continue;
    if (res.kind === "retry") {
      requeue(e);
      if (state.pace) state.pace.retries++;
      continue;
    }
    if (res.kind === "blocked") {
      rec.state = "blocked";
    } else if (res.kind === "failed") {
      rec.state = "failed";
      rec.failure = res.failure;
      state.fetches++;
      state.failed++;
    } else {
      state.fetches++;
      state.completed++;
      if (res.gaveUp) {
        if (state.pace) state.pace.gaveUp++;
        // Its content was never read: the crawl gave up on it, which the audit says as a limit.
        noteCap(state.capsHit!, "politeness_retries", MAX_RETRIES);
      }
      recordResponse(rec, res, state, (url, depth) => discover(url, depth, (e.hops ?? 0) + 1));
      if (res.page) {
        const { facts } = res.page;
        if (res.page.reused && state.reuse) state.reuse.reused++;
        const keep = res.page.keep;
        if (keep) batch.set(keys.pageReuse(auditId, rec.url), keep.entry, keep.bytes);
        if (facts.linksOverCap > 0) {
          noteCap(state.capsHit!, "links_per_page", caps.linksPerPage, facts.linksOverCap);
        }
        for (const f of res.page.fired) findings.add(f.id, rec.url, f.items);
        writeLinks(batch, auditId, rec.url, facts);
        writeFragmentFacts(batch, auditId, rec.url, facts);
        if (res.page.follow) { for (const l of facts.links) discover(l, childDepth(rec)); }
        // Frame sources are documents of their own: crawled like links, whatever the page's
        // nofollow (embedding is not linking), but not links (no inlinks, no link score).
        for (const fr of facts.frames) discover(fr, childDepth(rec));
        writeEmbeds(batch, auditId, rec.url, facts);
        resources?.discover(facts);
        if (facts.resourcesOverCap > 0) {
          noteCap(
            state.capsHit!,
            "resources_per_page",
            MAX_RESOURCES_PER_PAGE,
            facts.resourcesOverCap,
          );
        }
        // Canonical, refresh and hreflang targets are crawled too: their checks judge them.
        const extra = [rec.canonicalOther, facts.metaRefresh?.url ?? null, ...rec.hreflang ?? []];
        for (const x of extra) {
          if (x && siteKeyOf(new URL(x)) === state.siteKey) discover(x, childDepth(rec));
        }
        indexDuplicates(batch, auditId, rec, facts.textSig, near, dups);
        if (rec.depth === 0 && state.language === null) state.language = facts.htmlLang || null;
        if (
          !rec.noindex && rec.canonicalOther === null && state.sitePages < MAX_SITE_PAGES
        ) {
          state.sitePages++;
          batch.set(keys.auditSitePage(auditId, seq), {
            url: rec.url,
            title: rec.title,
            h1: rec.h1,
            description: rec.description,
            depth: rec.depth,
          });
        }
      }
    }
    batch.set(keys.auditPage(auditId, rec.url), boundRecord(rec));
    sampleUrl(state.urlSample ??= { h: [], u: [] }, rec.hash, rec.url);
  }
  near.write(batch, auditId);
  dups.write(batch, auditId);
}

/** Links on a page sit one click deeper; from a sitemap-only page (-1) they stay at -1. */
const childDepth = (rec: PageRecord) => (rec.depth < 0 ? -1 : rec.depth + 1);

const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

/** Fills a record from a response; an internal redirect target is discovered at the same depth. */
function recordResponse(
  rec: PageRecord,
  res: Extract<Fetched, { kind: "response" }>,
  state: CrawlState,
  discover: (url: string, depth: number) => void,
): void {
  rec.state = "fetched";
  rec.status = res.status;
  rec.ttfbMs = res.ttfbMs;
  rec.bytes = res.bytes;
  if (res.location !== null) {
    rec.location = res.location;
    if (siteKeyOf(new URL(res.location)) === state.siteKey) discover(res.location, rec.depth);
    else rec.externalLocation = true;
  }
  if (res.nonHtmlRobots) rec.nonHtmlRobots = res.nonHtmlRobots;
  const p = res.page;
  if (!p) return;
  rec.html = true;
  rec.noindex = p.noindex;
  rec.title = clip(p.facts.title, 300);
  rec.description = clip(p.facts.description, 300);
  rec.h1 = clip(p.facts.h1, 300);
  rec.words = p.facts.wordCount;
  rec.textHash = p.facts.textHash;
  rec.canonicalOther = p.canonicalOther;
  rec.outlinks = p.facts.links.length + p.facts.nofollowLinks.length + p.facts.linksOverCap;
  const alternates = hreflangTargets(p.facts, rec.url, state.siteKey);
  if (alternates.length > 0) rec.hreflang = alternates;
  rec.checks = p.fired.map((f) => f.id);
}

/** Internal hreflang alternates of a page other than itself (capped), as record URLs. */
function hreflangTargets(facts: PageFacts, self: string, siteKey: string): string[] {
  const out: string[] = [];
  for (const h of facts.hreflangs) {
    const href = h.href.trim();
    if (!/^https?:\/\//i.test(href)) continue;
    let u: URL;
    try {
      u = new URL(href);
    } catch {
      continue;
    }
    const url = canonicalUrl(u);
    if (url === self || url.length > MAX_URL_LENGTH || siteKeyOf(u) !== siteKey) continue;
    if (!out.includes(url)) out.push(url);
    if (out.length >= HREFLANG_TARGETS) break;
  }
  return out;
}

/**
 * A step's entries in the near-duplicate band index, written as one value per band (a run, cut
 * in chunks of NEAR_RUN_ENTRIES) rather than one key per page and band: 16 mutations per page were
 * half of a crawl's KV writes. The pass (finalize/near_duplicates.ts) sorts each band's runs into
 * the order the keys had. The run's name is random: a repeated step writes its entries again
 * under another name, and the pass drops the repeats.
 */
export class NearRuns {
  private readonly bins: number[][] = Array.from({ length: BANDS }, () => []);
  private readonly hashes: number[][] = Array.from({ length: BANDS }, () => []);

  /** Adds the non-empty bands of a page's signature. */
  add(sig: Uint16Array, urlHash: number): void {
    for (let b = 0; b < BANDS; b++) {
      const at = b * BAND_BINS;
      let empty = true;
      for (let k = 0; k < BAND_BINS; k++) if (sig[at + k] !== EMPTY_BIN) empty = false;
      if (empty) continue; // an empty band proves nothing
      for (let k = 0; k < BAND_BINS; k++) this.bins[b].push(sig[at + k]);
      this.hashes[b].push(urlHash);
    }
  }

  /** Writes the runs held (nothing when no page was indexed). */
  write(batch: WriteBatch, auditId: string): void {
    let run: string | null = null;
    for (let b = 0; b < BANDS; b++) {
      const h = this.hashes[b];
      for (let from = 0, n = 0; from < h.length; from += NEAR_RUN_ENTRIES, n++) {
        run ??= crypto.randomUUID().replaceAll("-", "").slice(0, 16);
        const to = Math.min(h.length, from + NEAR_RUN_ENTRIES);
        batch.set(keys.auditNearRun(auditId, b, `${run}:${n}`), {
          v: Uint16Array.from(this.bins[b].slice(from * BAND_BINS, to * BAND_BINS)),
          h: Float64Array.from(h.slice(from, to)),
        });
      }
    }
  }
}

/**
 * Indexable self-canonical HTML pages, indexed by title, description and text fingerprint, and
 * (pages with DUP_MIN_WORDS words or more) by each non-empty LSH band of their text signature
 * (in the step's `near` runs; the signature is stored once beside them): the near-duplicate
 * pass compares pages that share a band.
 */
function indexDuplicates(
  batch: WriteBatch,
  auditId: string,
  rec: PageRecord,
  sig: Uint16Array,
  near: NearRuns,
  dups: DupRuns,
): void {
  if (rec.noindex || rec.canonicalOther !== null) return;
  if (rec.title) dups.add("title", rec.title, rec.url);
  if (rec.description) dups.add("description", rec.description, rec.url);
  if (rec.words < DUP_MIN_WORDS) return;
  dups.add("content", String(rec.textHash), rec.url);
  if (sig.length !== SIG_BINS) return;
  near.add(sig, rec.hash);
  batch.set(keys.auditNearSig(auditId, rec.hash), { u: rec.url, h: rec.textHash, s: sig });
}
