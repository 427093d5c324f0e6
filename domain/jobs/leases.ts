import type { RunningJobMarker } from "./types.ts";
import { atomic, type Deps, type Key, keys, list, read } from "../platform/mod.ts";

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

/** The record key of each leased job kind, by the marker's kind (the key table's own names). */
const RECORD_KEY: Record<string, (accountId: string, id: string) => Key<{ leaseUntil: number }>> = {
  audit: keys.audit,
  article: keys.article,
  recheck: keys.recheck,
};

/**
 * Hands back at once every job `worker` held (a process seen dead by its supervisor, or one
 * stopping): each lease ends now, exactly as if it had run out, and a message brings any
 * worker to the job, which takes it as a new attempt (the step in flight is repeated, no more).
 * A lease taken or renewed since the marker was read is left alone (the marker is checked: every
 * claim and renewal rewrites it). Returns how many jobs were handed back.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps;
 * await handBackJobsOf(deps, "wrk_1a2b3c"); // the child with that id exited
 * ```
 */
export async function handBackJobsOf(deps: Deps, worker: string): Promise<number> {
  let handed = 0;
  for await (const m of list(deps.kv, { prefix: keys.runningJobs() })) {
    if (m.value.worker !== worker) continue;
    const kind = m.key[1] as "audit" | "article" | "recheck";
    const recordKey = RECORD_KEY[kind]?.(m.value.accountId, m.value.id);
    if (!recordKey) continue;
    const entry = await read(deps.kv, recordKey);
    if (!entry.value) continue;
    const now = deps.clock.now();
    const op = atomic(deps.kv).check(m).check(entry)
      .set(entry.key, { ...entry.value, leaseUntil: now })
      .set(m.key, { id: m.value.id, accountId: m.value.accountId, leaseUntil: now });
    deps.queue.enqueueIn(op, { type: kind, id: m.value.id });
    if ((await op.commit()).ok) handed++;
  }
  return handed;
}

/** Job counts by kind: rows waiting in the job table, and leased (accepted, unfinished) jobs. */
export interface JobCounts {
  queued: Record<string, number>;
  running: Record<string, number>;
}

/**
 * Counts the job table's rows by message type (due or not; KV's native queue cannot be counted,
 * so it shows none) and the running markers by kind, up to `limit` rows each: what the operator's
 * health and the `serpwright.jobs` gauge show.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps;
 * const { queued, running } = await countJobs(deps);
 * ```
 */
export async function countJobs(deps: Deps, limit = 1000): Promise<JobCounts> {
  const out: JobCounts = { queued: {}, running: {} };
  const rows = list(deps.kv, {
    start: keys.jobQueue(0, ""),
    end: keys.jobQueue(Number.MAX_SAFE_INTEGER, ""),
  }, { limit });
  for await (const row of rows) {
    const type = row.value?.message?.type ?? "unknown";
    out.queued[type] = (out.queued[type] ?? 0) + 1;
  }
  for await (const m of list(deps.kv, { prefix: keys.runningJobs() }, { limit })) {
    const kind = String(m.key[1]);
    out.running[kind] = (out.running[kind] ?? 0) + 1;
  }
  return out;
}
