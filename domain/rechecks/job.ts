/**
 * Running a re-check: short resumable steps under the one job lifecycle (job_lifecycle.ts), as
 * an audit runs. A step claims the re-check (a lease renewed while it works), judges the next few
 * items (domain/audit_engine/recheck_eval.ts) through the crawl's fetcher with the crawl's caps, and in
 * one commit stores their outcomes, releases the re-check and enqueues the next step; the last
 * step completes it (with the `recheck.completed` event in the same commit), or fails it
 * (refunded) when no URL answered at all. A step whose worker died
 * is repeated, not the re-check. Safe to call any number of times.
 *
 * @module
 */
import { isTransientStoreError } from "../../kv/busy_retry.ts";
import {
  ByteBudget,
  CHECKS_BY_ID,
  type CrawlCaps,
  crawlerIdentity,
  effectiveMaxRps,
  fetchBanner,
  fetchRobots,
  type FetchSettings,
  makeRobots,
  MAX_BANNER_FETCHES,
  newPace,
  Politeness,
  type RecheckEnv,
  type RecheckOutcome,
  type RecheckPace,
  recheckRule,
  recheckUrl,
  type Robots,
  scriptLibrary,
  siteKeyOf,
  type TargetVerdict,
} from "../audit_engine/mod.ts";
import type { Evidence, ScriptLibrary } from "../audit_engine/types.ts";
import {
  type Atomic,
  atomic,
  type Deps,
  keys,
  list,
  type ListedEntry,
  read,
  readMany,
  recordEvent,
} from "../platform/mod.ts";
import { type Claim, claimJob, finishJob, renewLease } from "../jobs/mod.ts";
import {
  RECHECK_JOB,
  RECHECK_QUEUE_GRACE_MS,
  type RecheckItem,
  recheckLeaseMs,
  type RecheckRecord,
} from "./record.ts";

/** How the job layer runs re-checks (the operator's crawl settings); injected for tests. */
export interface RecheckRunner {
  /** Items judged per step, at most. */
  stepUrls: number;
  /** Wall time after which a step takes no further item, ms. */
  stepMs: number;
  /** Fetches in flight at once. */
  concurrency: number;
  allowPrivate: boolean;
  /** The crawl's caps (links per page, robots.txt, resources). */
  caps: CrawlCaps;
  /** Per-request timeout and body cap; the crawl's defaults (10 s, 5 MiB) when absent. */
  timeoutMs?: number;
  maxBytes?: number;
}

/** Body bytes a re-check may read, per URL on average: a paid audit's budget (1 MiB a page). */
export const RECHECK_BYTES_PER_URL = 1024 * 1024;
/** Evidence items of one URL read for its link targets (`links` mode). */
const STORED_ITEMS_READ = 50;

/**
 * The queue handler: takes ONE step of the re-check. Returns "next" when a further step is due
 * (already enqueued in the step's commit), else "idle".
 */
export async function runRecheckJob(
  deps: Deps,
  id: string,
  runner: RecheckRunner,
): Promise<"next" | "idle"> {
  const { kv } = deps;
  const claim = await claimJob(deps, RECHECK_JOB, id);
  if (!claim) return "idle";
  const r = claim.record;

  let lost = false;
  let renewing: Promise<void> = Promise.resolve();
  const every = Math.max(50, Math.floor(RECHECK_JOB.leaseMs(deps) / 3));
  const heartbeat = setInterval(() => {
    renewing = renewing.then(async () => {
      if (!lost && !(await renewLease(deps, RECHECK_JOB, claim, id))) lost = true;
    }).catch(() => {});
  }, every);
  const stop = async () => {
    clearInterval(heartbeat);
    await renewing;
  };

  try {
    const [projectEntry, auditEntry] = await readMany(kv, [
      keys.project(claim.accountId, r.projectId),
      keys.audit(claim.accountId, r.auditId),
    ]);
    const project = projectEntry.value;
    // The re-check asks as the audit asked: the same user-agent preset and robots.txt group.
    const identity = crawlerIdentity(auditEntry.value?.options?.userAgent);
    const check = CHECKS_BY_ID.get(r.check);
    const rule = recheckRule(r.check);
    if (!project || !check || rule.mode === "refused") {
      await stop();
      await failRecheck(deps, id, claim.token, {
        code: "recheck_failed",
        message: "The project or the check no longer exists; the charge was refunded",
      });
      return "idle";
    }
    // A staging audit's credentials are gone (create.ts refuses such re-checks; this is for one
    // accepted before that rule): without them every page is the login wall, never a verdict.
    if (auditEntry.value?.auth) {
      await stop();
      await failRecheck(deps, id, claim.token, {
        code: "recheck_failed",
        message: "The audit crawled a staging site with credentials, which a re-check does not " +
          "have; the charge was refunded. Start a new audit with auth instead",
      });
      return "idle";
    }
    const entries: ListedEntry<RecheckItem, Deno.KvKey>[] = [];
    const selector = { start: keys.recheckItem(id, r.done), end: keys.recheckItem(id, r.urls) };
    for await (const e of list(kv, selector, { limit: runner.stepUrls })) entries.push(e);

    const budget = new ByteBudget(r.urls * RECHECK_BYTES_PER_URL, r.bytes);
    const settings: FetchSettings = {
      userAgent: identity.userAgent,
      robotsToken: identity.robotsToken,
      allowPrivate: runner.allowPrivate,
      timeoutMs: runner.timeoutMs ?? 10_000,
      maxBytes: runner.maxBytes ?? 5 * 1024 * 1024,
      budget,
    };
    const env = await recheckEnv(
      settings,
      runner.caps,
      project.url,
      deps.clock.now(),
      r.nextSlotAt,
      effectiveMaxRps(auditEntry.value?.maxRps, deps.config.crawlMaxRps),
    );

    // A bounded pool over the step's items, in order; every item taken is finished.
    const outcomes: RecheckOutcome[] = [];
    const stopAt = performance.now() + runner.stepMs;
    let next = 0;
    const worker = async () => {
      while (next < entries.length) {
        if (next > 0 && performance.now() > stopAt) return;
        const i = next++;
        const item = entries[i].value;
        const stored = rule.mode === "links" ? await storedItems(kv, r, item.url) : [];
        try {
          outcomes[i] = await recheckUrl(env, check, rule, { ...item, stored });
        } catch {
          // Parsing or judging one page must not fail the re-check: that URL has no verdict.
          outcomes[i] = {
            result: "not_checked",
            status: null,
            failure: "internal",
            reason: "fetch_failed",
            evidence: [],
            evidenceCount: 0,
          };
        }
      }
    };
    const workers = Math.max(1, Math.min(runner.concurrency, entries.length));
    await Promise.all(Array.from({ length: workers }, worker));
    await stop();
    return await commitStep(deps, claim, entries.slice(0, next), outcomes, {
      bytes: budget.used,
      nextSlotAt: env.politeness.next,
    });
  } catch (err) {
    await stop();
    if (isTransientStoreError(err)) {
      console.warn(
        JSON.stringify({ level: "warn", msg: "recheck step retried", id, error: String(err) }),
      );
      await handBack(deps, claim.accountId, id, claim.token).catch(() => {});
      return "idle";
    }
    console.error(
      JSON.stringify({ level: "error", msg: "recheck step failed", id, error: String(err) }),
    );
    await failRecheck(deps, id, claim.token, {
      code: "recheck_failed",
      message: "The re-check could not run; the charge was refunded",
    });
    return "idle";
  } finally {
    await stop();
  }
}

/**
 * The step's one commit: the judged items, the counts, and either the released re-check with the
 * next step's message, or (after the last item) the finished re-check through `finishJob`.
 */
async function commitStep(
  deps: Deps,
  claim: Claim<RecheckRecord>,
  taken: ListedEntry<RecheckItem, Deno.KvKey>[],
  outcomes: RecheckOutcome[],
  carry: { bytes: number; nextSlotAt: number },
): Promise<"next" | "idle"> {
  const { kv, clock } = deps;
  const id = claim.record.id;
  const now = clock.now();
  const write = (op: Atomic, base: RecheckRecord): RecheckRecord => {
    const counts = { ...base.counts };
    let noAnswer = base.noAnswer;
    taken.forEach((e, i) => {
      const o = outcomes[i];
      counts[o.result]++;
      if (o.result === "not_checked" && o.failure !== null) noAnswer++;
      op.set(keys.recheckItem(id, base.done + i), {
        ...e.value,
        outcome: { ...o, checkedAt: now },
      });
    });
    return {
      ...base,
      done: base.done + taken.length,
      counts,
      noAnswer,
      bytes: carry.bytes,
      nextSlotAt: carry.nextSlotAt,
      inStep: false,
    };
  };

  if (claim.record.done + taken.length >= claim.record.urls) {
    await finishJob(deps, RECHECK_JOB, id, ({ op, record, accountId, now }) => {
      const done = write(op, record);
      const key = keys.recheck(accountId, id);
      if (done.noAnswer >= done.urls) {
        op.set(key, {
          ...RECHECK_JOB.failed(done, {
            code: "site_unreachable",
            message: "None of the URLs answered (timeouts, network or DNS failures); the " +
              "charge was refunded",
          }, now),
        });
        return Promise.resolve("failed");
      }
      op.set(key, { ...done, status: "completed", completedAt: now });
      recordEvent(op, deps.queue, {
        accountId,
        event: "recheck.completed",
        now,
        data: {
          recheck_id: id,
          audit_id: done.auditId,
          project_id: done.projectId,
          check: done.check,
          status: "completed",
          urls_checked: done.urls,
          urls_left_out: done.leftOut,
          counts: done.counts,
          completed_at: new Date(now).toISOString(),
          poll: `/v1/rechecks/${id}`,
        },
      });
      return Promise.resolve("completed");
    }, { token: claim.token });
    return "idle";
  }

  const entry = await read(kv, keys.recheck(claim.accountId, id));
  const a = entry.value;
  if (!a || !RECHECK_JOB.open(a) || a.stepToken !== claim.token) return "idle";
  const leaseUntil = now + recheckLeaseMs(deps, RECHECK_QUEUE_GRACE_MS);
  const op = atomic(kv).check(entry);
  op.set(entry.key, { ...write(op, a), leaseUntil })
    .set(keys.runningJob("recheck", id), { id, accountId: claim.accountId, leaseUntil });
  deps.queue.enqueueIn(op, { type: "recheck", id });
  return (await op.commit()).ok ? "next" : "idle";
}

/** The evidence the audit stored for one URL of the check (its link targets). */
async function storedItems(kv: Deno.Kv, r: RecheckRecord, url: string): Promise<Evidence[]> {
  const out: Evidence[] = [];
  const prefix = keys.auditFindingsOfUrl(r.auditId, r.check, url);
  for await (const e of list(kv, { prefix }, { limit: STORED_ITEMS_READ })) out.push(e.value);
  return out;
}

/**
 * What one step re-checks with: the crawl's fetch settings, robots.txt of each origin (fetched
 * once per step; its Crawl-delay spaces the requests, at most MAX_CRAWL_DELAY_S as in the crawl),
 * library heads, and the site (`siteUrl`, the project's URL) whose links are internal.
 */
export async function recheckEnv(
  settings: FetchSettings,
  caps: CrawlCaps,
  siteUrl: string,
  now: number,
  nextSlotAt = 0,
  maxRps: number | null = null,
): Promise<RecheckEnv> {
  const robots = robotsOf(settings, caps);
  const site = new URL(siteUrl);
  const crawlDelayS = (await robots(site.origin)).crawlDelay;
  return {
    settings,
    robots,
    politeness: recheckPace(site.host, crawlDelayS, nextSlotAt, maxRps),
    siteKey: siteKeyOf(site),
    linksPerPage: caps.linksPerPage,
    resources: (caps.resources ?? 0) > 0,
    now,
    scriptLibraries: scriptLibrariesOf(settings, robots),
    targets: new Map<string, Promise<TargetVerdict>>(),
  };
}

/** robots.txt per origin, fetched once per step (the crawl's reader and caps; nothing stored). */
function robotsOf(settings: FetchSettings, caps: CrawlCaps): (origin: string) => Promise<Robots> {
  const memo = new Map<string, Promise<Robots>>();
  return (origin) => {
    let p = memo.get(origin);
    if (!p) {
      p = fetchRobots(settings, origin, caps.robots.maxBytes).then((f) =>
        makeRobots(
          f.meta.url,
          f.meta.state,
          f.meta.status,
          f.body,
          caps.robots,
          settings.robotsToken,
        )
      );
      memo.set(origin, p);
    }
    return p;
  };
}

/**
 * Libraries for vulnerable_js_library, as the crawl reads them (crawl/banners.ts): the scripts
 * the page facts chose (same-site ones whatever their name, library-named ones elsewhere), read
 * from their content, robots.txt honoured, at most MAX_BANNER_FETCHES per step, each read once
 * per step.
 */
function scriptLibrariesOf(
  settings: FetchSettings,
  robots: (origin: string) => Promise<Robots>,
): RecheckEnv["scriptLibraries"] {
  const memo = new Map<string, Promise<ScriptLibrary | null>>();
  let reads = 0;
  const libraryOf = (url: string) => {
    let p = memo.get(url);
    if (!p) {
      p = (async () => {
        if (!(await robots(new URL(url).origin)).isAllowed(url)) return null;
        if (reads >= MAX_BANNER_FETCHES) return null;
        reads++;
        const head = await fetchBanner(settings, url);
        return head === null ? null : scriptLibrary(url, head);
      })().catch(() => null);
      memo.set(url, p);
    }
    return p;
  };
  return async (scripts) => {
    let out: Map<string, ScriptLibrary> | undefined;
    for (const src of scripts) {
      const lib = await libraryOf(src);
      if (lib !== null) (out ??= new Map()).set(src, lib);
    }
    return out;
  };
}

/** Fails a re-check (refunded), only while `token`'s claim holds it. */
function failRecheck(
  deps: Deps,
  id: string,
  token: string,
  error: { code: string; message: string },
): Promise<void> {
  return finishJob(deps, RECHECK_JOB, id, ({ op, record, accountId, now }) => {
    op.set(keys.recheck(accountId, id), RECHECK_JOB.failed(record, error, now));
    return Promise.resolve("failed");
  }, { token }).then(() => {});
}

/** Gives a step back after a transient store failure: the lease ends now, a message returns. */
async function handBack(deps: Deps, accountId: string, id: string, token: string) {
  const key = keys.recheck(accountId, id);
  const entry = await read(deps.kv, key);
  const a = entry.value;
  if (!a || !RECHECK_JOB.open(a) || a.stepToken !== token) return;
  const now = deps.clock.now();
  const op = atomic(deps.kv).check(entry).set(key, { ...a, leaseUntil: now })
    .set(keys.runningJob("recheck", id), { id, accountId, leaseUntil: now });
  deps.queue.enqueueIn(op, { type: "recheck", id }, 1_000);
  await op.commit();
}

/**
 * The crawl's politeness (politeness.ts) over the re-check's one site: its Crawl-delay (capped as
 * in the crawl) and the audit's rate cap space the request starts; the next free slot is carried
 * between steps in the record. A re-check step has no deadline of its own here: its step budget
 * stops it taking new URLs.
 */
function recheckPace(
  host: string,
  crawlDelayS: number,
  nextSlotAt: number,
  maxRps: number | null,
): RecheckPace {
  const pace = newPace();
  pace.hosts[host] = { next: nextSlotAt, rps: maxRps, slowedAt: 0 };
  const politeness = new Politeness(pace, maxRps);
  return {
    wait: async () => {
      await politeness.wait(host, crawlDelayS, Number.POSITIVE_INFINITY);
    },
    get next() {
      return pace.hosts[host]?.next ?? 0;
    },
  };
}
