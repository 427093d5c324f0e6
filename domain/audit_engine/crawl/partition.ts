/**
 * One crawl across several workers (`CRAWL_PARTITIONS` > 1). The frontier is cut into claimable
 * ranges instead of being taken from its head by one chain of steps:
 *
 * 1. **Claim** (one atomic commit): a step takes the next range of positions past the claim
 *    pointer (`audit_slices/<id>/next`), or a range whose lease ran out (its worker died), and
 *    leases it (`audit_slices/<id>/claim/<start>`), renewed while it fetches.
 * 2. **Fetch and parse** the range with no lock held, against a copy of the crawl state: this is
 *    the work that runs on every worker at once.
 * 3. **Record** under the crawl's one recorder lock (`audit_slices/<id>/recorder`): read the
 *    committed state, add what the fetch learnt (counts, pace, health, bytes), record the pages,
 *    allocate the links found, and commit the state in one checked commit that also deletes the
 *    range's lease and the lock. A range is recorded at most once (the commit checks its lease),
 *    and recording is serial, so frontier positions are allocated as by one chain.
 *
 * `head` counts resolved positions here (recorded, or put back at the tail when a step's time
 * ran out), so `tail - head` is still what is left, in flight or not, and the crawl ends when it
 * reaches 0. A budget that stops the crawl while other ranges are in flight counts them as left
 * out; their recorders then find the phase changed and record nothing.
 *
 * A paced host (rate cap, Crawl-delay, a throttle) takes its request slots from one key per host
 * (`audit_slices/<id>/pace/<host>`) with checked commits, so the pace holds across the workers.
 *
 * @example
 * ```ts
 * import type { CrawlInput } from "./state.ts";
 * declare const kv: Deno.Kv, auditId: string, input: CrawlInput;
 * const out = await runSliceStep(kv, auditId, input, { pages: 50, ms: 20_000 }, {
 *   now: Date.now,
 *   holder: "wrk_1:tok",
 * }, () => {});
 * if (out.idle) console.log("nothing to claim now; retry in", out.delayMs, "ms");
 * ```
 *
 * @module
 */
import { type Atomic, atomic, keys, list, read } from "../../platform/mod.ts";
import { ConnectionPool } from "../../net/mod.ts";
import { PageTally } from "../page_checks.ts";
import { BannerReader } from "./banners.ts";
import { ByteBudget } from "./byte_budget.ts";
import { capsOf, noteRobotsCaps } from "./caps.ts";
import { fetchBatch, poolOptions } from "./fetch_pool.ts";
import { settingsOf } from "./fetcher.ts";
import { Frontier } from "./frontier.ts";
import { DEFAULT_ERROR_STOP, Health } from "./health.ts";
import { recordFromFrontier } from "./page_recorder.ts";
import { newPace, Politeness, type SharedSlots } from "./politeness.ts";
import { RobotsSource } from "./robots_source.ts";
import { Scope } from "../scope.ts";
import {
  type CrawlInput,
  type CrawlState,
  fetchedSince,
  NOTHING_FETCHED,
  type StepFetched,
  type StepLimits,
} from "./state.ts";
import { budgetStop, type CrawlCut } from "./stops.ts";
import { WriteBatch } from "./store.ts";

/** A claimed range's lease; renewed every third of it while its worker fetches. */
export const CLAIM_LEASE_MS = 15_000;
/** The recorder lock's lease; renewed likewise while a step records. */
export const RECORDER_LEASE_MS = 10_000;
/** How soon a step that found nothing to claim (all ranges in flight) looks again. */
export const IDLE_RETRY_MS = 200;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Who runs a slice step, and its part of the recording commit (the main chain's job checks). */
export interface SliceHooks {
  now: () => number;
  /** Written into the leases this step takes (a worker id and a token). */
  holder: string;
  /** The claim and recorder leases, ms (default CLAIM_LEASE_MS; the operator's `JOB_LEASE_MS`). */
  leaseMs?: number;
  /** As StepHooks.beforeCommit (engine.ts): added to the commit that records the range. */
  beforeCommit?: (op: Atomic, done: boolean, delayMs: number) => void | Promise<void>;
}

/** What one slice step did. */
export interface SliceOutcome {
  /** The crawl and its checks are finished (never by a slice step: the crawl phase only). */
  done: boolean;
  /** The step recorded a range (or ended the crawl) in a commit of its own. */
  committed: boolean;
  /** The state it committed (null when it committed none). */
  state: CrawlState | null;
  /** Ms before another step is worth trying (0: at once). */
  delayMs: number;
  /** Nothing was claimable (every range in flight, the crawl paused, or past its crawl phase). */
  idle: boolean;
  /** Idle because every range is in flight: their links may soon give more to claim. */
  waiting?: boolean;
  /** What this step itself fetched and recorded (0 and 0 unless it committed). */
  fetched: StepFetched;
}

/** A step that recorded nothing, worth trying again after `delayMs`. */
const idle = (delayMs: number): SliceOutcome => ({
  done: false,
  committed: false,
  state: null,
  delayMs,
  idle: true,
  fetched: NOTHING_FETCHED,
});

/** How a phase change is decided after a range (engine.ts `endCrawl`, passed in: no cycle). */
export type EndCrawl = (state: CrawlState, frontier: Frontier, stop: CrawlCut | null) => void;

/** The part of the state a slice step fetches with (its copy) and merges back. */
interface Fetched {
  base: CrawlState;
  work: CrawlState;
  tally: PageTally;
  notes: [boolean, number | undefined][];
  bytesUsed: number;
}

/**
 * One step of a partitioned crawl (see the module comment): claim a range, fetch it, record it.
 * Called by the audit's own chain of steps (engine.ts, in the crawl phase) and by its helpers.
 */
export async function runSliceStep(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  hooks: SliceHooks,
  endCrawl: EndCrawl,
): Promise<SliceOutcome> {
  const entry = await read(kv, keys.auditCrawl(auditId));
  const base = entry.value;
  if (base === null || base.phase !== "crawl") return idle(0);
  if (base.health && input.errorStop) {
    const wait = new Health(structuredClone(base.health), input.errorStop).waitMs(Date.now());
    if (wait > 0) return idle(wait);
  }
  const claim = await claimRange(kv, auditId, base, input, limits.pages, hooks);
  if (claim === "none") return { ...idle(IDLE_RETRY_MS), waiting: true };
  if (claim === "settle") {
    // Nothing in flight and nothing claimable: the budget is spent or the frontier is empty;
    // a recording of nothing ends the crawl (or moves it on).
    return await record(kv, auditId, input, hooks, endCrawl, null, null);
  }
  // Renewed until the recording commit, not just while fetching: a step that waits for the
  // recorder lock behind other workers must not let its fetched range lapse to be fetched again.
  const renew = keepAlive(kv, claim.key, hooks.holder, hooks.leaseMs ?? CLAIM_LEASE_MS);
  try {
    const batch = new WriteBatch(kv);
    const fetched = await fetchRange(
      kv,
      auditId,
      input,
      limits,
      base,
      claim.start,
      claim.end,
      batch,
    );
    if (renew.lost) return idle(0);
    return await record(kv, auditId, input, hooks, endCrawl, { ...fetched, claim, renew }, batch);
  } finally {
    await renew.stop();
  }
}

type Results = Awaited<ReturnType<typeof fetchBatch>>;

/** A claimed range of frontier positions. */
interface Claim {
  key: ReturnType<typeof keys.auditSlice>;
  start: number;
  end: number;
}

/** A lease kept alive by keepAlive. */
type Renewal = ReturnType<typeof keepAlive>;

/**
 * Takes the next range past the claim pointer (no further than the page budget allows, counting
 * the ranges in flight) or a range whose lease ran out. "none": everything is in flight;
 * "settle": nothing is in flight and nothing can be claimed.
 */
async function claimRange(
  kv: Deno.Kv,
  auditId: string,
  state: CrawlState,
  input: CrawlInput,
  pages: number,
  hooks: SliceHooks,
): Promise<Claim | "none" | "settle"> {
  const holder = hooks.holder;
  for (let attempt = 0; attempt < 20; attempt++) {
    const now = Date.now();
    const ptr = await read(kv, keys.auditSlice(auditId, "next", 0));
    const next = Math.max(ptr.value?.end ?? 0, 0);
    // Positions claimed and not yet resolved (a dead worker's included until they are taken over).
    const inFlight = Math.max(0, next - state.head);
    const room = Math.max(1, input.maxPages) - state.fetches - inFlight;
    const deadlinePassed = input.deadlineAt !== undefined && hooks.now() > input.deadlineAt;
    if (next < state.tail && room > 0 && !deadlinePassed) {
      const end = Math.min(state.tail, next + Math.max(1, Math.min(pages, room)));
      const key = keys.auditSlice(auditId, "claim", next);
      const ok = await atomic(kv).check(ptr)
        .set(ptr.key, { holder: "", until: 0, end })
        .set(key, { holder, until: now + (hooks.leaseMs ?? CLAIM_LEASE_MS), end })
        .commit();
      if (ok.ok) return { key, start: next, end };
      continue;
    }
    let live = 0;
    let taken: Claim | null = null;
    for await (const c of list(kv, { prefix: keys.auditSlicesOf(auditId, "claim") })) {
      if (c.value.until > now) {
        live++;
        continue;
      }
      const start = c.key[3] as number;
      const ok = await atomic(kv).check(c)
        .set(c.key, { holder, until: now + (hooks.leaseMs ?? CLAIM_LEASE_MS), end: c.value.end })
        .commit();
      if (ok.ok) {
        taken = { key: keys.auditSlice(auditId, "claim", start), start, end: c.value.end };
        break;
      }
      live++;
    }
    if (taken) return taken;
    if (live > 0) return "none";
    // No range in flight: the state read before the claim may be stale (another step recorded
    // meanwhile); the recorder decides on the committed state.
    return "settle";
  }
  return "none";
}

/** Fetches and parses a claimed range against a copy of the state (writes only caches). */
async function fetchRange(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  limits: StepLimits,
  base: CrawlState,
  start: number,
  end: number,
  batch: WriteBatch,
) {
  const t0 = performance.now();
  const work = structuredClone(base);
  work.capsHit ??= {};
  const bytes = new ByteBudget(input.maxTotalBytes, work.bytes);
  // The range's requests share kept-alive connections, all closed when its fetching ends.
  const pool = new ConnectionPool();
  const s = { ...settingsOf(input, bytes), pool };
  const caps = capsOf(input);
  const frontier = new Frontier(kv, auditId, work, batch, caps, input.maxPages);
  const taken = await frontier.range(start, end);
  const robots = new RobotsSource(
    kv,
    auditId,
    s,
    work.robots,
    batch,
    caps.robots,
    (r) => noteRobotsCaps(work.capsHit!, r, caps.robots),
  );
  const politeness = new Politeness(
    work.pace ??= newPace(),
    input.maxRps ?? null,
    sharedSlots(kv, auditId),
  );
  const tally = PageTally.from({});
  const banners = new BannerReader(kv, auditId, s, robots, work, batch);
  const notes: [boolean, number | undefined][] = [];
  const health = input.errorStop
    ? new NotingHealth(work.health ??= { recent: [], pauses: 0, pausedUntil: 0 }, input, notes)
    : undefined;
  const budget = Math.max(1, input.maxPages);
  let results;
  try {
    const tools = { settings: s, robots, politeness, banners, tally, siteKey: work.siteKey };
    results = await fetchBatch(taken.entries, {
      ...poolOptions(tools, input, caps, t0 + limits.ms),
      outOfBudget: (reserved) =>
        work.fetches + reserved >= budget || bytes.exhausted ||
        (input.deadlineAt !== undefined && Date.now() > input.deadlineAt),
      health,
    });
  } finally {
    pool.close();
  }
  return { base, work, tally, notes, bytesUsed: bytes.used - base.bytes, taken, results };
}

/** Health that also keeps what it noted, to be noted again on the committed state. */
class NotingHealth extends Health {
  constructor(
    state: NonNullable<CrawlState["health"]>,
    input: CrawlInput,
    private readonly notes: [boolean, number | undefined][],
  ) {
    super(state, input.errorStop ?? DEFAULT_ERROR_STOP);
  }
  override note(error: boolean, retryAfterMs?: number): void {
    this.notes.push([error, retryAfterMs]);
    super.note(error, retryAfterMs);
  }
}

/** Per-host slots in KV: one checked commit per paced request. */
function sharedSlots(kv: Deno.Kv, auditId: string): SharedSlots {
  return {
    async take(host, notBefore, intervalMs, deadline) {
      while (true) {
        const e = await read(kv, keys.auditSlice(auditId, "pace", host));
        const slot = Math.max(notBefore, Date.now(), e.value?.until ?? 0);
        if (slot > deadline) return null;
        const ok = await atomic(kv).check(e)
          .set(e.key, { holder: "", until: slot + intervalMs, end: 0 })
          .commit();
        if (ok.ok) return slot;
      }
    },
  };
}

/**
 * Records a fetched range (or nothing, `got` null) under the recorder lock, on the committed
 * state, and commits it with the range's lease deleted.
 */
async function record(
  kv: Deno.Kv,
  auditId: string,
  input: CrawlInput,
  hooks: SliceHooks,
  endCrawl: EndCrawl,
  got:
    | (Fetched & {
      taken: Awaited<ReturnType<Frontier["range"]>>;
      results: Results;
      claim: Claim;
      renew: Renewal;
    })
    | null,
  fetchBatchWrites: WriteBatch | null,
): Promise<SliceOutcome> {
  const lockKey = keys.auditSlice(auditId, "recorder", 0);
  const lockMs = Math.min(hooks.leaseMs ?? RECORDER_LEASE_MS, RECORDER_LEASE_MS);
  const waitUntil = Date.now() + 2 * lockMs + 1_000;
  while (!(await takeLease(kv, lockKey, hooks.holder, lockMs))) {
    // The range's lease runs out meanwhile and another worker fetches it again: no harm.
    if (Date.now() > waitUntil) return idle(0);
    await sleep(10 + Math.random() * 20);
  }
  const lock = keepAlive(kv, lockKey, hooks.holder, lockMs);
  let committed = false;
  let state: CrawlState | null = null;
  try {
    const entry = await read(kv, keys.auditCrawl(auditId));
    if (entry.value === null || entry.value.phase !== "crawl" || got?.renew.lost) return idle(0);
    state = structuredClone(entry.value);
    state.steps++;
    state.capsHit ??= {};
    const batch = fetchBatchWrites ?? new WriteBatch(kv);
    if (got) mergeFetched(state, got);
    const caps = capsOf(input);
    const frontier = new Frontier(
      kv,
      auditId,
      state,
      batch,
      caps,
      input.maxPages,
      Scope.of(input.scope),
    );
    const bytes = new ByteBudget(input.maxTotalBytes, state.bytes);
    const health = input.errorStop
      ? new Health(state.health ??= { recent: [], pauses: 0, pausedUntil: 0 }, input.errorStop)
      : undefined;
    for (const [error, after] of got?.notes ?? []) health?.note(error, after);
    let skipped = 0;
    if (got) {
      const { entries } = got.taken;
      const results = got.results;
      // The records as committed now (a record is only ever rewritten by its range's recorder).
      const { records } = await frontier.range(got.claim.start, got.claim.end);
      const resources = await recordFromFrontier(kv, frontier, entries, records, results, {
        batch,
        auditId,
        state,
        caps,
      });
      // Entries the step's time left unfetched go back to the tail: the range resolves whole.
      for (const e of entries.slice(results.length)) frontier.putBack(e);
      frontier.advance(entries.length);
      state.tallies = addTallies(state.tallies, got.tally.toJSON());
      await frontier.allocate();
      await resources.allocate();
      skipped = results.filter((r) => r.kind === "skipped").length;
    }
    const outOfBudget = state.fetches >= Math.max(1, input.maxPages) || bytes.exhausted ||
      (input.deadlineAt !== undefined && hooks.now() > input.deadlineAt);
    if (skipped > 0) {
      endCrawl(state, frontier, { cap: "bytes", limit: bytes.limit!, extra: skipped });
    } else if (health?.judge(Date.now()) === "stop") {
      const limit = Math.round(input.errorStop!.maxRate * 100);
      endCrawl(state, frontier, { cap: "error_rate", limit, extra: 0 });
    } else if (frontier.queued === 0 || outOfBudget) {
      endCrawl(state, frontier, budgetStop(input, state, bytes, hooks.now()));
    }
    await batch.flush();
    // The leases stop renewing here and are checked as they stand now, in the commit itself.
    await lock.stop();
    await got?.renew.stop();
    const lockEntry = await read(kv, lockKey);
    if (lock.lost || lockEntry.value?.holder !== hooks.holder) return idle(0);
    const claimEntry = got ? await read(kv, got.claim.key) : null;
    if (got && (got.renew.lost || claimEntry?.value?.holder !== hooks.holder)) return idle(0);
    const delayMs = state.phase === "crawl" && health ? health.waitMs(Date.now()) : 0;
    const op = atomic(kv).check(entry).check(lockEntry).delete(lockKey)
      .set(keys.auditCrawl(auditId), state);
    if (got && claimEntry) op.check(claimEntry).delete(got.claim.key);
    await hooks.beforeCommit?.(op, false, delayMs);
    committed = (await op.commit()).ok;
    const fetched = committed ? fetchedSince(entry.value, state) : NOTHING_FETCHED;
    return {
      done: false,
      committed,
      state: committed ? state : null,
      delayMs,
      idle: false,
      fetched,
    };
  } finally {
    await lock.stop();
    if (!committed) await releaseLease(kv, lockKey, hooks.holder);
  }
}

/** Adds the page checks' counts of one range to the state's. */
function addTallies(
  into: Record<string, [number, number]>,
  add: Record<string, [number, number]>,
): Record<string, [number, number]> {
  const out = { ...into };
  for (const [id, [e, a]] of Object.entries(add)) {
    const [e0, a0] = out[id] ?? [0, 0];
    out[id] = [e0 + e, a0 + a];
  }
  return out;
}

/**
 * Adds to the committed state what fetching a range changed in its copy: bytes read, robots
 * files and banners read, caps hit, and each host's pace (the later slot, the lower rate).
 */
function mergeFetched(state: CrawlState, got: Fetched): void {
  const { base, work } = got;
  state.bytes += got.bytesUsed;
  state.banners = (state.banners ?? 0) + ((work.banners ?? 0) - (base.banners ?? 0));
  for (const [host, meta] of Object.entries(work.robots)) state.robots[host] ??= meta;
  for (const [cap, hit] of Object.entries(work.capsHit ?? {})) {
    const caps = state.capsHit ??= {};
    const name = cap as keyof typeof caps;
    if (!caps[name] && hit) caps[name] = hit;
  }
  const p = work.pace;
  if (p) {
    const into = state.pace ??= newPace();
    const b = base.pace ?? newPace();
    into.throttled += p.throttled - b.throttled;
    into.retries += p.retries - b.retries;
    into.gaveUp += p.gaveUp - b.gaveUp;
    into.crawlDelayAsked = Math.max(into.crawlDelayAsked, p.crawlDelayAsked);
    for (const [host, h] of Object.entries(p.hosts)) {
      const cur = into.hosts[host];
      if (!cur) into.hosts[host] = { ...h };
      else {
        cur.next = Math.max(cur.next, h.next);
        cur.slowedAt = Math.max(cur.slowedAt, h.slowedAt);
        if (h.rps !== null) cur.rps = cur.rps === null ? h.rps : Math.min(cur.rps, h.rps);
      }
    }
  }
}

/** Takes a lease that is free or ran out; true when taken. */
async function takeLease(
  kv: Deno.Kv,
  key: ReturnType<typeof keys.auditSlice>,
  holder: string,
  ms: number,
): Promise<boolean> {
  const e = await read(kv, key);
  const now = Date.now();
  if (e.value !== null && e.value.until > now && e.value.holder !== holder) return false;
  const ok = await atomic(kv).check(e).set(key, { holder, until: now + ms, end: e.value?.end ?? 0 })
    .commit();
  return ok.ok;
}

/** Deletes a lease still held by `holder`. */
async function releaseLease(
  kv: Deno.Kv,
  key: ReturnType<typeof keys.auditSlice>,
  holder: string,
): Promise<void> {
  const e = await read(kv, key);
  if (e.value?.holder !== holder) return;
  await atomic(kv).check(e).delete(key).commit();
}

/**
 * Renews `holder`'s lease every third of `ms` until stopped; `lost` once another holder has it
 * (its work must then not count).
 */
function keepAlive(
  kv: Deno.Kv,
  key: ReturnType<typeof keys.auditSlice>,
  holder: string,
  ms: number,
): { stop: () => Promise<void>; readonly lost: boolean } {
  let lost = false;
  let stopped = false;
  let wake: () => void = () => {};
  const loop = (async () => {
    while (!stopped) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, ms / 3);
      });
      if (stopped) return;
      const e = await read(kv, key);
      if (e.value?.holder !== holder) {
        lost = true;
        return;
      }
      await atomic(kv).check(e).set(key, { ...e.value, until: Date.now() + ms }).commit();
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wake();
      await loop;
    },
    get lost() {
      return lost;
    },
  };
}

/** A helper's slot lease: longer than a step, renewed while it runs. */
export const HELPER_LEASE_MS = 30_000;

/**
 * Marks helper slot `k` of a crawl as called (so it is called once until it runs or its mark
 * runs out) and adds the message that calls it to `op`. False when the slot is held or called.
 */
export async function callHelper(
  kv: Deno.Kv,
  auditId: string,
  k: number,
  enqueue: (op: Deno.AtomicOperation) => void,
): Promise<boolean> {
  const e = await read(kv, keys.auditSlice(auditId, "helper", k));
  const now = Date.now();
  if (e.value !== null && e.value.until > now) return false;
  const op = atomic(kv).check(e).set(e.key, { holder: "", until: now + HELPER_LEASE_MS, end: 0 });
  enqueue(op);
  return (await op.commit()).ok;
}

/**
 * Holds helper slot `k` for `holder` (a called slot, or one whose lease ran out), renewed until
 * stopped; null when another helper holds it.
 */
export async function holdHelperSlot(
  kv: Deno.Kv,
  auditId: string,
  k: number,
  holder: string,
  ms = HELPER_LEASE_MS,
): Promise<{ stop: () => Promise<void>; readonly lost: boolean } | null> {
  const key = keys.auditSlice(auditId, "helper", k);
  const e = await read(kv, key);
  const now = Date.now();
  if (e.value !== null && e.value.holder !== "" && e.value.until > now) return null;
  const ok = await atomic(kv).check(e).set(key, { holder, until: now + ms, end: 0 }).commit();
  if (!ok.ok) return null;
  const alive = keepAlive(kv, key, holder, ms);
  return {
    stop: async () => {
      await alive.stop();
      await releaseLease(kv, key, holder);
    },
    get lost() {
      return alive.lost;
    },
  };
}

/**
 * Ends at once every lease of partitioned crawls that `worker` held (a process seen dead by its
 * supervisor, or one stopping after its work ended), as if it had run out: its range is claimed
 * again, its helper slot called again, its recorder lock taken, without waiting for the lease.
 * Leases only live while their crawls run (pruned after), so the listing stays short.
 */
export async function handBackSlicesOf(kv: Deno.Kv, worker: string): Promise<number> {
  let handed = 0;
  for await (const e of list(kv, { prefix: keys.auditSlicesAll() })) {
    if (!e.value.holder.startsWith(`${worker}:`) || e.value.until <= Date.now()) continue;
    const ok = await atomic(kv).check(e).set(e.key, { ...e.value, until: 0 }).commit();
    if (ok.ok) handed++;
  }
  return handed;
}
