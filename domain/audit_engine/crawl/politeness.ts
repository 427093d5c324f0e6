/**
 * Politeness: how fast the crawl may ask each host. Three things slow it, each per host:
 *
 * - a request rate cap (`maxRps`: the audit's `max_rps`, within the operator's `CRAWL_MAX_RPS`),
 *   which spaces request starts `1000 / maxRps` ms apart, whatever the concurrency;
 * - robots.txt `Crawl-delay` for our token, honoured up to MAX_CRAWL_DELAY_S (a larger value is
 *   clamped, and the value asked for is reported);
 * - a host that answers 429 (or 503 with `Retry-After`): no request to it starts before the
 *   `Retry-After` (seconds or an HTTP-date, at most MAX_RETRY_AFTER_S; a 429 without one waits
 *   DEFAULT_RETRY_AFTER_S), and its rate halves (an uncapped host is taken to run at UNCAPPED_RPS),
 *   never below MIN_RPS. The URL itself is queued again (fetch_pool.ts, at most MAX_RETRIES times).
 *
 * The per-host pace lives in the crawl state (`PaceState`, committed with each step), not in
 * memory, so it holds across steps and processes. A step never sleeps past its own time budget:
 * a slot beyond the budget is left for the next step (`wait` answers false).
 *
 * @module
 */
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Crawl-delay honoured at most, in seconds; larger values are clamped (and reported). */
export const MAX_CRAWL_DELAY_S = 10;
/** Retry-After honoured at most, in seconds; a longer one waits this long. */
export const MAX_RETRY_AFTER_S = 60;
/** The wait after a 429 that names none. */
export const DEFAULT_RETRY_AFTER_S = 5;
/** Times one URL is queued again after a 429/503; then it is recorded with that status. */
export const MAX_RETRIES = 3;
/** The slowest a throttling host makes the crawl: one request per 10 s. */
export const MIN_RPS = 0.1;
/** The rate an uncapped crawl is taken to have had when a host first throttles it. */
export const UNCAPPED_RPS = 4;
/** Hosts whose pace the state keeps (the crawl stays on one site: a few hosts at most). */
const MAX_HOSTS = 16;

import type { HostPace, PaceState, PolitenessReport } from "../types.ts";
export type { HostPace };

export type { PaceState };

export type { PolitenessReport };

/**
 * An audit's rate cap: its own `max_rps` may only lower the operator's `CRAWL_MAX_RPS` (which is
 * both the default and the ceiling); null when neither is set.
 */
export function effectiveMaxRps(
  audit: number | undefined | null,
  operator: number | null,
): number | null {
  const a = audit ?? null;
  if (a === null) return operator;
  return operator === null ? a : Math.min(a, operator);
}

export function newPace(): PaceState {
  return { hosts: {}, throttled: 0, retries: 0, gaveUp: 0, crawlDelayAsked: 0 };
}

/**
 * The milliseconds a `Retry-After` value asks for: delay-seconds or an HTTP-date (RFC 9110
 * 10.2.3); null when absent or unreadable. Not capped here.
 */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  // HTTP-date: IMF-fixdate, RFC 850 or asctime, all starting with a day name.
  if (!/^[A-Za-z]{3,9},? /.test(v)) return null;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Whether a response asks the crawl to slow down, and for how long (ms, capped): a 429 always
 * (DEFAULT_RETRY_AFTER_S without a Retry-After), a 503 only with a Retry-After (a 503 without one
 * is an error page like any other). Null: not a throttle.
 */
export function throttleOf(status: number, headers: Headers, now: number): number | null {
  if (status !== 429 && status !== 503) return null;
  const ra = retryAfterMs(headers.get("retry-after"), now);
  if (ra === null && status === 503) return null;
  return Math.min(ra ?? DEFAULT_RETRY_AFTER_S * 1000, MAX_RETRY_AFTER_S * 1000);
}

/**
 * The pace of one step's requests, over the state's `PaceState` (changed in place: the step
 * commits it with the state).
 */
export class Politeness {
  /** Throttles seen per host in this step: a waiter whose slot predates one takes another. */
  private readonly epochs = new Map<string, number>();

  constructor(
    private readonly pace: PaceState,
    private readonly maxRps: number | null,
    /** The slots several workers of one crawl share (crawl/partition.ts); absent: this step's. */
    private readonly shared?: SharedSlots,
  ) {}

  private host(name: string): HostPace {
    let h = this.pace.hosts[name];
    if (!h) {
      const names = Object.keys(this.pace.hosts);
      if (names.length >= MAX_HOSTS) {
        // Forget the host whose slot is furthest in the past: the one least likely to matter.
        names.sort((a, b) => this.pace.hosts[a].next - this.pace.hosts[b].next);
        delete this.pace.hosts[names[0]];
      }
      h = this.pace.hosts[name] = { next: 0, rps: this.maxRps, slowedAt: 0 };
    } else if (this.maxRps !== null && (h.rps === null || h.rps > this.maxRps)) {
      h.rps = this.maxRps;
    }
    return h;
  }

  /** Ms between two request starts to a host with this Crawl-delay (s). */
  private intervalMs(h: HostPace, crawlDelayS: number): number {
    const rate = h.rps !== null && h.rps > 0 ? 1000 / h.rps : 0;
    const delay = Math.min(Math.max(0, crawlDelayS), MAX_CRAWL_DELAY_S) * 1000;
    return Math.max(rate, delay);
  }

  /**
   * Waits for the next slot of `host` (robots.txt asks `crawlDelayS` of it) and takes it. Answers
   * false, without taking a slot, when the slot falls after `deadline` (epoch ms, the step's time
   * budget): it then sleeps until the deadline, so a step waiting on a long Retry-After ends its
   * budget waiting instead of handing over at once, and the next step waits on.
   */
  async wait(host: string, crawlDelayS: number, deadline: number): Promise<boolean> {
    if (crawlDelayS > this.pace.crawlDelayAsked) this.pace.crawlDelayAsked = crawlDelayS;
    while (true) {
      const h = this.host(host);
      const now = Date.now();
      const slot = Math.max(now, h.next);
      if (slot > deadline) {
        if (deadline > now) await sleep(deadline - now);
        return false;
      }
      const interval = this.intervalMs(h, crawlDelayS);
      // An unpaced host costs the shared store nothing; a paced one takes its slot there, so
      // the pace holds across every worker of the crawl.
      if (this.shared && interval > 0) {
        return await this.sharedWait(h, host, slot, interval, deadline);
      }
      h.next = slot + interval;
      if (slot <= now) return true;
      const epoch = this.epochs.get(host) ?? 0;
      await sleep(slot - now);
      // A throttle that came in meanwhile moved the host's slots past ours: take a new one.
      if ((this.epochs.get(host) ?? 0) === epoch) return true;
    }
  }

  private async sharedWait(
    h: HostPace,
    host: string,
    notBefore: number,
    interval: number,
    deadline: number,
  ): Promise<boolean> {
    const slot = await this.shared!.take(host, notBefore, interval, deadline);
    if (slot === null) {
      const now = Date.now();
      if (deadline > now) await sleep(deadline - now);
      return false;
    }
    h.next = Math.max(h.next, slot + interval);
    const wait = slot - Date.now();
    if (wait > 0) await sleep(wait);
    return true;
  }

  /**
   * A host answered 429/503 to a request started at `startedAt`: no request to it starts for
   * `afterMs`, and its rate halves, once per wave (answers to requests started before the last
   * halving echo the same overload and do not halve it again).
   */
  throttle(host: string, afterMs: number, startedAt: number): void {
    const h = this.host(host);
    const now = Date.now();
    this.pace.throttled++;
    if (startedAt >= h.slowedAt) {
      h.rps = Math.max(MIN_RPS, (h.rps ?? UNCAPPED_RPS) / 2);
      h.slowedAt = now;
    }
    h.next = Math.max(h.next, now + afterMs);
    this.epochs.set(host, (this.epochs.get(host) ?? 0) + 1);
  }
}

/** Per-host request slots kept outside one step, shared by all the workers of a crawl. */
export interface SharedSlots {
  /**
   * Takes the first slot of `host` at or after `notBefore` and holds the host for `intervalMs`
   * after it; null (nothing taken) when that slot falls after `deadline`.
   */
  take(
    host: string,
    notBefore: number,
    intervalMs: number,
    deadline: number,
  ): Promise<number | null>;
}

/** The politeness report of a finished crawl. */
export function politenessReport(pace: PaceState, maxRps: number | null): PolitenessReport {
  const rates = Object.values(pace.hosts).map((h) => h.rps).filter((r): r is number => r !== null);
  const finalRps = rates.length > 0 ? Math.min(...rates) : null;
  const asked = pace.crawlDelayAsked;
  return {
    maxRps,
    crawlDelay: asked > 0 ? Math.min(asked, MAX_CRAWL_DELAY_S) : null,
    crawlDelayClamped: asked > MAX_CRAWL_DELAY_S ? asked : null,
    throttled: pace.throttled,
    retries: pace.retries,
    gaveUp: pace.gaveUp,
    finalRps: finalRps === null ? null : Math.round(finalRps * 1000) / 1000,
    slowed: asked > 0 || pace.throttled > 0,
  };
}
