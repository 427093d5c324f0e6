import type { RunningJobMarker } from "./types.ts";
import { type Deps, keys, list } from "../platform/mod.ts";

export type { RunningJobMarker };

/**
 * The stale-job sweep: re-sends the queue message of every audit or article whose lease ran out
 * (a lost message, or a process that died mid-run); the handler then resumes or fails it. Nothing
 * is charged again, since the charge was taken once, when the job was accepted.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps;
 * await resendExpiredJobs(deps, "audit"); // from the maintenance tick
 * ```
 */
export async function resendExpiredJobs(
  deps: Deps,
  kind: "audit" | "article" | "recheck",
): Promise<number> {
  const now = deps.clock.now();
  let resent = 0;
  for await (const e of list(deps.kv, { prefix: keys.runningJobsOf(kind) })) {
    if (e.value.leaseUntil <= now) {
      await deps.queue.enqueue({ type: kind, id: e.value.id });
      resent++;
    }
  }
  return resent;
}
