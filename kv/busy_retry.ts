/**
 * Retries of "database is locked". Several processes on one local KV file (an operator running
 * two servers behind one data directory) share one SQLite database; a write that meets another
 * process's write transaction fails at once with `database is locked` instead of waiting. Such a
 * failure changed nothing (SQLite rolls the transaction back), so the operation is simply tried
 * again after a short jittered pause. Everything else is passed through untouched.
 *
 * @module
 */
import { AtomicConflictError } from "./atomic.ts";
import { recordCommit, startTimer } from "../telemetry/mod.ts";

const BUSY = /database (table )?is locked|SQLITE_BUSY/i;
/** Attempts in all; with the pauses below that is 1–3 s of contention before giving up. */
const MAX_ATTEMPTS = 60;

/** True for the transient SQLite lock error. */
export function isBusyError(err: unknown): boolean {
  return err instanceof Error && BUSY.test(err.message);
}

/** Runs `fn`, again while it fails with a lock error. */
export async function retryBusy<T>(fn: () => Promise<T>): Promise<T> {
  for (let i = 1;; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= MAX_ATTEMPTS || !isBusyError(err)) throw err;
      // Locks are held for well under a millisecond: short, jittered pauses.
      const cap = Math.min(50, 2 ** Math.min(i, 6));
      await new Promise((r) => setTimeout(r, 1 + Math.random() * cap));
    }
  }
}

/** KV methods that are one request each and safe to repeat after a lock error. */
const RETRIED = new Set<PropertyKey>(["get", "getMany", "set", "delete", "enqueue"]);

/**
 * The same KV, with lock errors retried on single operations and on atomic commits (`list` and
 * `watch` streams are passed through). Use one wrapped handle everywhere: it is what `openKv`
 * returns.
 *
 * @example
 * ```ts
 * const kv = withBusyRetry(await Deno.openKv("./data/kv.sqlite"));
 * ```
 */
export function withBusyRetry(kv: Deno.Kv): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "atomic") return () => retryingOperation(target.atomic());
      if (RETRIED.has(prop)) {
        return (...args: unknown[]) => retryBusy(() => value.apply(target, args));
      }
      return value.bind(target);
    },
  });
}

/** A commit, retried on lock errors, counted (and timed when telemetry exports). */
async function timedCommit(op: Deno.AtomicOperation) {
  const t0 = startTimer();
  const res = await retryBusy(() => op.commit());
  recordCommit(t0, res.ok);
  return res;
}

/** An atomic operation whose `commit` retries lock errors; builder calls chain on the wrapper. */
function retryingOperation(op: Deno.AtomicOperation): Deno.AtomicOperation {
  const wrapper: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      if (prop === "commit") return () => timedCommit(target);
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out === target ? wrapper : out;
      };
    },
  });
  return wrapper;
}

/**
 * A storage failure that says nothing about the job that met it: a lock held too long, a
 * conflict that kept losing, a commit the store refused for a while, a connection that dropped.
 * The job runtime retries these within the job's attempts instead of failing it.
 */
export function isTransientStoreError(err: unknown): boolean {
  if (isBusyError(err)) return true;
  if (err instanceof AtomicConflictError) return true;
  const e = err as { message?: string } | null;
  return /connection (reset|refused|closed)|timed? ?out|temporar|unavailable|commit (failed|rejected)/i
    .test(String(e?.message ?? ""));
}
