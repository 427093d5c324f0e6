/**
 * A crawl that protects the site and itself: when too many of the last responses are errors
 * (5xx, 429, a fetch that failed), the crawl pauses instead of pressing on, backs off, and if the
 * site still fails after its pauses, ends with what it has and an `error_rate` entry in
 * `limits_hit` rather than crawling a failing site slowly for an hour.
 *
 * The pause fits the resumable steps: it is a time in the crawl state (`pausedUntil`, wall
 * clock, like politeness), the step ends at once and the job layer schedules the next step for
 * then (`StepOutcome.delayMs`), so no step sleeps holding its lease. After a pause a short probe
 * (PROBE responses) judges the site again; a healthy full window forgets the pauses.
 *
 * @example
 * ```ts
 * const health = new Health({ recent: [], pauses: 0, pausedUntil: 0 }, DEFAULT_ERROR_STOP);
 * health.note(true); // an error
 * health.tripped; // false: the window is not full yet
 * ```
 *
 * @module
 */
/** The operator's error-rate stop (config.ts `CRAWL_ERROR_*`). */
export interface ErrorStopSettings {
  /** Share of errors among the last `window` responses that pauses the crawl (0 < x ≤ 1). */
  maxRate: number;
  /** Responses judged together. */
  window: number;
  /** The first pause, ms; each further one doubles, and a longer Retry-After wins. */
  pauseMs: number;
  /** The longest pause, ms (a Retry-After is honoured up to it). */
  maxPauseMs: number;
  /** Pauses after which a site still failing ends the crawl. */
  pauses: number;
}

export const DEFAULT_ERROR_STOP: ErrorStopSettings = {
  maxRate: 0.5,
  window: 20,
  pauseMs: 30_000,
  maxPauseMs: 5 * 60_000,
  pauses: 3,
};

/** Responses a probe after a pause judges (at most the window). */
const PROBE = 5;

import type { HealthState } from "../types.ts";
export type { HealthState };

/** The judgement of a step's responses. */
export type HealthVerdict = "ok" | "paused" | "stop";

/** The site's health over one step, on the state's `HealthState` (changed in place). */
export class Health {
  /** The threshold was passed during this step (later responses do not undo it). */
  #passed = false;

  constructor(private readonly state: HealthState, private readonly s: ErrorStopSettings) {}

  private get window(): number {
    return Math.max(1, this.s.window);
  }

  /** Responses needed before a judgement: a short probe after a pause, else the window. */
  private get need(): number {
    return this.state.pauses > 0 ? Math.min(PROBE, this.window) : this.window;
  }

  /** Notes one response (`retryAfterMs`: what a 429/503 asked for). */
  note(error: boolean, retryAfterMs?: number): void {
    const r = this.state.recent;
    r.push(error ? 1 : 0);
    if (r.length > this.window) r.splice(0, r.length - this.window);
    if (error && retryAfterMs !== undefined) {
      this.state.retryAfterMs = Math.max(this.state.retryAfterMs ?? 0, retryAfterMs);
    }
    if (this.#over()) this.#passed = true;
  }

  private get errors(): number {
    return this.state.recent.slice(-this.need).reduce((a, b) => a + b, 0);
  }

  #over(): boolean {
    const n = Math.min(this.need, this.state.recent.length);
    return n >= this.need && this.errors / n >= this.s.maxRate;
  }

  /** The recent responses passed the threshold this step: no further fetch should start. */
  get tripped(): boolean {
    return this.#passed;
  }

  /**
   * Judges the step's responses at its end: pauses the crawl (until an instant in the state),
   * ends it when the pauses are spent, or forgets the pauses once a full window is healthy.
   */
  judge(nowMs: number): HealthVerdict {
    const st = this.state;
    if (!this.#passed && !this.#over()) {
      if (st.pauses > 0 && st.recent.length >= this.window) st.pauses = 0;
      return "ok";
    }
    if (st.pauses >= this.s.pauses) return "stop";
    const backoff = this.s.pauseMs * 2 ** st.pauses;
    const asked = st.retryAfterMs ?? 0;
    st.pausedUntil = nowMs + Math.min(this.s.maxPauseMs, Math.max(backoff, asked));
    st.pauses++;
    st.total = (st.total ?? 0) + 1;
    st.recent = [];
    delete st.retryAfterMs;
    this.#passed = false;
    return "paused";
  }

  /** Ms the crawl still waits (0: it may fetch). */
  waitMs(nowMs: number): number {
    return Math.max(0, this.state.pausedUntil - nowMs);
  }
}
