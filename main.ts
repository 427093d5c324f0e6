/**
 * Wires the service: configuration from the environment (validated, failing fast), KV, and what
 * the process's role runs: the HTTP app (`web`), the job runtime (`worker`), or both (`all`,
 * the default). Periodic shared work runs in whichever process holds the leader lease.
 *
 * Run with `deno task dev`, `deno task start` or `deno task worker`. Importing this module starts
 * nothing.
 */
import os from "node:os";
import {
  ADMIN_AUTH_FAILURES_PER_WINDOW,
  ADMIN_AUTH_WINDOW_MS,
  CLIENT_DOC_FETCHES_PER_HOST,
  KeyResolver,
  KeyUsageTracker,
  TokenResolver,
} from "./domain/identity/mod.ts";
import { type Clock, type Deps, randomPart, systemClock } from "./domain/platform/mod.ts";
import { countJobs, handBackJobsOf, resendExpiredJobs } from "./domain/jobs/mod.ts";
import { handBackSlicesOf } from "./domain/audit_engine/mod.ts";
import { setJobCounts, telemetryOn, telemetrySnapshot } from "./telemetry/mod.ts";
import { type Config, ConfigError, configNotices, devHints, loadConfig } from "./config.ts";
import { RenderService } from "./domain/render/mod.ts";
import { createDispatcher, type JobHandlers, type JobRuntime } from "./jobs/dispatcher.ts";
import { createMaintenance, type Task } from "./jobs/maintenance.ts";
import { installProcessGuard } from "./jobs/process_guard.ts";
import {
  allPermissions,
  canSpawnWorker,
  childCanOpen,
  exitWithParent,
  superviseWorkerChild,
  type WorkerChild,
} from "./jobs/worker_child.ts";
import { kvQueue } from "./jobs/queue.ts";
import { tableQueue } from "./jobs/table_queue.ts";
import { withBusyRetry } from "./kv/busy_retry.ts";
import { RateLimiter } from "./kv/rate_limiter.ts";
import { capabilities, loadRouteGroups } from "./capabilities.ts";
import type { Services } from "./routes/env.ts";
import { WaitSlots } from "./app/wait_slots.ts";
// Past upgrades/mod.ts on purpose: that barrel opens checkouts (stripe), kept off a worker's load.
import { UPGRADE_CODE_FAILURES } from "./domain/upgrades/codes.ts";

/** A running service: its address and how to stop it cleanly. */
export interface RunningService {
  url: string;
  port: number;
  services: Services;
  /** Resolves when the queue listener has stopped (after the KV is closed). */
  finished: Promise<void>;
  /**
   * Runs the periodic maintenance once (what the timer and the crons do): this process's own
   * flushes, the shared work when it leads, and due jobs in job-running roles. Single-flight: a
   * call while one runs waits for that one.
   */
  tick(): Promise<void>;
  /** This process leads the shared periodic work (as of its last tick). */
  leading(): boolean;
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  kv?: Deno.Kv;
  clock?: Clock;
  onListen?: (addr: Deno.NetAddr) => void;
  /** The environment the `all` role's worker child inherits (default: this process's). */
  env?: Record<string, string>;
  /** The id this process's leases name (a worker child gets its supervisor's); default: fresh. */
  workerId?: string;
  /**
   * Called when the process can no longer do its job (its worker child cannot be kept alive); the
   * program exits non-zero so that its supervisor restarts it. Absent: the child is restarted
   * forever.
   */
  onFatal?: (reason: string) => void;
}

/** Builds the long-lived services for a KV and clock. */
export function createServices(deps: Deps): Services {
  const resolver = new KeyResolver(deps);
  return {
    deps,
    process: { role: deps.config.role, leader: false },
    resolver,
    tokens: new TokenResolver(deps, resolver),
    keyUsage: new KeyUsageTracker(deps),
    limits: {
      key: new RateLimiter(deps.kv, deps.clock, {
        name: "key",
        limit: deps.config.rateLimitPerMinute,
        windowMs: 60_000,
        mode: "batched",
      }),
      ip: new RateLimiter(deps.kv, deps.clock, {
        name: "ip",
        limit: deps.config.rateLimitPerMinute,
        windowMs: 60_000,
        mode: "batched",
      }),
      account: new RateLimiter(deps.kv, deps.clock, {
        name: "account",
        limit: deps.config.accountRateLimitPerMinute,
        windowMs: 60_000,
        mode: "batched",
      }),
      signup: new RateLimiter(deps.kv, deps.clock, {
        name: "signup",
        limit: deps.config.signup.perIpPerHour,
        windowMs: 3_600_000,
        mode: "strict",
      }),
      signupGlobal: new RateLimiter(deps.kv, deps.clock, {
        name: "signup_global",
        limit: deps.config.signup.globalPerHour,
        windowMs: 3_600_000,
        mode: "strict",
      }),
      registration: new RateLimiter(deps.kv, deps.clock, {
        name: "oauth_registration",
        limit: deps.config.oauthRegistrationsPerBlockPerHour,
        windowMs: 3_600_000,
        mode: "strict",
      }),
      clientDocHost: new RateLimiter(deps.kv, deps.clock, {
        name: "oauth_client_doc_host",
        limit: CLIENT_DOC_FETCHES_PER_HOST.limit,
        windowMs: CLIENT_DOC_FETCHES_PER_HOST.windowMs,
        mode: "strict",
      }),

      adminFailures: new RateLimiter(deps.kv, deps.clock, {
        name: "admin_auth_failures",
        limit: ADMIN_AUTH_FAILURES_PER_WINDOW,
        windowMs: ADMIN_AUTH_WINDOW_MS,
        mode: "strict",
      }),
      sharedPages: new RateLimiter(deps.kv, deps.clock, {
        name: "shared_pages",
        limit: deps.config.sharedPageRatePerMinute,
        windowMs: 60_000,
        mode: "batched",
      }),
      upgradeCodes: new RateLimiter(deps.kv, deps.clock, {
        name: "upgrade_code_failures",
        limit: UPGRADE_CODE_FAILURES.perIp,
        windowMs: UPGRADE_CODE_FAILURES.windowMs,
        mode: "strict",
      }),
      upgradeCodeBlocks: new RateLimiter(deps.kv, deps.clock, {
        name: "upgrade_code_failures_block",
        limit: UPGRADE_CODE_FAILURES.perBlock,
        windowMs: UPGRADE_CODE_FAILURES.windowMs,
        mode: "strict",
      }),
    },
    mcpWaits: new WaitSlots(deps.config.mcpWaits.perKey, deps.config.mcpWaits.perProcess),
  };
}

/** Starts what the configured role runs, on one KV. */
export async function startService(options: StartOptions): Promise<RunningService> {
  const { config } = options;
  const role = config.role;
  const kv = options.kv ?? await openKv(config.kvPath);
  const clock = options.clock ?? systemClock;
  const table = config.jobQueue === "table" ? tableQueue(kv) : null;
  // The all role on a KV file hands its jobs to a worker child, off this event loop; without
  // the run permission (or on an in-memory KV, which no other process can open) they run here.
  const childJobs = role === "all" && config.jobRunner === "child" && table !== null &&
    config.kvPath !== ":memory:" && !options.kv && canSpawnWorker() &&
    childCanOpen(config.kvPath);
  if (role === "all" && config.jobRunner === "child" && table !== null && !childJobs) {
    console.warn(JSON.stringify({
      level: "warn",
      msg: "feature off",
      notice: "jobs run on the API's event loop: JOB_RUNNER=child needs a KV file (whose path " +
        "has no comma) and --allow-run",
    }));
  }
  const runsJobs = role === "worker" || (role === "all" && !childJobs);
  if (role === "worker" && config.workerNice > 0) lowerPriority(config.workerNice);
  // A web process never renders: rendered audits are accepted for the workers (unless
  // RENDERING=off). The all role's child renders when it has every permission.
  const render = new RenderService(
    config,
    undefined,
    undefined,
    role === "web" ? true : childJobs ? allPermissions() : undefined,
  );
  const worker = runsJobs ? options.workerId ?? `wrk_${randomPart(16)}` : undefined;
  const deps: Deps = { kv, clock, config, queue: table ?? kvQueue(kv), render, worker };
  const services = createServices(deps);
  // Processes that answer keys follow the revocation signal (stopped in close, before the KV).
  if (role !== "worker") services.resolver.follow();

  const stopping = new AbortController();
  const detached = new Set<Promise<unknown>>();
  const runtime: JobRuntime = {
    inline: table !== null,
    stopping: stopping.signal,
    track: (work) => {
      const p = work.catch(() => {}).finally(() => detached.delete(p));
      detached.add(p);
    },
  };
  const handlers: JobHandlers = {};
  // This process's in-memory counters: flushed by every process, at every tick and at close.
  const flushes: Task[] = [
    { name: "key usage", run: () => services.keyUsage.flush() },
    { name: "key rate", run: () => services.limits.key.flush() },
    { name: "ip rate", run: () => services.limits.ip.flush() },
    { name: "account rate", run: () => services.limits.account.flush() },
    { name: "shared page rate", run: () => services.limits.sharedPages.flush() },
  ];
  // Every job-running process also looks for audits whose lease ran out (a worker that vanished),
  // so a crawl moves again within a lease and a tick even when the dead worker was the leader.
  if (runsJobs) {
    flushes.push({
      name: "expired audits",
      run: () => resendExpiredJobs(deps, "audit"),
    });
  }
  // The jobs gauge of the exported metrics, refreshed each tick (only when telemetry exports).
  if (telemetryOn) {
    flushes.push({ name: "job counts", run: async () => setJobCounts(await countJobs(deps)) });
  }
  // Shared periodic work (sweeps, schedule dispatch, pruning): once, by the leader.
  const shared: Task[] = [];
  for (const cap of capabilities) {
    if (runsJobs) Object.assign(handlers, cap.jobs?.(services, runtime));
    if (cap.maintenance) shared.push({ name: cap.name, run: () => cap.maintenance!(services) });
  }

  // Start hooks prepare, they never gate serving: a failure is logged like a maintenance task's.
  for (const cap of capabilities) {
    try {
      await cap.start?.(services);
    } catch (err) {
      logError("start task failed", err, cap.name);
    }
  }
  const dispatch = createDispatcher(handlers);
  // KV's queue delivers a message tens to hundreds of ms after its commit: a job this process
  // created starts here at once (the job table's poll keeps its own pace and concurrency).
  if (runsJobs && !table) deps.queue.kick = (m) => runtime.track(dispatch(m));
  const stopPolling = new AbortController();
  const listening: Promise<void> = !runsJobs
    ? Promise.resolve()
    : table
    ? table.listen(dispatch, stopPolling.signal, config.workerConcurrency)
    : kv.listenQueue(dispatch);

  const maintenance = createMaintenance({
    kv,
    clock,
    flushes,
    shared,
    drain: runsJobs && table ? () => table.drain(dispatch) : undefined,
    leaderLeaseMs: config.leaderLeaseMs,
    onLeading: (leading) => (services.process.leader = leading),
  });
  let closing = false;
  // Flushing in-memory usage every few seconds keeps KV writes off the request path.
  const timer = setInterval(() => void maintenance.tick(), config.maintenanceIntervalMs);

  const ac = new AbortController();
  let resolveAddr: (a: Deno.NetAddr) => void;
  const addrReady = new Promise<Deno.NetAddr>((r) => (resolveAddr = r));
  const onListen = (addr: Deno.NetAddr) => {
    resolveAddr(addr);
    options.onListen?.(addr);
  };
  let server: Deno.HttpServer;
  if (role === "worker") {
    server = Deno.serve({
      port: config.healthPort,
      hostname: config.host,
      signal: ac.signal,
      onListen: (a) => onListen(a as Deno.NetAddr),
    }, (req) =>
      new URL(req.url).pathname === "/health"
        ? Response.json({
          status: closing ? "stopping" : "ok",
          role,
          leader: services.process.leader,
          concurrency: config.workerConcurrency,
          telemetry: telemetrySnapshot(),
        }, { status: closing ? 503 : 200 })
        : new Response("not found", { status: 404 }));
  } else {
    // Loaded here only: a worker serves no API and does not hold its modules.
    const { buildApp } = await import("./routes/app.ts");
    const app = buildApp(services, await loadRouteGroups());
    server = Deno.serve({
      port: config.port,
      hostname: config.host,
      signal: ac.signal,
      onListen: (a) => onListen(a as Deno.NetAddr),
    }, app.fetch);
  }
  const addr = await addrReady;
  const host = addr.hostname === "0.0.0.0" ? "127.0.0.1" : addr.hostname;
  const child: WorkerChild | null = childJobs
    ? superviseWorkerChild({
      env: options.env ?? Deno.env.toObject(),
      kvPath: config.kvPath,
      // The parent saw its child die: that child's jobs go back to the queue now.
      onDeath: (id) => Promise.all([handBackJobsOf(deps, id), handBackSlicesOf(deps.kv, id)]),
      onGiveUp: options.onFatal,
    })
    : null;
  if (child) services.process.worker = { pid: child.pid, restarts: child.restarts };

  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    services,
    finished: listening.catch(() => {}),
    tick: maintenance.tick,
    leading: maintenance.leading,
    async close() {
      // Stop taking work, let what this process holds finish (an audit stops between steps:
      // its next step is queued for any process), flush counters, then close KV.
      closing = true;
      clearInterval(timer);
      stopping.abort();
      stopPolling.abort();
      ac.abort();
      await server.finished;
      await services.resolver.close();
      await child?.stop();
      if (table) await listening.catch(() => {});
      await Promise.all(detached);
      // A tick may be draining due jobs (an audit's step among them): it ends before anything
      // is handed back, or the step in flight would be handed back and fetched again elsewhere.
      await maintenance.stop();
      // A step still leased to this process (one that outlived the grace) is handed back now.
      if (worker) await handBackJobsOf(deps, worker).catch(() => {});
      if (worker) await handBackSlicesOf(deps.kv, worker).catch(() => {});
      await render.close();
      if (!options.kv) {
        kv.close();
        await listening.catch(() => {});
      }
    },
  };
}

/**
 * A worker yields the CPU to the API on a shared machine (its browser inherits the priority).
 * Best effort: without `--allow-sys` or the right to renice, it runs at the usual priority.
 */
function lowerPriority(nice: number): void {
  try {
    os.setPriority(nice);
  } catch (err) {
    logError("worker priority unchanged", err);
  }
}

function logError(msg: string, err: unknown, task?: string): void {
  console.error(JSON.stringify({ level: "error", msg, task, error: String(err) }));
}

/** Opens KV at a file path (creating its folder), `:memory:`, or a KV Connect URL. */
export async function openKv(path: string): Promise<Deno.Kv> {
  // "": the platform's own database (Deno Deploy).
  if (path === "") return withBusyRetry(await Deno.openKv());
  if (path !== ":memory:" && !/^https?:\/\//.test(path)) {
    const dir = path.replace(/\/[^/]*$/, "");
    try {
      if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
    } catch (err) {
      // The worker child may write its KV file only (jobs/worker_child.ts): its parent, which
      // opened the same file first, made the folder.
      if (!(err instanceof Deno.errors.NotCapable)) throw err;
    }
  }
  // Processes sharing a local KV file meet each other's SQLite locks: retried, never a 500.
  return withBusyRetry(await Deno.openKv(path));
}

if (import.meta.main) {
  installProcessGuard(); // an error nothing handled is logged, never the end of the process
  // Registered while the module first evaluates, before any await or server: Deno Deploy picks up
  // only such crons. It ticks the service once that has started (the tick is single-flight, and
  // its shared work runs in the leader only, so every process's cron may fire).
  let service: RunningService | null = null;
  Deno.cron(
    "serpwright maintenance",
    "* * * * *",
    { backoffSchedule: [1000, 5000] },
    () => service?.tick() ?? Promise.resolve(),
  );
  let config: Config;
  try {
    config = loadConfig(Deno.env.toObject());
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      Deno.exit(1);
    }
    throw err;
  }
  for (const notice of configNotices(config)) {
    console.warn(JSON.stringify({ level: "warn", msg: "feature off", notice }));
  }
  // A process that cannot serve exits non-zero with the reason (a taken port, a KV it cannot
  // open, a worker child that keeps dying), so that systemd or a container runtime restarts it.
  const fatal = (reason: string): never => {
    console.error(JSON.stringify({ level: "fatal", msg: "cannot run; exiting", reason }));
    Deno.exit(1);
  };
  let running: RunningService;
  try {
    running = service = await startService({
      config,
      workerId: Deno.env.get("SERPWRIGHT_WORKER_ID") || undefined,
      onFatal: (reason) => {
        // Hands back what this process holds and closes KV before exiting (bounded).
        const closed = service?.close() ?? Promise.resolve();
        Promise.race([closed, new Promise((r) => setTimeout(r, 10_000))]).finally(() =>
          fatal(reason)
        );
      },
      onListen: (a) =>
        console.log(
          config.role === "worker"
            ? `Serpwright worker: health on http://${a.hostname}:${a.port}/health`
            : `Serpwright (${config.role}) listening on http://${a.hostname}:${a.port}`,
        ),
    });
  } catch (err) {
    const what = config.role === "worker"
      ? `health port ${config.healthPort}`
      : `port ${config.port}`;
    fatal(
      err instanceof Deno.errors.AddrInUse || err instanceof Deno.errors.AddrNotAvailable
        ? `cannot listen on ${config.host}:${what}: ${(err as Error).message}`
        : `cannot start (KV_PATH ${JSON.stringify(config.kvPath)}): ${String(err)}`,
    );
  }
  // `deno task dev` (the throwaway ADMIN_TOKEN of .env.dev): how to fund an account without Stripe.
  if (config.role !== "worker") { for (const line of devHints(config)) console.log(line); }
  // Graceful stop: finish in-flight requests, flush in-memory usage and counters, close KV.
  // Once, whichever asks first (a signal, or the end of the parent's pipe in a worker child).
  let stopping: Promise<void> | null = null;
  const shutdown = () =>
    stopping ??= (async () => {
      await running.close();
      Deno.exit(0);
    })();
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, shutdown);
  if (config.role === "worker" && Deno.env.get("SERPWRIGHT_PARENT_PIPE") === "1") {
    exitWithParent(shutdown);
  }
}
