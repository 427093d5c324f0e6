/**
 * The crawl's first step: the start URL through the address guard, the start origin's robots.txt
 * (stored, its lint problems and Crawl-delay kept on the state), the sitemaps (their URLs kept in
 * the frontier's chunks for seeding once the links run out), the http probe, and the start URL
 * queued, or recorded as failed or blocked when the crawl cannot start.
 *
 * @module
 */
import { keys } from "../../platform/mod.ts";
import { checkUrlTarget, TargetRefusedError } from "../../net/mod.ts";
import { siteKeyOf } from "../page_facts.ts";
import { makeRobots, type Robots } from "../robots.ts";
import { Scope } from "../scope.ts";
import { canonicalUrl } from "../urls.ts";
import type { ByteBudget } from "./byte_budget.ts";
import { capsOf, noteCap, noteRobotsCaps } from "./caps.ts";
import { settingsOf } from "./fetcher.ts";
import { Frontier, noPageRecords } from "./frontier.ts";
import { MAX_CRAWL_DELAY_S, newPace } from "./politeness.ts";
import { probeHttp } from "./http_probe.ts";
import { fetchRobots, RobotsSource } from "./robots_source.ts";
import { readSitemaps } from "./sitemaps.ts";
import type { CrawlInput, CrawlState } from "./state.ts";
import { newRecord, type WriteBatch } from "./store.ts";

/**
 * Runs the first step and returns the state it starts the crawl with, the start origin's
 * robots.txt as parsed, and the frontier that holds the start URL's entry (the caller crawls on
 * from it in the same step, or keeps it for the next once the state commits:
 * `Frontier.keepFor`); its writes (robots.txt, sitemap chunks and records, the start URL's record
 * and frontier entry) go to `batch`, and the caller commits the state. Throws `TargetRefusedError` when the address guard refuses the start
 * URL for a policy reason. A start host that does not resolve gives a failed start record and a
 * crawl that goes straight to `finalize`; so does a start URL robots.txt keeps from our token
 * (its record blocked).
 *
 * @example
 * ```ts
 * import { ByteBudget } from "./byte_budget.ts";
 * import type { CrawlInput } from "./state.ts";
 * import type { WriteBatch } from "./store.ts";
 * declare const kv: Deno.Kv, auditId: string, input: CrawlInput, batch: WriteBatch;
 * const budget = new ByteBudget(input.maxTotalBytes, 0);
 * const { state } = await initCrawl(kv, auditId, input, batch, budget);
 * state.bytes = budget.used;
 * await batch.flush();
 * // …then commit `state` under keys.auditCrawl(auditId), checked against the absent entry
 * ```
 */
export async function initCrawl(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  batch: WriteBatch,
  budget: ByteBudget,
): Promise<{ state: CrawlState; frontier?: Frontier; robots: Robots }> {
  const s = settingsOf(input, budget);
  const caps = capsOf(input);
  const scope = Scope.of(input.scope);
  // Read before this step writes any record: none left by an earlier attempt lets the crawl's
  // memo of queued URLs start complete (known_urls.ts).
  const unwritten = noPageRecords(kv, auditId).catch(() => false);
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
    botToken: s.robotsToken,
    ...(scope ? { scope: { list: scope.list !== null, leftOut: {} } } : {}),
    pace: newPace(),
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
      s.robotsToken,
    );
    noteRobotsCaps(state.capsHit!, robots, caps.robots);
  } else {
    state.robots[origin] = { state: "unreachable", status: 0, url: robotsUrl };
  }
  state.robotsProblems = robots.problems.slice(0, 50);
  // List mode fetches only the listed URLs, each judged by robots.txt as it is fetched.
  state.ownBotBlocked = checked !== null && scope?.list == null && !robots.isAllowed(startUrl);
  state.startBlockedForGoogle = !robots.isAllowed(startUrl, "Googlebot");
  // Crawl-delay, capped (a longer one would stretch a few hundred pages over hours): politeness.ts
  // reads it per host from each robots.txt; the value asked for is reported.
  state.crawlDelayMs = Math.min(robots.crawlDelay, MAX_CRAWL_DELAY_S) * 1000;
  state.pace!.crawlDelayAsked = robots.crawlDelay;

  const frontier = new Frontier(kv, auditId, state, batch, caps, input.maxPages, scope);
  if (await unwritten) frontier.startsMemo();
  let startInSitemap = false;
  /** List mode: the listed URLs the sitemaps list. */
  const listedInSitemap = new Set<string>();
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
      if (url === startUrl) startInSitemap = true;
      if (scope?.list?.has(url)) listedInSitemap.add(url);
      frontier.keepSitemapUrl(url);
    });
    frontier.closeSitemapChunk();
    state.httpProbe = await probeHttp(s, startParsed);
  }
  if (state.ownBotBlocked || !checked) frontier.skipSitemap();

  if (checked && scope?.list) {
    // List mode: exactly the listed URLs, in order (the start URL only when listed).
    frontier.queueList([...scope.list], startUrl, listedInSitemap);
    state.nextSlotAt = Date.now();
    return { state, robots };
  }
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
    frontier.queueStart(start);
  }
  batch.set(keys.auditPage(auditId, startUrl), start);
  state.nextSlotAt = Date.now();
  return { state, frontier, robots };
}
