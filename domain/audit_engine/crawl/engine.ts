/**
 * The crawl as a chain of bounded steps. Each call of `runCrawlStep` reads the crawl state,
 * does one bounded piece of work (the first step: robots.txt, sitemaps, the http probe; then
 * batches of pages; then the sitemap seeding; then the site-wide checks), writes what it learnt
 * to KV, and commits the new state in one checked commit. A step that dies before that commit
 * is simply repeated: its writes are idempotent, and URLs it discovered are only "seen" once a
 * committed state covers them. Memory is one batch of pages' facts, never the site.
 *
 * Breadth-first from the start URL over internal links, robots.txt honoured (our token,
 * Crawl-delay), a per-host pace (politeness.ts: rate cap, Retry-After), sitemap URLs crawled after the link graph, redirects never followed automatically
 * (each hop is a record), bounded concurrency, per-request timeouts and body caps.
 *
 * This module only picks a step's work by the state's phase and commits the state; the work is
 * done by parts with one job each:
 * - `init_step.ts`: the first step (start URL, robots.txt, sitemaps, http probe);
 * - `frontier.ts`: the request queue in KV (positions, allocation and its caps, sitemap seeding);
 * - `fetch_pool.ts`: bounded-concurrency fetching and parsing of frontier entries (writes nothing);
 * - `page_recorder.ts`: the step's writes from the pool's results (records, findings, links…);
 * - `post_steps.ts` and `finalize.ts`: the agent-readiness and render steps, the site-wide checks.
 *
 * @module
 */
import { type Atomic, atomic, keys, read } from "../../platform/mod.ts";
import { ConnectionPool } from "../../net/mod.ts";
import { PageTally } from "../page_checks.ts";
import { BannerReader } from "./banners.ts";
import { ByteBudget } from "./byte_budget.ts";
import { capsOf, noteRobotsCaps } from "./caps.ts";
import { fetchBatch, poolOptions } from "./fetch_pool.ts";
import { settingsOf } from "./fetcher.ts";
import { newPace, Politeness, politenessReport } from "./politeness.ts";
import { finalizeCrawl, type FinalRecordSink } from "./finalize.ts";
import { DEFAULT_ERROR_STOP, Health } from "./health.ts";
import { Frontier } from "./frontier.ts";
import { initCrawl } from "./init_step.ts";
import { recordFromFrontier } from "./page_recorder.ts";
import { type RenderPlan, runPostCrawlStep } from "./post_steps.ts";
import { Scope } from "../scope.ts";
import { RobotsSource } from "./robots_source.ts";
import type { Robots } from "../robots.ts";
import { stepReuse } from "./reuse.ts";
import {
  type CrawlInput,
  type CrawlState,
  fetchedSince,
  NOTHING_FETCHED,
  type StepFetched,
  type StepLimits,
} from "./state.ts";

import { budgetStop, type CrawlCut, noteStop } from "./stops.ts";
import { WriteBatch } from "./store.ts";
import { runSliceStep, type SliceOutcome } from "./partition.ts";
import { grownStepFull, noteRtt, stepPagesFor } from "./step_size.ts";

export { BAND_BINS, DUP_MIN_WORDS, MAX_SITE_PAGES } from "./page_recorder.ts";

/** What the caller of a step brings: the clock, its part of the commit, the render plan. */
export interface StepHooks {
  /** The injected clock (deadlines). */
  now: () => number;
  /**
   * Adds the caller's checks and mutations to the step's state commit (the job layer checks its
   * lease token there, releases the step and enqueues the next one in the same commit).
   */
  beforeCommit?: (op: Atomic, done: boolean, delayMs: number) => void | Promise<void>;
  /** How a rendered audit renders (`input.render`); post_steps.ts. */
  render?: RenderPlan;
  /** Who takes the step (a worker id and a token): a partitioned crawl's leases name it. */
  holder?: string;
  /** A partitioned crawl's claim leases, ms (partition.ts; default CLAIM_LEASE_MS). */
  leaseMs?: number;
  /**
   * The crawl state, read already (`readCrawlState`): the job layer reads it while its claim
   * commits. The step's commit checks it, as it checks a state it read itself.
   */
  state?: Promise<CrawlStateRead>;
  /**
   * Asked, in the step of the site-wide checks, for what sees every record once it is final
   * (finalize.ts `FinalRecordSink`), with where the records' keys are cut into ranges
   * (url_sample.ts `rangeSplits`): the job layer counts the audit's page groups in that pass, its
   * writes committed with the step's.
   */
  finalRecords?: (splits: readonly string[]) => Promise<FinalRecordSink>;
}

/** The crawl state as read, and how long its read took (one round trip: step_size.ts). */
export interface CrawlStateRead {
  entry: Deno.KvEntryMaybe<CrawlState>;
  rttMs: number;
}

/** Reads the crawl state, timing the read. */
export async function readCrawlState(kv: Deno.Kv, auditId: string): Promise<CrawlStateRead> {
  const asked = performance.now();
  const entry = await read(kv, keys.auditCrawl(auditId));
  return { entry, rttMs: performance.now() - asked };
}

/** What one step did. */
export interface StepOutcome {
  /** The crawl and its checks are finished (the state holds `result`). */
  done: boolean;
  /** False when the state changed under the step (another owner): nothing of it counts. */
  committed: boolean;
  state: CrawlState | null;
  /**
   * Ms before the next step may fetch (the error-rate stop paused the crawl): the caller
   * schedules it then rather than at once. 0: at once.
   */
  delayMs: number;
  /** What this step itself fetched (0 and 0 unless it committed). */
  fetched: StepFetched;
  /**
   * The versionstamp of the step's commit, when it committed (every key the caller's part of the
   * commit wrote carries it); absent where a partitioned crawl's slice committed.
   */
  versionstamp?: string;
}

/**
 * Runs one step of an audit's crawl. Throws `TargetRefusedError` (first step only) when the start
 * URL is refused by the address guard for a policy reason; a start host that does not resolve is
 * a crawl whose start record failed.
 *
 * @example
 * ```ts
 * import type { CrawlInput } from "./state.ts";
 * declare const kv: Deno.Kv, auditId: string, input: CrawlInput;
 * const limits = { pages: 50, ms: 20_000 };
 * let outcome = await runCrawlStep(kv, auditId, input, limits, { now: Date.now });
 * while (!outcome.done) {
 *   outcome = await runCrawlStep(kv, auditId, input, limits, { now: Date.now });
 * }
 * ```
 */
export async function runCrawlStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: StepHooks,
): Promise<StepOutcome> {
  // The state's read is one round trip: how far away KV is (step_size.ts).
  const { entry, rttMs } = await (hooks.state ?? readCrawlState(kv, auditId));
  if (entry.value?.phase === "crawl" && (entry.value.partitions ?? 1) > 1) {
    return await partitionedStep(kv, auditId, input, limits, hooks, entry.value);
  }
  const batch = new WriteBatch(kv);
  /** A crawl step's frontier: what it holds goes to the next step once this one commits. */
  let frontier: Frontier | undefined;
  let state: CrawlState;
  let budget: ByteBudget;
  if (entry.value === null) {
    const startedAt = performance.now();
    budget = new ByteBudget(input.maxTotalBytes, 0);
    const init = await initCrawl(kv, auditId, input, batch, budget);
    ({ state, frontier } = init);
    state.kvRttMs = noteRtt(undefined, rttMs);
    // Fixed for the crawl's life: workers configured otherwise still take it the same way.
    if ((input.partitions ?? 1) > 1) state.partitions = input.partitions;
    else if (state.phase === "crawl" && frontier) {
      // The crawl's first pages in the same step: a claim and a commit fewer (round trips on a
      // remote KV). The first step's writes go out now; the crawl's first round waits for them
      // before it writes or reads what they wrote (its records; robots.txt is handed over).
      batch.send();
      frontier = await crawlBatch(kv, auditId, input, limits, hooks, state, batch, budget, {
        readAs: null,
        frontier,
        robots: init.robots,
        startedAt,
      });
    }
  } else {
    state = structuredClone(entry.value);
    if (state.phase === "done") {
      return { done: true, committed: true, state, delayMs: 0, fetched: NOTHING_FETCHED };
    }
    state.steps++;
    state.capsHit ??= {};
    state.kvRttMs = noteRtt(state.kvRttMs, rttMs);
    budget = new ByteBudget(input.maxTotalBytes, state.bytes);
    if (state.phase === "crawl") {
      frontier = await crawlBatch(kv, auditId, input, limits, hooks, state, batch, budget, {
        readAs: entry.versionstamp,
      });
    } else if (state.phase === "seed_sitemap") {
      await seedBatch(kv, auditId, input, state, batch, hooks.now());
    } else if (
      state.phase === "finalize" &&
      !(await runPostCrawlStep(kv, auditId, input, state, batch, hooks.render, budget, {
        limits,
        now: hooks.now,
      }))
    ) {
      // Agent readiness's findings go out beside the passes, which never read them; the passes'
      // writes follow in the same batch, and the flush before the state commit reports a failure.
      batch.send();
      state.result = await finalizeCrawl(kv, auditId, state, {
        batch,
        finalRecords: hooks.finalRecords,
      });
      const report = politenessReport(state.pace ?? newPace(), input.maxRps ?? null);
      const paused = state.health?.total ?? 0;
      state.result.politeness = { ...report, slowed: report.slowed || paused > 0, paused };
      state.phase = "done";
    }
  }
  state.bytes = budget.used;
  const done = state.phase === "done";
  const delayMs = state.phase === "crawl" && state.health
    ? new Health(state.health, input.errorStop ?? DEFAULT_ERROR_STOP).waitMs(Date.now())
    : 0;
  // The step's last writes (its allocation's) go with its state commit, and the caller's part of
  // the commit (the job layer ends its heartbeat) is made while the writes sent before are
  // committed: round trips fewer on a remote KV. The state commit still waits for both.
  const op = (batch.takeHeld() as Atomic).check(entry).set(keys.auditCrawl(auditId), state);
  await Promise.all([batch.flush(), hooks.beforeCommit?.(op, done, delayMs)]);
  const res = await op.commit();
  if (res.ok) frontier?.keepFor(res.versionstamp);
  const fetched = res.ok ? fetchedSince(entry.value, state) : NOTHING_FETCHED;
  return {
    done,
    committed: res.ok,
    state: res.ok ? state : null,
    delayMs,
    fetched,
    ...(res.ok ? { versionstamp: res.versionstamp } : {}),
  };
}

/**
 * Rounds of fetching a grown step (step_size.ts) may take before it commits: its frontier may
 * hold fewer entries than the step takes while the crawl is young.
 */
const MAX_ROUNDS = 4;

/** How long a partitioned crawl's own step waits for a range to claim before handing over. */
const WAIT_IN_STEP_MS = 5_000;

/**
 * A step of the audit's own chain in a partitioned crawl's crawl phase: a slice step like its
 * helpers' (partition.ts). When it records nothing (every range in flight, or a helper ended the
 * phase), the step is still handed over in a commit of the caller's own.
 */
async function partitionedStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: StepHooks,
  state: CrawlState,
): Promise<StepOutcome> {
  const slice = {
    now: hooks.now,
    holder: hooks.holder ?? crypto.randomUUID(),
    leaseMs: hooks.leaseMs,
    beforeCommit: hooks.beforeCommit,
  };
  let out = await runSliceStep(kv, auditId, input, limits, slice, endCrawl);
  // Every range in flight: the links they bring are soon claimable, so wait here a little
  // rather than through the queue's delivery.
  const waitUntil = performance.now() + Math.min(limits.ms, WAIT_IN_STEP_MS);
  while (out.idle && out.waiting && performance.now() < waitUntil) {
    await new Promise((r) => setTimeout(r, out.delayMs));
    out = await runSliceStep(kv, auditId, input, limits, slice, endCrawl);
  }
  if (out.committed) {
    return {
      done: false,
      committed: true,
      state: out.state,
      delayMs: out.delayMs,
      fetched: out.fetched,
    };
  }
  const op = atomic(kv);
  await hooks.beforeCommit?.(op, false, out.delayMs);
  const res = await op.commit();
  return {
    done: false,
    committed: res.ok,
    state: res.ok ? state : null,
    delayMs: out.delayMs,
    fetched: NOTHING_FETCHED,
  };
}

/**
 * A helper's step in a partitioned crawl (another worker fetching for the same audit): claims,
 * fetches and records one range, or answers `idle` when there is nothing to claim.
 */
export function runHelperStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  holder: string,
  now: () => number,
  leaseMs?: number,
): Promise<SliceOutcome> {
  return runSliceStep(kv, auditId, input, limits, { now, holder, leaseMs }, endCrawl);
}

/** Where a step's pages start from. */
interface PagesFrom {
  /** The versionstamp of the state as read (null: none, the crawl's first step). */
  readAs: string | null;
  /** The first step's frontier, holding the start URL's entry (else a new one). */
  frontier?: Frontier;
  /** The first step's robots.txt of the start origin, as parsed (its writes may not be in KV). */
  robots?: Robots;
  /** When the step started (`performance.now()`): its time limit counts from then. */
  startedAt?: number;
}

/**
 * One batch of frontier entries: fetch (concurrently), then record in frontier order. Returns the
 * step's frontier.
 */
async function crawlBatch(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: StepHooks,
  state: CrawlState,
  batch: WriteBatch,
  bytes: ByteBudget,
  from: PagesFrom,
): Promise<Frontier> {
  const t0 = from.startedAt ?? performance.now();
  // The step's requests share kept-alive connections, all closed when its fetching ends.
  using pool = new ConnectionPool();
  const s = { ...settingsOf(input, bytes), pool };
  const caps = capsOf(input);
  const frontier = from.frontier ?? new Frontier(
    kv,
    auditId,
    state,
    batch,
    caps,
    input.maxPages,
    Scope.of(input.scope),
  );
  // The last step of this process may have left the entries it queued last (a round trip or two
  // on a remote KV).
  frontier.resume(from.readAs);
  frontier.readAhead();
  const budget = Math.max(1, input.maxPages);
  const outOfBudget = (reserved: number) =>
    state.fetches + reserved >= budget || bytes.exhausted ||
    (input.deadlineAt !== undefined && hooks.now() > input.deadlineAt);
  if (frontier.queued === 0 || outOfBudget(0)) {
    endCrawl(state, frontier, budgetStop(input, state, bytes, hooks.now()));
    return frontier;
  }
  // The error-rate stop paused the crawl: this step fetches nothing (a message that came early).
  const health = input.errorStop
    ? new Health(state.health ??= { recent: [], pauses: 0, pausedUntil: 0 }, input.errorStop)
    : undefined;
  if (health && health.waitMs(Date.now()) > 0) return frontier;

  const pages = stepPagesFor(limits, state.kvRttMs);
  const bytesBefore = bytes.used;
  const robots = new RobotsSource(
    kv,
    auditId,
    s,
    state.robots,
    batch,
    caps.robots,
    (r) => noteRobotsCaps(state.capsHit!, r, caps.robots),
  );
  // The start origin's stored robots.txt is read while the frontier is (a round trip each on a
  // remote KV): nearly every page a step fetches is on it. Only a stored one: nothing is fetched.
  if (from.robots) robots.prime(state.origin, from.robots);
  else if (state.robots[state.origin]) robots.for(state.origin).catch(() => {});
  const politeness = new Politeness(state.pace ??= newPace(), input.maxRps ?? null);
  const tally = PageTally.from(state.tallies);
  const banners = new BannerReader(kv, auditId, s, robots, state, batch);
  let taken = 0;
  for (let round = 1;; round++) {
    // What the last round sent (its records and allocation) is in before this round writes the
    // same keys or reads them for its own allocation; it has the round's fetching to get there.
    const earlier = batch.settled();
    const { entries, records } = await frontier.next(pages - taken);
    const reuse = await stepReuse(kv, input, caps, state, entries.map((e) => e.url));
    const tools = { settings: s, robots, politeness, banners, tally, siteKey: state.siteKey };
    const results = await fetchBatch(entries, {
      ...poolOptions(tools, input, caps, t0 + limits.ms),
      // Entries a grown step leaves once its bodies are heavy stay queued for the next step.
      outOfBudget: (reserved) =>
        outOfBudget(reserved) ||
        grownStepFull(limits, pages, taken + reserved, bytes.used - bytesBefore),
      health,
      reuse,
    });
    await earlier;
    const resources = await recordFromFrontier(kv, frontier, entries, records, results, {
      batch,
      auditId,
      state,
      caps,
    });
    frontier.advance(results.length);
    taken += results.length;
    // Checks other than the page checks (render and agent-readiness steps, when a rendered
    // audit's later round crawls again) keep their tallies.
    state.tallies = { ...state.tallies, ...tally.toJSON() };
    // The records go out while the allocation reads (a round trip saved on a remote KV); the
    // state commit still waits for both (`flush` in runCrawlStep).
    batch.send();
    // The resources' records are read while the frontier allocates (a round trip each on a remote
    // KV); they are allocated after it, as before.
    resources.read();
    await frontier.allocate();
    await resources.allocate();
    // Entries the byte budget left unfetched (or cut short) end the crawl: it is partial.
    const skipped = results.filter((r) => r.kind === "skipped").length;
    if (skipped > 0) {
      endCrawl(state, frontier, { cap: "bytes", limit: bytes.limit!, extra: skipped });
      return frontier;
    } else if (health?.judge(Date.now()) === "stop") {
      // The site kept failing through every pause: end with what the crawl has.
      const limit = Math.round(input.errorStop!.maxRate * 100);
      endCrawl(state, frontier, { cap: "error_rate", limit, extra: 0 });
      return frontier;
    } else if (frontier.queued === 0 || outOfBudget(0)) {
      endCrawl(state, frontier, budgetStop(input, state, bytes, hooks.now()));
      return frontier;
    }
    const again = pages > limits.pages && round < MAX_ROUNDS && taken < pages &&
      results.length === entries.length && performance.now() < t0 + limits.ms &&
      !(health && health.waitMs(Date.now()) > 0) &&
      !grownStepFull(limits, pages, taken, bytes.used - bytesBefore);
    if (!again) return frontier;
    // A grown step whose frontier held fewer entries than it may take (a crawl's first steps
    // find a page's links, then its links' links) takes what its pages queued in another round
    // rather than in another step, whose round trips a slow KV makes long. The round takes the
    // entries this one allocated as the frontier holds them (frontier.ts `next`), while their
    // writes go out; the state commits once, at the step's end, so a step that dies still counts
    // for nothing.
    batch.send();
  }
}

/**
 * Seeds the next sitemap chunks into the frontier; once all are in, crawls what they added (while
 * the page budget lasts) or finishes.
 */
async function seedBatch(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  state: CrawlState,
  batch: WriteBatch,
  now: number,
): Promise<void> {
  const frontier = new Frontier(
    kv,
    auditId,
    state,
    batch,
    capsOf(input),
    input.maxPages,
    Scope.of(input.scope),
  );
  await frontier.seedSitemap();
  if (frontier.sitemapLeft) return;
  // A budget stopped the crawl before the sitemap was seeded: what it left out is now all queued.
  const stop = state.cut ??
    budgetStop(input, state, new ByteBudget(input.maxTotalBytes, state.bytes), now);
  delete state.cut;
  if (stop === null && frontier.queued > 0) state.phase = "crawl";
  else cutShort(state, frontier, stop);
}

/**
 * After the frontier, or when a budget stops the crawl: seed the sitemap's unvisited URLs (and
 * crawl them), or finish. A budget that stops the crawl with sitemap chunks unseeded seeds them
 * first, unfetched, so the cap it notes counts every URL it left out (the sitemap-only pages a
 * trial never reached were reported as nothing left out, and their orphans as proven absent).
 */
function endCrawl(state: CrawlState, frontier: Frontier, stop: CrawlCut | null): void {
  if (stop !== null && frontier.sitemapLeft) {
    state.cut = stop;
    state.phase = "seed_sitemap";
  } else if (stop !== null) {
    cutShort(state, frontier, stop);
  } else if (frontier.queued === 0) {
    state.phase = frontier.sitemapLeft ? "seed_sitemap" : "finalize";
  }
}

/** Finishes the crawl: partial, with the budget's cap noted, when it left URLs unfetched. */
function cutShort(state: CrawlState, frontier: Frontier, stop: CrawlCut | null): void {
  if (stop !== null) noteStop(state, stop, frontier.queued + stop.extra);
  state.phase = "finalize";
}
