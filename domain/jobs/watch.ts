/**
 * Waiting for a job record (an audit, an article: the truth of every job) to change, for a caller
 * that holds a request open until its job moves (the MCP tools' `wait`), without polling it.
 *
 * `kv.watch` on the record wakes the waiter at each commit to it. Deno's SQLite KV only reports
 * commits made by its own process, though (measured: a write from a second process on the same
 * file never reaches the watch), so on a local KV file, where the `all` role's worker child and
 * worker processes write the records, the waiter also re-reads every `LOCAL_FILE_RECHECK_MS`. On
 * `:memory:` (one process) and on Deno Deploy's KV or KV Connect, the watch sees every writer.
 *
 * @module
 */
import { type Deps, keys } from "../platform/mod.ts";

/** How often a waiter on a local KV file re-reads, for writes of other processes. */
export const LOCAL_FILE_RECHECK_MS = 1_000;

/** The record a job's status lives in. */
export interface JobRef {
  kind: "audit" | "article" | "recheck";
  accountId: string;
  id: string;
}

export function jobRecordKey(job: JobRef): Deno.KvKey {
  return job.kind === "audit"
    ? keys.audit(job.accountId, job.id)
    : job.kind === "recheck"
    ? keys.recheck(job.accountId, job.id)
    : keys.article(job.accountId, job.id);
}

/** Whether other processes may write this KV without its watches seeing it. */
export function watchMissesOtherProcesses(kvPath: string): boolean {
  return kvPath !== ":memory:" && kvPath !== "" && !/^https?:\/\//i.test(kvPath);
}

export interface RecordWatch {
  /**
   * Resolves `true` when the record may have changed since the previous call (a commit, or a
   * local file's recheck is due; the first call answers at once), `false` at `deadline` (epoch ms,
   * wall clock), on abort, or once the watch is gone.
   */
  next(deadline: number, signal: AbortSignal): Promise<boolean>;
  /** Ends the watch; always call it. */
  close(): void;
}

type Wake = "changed" | "closed" | "timer" | "aborted";

/** Watches one job record. */
export function watchJobRecord(deps: Deps, job: JobRef): RecordWatch {
  const reader = deps.kv.watch([jobRecordKey(job)]).getReader();
  const recheckMs = watchMissesOtherProcesses(deps.config.kvPath) ? LOCAL_FILE_RECHECK_MS : null;
  // A read that lost a race stays pending for the next call (the stream allows one at a time).
  let pending: Promise<Wake> | null = null;
  let closed = false;
  return {
    async next(deadline, signal) {
      const left = deadline - Date.now();
      if (closed || signal.aborted || left <= 0) return false;
      pending ??= reader.read().then(
        (r): Wake => r.done ? "closed" : "changed",
        (): Wake => "closed",
      );
      const sleep = recheckMs === null ? left : Math.min(left, recheckMs);
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort: (() => void) | undefined;
      const wake = await Promise.race<Wake>([
        pending,
        new Promise<Wake>((resolve) => timer = setTimeout(() => resolve("timer"), sleep)),
        new Promise<Wake>((resolve) => {
          onAbort = () => resolve("aborted");
          signal.addEventListener("abort", onAbort, { once: true });
        }),
      ]);
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort!);
      if (wake === "changed") {
        pending = null;
        return true;
      }
      // The timer is a recheck unless it was the deadline's.
      return wake === "timer" && sleep < left;
    },
    close() {
      if (closed) return;
      closed = true;
      reader.cancel().catch(() => {});
    },
  };
}
