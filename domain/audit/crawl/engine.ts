/**
 * The crawl as a chain of bounded steps. Each call of `runCrawlStep` reads the crawl state,
 * does one bounded piece of work (the first step: robots.txt, sitemaps, the http probe; then
 * batches of pages; then the sitemap seeding; then the site-wide checks), writes what it learnt
 * to KV, and commits the new state in one checked commit. A step that dies before that commit
 * is simply repeated: its writes are idempotent, and URLs it discovered are only "seen" once a
 * committed state covers them. Memory is one batch of pages' facts, never the site.
 *
 * Breadth-first from the start URL over internal links, robots.txt honoured (our token,
 * Crawl-delay), sitemap URLs crawled after the link graph, redirects never followed automatically
 * (each hop is a record), bounded concurrency, per-request timeouts and body caps.
 *
 * @module
 */
import { keys } from "../../../kv/keys.ts";
import { checkUrlTarget, TargetRefusedError } from "../../net/address_guard.ts";
import type { SafeResponse } from "../../net/safe_fetch.ts";
import { isNofollowPage, isNoindex, resolveCanonicals } from "../checks/helpers.ts";
import { type FiredCheck, PageTally } from "../page_checks.ts";
import { extractPageFacts, type PageFacts, siteKeyOf } from "../page_facts.ts";
import { makeRobots, type Robots } from "../robots.ts";
import type { PageContext } from "../types.ts";
import { canonicalize, canonicalUrl } from "../urls.ts";
import { EMPTY_BIN, SIG_BINS } from "../text_fingerprint.ts";
import {
  failureKind,
  fetchPage,
  type FetchSettings,
  isHtmlType,
  Politeness,
  settingsOf,
} from "./fetcher.ts";
import { BudgetSpentError, ByteBudget } from "./byte_budget.ts";
import { capsOf, type CrawlCaps, noteCap, noteRobotsCaps } from "./caps.ts";
import { BannerReader } from "./banners.ts";
import { finalizeCrawl } from "./finalize.ts";
import { type RenderPlan, runPostCrawlStep } from "./post_steps.ts";
import { probeHttp } from "./http_probe.ts";
import { fetchRobots, RobotsSource } from "./robots_source.ts";
import { Frontier, type FrontierEntry } from "./frontier.ts";
import { readSitemaps } from "./sitemaps.ts";
import { yieldToLoop } from "./yield_to_loop.ts";
import type { CrawlInput, CrawlState, StepLimits } from "./state.ts";
import {
  boundRecord,
  FindingsWriter,
  indexDup,
  MAX_URL_LENGTH,
  newRecord,
  type PageRecord,
  WriteBatch,
  writeLinks,
} from "./store.ts";

const MAX_CRAWL_DELAY_S = 10;
/** Pages kept for article internal links (AuditReport.site.pages). */
export const MAX_SITE_PAGES = 200;

export interface StepHooks {
  /** The injected clock (deadlines). */
  now: () => number;
  /**
   * Adds the caller's checks and mutations to the step's state commit (the job layer checks its
   * lease token there, releases the step and enqueues the next one in the same commit).
   */
  beforeCommit?: (op: Deno.AtomicOperation, done: boolean) => void | Promise<void>;
  /** How a rendered audit renders (`input.render`); post_steps.ts. */
  render?: RenderPlan;
}

export interface StepOutcome {
  /** The crawl and its checks are finished (the state holds `result`). */
  done: boolean;
  /** False when the state changed under the step (another owner): nothing of it counts. */
  committed: boolean;
  state: CrawlState | null;
}

const clip = (s: string | null, n: number) => (s === null ? null : s.slice(0, n));

/**
 * Runs one step of an audit's crawl. Throws `TargetRefusedError` (first step only) when the start
 * URL is refused by the address guard for a policy reason; a start host that does not resolve is
 * a crawl whose start record failed.
 */
export async function runCrawlStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: StepHooks,
): Promise<StepOutcome> {
  const entry = await kv.get<CrawlState>(keys.auditCrawl(auditId));
  const batch = new WriteBatch(kv);
  let state: CrawlState;
  let budget: ByteBudget;
  if (entry.value === null) {
    budget = new ByteBudget(input.maxTotalBytes, 0);
    state = await initCrawl(kv, auditId, input, batch, budget);
  } else {
    state = structuredClone(entry.value);
    if (state.phase === "done") return { done: true, committed: true, state };
    state.steps++;
    state.capsHit ??= {};
    budget = new ByteBudget(input.maxTotalBytes, state.bytes);
    if (state.phase === "crawl") {
      await crawlBatch(kv, auditId, input, limits, hooks, state, batch, budget);
    } else if (state.phase === "seed_sitemap") {
      const frontier = new Frontier(kv, auditId, state, batch, capsOf(input), input.maxPages);
      await frontier.seedSitemap();
      if (!frontier.sitemapLeft) {
        state.phase = frontier.queued > 0 && state.fetches < input.maxPages ? "crawl" : "finalize";
      }
    } else if (
      state.phase === "finalize" &&
      !(await runPostCrawlStep(kv, auditId, input, state, batch, hooks.render, budget))
    ) {
      await batch.flush();
      state.result = await finalizeCrawl(kv, auditId, state);
      state.phase = "done";
    }
  }
  state.bytes = budget.used;
  await batch.flush();
  const done = state.phase === "done";
  const op = kv.atomic().check(entry).set(keys.auditCrawl(auditId), state);
  await hooks.beforeCommit?.(op, done);
  const res = await op.commit();
  return { done, committed: res.ok, state: res.ok ? state : null };
}

/** The first step: the start URL through the guard, robots.txt, sitemaps, the http probe. */
async function initCrawl(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  batch: WriteBatch,
  budget: ByteBudget,
): Promise<CrawlState> {
  const s = settingsOf(input, budget);
  const caps = capsOf(input);
  const checked = await checkUrlTarget(input.startUrl, {
    allowPrivate: input.allowPrivate,
    resolver: input.resolver,
  }).catch((e) => {
    if (e instanceof TargetRefusedError && e.reason !== "dns_failure") throw e;
    return null;
  });
  const startParsed = checked?.url ?? new URL(input.startUrl);
  const startUrl = canonicalUrl(startParsed);
  const origin = startParsed.origin;
  const siteKey = siteKeyOf(startParsed);
  const state: CrawlState = {
    v: 1,
    phase: "crawl",
    startUrl,
    origin,
    siteKey,
    startChecked: checked !== null,
    ownBotBlocked: false,
    startBlockedForGoogle: false,
    robots: {},
    robotsProblems: [],
    crawlDelayMs: 0,
    nextSlotAt: 0,
    sitemap: { found: false, problems: [], urlCount: 0 },
    sitemapChunks: 0,
    seedChunk: 0,
    httpProbe: "not_applicable",
    head: 0,
    tail: 0,
    fetches: 0,
    completed: 0,
    failed: 0,
    bytes: 0,
    truncated: false,
    tallies: {},
    stored: {},
    banners: 0,
    sitePages: 0,
    language: null,
    steps: 1,
    result: null,
    capsHit: {},
  };
  const robotsUrl = `${origin}/robots.txt`;
  let robots: Robots = makeRobots(robotsUrl, "unreachable", 0, "");
  if (checked) {
    const fetched = await fetchRobots(s, origin, caps.robots.maxBytes);
    const source = new RobotsSource(kv, auditId, s, state.robots, batch, caps.robots);
    source.record(origin, fetched.meta, fetched.body);
    robots = makeRobots(
      fetched.meta.url,
      fetched.meta.state,
      fetched.meta.status,
      fetched.body,
      caps.robots,
    );
    noteRobotsCaps(state.capsHit!, robots, caps.robots);
  } else {
    state.robots[origin] = { state: "unreachable", status: 0, url: robotsUrl };
  }
  state.robotsProblems = robots.problems.slice(0, 50);
  state.ownBotBlocked = checked !== null && !robots.isAllowed(startUrl);
  state.startBlockedForGoogle = !robots.isAllowed(startUrl, "Googlebot");
  state.crawlDelayMs = Math.min(robots.crawlDelay, MAX_CRAWL_DELAY_S) * 1000;

  const frontier = new Frontier(kv, auditId, state, batch, caps, input.maxPages);
  let startInSitemap = false;
  if (checked) {
    state.sitemap = await readSitemaps(s, {
      origin,
      siteKey,
      robots,
      caps: {
        files: caps.sitemapFiles,
        urls: frontier.cap,
        bytes: caps.sitemapBytes,
      },
      onCap: (name, limit, leftOut) => noteCap(state.capsHit!, name, limit, leftOut),
    }, (url) => {
      if (frontier.keepSitemapUrl(url) && url === startUrl) startInSitemap = true;
    });
    frontier.closeSitemapChunk();
    state.httpProbe = await probeHttp(s, startParsed);
  }
  if (state.ownBotBlocked || !checked) frontier.skipSitemap();

  const start = newRecord(startUrl, 0, 0, startInSitemap);
  if (!checked) {
    start.state = "failed";
    start.failure = "dns";
    state.failed = 1;
    state.phase = "finalize";
  } else if (state.ownBotBlocked) {
    start.state = "blocked";
    state.phase = "finalize";
  } else {
    frontier.queueStart(startUrl);
  }
  batch.set(keys.auditPage(auditId, startUrl), start);
  state.nextSlotAt = Date.now();
  return state;
}

/** What one fetched frontier entry produced, kept until the step writes it (in frontier order). */
type Fetched =
  | { kind: "blocked" }
  /** Not fetched: the byte budget was spent first (the URL stays queued). */
  | { kind: "skipped" }
  | { kind: "failed"; failure: string }
  | {
    kind: "response";
    status: number;
    ttfbMs: number;
    bytes: number;
    location: string | null;
    /** A non-HTML 2xx response's X-Robots-Tag with noindex/nofollow/none, and its type. */
    nonHtmlRobots?: { tag: string; type: string } | null;
    page: null | {
      facts: PageFacts;
      noindex: boolean;
      follow: boolean;
      canonicalOther: string | null;
      fired: FiredCheck[];
    };
  };

/** One batch of frontier entries: fetch (concurrently), then record in frontier order. */
async function crawlBatch(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: StepHooks,
  state: CrawlState,
  batch: WriteBatch,
  bytes: ByteBudget,
): Promise<void> {
  const t0 = performance.now();
  const s = settingsOf(input, bytes);
  const caps = capsOf(input);
  const frontier = new Frontier(kv, auditId, state, batch, caps, input.maxPages);
  const budget = Math.max(1, input.maxPages);
  const outOfBudget = (reserved: number) =>
    state.fetches + reserved >= budget || bytes.exhausted ||
    (input.deadlineAt !== undefined && hooks.now() > input.deadlineAt);
  if (frontier.queued === 0 || outOfBudget(0)) {
    endCrawl(state, frontier, outOfBudget(0), bytes);
    return;
  }

  const { entries, records } = await frontier.next(limits.pages);
  const robots = new RobotsSource(
    kv,
    auditId,
    s,
    state.robots,
    batch,
    caps.robots,
    (r) => noteRobotsCaps(state.capsHit!, r, caps.robots),
  );
  const politeness = new Politeness(state.crawlDelayMs, state.nextSlotAt);
  const tally = PageTally.from(state.tallies);
  const banners = new BannerReader(kv, auditId, s, robots, state, batch);
  const results: Fetched[] = [];
  let next = 0;
  let reserved = 0;
  let stopped = false;
  const worker = async () => {
    while (!stopped && next < entries.length) {
      if (performance.now() - t0 > limits.ms || outOfBudget(reserved)) {
        stopped = true;
        return;
      }
      const i = next++;
      const e = entries[i];
      const u = new URL(e.url);
      reserved++; // before any await, so concurrent workers see the budget taken
      const r = await robots.for(u.origin);
      if (!r.isAllowed(e.url)) {
        reserved--; // not fetched: no page budget used
        results[i] = { kind: "blocked" };
        continue;
      }
      results[i] = await fetchOne(s, politeness, e, u, state, input, tally, banners, caps);
      if (results[i].kind === "skipped") reserved--;
    }
  };
  const concurrency = Math.max(1, Math.min(input.concurrency, 32));
  await Promise.all(Array.from({ length: concurrency }, worker));
  const taken = next;

  // Record in frontier order, so URL discovery (and so frontier positions) is deterministic.
  const findings = new FindingsWriter(batch, auditId, state.stored);
  const discover = (url: string, depth: number, hops = 0) => frontier.discover(url, depth, hops);
  for (let i = 0; i < taken; i++) {
    // Let the process answer its HTTP requests between pages (the API shares the event loop).
    if (i % 8 === 7) await yieldToLoop();
    const e = entries[i];
    const res = results[i];
    const rec = records[i];
    const seq = rec.seq;
    if (res.kind === "skipped") continue;
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
      recordResponse(rec, res, state, (url, depth) => discover(url, depth, (e.hops ?? 0) + 1));
      if (res.page) {
        const { facts } = res.page;
        if (facts.linksOverCap > 0) {
          noteCap(state.capsHit!, "links_per_page", caps.linksPerPage, facts.linksOverCap);
        }
        for (const f of res.page.fired) findings.add(f.id, rec.url, f.items);
        writeLinks(batch, auditId, rec.url, facts);
        if (res.page.follow) { for (const l of facts.links) discover(l, childDepth(rec)); }
        // Canonical, refresh and hreflang targets are crawled too: their checks judge them.
        const extra = [rec.canonicalOther, facts.metaRefresh?.url ?? null, ...rec.hreflang ?? []];
        for (const x of extra) {
          if (x && siteKeyOf(new URL(x)) === state.siteKey) discover(x, childDepth(rec));
        }
        indexDuplicates(batch, auditId, rec, facts.textSig);
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
  }
  frontier.advance(taken);
  state.tallies = tally.toJSON();
  state.nextSlotAt = politeness.next;
  await frontier.allocate();
  if (frontier.queued === 0 || outOfBudget(0)) endCrawl(state, frontier, outOfBudget(0), bytes);
}

/** hreflang alternates kept per page for the return-link check (a cluster rarely has more). */
const HREFLANG_TARGETS = 30;

const childDepth = (rec: PageRecord) => (rec.depth < 0 ? -1 : rec.depth + 1);

/** After the frontier: seed the sitemap's unvisited URLs, or finish (truncated if cut short). */
function endCrawl(
  state: CrawlState,
  frontier: Frontier,
  outOfBudget: boolean,
  bytes: ByteBudget,
): void {
  if (outOfBudget) {
    state.truncated = frontier.queued > 0;
    if (bytes.exhausted && state.truncated) {
      noteCap(state.capsHit!, "bytes", bytes.limit!, frontier.queued);
    }
    state.phase = "finalize";
  } else if (frontier.queued === 0) {
    state.phase = frontier.sitemapLeft ? "seed_sitemap" : "finalize";
  }
}

async function fetchOne(
  s: FetchSettings,
  politeness: Politeness,
  e: FrontierEntry,
  u: URL,
  state: CrawlState,
  input: CrawlInput,
  tally: PageTally,
  banners: BannerReader,
  caps: CrawlCaps,
): Promise<Fetched> {
  await politeness.wait();
  let res: SafeResponse;
  try {
    res = await fetchPage(s, e.url);
  } catch (err) {
    if (err instanceof BudgetSpentError) return { kind: "skipped" };
    return { kind: "failed", failure: failureKind(err) };
  }
  try {
    const loc = res.headers.get("location");
    const location = res.status >= 300 && res.status < 400 && loc ? canonicalize(loc, e.url) : null;
    const base = {
      kind: "response" as const,
      status: res.status,
      ttfbMs: Math.round(res.ttfbMs),
      bytes: res.body.byteLength,
      location,
    };
    if (res.status < 200 || res.status >= 300) return { ...base, page: null };
    if (!isHtmlType(res.headers.get("content-type"))) {
      return { ...base, nonHtmlRobots: nonHtmlRobots(res.headers), page: null };
    }
    const facts = extractPageFacts(res.body, u, state.siteKey, caps.linksPerPage);
    const noindex = isNoindex(facts, res.headers, input.now);
    const ctx: PageContext = {
      url: u,
      status: res.status,
      headers: res.headers,
      facts,
      depth: e.depth,
      isHome: e.depth === 0,
      indexable: !noindex,
      now: input.now,
      scriptHeads: facts.libraryScripts.length > 0
        ? await banners.headsOf(facts.libraryScripts)
        : undefined,
    };
    const canon = resolveCanonicals(ctx);
    let canonicalOther: string | null = null;
    if (canon.length === 1 && canon[0] !== null) {
      const c = canonicalUrl(canon[0]);
      if (c !== e.url) canonicalOther = c;
    }
    const fired = tally.add(ctx);
    return {
      ...base,
      page: {
        facts,
        noindex,
        follow: !isNofollowPage(facts.robotsMeta, res.headers),
        canonicalOther,
        fired,
      },
    };
  } catch {
    return { kind: "failed", failure: "internal" };
  }
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
 * X-Robots-Tag directives that keep a non-HTML file (PDF, image, feed) out of the index or stop
 * its links being followed: the only way to say so for a file without a <head>.
 */
function nonHtmlRobots(headers: Headers): { tag: string; type: string } | null {
  const tag = (headers.get("x-robots-tag") ?? "").toLowerCase();
  if (!/(^|[,\s:])(noindex|nofollow|none)\b/.test(tag)) return null;
  const type = (headers.get("content-type") ?? "").split(";")[0].trim();
  return { tag: tag.slice(0, 200), type: type.slice(0, 100) || "unknown" };
}

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

/** LSH banding of the MinHash signature: 16 bands of 4 bins (pairs at 0.8 meet with p > 0.999). */
export const BAND_BINS = 4;
/** Pages with fewer visible words are not compared for duplicate text. */
export const DUP_MIN_WORDS = 20;

/**
 * Indexable self-canonical HTML pages, indexed by title, description and text fingerprint, and
 * (pages with DUP_MIN_WORDS words or more) by each non-empty LSH band of their text signature
 * (small keys: band and URL hash; the signature is stored once beside them): the near-duplicate
 * pass compares pages that share a band.
 */
function indexDuplicates(
  batch: WriteBatch,
  auditId: string,
  rec: PageRecord,
  sig: Uint16Array,
): void {
  if (rec.noindex || rec.canonicalOther !== null) return;
  if (rec.title) indexDup(batch, auditId, "title", rec.title, rec.url);
  if (rec.description) indexDup(batch, auditId, "description", rec.description, rec.url);
  if (rec.words < DUP_MIN_WORDS) return;
  indexDup(batch, auditId, "content", String(rec.textHash), rec.url);
  if (sig.length !== SIG_BINS) return;
  for (let b = 0; b < SIG_BINS; b += BAND_BINS) {
    const band = sig.subarray(b, b + BAND_BINS);
    if (band.every((x) => x === EMPTY_BIN)) continue; // an empty band proves nothing
    let key = String(b / BAND_BINS).padStart(2, "0") + ":";
    for (const x of band) key += x.toString(16).padStart(4, "0");
    batch.set(keys.auditNearBand(auditId, key, rec.hash), 1);
  }
  batch.set(keys.auditNearSig(auditId, rec.hash), { u: rec.url, h: rec.textHash, s: sig });
}
