/** The source of time; injected everywhere so tests can move it. */
export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/**
 * A clock tests can move by hand.
 *
 * @example
 * ```ts
 * const clock = manualClock(Date.parse("2026-01-01T00:00:00Z"));
 * clock.advance(15 * 86_400_000);
 * ```
 */
export function manualClock(
  start = Date.now(),
): Clock & { advance(ms: number): void; set(ms: number): void } {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
    set(ms: number) {
      t = ms;
    },
  };
}

/** ISO 8601 UTC string of epoch milliseconds, or null. */
export function iso(ms: number | null | undefined): string | null {
  return ms == null ? null : new Date(ms).toISOString();
}
