/**
 * Waiting for what the service does in the background: audits, articles, deliveries, schedules.
 * Every wait goes through `pollUntil(read, done, options)`, which reads a state again until it is
 * done and, once its time is up, fails with the last state it read (a stuck audit shows its status
 * and error); `truthy` as `done` waits for a read that returns something.
 *
 * Why reading, not draining: the in-process test app runs its jobs on Deno KV's native queue
 * (`kv.listenQueue`), which offers no way to run what is queued on demand, and an audit's steps
 * fetch a real loopback site meanwhile. So a test waits for a job by reading its resource over
 * HTTP until the status moves. `app.service.tick()` is the drain where there is one: it runs the
 * periodic work (schedules, sweeps, pruning) and the due rows of the job table (JOB_QUEUE=table);
 * tests of those tick instead of waiting for the timer.
 */
import type { ReqOptions, TestApp, TestResponse } from "./app.ts";

export interface PollOptions {
  /** Give up after this long; default 30 s. */
  timeoutMs?: number;
  /** The pause between two reads; default 25 ms. */
  intervalMs?: number;
  /** What is awaited, for the failure message. */
  what?: string;
  /**
   * A read that throws counts as "not yet" (a child process being killed or started); by
   * default the error ends the wait at once.
   */
  retryErrors?: boolean;
}

/** The last state read, shortened, for a failure message. */
function describe(state: unknown): string {
  let s: string;
  if (state instanceof Error) s = `${state.name}: ${state.message}`;
  else if (
    state && typeof state === "object" && "status" in state && "text" in state &&
    typeof state.text === "string"
  ) s = `HTTP ${state.status} ${state.text}`;
  else {
    try {
      s = JSON.stringify(state) ?? String(state);
    } catch {
      s = String(state);
    }
  }
  return s.length > 600 ? `${s.slice(0, 600)}…` : s;
}

/**
 * Reads `read()` until `done` holds for what it returns, and returns that (narrowed when `done`
 * is a type guard, as `truthy` is). Reads at once, then every `intervalMs`; past `timeoutMs` it
 * throws with `what` and the last state read.
 */
export function pollUntil<T, U extends T>(
  read: () => Promise<T>,
  done: (state: T) => state is U,
  opts?: PollOptions,
): Promise<U>;
export function pollUntil<T>(
  read: () => Promise<T>,
  done: (state: T) => boolean,
  opts?: PollOptions,
): Promise<T>;
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (state: T) => boolean,
  opts: PollOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 25, what = "the condition", retryErrors = false } = opts;
  const deadline = Date.now() + timeoutMs;
  let last: unknown = "(nothing read)";
  let reads = 0;
  while (true) {
    try {
      const state = await read();
      reads++;
      if (done(state)) return state;
      last = state;
    } catch (err) {
      if (!retryErrors) throw err;
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what} (${reads} reads); last: ${
          describe(last)
        }`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** `done` for "until it returns something": `pollUntil(read, truthy)` answers what was read. */
export function truthy<T>(state: T): state is Exclude<T, null | undefined | false | 0 | ""> {
  return Boolean(state);
}

/** Anything that answers JSON requests: a test app, or a server in a child process. */
export interface Requester {
  req(method: string, path: string, opts?: ReqOptions): Promise<TestResponse>;
}

/** GETs `path` with `key` until the body's `status` is one of `statuses`; returns that response. */
export function waitForStatus(
  server: Requester,
  key: string,
  path: string,
  statuses: readonly string[],
  opts: PollOptions = {},
): Promise<TestResponse> {
  return pollUntil(
    () => server.req("GET", path, { key }),
    (res) => statuses.includes(res.body?.status),
    { what: `${path} to be ${statuses.join(" or ")}`, ...opts },
  );
}

/** Audit statuses that end it. */
export const AUDIT_ENDED = ["completed", "failed"] as const;
/** Article statuses that end it. */
export const ARTICLE_ENDED = ["ready", "failed"] as const;

/**
 * Waits for audit `auditId` (as `key` sees it) to reach one of `until` (default: completed or
 * failed), and returns `GET /v1/audits/{id}`'s response.
 */
export function waitForAudit(
  server: Requester,
  key: string,
  auditId: string,
  opts: PollOptions & { until?: readonly string[] } = {},
): Promise<TestResponse> {
  const { until = AUDIT_ENDED, ...poll } = opts;
  return waitForStatus(server, key, `/v1/audits/${auditId}`, until, poll);
}

/**
 * Waits for article `articleId` (as `key` sees it) to reach one of `until` (default: ready or
 * failed), and returns `GET /v1/articles/{id}`'s response.
 */
export function waitForArticle(
  server: Requester,
  key: string,
  articleId: string,
  opts: PollOptions & { until?: readonly string[] } = {},
): Promise<TestResponse> {
  const { until = ARTICLE_ENDED, ...poll } = opts;
  return waitForStatus(server, key, `/v1/articles/${articleId}`, until, poll);
}

/**
 * Lets in-flight work settle, for "nothing more happens" assertions: the one wait that is a sleep
 * on purpose, since there is no state to read for something that must not happen.
 */
export function quiet(ms = 300): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Ticks the service (the cron's work: due schedules dispatched, the job table drained) and reads
 * project `projectId`'s schedule, until `done` holds for it; returns that schedule.
 */
export function tickUntilSchedule(
  app: TestApp,
  key: string,
  projectId: string,
  // deno-lint-ignore no-explicit-any
  done: (schedule: any) => boolean,
  opts: PollOptions = {},
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  return pollUntil(
    async () => {
      await app.service.tick();
      return (await app.req("GET", `/v1/projects/${projectId}/schedule`, { key })).body;
    },
    done,
    { timeoutMs: 10_000, intervalMs: 20, what: "the scheduled run", ...opts },
  );
}
