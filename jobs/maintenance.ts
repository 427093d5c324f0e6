/**
 * A process's periodic work, run by its timer and by the cron: its own in-memory counters
 * flushed every time; the shared work (stale-job sweeps, schedule dispatch, pruning) only while
 * it holds the leader lease; due jobs from the job table where the process runs jobs (on Deno
 * Deploy no poller lives long, so the cron is what runs them). A tick is single-flight: a call
 * while one runs waits for that one, so the timer and the cron never overlap.
 *
 * @example
 * ```ts
 * type Options = Parameters<typeof createMaintenance>[0];
 * declare const kv: Deno.Kv, clock: Options["clock"], flushes: Options["flushes"];
 * declare const shared: Options["shared"];
 * const m = createMaintenance({ kv, clock, flushes, shared, leaderLeaseMs: 30_000 });
 * setInterval(() => void m.tick(), 5_000);
 * await m.stop(); // at shutdown: no shared work starts, counters flushed, lease given up
 * ```
 *
 * @module
 */
import type { Clock } from "../domain/platform/mod.ts";
import { LeaderLease } from "./leader.ts";

export interface Task {
  name: string;
  run: () => Promise<unknown>;
}

export interface Maintenance {
  /** Runs the periodic work once (single-flight). */
  tick(): Promise<void>;
  /** Whether this process led at its last tick. */
  leading(): boolean;
  /** Takes no further shared work, waits for a running tick, flushes, gives up the lease. */
  stop(): Promise<void>;
}

export function createMaintenance(opts: {
  kv: Deno.Kv;
  clock: Clock;
  /** This process's own counters. */
  flushes: Task[];
  /** Work that must run once across processes. */
  shared: Task[];
  /** Due jobs from the job table, where this process runs jobs. */
  drain?: () => Promise<unknown>;
  leaderLeaseMs: number;
  /** Told whether this process leads, after each tick's try. */
  onLeading?: (leading: boolean) => void;
}): Maintenance {
  const leader = new LeaderLease(opts.kv, "maintenance", {
    ttlMs: opts.leaderLeaseMs,
    now: opts.clock.now,
  });
  let leading = false;
  let stopped = false;
  let running: Promise<void> | null = null;
  const runAll = async (tasks: Task[]) => {
    for (const task of tasks) {
      try {
        await task.run();
      } catch (err) {
        console.error(JSON.stringify({
          level: "error",
          msg: "maintenance failed",
          task: task.name,
          error: String(err),
        }));
      }
    }
  };
  const tick = (): Promise<void> => {
    running ??= (async () => {
      await runAll(opts.flushes);
      if (stopped) return;
      leading = await leader.acquire().catch(() => false);
      opts.onLeading?.(leading);
      if (leading && !stopped) await runAll(opts.shared);
      if (opts.drain && !stopped) await runAll([{ name: "due jobs", run: opts.drain }]);
    })().finally(() => (running = null));
    return running;
  };
  return {
    tick,
    leading: () => leading,
    async stop() {
      stopped = true;
      await running;
      await runAll(opts.flushes);
      await leader.release().catch(() => {});
      leading = false;
      opts.onLeading?.(false);
    },
  };
}
