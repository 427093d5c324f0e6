/**
 * Lab conditions of a rendered page: Lighthouse's default mobile profile, so our numbers can be
 * read next to a Lighthouse mobile report.
 *
 * - CPU: 4× slowdown (Lighthouse `cpuSlowdownMultiplier: 4`), applied by Chromium itself through
 *   CDP `Emulation.setCPUThrottlingRate`.
 * - Network: Lighthouse's "slow 4G" (`mobileSlow4G`: RTT 150 ms, 1.6 Mbit/s down, 750 kbit/s up)
 *   in its DevTools form, i.e. with Lighthouse's adjustment factors: 562.5 ms request latency
 *   (150 × 3.75) and 1,474.56 kbit/s down (1.6 × 1024 × 0.9), 675 kbit/s up.
 *
 * The network part is applied by us, not by CDP `Network.emulateNetworkConditions`: every
 * response the page gets is fulfilled by the guarded network (see `guarded_network.ts`), and
 * Chromium does not throttle responses supplied through request interception (measured: a
 * 100 KB response arrived in ~40 ms with those conditions set). So `SimulatedLink` delays each
 * response by the request latency plus its size over a single shared downlink (responses queue
 * for the link in arrival order, which is what one bottleneck link of that throughput does).
 *
 * @module
 */

export interface ThrottleProfile {
  id: "mobile_slow_4g" | "none";
  /** Added before each response starts (DNS, connection and server round trips, all in one). */
  requestLatencyMs: number;
  /** Throughput of the one simulated downlink, bytes per second. */
  downloadBytesPerSec: number;
  /** CPU slowdown factor (1 = none). */
  cpuSlowdown: number;
}

/** Lighthouse mobile (DevTools throttling numbers), the lab profile of rendered audits. */
export const MOBILE_SLOW_4G: ThrottleProfile = {
  id: "mobile_slow_4g",
  requestLatencyMs: 150 * 3.75,
  downloadBytesPerSec: (1.6 * 1024 * 0.9 * 1024) / 8,
  cpuSlowdown: 4,
};

/** Unthrottled: for pages rendered only to compare the DOM with the raw HTML. */
export const NO_THROTTLING: ThrottleProfile = {
  id: "none",
  requestLatencyMs: 0,
  downloadBytesPerSec: Number.POSITIVE_INFINITY,
  cpuSlowdown: 1,
};

/** One page's simulated downlink: when may a response of `bytes` bytes be delivered. */
export class SimulatedLink {
  #freeAt = 0;
  constructor(
    readonly profile: ThrottleProfile,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * The moment (on `now`'s clock) a response requested at `requestedAt` with `bytes` bytes has
   * fully arrived: after the request latency, and after the link has carried what was queued.
   */
  arrival(requestedAt: number, bytes: number): number {
    const p = this.profile;
    if (p.requestLatencyMs === 0 && !Number.isFinite(p.downloadBytesPerSec)) {
      return requestedAt;
    }
    const ready = requestedAt + p.requestLatencyMs;
    const start = Math.max(ready, this.#freeAt);
    const done = start + (bytes / p.downloadBytesPerSec) * 1000;
    this.#freeAt = done;
    return done;
  }

  /** Waits until the response would have arrived. */
  async deliver(requestedAt: number, bytes: number): Promise<void> {
    const wait = this.arrival(requestedAt, bytes) - this.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
