/**
 * A KV that answers as a remote one would (KV Connect to a Deploy database, a self-hosted denokv
 * across a network): every operation waits one round trip before it reaches the store. `get`,
 * `getMany`, `set`, `delete`, `enqueue` and an atomic `commit` cost one round trip each; a `list`
 * costs one per batch it pulls, as Deno's list iterator pulls them: batches of `batchSize` (by
 * default the `limit`, or 100, at most 500), none once the `limit` is reached or after a batch
 * that came back short.
 * Only the benchmark (tests/bench/remote_kv_bench.ts) and the crawl's latency test use it.
 *
 * `serial` (optional) says where the waiting was: the time with at least one round trip in flight,
 * over the delay, is the number of round trips made one after another, each share charged to the
 * call site of the oldest round trip in flight (the first frame of the service's own code outside
 * its KV helpers). Round trips that overlap an older one cost nothing there, which is the point.
 * It counts a round trip the process does not wait for as well (commits sent ahead while it
 * records pages, work of other jobs): an upper bound, whose drops show what a change cut.
 *
 * @example
 * ```ts
 * import { withLatency } from "./latency_kv.ts";
 * const kv = withLatency(await Deno.openKv(":memory:"), 10);
 * await kv.set(["a"], 1); // resolves after about 10 ms
 * kv.close();
 * ```
 *
 * @module
 */

/** Counts of the round trips a latency KV made, by kind. */
export interface RoundTrips {
  reads: number;
  writes: number;
  commits: number;
  listBatches: number;
}

/**
 * Round trips one after another (in-flight time over the delay), by call site. Requests to the
 * API (a test polling the audit) are kept apart, under `requests`: they wait beside the crawl,
 * not in its way.
 */
export class SerialTrips {
  readonly bySite = new Map<string, number>();
  requests = 0;
  #inFlight = new Map<number, string>();
  /** API requests in flight (their call sites say nothing: only how many). */
  #requestsInFlight = 0;
  #next = 0;
  #since = 0;

  constructor(readonly delayMs: number) {}

  /** Starts a round trip from the caller's call site; answers its end. */
  begin(): () => void {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 40;
    const stack = new Error().stack ?? "";
    Error.stackTraceLimit = limit;
    const request = /\/routes\//.test(stack);
    this.#charge();
    if (request) {
      this.#requestsInFlight++;
      return () => {
        this.#charge();
        this.#requestsInFlight--;
      };
    }
    const id = this.#next++;
    this.#inFlight.set(id, callSite(stack));
    return () => {
      this.#charge();
      this.#inFlight.delete(id);
    };
  }

  /** The time since the last event, to the oldest round trip in flight. */
  #charge() {
    const now = performance.now();
    const oldest = this.#inFlight.values().next();
    if (!oldest.done && this.delayMs > 0) {
      const site = oldest.value;
      this.bySite.set(site, (this.bySite.get(site) ?? 0) + (now - this.#since) / this.delayMs);
    }
    if (this.#requestsInFlight > 0) this.requests += (now - this.#since) / this.delayMs;
    this.#since = now;
  }

  /** Forgets what was counted so far (a run's setup before the part measured). */
  reset(): void {
    this.bySite.clear();
    this.requests = 0;
  }
}

/** Helper frames that say nothing about who asked: the wrapper, the KV helpers, the runtime. */
const HELPERS = /latency_kv\.ts|crawl\/store\.ts|domain\/platform\/|ext:|node:|<anonymous>/;

function callSite(stack: string): string {
  for (const line of stack.split("\n").slice(1)) {
    const m = line.match(/\/((?:domain|jobs|app|routes)\/[^:\s()]+\.ts)/);
    if (m && !HELPERS.test(line)) return m[1];
  }
  return "other";
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** `kv` with `delayMs` before every round trip; `trips` counts them. */
export function withLatency(
  kv: Deno.Kv,
  delayMs: number,
  trips: RoundTrips = { reads: 0, writes: 0, commits: 0, listBatches: 0 },
  serial?: SerialTrips,
): Deno.Kv {
  const wait = async (kind: keyof RoundTrips) => {
    trips[kind]++;
    const end = serial?.begin();
    if (delayMs > 0) await sleep(delayMs);
    end?.();
  };
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      const call = (args: unknown[]) => value.apply(target, args);
      switch (prop) {
        case "get":
        case "getMany":
          return async (...args: unknown[]) => {
            await wait("reads");
            return await call(args);
          };
        case "set":
        case "delete":
        case "enqueue":
          return async (...args: unknown[]) => {
            await wait("writes");
            return await call(args);
          };
        case "atomic":
          return () => delayedAtomic(target.atomic(), () => wait("commits"));
        case "list":
          return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) =>
            delayedList(
              target.list(selector, options),
              options?.batchSize ?? Math.min(options?.limit ?? 100, 500),
              options?.limit,
              () => wait("listBatches"),
            );
      }
      return value.bind(target);
    },
  });
}

/** The atomic operation with its `commit` one round trip later; building it costs nothing. */
function delayedAtomic(op: Deno.AtomicOperation, wait: () => Promise<void>) {
  const proxy: Deno.AtomicOperation = new Proxy(op, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "commit") {
        return async () => {
          await wait();
          return await target.commit();
        };
      }
      // Builders return the operation itself: hand back the proxy so `commit` stays delayed.
      return (...args: unknown[]) => {
        const out = value.apply(target, args);
        return out === target ? proxy : out;
      };
    },
  });
  return proxy;
}

/**
 * The list iterator with a round trip wherever Deno's iterator pulls a batch: before its first
 * item and once a batch of `batch` items is used up, unless `limit` items were served (then it
 * ends without asking). A batch that comes back short ends the list without another pull: the
 * store's iterator is done there too, so passing its end through costs nothing.
 */
function delayedList<T>(
  it: Deno.KvListIterator<T>,
  batch: number,
  limit: number | undefined,
  wait: () => Promise<void>,
): Deno.KvListIterator<T> {
  let served = 0;
  let left = 0;
  const proxy: Deno.KvListIterator<T> = new Proxy(it, {
    get(target, prop) {
      if (prop === "next") {
        return async () => {
          const atLimit = limit !== undefined && served >= limit;
          if (left === 0 && !atLimit) {
            await wait();
            left = batch;
          }
          const r = await target.next();
          if (!r.done) {
            served++;
            left--;
          }
          return r;
        };
      }
      if (prop === Symbol.asyncIterator) return () => proxy;
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return proxy;
}
