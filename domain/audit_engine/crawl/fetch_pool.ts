/**
 * The crawl's fetch pool: a bounded number of workers take frontier entries in order, check
 * robots.txt, wait for their host's politeness slot (rate cap, Crawl-delay, Retry-After), fetch
 * within the byte budget and parse each HTML 2xx page once, running the page checks on it. A 429
 * (or 503 with Retry-After) slows the host down and sends the URL back to the frontier, up to
 * MAX_RETRIES times, after which it is recorded with that status. Results come back in frontier
 * order, one per entry taken, so recording (and so URL discovery) stays deterministic whatever
 * order the fetches finished in; a slot that falls beyond the step's time budget ends the batch
 * there (the entry stays queued for the next step).
 *
 * The pool writes nothing itself: what it learns is returned, and the step records it. The robots
 * source and the banner reader it is given keep what they fetch in the step's write batch.
 *
 * @module
 */
import type { SafeResponse } from "../../net/mod.ts";
import { isNofollowPage, isNoindex, resolveCanonicals } from "../checks/helpers.ts";
import type { FiredCheck, PageTally } from "../page_checks.ts";
import { MAX_RESOURCES_PER_PAGE, type PageFacts } from "../page_facts.ts";
import { extractPageFacts } from "../facts/extract.ts";
import type { PageContext } from "../types.ts";
import { canonicalize, canonicalUrl } from "../urls.ts";
import type { BannerReader } from "./banners.ts";
import { BudgetSpentError } from "./byte_budget.ts";
import { failureKind, fetchPage, type FetchSettings, isHtmlType } from "./fetcher.ts";
import type { FrontierEntry } from "./frontier.ts";
import type { Health } from "./health.ts";
import { MAX_RETRIES, type Politeness, throttleOf } from "./politeness.ts";
import type { RobotsSource } from "./robots_source.ts";
import {
  bodyDigest,
  conditionalHeaders,
  keptHeaders,
  type ReuseEntry,
  reuseEntry,
  type StepReuse,
} from "./reuse.ts";

/** Workers per pool, at most, whatever the input asks. */
const MAX_CONCURRENCY = 32;

/** What one fetched frontier entry produced, kept until the step records it. */
export type Fetched =
  | { kind: "blocked" }
  /** Not fetched: the byte budget was spent first (the URL stays queued). */
  | { kind: "skipped" }
  /** Answered 429/503 asking us to wait: queued again (politeness.ts), not recorded yet. */
  | { kind: "retry"; afterMs: number }
  | { kind: "failed"; failure: string }
  | {
    kind: "response";
    status: number;
    ttfbMs: number;
    bytes: number;
    location: string | null;
    /** A 429/503 kept after MAX_RETRIES retries (recorded with its status). */
    gaveUp?: boolean;
    /** A non-HTML 2xx response's X-Robots-Tag with noindex/nofollow/none, and its type. */
    nonHtmlRobots?: { tag: string; type: string } | null;
    page: null | {
      facts: PageFacts;
      noindex: boolean;
      follow: boolean;
      canonicalOther: string | null;
      fired: FiredCheck[];
      /** Its facts are the previous audit's (a 304, or the same body): crawl/reuse.ts. */
      reused?: boolean;
      /** What the page keeps for the next audit (incremental crawls; null: too large). */
      keep?: { entry: ReuseEntry; bytes: number } | null;
    };
  };

/** What the pool fetches with, and when it stops taking entries. */
export interface FetchPoolOptions {
  /** Timeouts, body caps, the address guard, the byte budget. */
  settings: FetchSettings;
  robots: RobotsSource;
  politeness: Politeness;
  /** Library banners for the page checks (read once per script per audit). */
  banners: BannerReader;
  /** The page checks' counts, added to as pages are parsed. */
  tally: PageTally;
  /** The crawled site (page_facts.ts `siteKeyOf`): which links are internal. */
  siteKey: string;
  /** Epoch ms the audit runs at (for `unavailable_after`). */
  now: number;
  /** Distinct internal links kept per page. */
  linksPerPage: number;
  /** Same-site resources are collected for broken_resources (false: the check is off). */
  resources: boolean;
  /** Workers (1 to 32). */
  concurrency: number;
  /** `performance.now()` after which no entry is taken, nor a politeness slot waited for. */
  stopAt: number;
  /**
   * Whether the crawl's budgets (pages, bytes, deadline) allow no further fetch, given the
   * fetches this pool has started and not given back (`reserved`).
   */
  outOfBudget: (reserved: number) => boolean;
  /** The error-rate stop (health.ts): once it trips, no further entry is taken. */
  health?: Health;
  /** An incremental crawl's stored pages, per entry (crawl/reuse.ts); absent: none. */
  reuse?: StepReuse | null;
}

/**
 * The options every caller of `fetchBatch` derives alike (a crawl step and a partitioned range):
 * what it fetches with, the crawl's input and caps, and when it stops; the caller adds its own
 * budget, health and reuse.
 *
 * @example
 * ```ts
 * import type { FetchPoolOptions } from "./fetch_pool.ts";
 * declare const tools: Pick<
 *   FetchPoolOptions,
 *   "settings" | "robots" | "politeness" | "banners" | "tally" | "siteKey"
 * >;
 * const o = poolOptions(tools, { now: Date.now(), concurrency: 8 }, { linksPerPage: 500 }, 5_000);
 * ```
 */
export function poolOptions(
  tools: Pick<
    FetchPoolOptions,
    "settings" | "robots" | "politeness" | "banners" | "tally" | "siteKey"
  >,
  input: { now: number; concurrency: number },
  caps: { linksPerPage: number; resources?: number },
  stopAt: number,
): Omit<FetchPoolOptions, "outOfBudget" | "health" | "reuse"> {
  return {
    ...tools,
    now: input.now,
    linksPerPage: caps.linksPerPage,
    resources: (caps.resources ?? 0) > 0,
    concurrency: input.concurrency,
    stopAt,
  };
}

/**
 * Fetches frontier entries with bounded concurrency, in order, until they run out, the step's
 * time is up or a budget is spent. Returns one result per entry taken, in frontier order: the
 * entries after the last result are left for a later step.
 *
 * @example
 * ```ts
 * import type { Frontier } from "./frontier.ts";
 * declare const frontier: Frontier, entries: Parameters<typeof fetchBatch>[0];
 * declare const o: FetchPoolOptions, limits: { ms: number };
 * const { settings, robots, politeness, banners, tally } = o;
 * declare const state: { siteKey: string; fetches: number };
 * declare const input: { now: number; concurrency: number; maxPages: number };
 * declare const caps: { linksPerPage: number };
 * const results = await fetchBatch(entries, {
 *   settings, robots, politeness, banners, tally,
 *   siteKey: state.siteKey, now: input.now, linksPerPage: caps.linksPerPage,
 *   concurrency: input.concurrency, stopAt: performance.now() + limits.ms,
 *   resources: true,
 *   outOfBudget: (reserved) => state.fetches + reserved >= input.maxPages,
 * });
 * frontier.advance(results.length);
 * ```
 */
export async function fetchBatch(
  entries: readonly FrontierEntry[],
  opts: FetchPoolOptions,
): Promise<Fetched[]> {
  const results: (Fetched | "deferred")[] = [];
  let next = 0;
  let reserved = 0;
  let stopped = false;
  // The step's time budget as a wall-clock instant, for the politeness slots.
  const deadline = Date.now() + (opts.stopAt - performance.now());
  const worker = async () => {
    while (!stopped && next < entries.length) {
      if (
        performance.now() > opts.stopAt || opts.outOfBudget(reserved) || opts.health?.tripped
      ) {
        stopped = true;
        return;
      }
      const i = next++;
      const e = entries[i];
      const u = new URL(e.url);
      reserved++; // before any await, so concurrent workers see the budget taken
      const r = await opts.robots.for(u.origin);
      if (!r.isAllowed(e.url)) {
        reserved--; // not fetched: no page budget used
        results[i] = { kind: "blocked" };
        continue;
      }
      if (!(await opts.politeness.wait(u.host, r.crawlDelay, deadline))) {
        reserved--;
        results[i] = "deferred";
        stopped = true;
        return;
      }
      const got = results[i] = await fetchOne(e, u, opts, opts.reuse?.prior[i] ?? null);
      const error = isError(got);
      if (error !== null) opts.health?.note(error, got.kind === "retry" ? got.afterMs : undefined);
      const kind = got.kind;
      if (kind === "skipped" || kind === "retry") reserved--;
    }
  };
  const concurrency = Math.max(1, Math.min(opts.concurrency, MAX_CONCURRENCY));
  await Promise.all(Array.from({ length: concurrency }, worker));
  // Every entry a worker took has its result: a worker finishes the entry it took. An entry whose
  // slot fell beyond the step ends the batch there; entries after it that were fetched all the
  // same are fetched again by the next step (rare: slots are taken nearly in frontier order).
  const taken = results.slice(0, next);
  const cut = taken.indexOf("deferred");
  return (cut < 0 ? taken : taken.slice(0, cut)) as Fetched[];
}

/**
 * Fetches one entry (its politeness slot already taken) and, for an HTML 2xx page, parses and
 * checks it. A 429 (or 503 with Retry-After) slows the host down and sends the URL back, until
 * its retries are spent. With `prior` (what the previous audit stored of the URL) the request is
 * conditional, and a 304 or an unchanged body is judged on the stored facts, unparsed: as the
 * status, headers and size they were stored with.
 */
async function fetchOne(
  e: FrontierEntry,
  u: URL,
  opts: FetchPoolOptions,
  prior: ReuseEntry | null,
): Promise<Fetched> {
  let res: SafeResponse;
  const startedAt = Date.now();
  try {
    res = await fetchPage(opts.settings, e.url, prior ? conditionalHeaders(prior) : undefined);
  } catch (err) {
    if (err instanceof BudgetSpentError) return { kind: "skipped" };
    return { kind: "failed", failure: failureKind(err) };
  }
  const throttle = throttleOf(res.status, res.headers, Date.now());
  let gaveUp = false;
  if (throttle !== null) {
    opts.politeness.throttle(u.host, throttle, startedAt);
    if ((e.retry ?? 0) < MAX_RETRIES) return { kind: "retry", afterMs: throttle };
    gaveUp = true;
  }
  try {
    const unmodified = prior !== null && res.status === 304;
    const status = unmodified ? prior.s : res.status;
    const headers = unmodified ? new Headers(prior.hd) : res.headers;
    const loc = headers.get("location");
    const location = status >= 300 && status < 400 && loc ? canonicalize(loc, e.url) : null;
    const base = {
      kind: "response" as const,
      status,
      ttfbMs: Math.round(res.ttfbMs),
      bytes: unmodified ? prior.b : res.body.byteLength,
      location,
      ...(gaveUp ? { gaveUp } : {}),
    };
    if (status < 200 || status >= 300) return { ...base, page: null };
    if (!isHtmlType(headers.get("content-type"))) {
      return { ...base, nonHtmlRobots: nonHtmlRobots(headers), page: null };
    }
    const digest = opts.reuse ? (unmodified ? prior.h : bodyDigest(res.body)) : "";
    const reused = prior !== null && (unmodified || prior.h === digest);
    const facts = reused ? prior.f : extractPageFacts(
      res.body,
      u,
      opts.siteKey,
      opts.linksPerPage,
      opts.resources ? MAX_RESOURCES_PER_PAGE : 0,
    );
    // The facts as the parse gave them: the checks read facts and never change them.
    const keep = opts.reuse
      ? reuseEntry(
        {
          etag: res.headers.get("etag") ?? (unmodified ? prior.e ?? null : null),
          lastModified: res.headers.get("last-modified") ??
            (unmodified ? prior.m ?? null : null),
        },
        digest,
        status,
        unmodified ? prior.hd : keptHeaders(headers),
        base.bytes,
        facts,
      )
      : undefined;
    const noindex = isNoindex(facts, headers, opts.now);
    const ctx: PageContext = {
      url: u,
      status,
      headers,
      facts,
      depth: e.depth,
      isHome: e.depth === 0,
      indexable: !noindex,
      now: opts.now,
      scriptLibraries: facts.libraryScripts.length > 0
        ? await opts.banners.librariesOf(facts.libraryScripts)
        : undefined,
    };
    const canon = resolveCanonicals(ctx);
    let canonicalOther: string | null = null;
    if (canon.length === 1 && canon[0] !== null) {
      const c = canonicalUrl(canon[0]);
      if (c !== e.url) canonicalOther = c;
    }
    const fired = opts.tally.add(ctx);
    return {
      ...base,
      page: {
        facts,
        noindex,
        follow: !isNofollowPage(facts.robotsMeta, headers),
        canonicalOther,
        fired,
        ...(reused ? { reused } : {}),
        ...(keep !== undefined ? { keep } : {}),
      },
    };
  } catch {
    return { kind: "failed", failure: "internal" };
  }
}

/**
 * Whether a result is an error the error-rate stop counts (health.ts): a 5xx, a 429, a fetch
 * that failed; null for an entry blocked by robots.txt or left unfetched by the byte budget.
 */
export function isError(r: Fetched): boolean | null {
  if (r.kind === "blocked" || r.kind === "skipped") return null;
  if (r.kind === "retry") return true;
  if (r.kind === "failed") return r.failure !== "refused" && r.failure !== "budget";
  return r.status >= 500 || r.status === 429;
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
