/**
 * Wires the service: configuration from the environment (validated, failing fast), KV, the HTTP
 * app, the queue listener and the crons, all in one process on one KV.
 *
 * Run with `deno task dev` or `deno task start`. Importing this module starts nothing.
 */
import { KeyResolver, KeyUsageTracker } from "./domain/auth.ts";
import { type Clock, systemClock } from "./domain/clock.ts";
import { type Config, ConfigError, configNotices, loadConfig } from "./domain/config.ts";
import type { Deps } from "./domain/deps.ts";
import { RenderService } from "./domain/render/service.ts";
import { createDispatcher, type JobHandlers } from "./jobs/dispatcher.ts";
import { installProcessGuard } from "./jobs/process_guard.ts";
import { kvQueue } from "./jobs/queue.ts";
import { tableQueue } from "./jobs/table_queue.ts";
import { withBusyRetry } from "./kv/busy_retry.ts";
import { RateLimiter } from "./kv/rate_limiter.ts";
import { ADMIN_AUTH_FAILURES_PER_WINDOW, ADMIN_AUTH_WINDOW_MS } from "./routes/middleware/auth.ts";
import { buildApp } from "./routes/app.ts";
import { capabilities } from "./capabilities.ts";
import type { Services } from "./routes/env.ts";

/** A running service: its address and how to stop it cleanly. */
export interface RunningService {
  url: string;
  port: number;
  services: Services;
  /** Resolves when the queue listener has stopped (after the KV is closed). */
  finished: Promise<void>;
  /** Runs the periodic maintenance once (what the crons do), for tests and the crons themselves. */
  tick(): Promise<void>;
  close(): Promise<void>;
}

export interface StartOptions {
  config: Config;
  kv?: Deno.Kv;
  clock?: Clock;
  /** Register the Deno.cron schedules (not in tests: a cron cannot be unregistered). */
  crons?: boolean;
  onListen?: (addr: Deno.NetAddr) => void;
}

/** Builds the long-lived services for a KV and clock. */
export function createServices(deps: Deps): Services {
  return {
    deps,
    resolver: new KeyResolver(deps),
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
      adminFailures: new RateLimiter(deps.kv, deps.clock, {
        name: "admin_auth_failures",
        limit: ADMIN_AUTH_FAILURES_PER_WINDOW,
        windowMs: ADMIN_AUTH_WINDOW_MS,
        mode: "strict",
      }),
    },
  };
}

/** Starts HTTP, the queue listener and the maintenance loop on one KV. */
export async function startService(options: StartOptions): Promise<RunningService> {
  const { config } = options;
  const kv = options.kv ?? await openKv(config.kvPath);
  const clock = options.clock ?? systemClock;
  const table = config.jobQueue === "table" ? tableQueue(kv) : null;
  const render = new RenderService(config);
  const deps: Deps = { kv, clock, config, queue: table ?? kvQueue(kv), render };
  const services = createServices(deps);

  const handlers: JobHandlers = {};
  const maintenance: (() => Promise<void>)[] = [
    () => services.keyUsage.flush(),
    () => services.limits.key.flush(),
    () => services.limits.ip.flush(),
    () => services.limits.account.flush(),
  ];
  for (const cap of capabilities) {
    Object.assign(handlers, cap.jobs?.(services));
    if (cap.maintenance) maintenance.push(() => cap.maintenance!(services));
  }

  // Start hooks prepare, they never gate serving: a failure is logged like a maintenance task's.
  for (const cap of capabilities) {
    try {
      await cap.start?.(services);
    } catch (err) {
      console.error(
        JSON.stringify({
          level: "error",
          msg: "start task failed",
          task: cap.name,
          error: String(err),
        }),
      );
    }
  }
  const app = buildApp(services, capabilities.flatMap((c) => (c.routes ? [c.routes] : [])));
  const dispatch = createDispatcher(handlers);
  const stopPolling = new AbortController();
  const listening = table ? table.listen(dispatch, stopPolling.signal) : kv.listenQueue(dispatch);
  if (table) maintenance.push(async () => void await table.drain(dispatch));

  const tick = async () => {
    for (const task of maintenance) {
      try {
        await task();
      } catch (err) {
        console.error(
          JSON.stringify({ level: "error", msg: "maintenance failed", error: String(err) }),
        );
      }
    }
  };
  // Flushing in-memory usage every few seconds keeps KV writes off the request path.
  const timer = setInterval(tick, 5_000);
  if (options.crons) {
    Deno.cron("serpwright maintenance", "* * * * *", { backoffSchedule: [1000, 5000] }, tick);
  }

  const ac = new AbortController();
  let resolveAddr: (a: Deno.NetAddr) => void;
  const addrReady = new Promise<Deno.NetAddr>((r) => (resolveAddr = r));
  const server = Deno.serve({
    port: config.port,
    hostname: config.host,
    signal: ac.signal,
    onListen: (addr) => {
      resolveAddr(addr as Deno.NetAddr);
      options.onListen?.(addr as Deno.NetAddr);
    },
  }, app.fetch);
  const addr = await addrReady;
  const host = addr.hostname === "0.0.0.0" ? "127.0.0.1" : addr.hostname;

  return {
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    services,
    finished: listening.catch(() => {}),
    tick,
    async close() {
      clearInterval(timer);
      stopPolling.abort();
      ac.abort();
      await server.finished;
      await tick();
      await render.close();
      if (!options.kv) {
        kv.close();
        await listening.catch(() => {});
      }
    },
  };
}

/** Opens KV at a file path (creating its folder), `:memory:`, or a KV Connect URL. */
export async function openKv(path: string): Promise<Deno.Kv> {
  if (path !== ":memory:" && !/^https?:\/\//.test(path)) {
    const dir = path.replace(/\/[^/]*$/, "");
    if (dir && dir !== path) await Deno.mkdir(dir, { recursive: true });
  }
  // Processes sharing a local KV file meet each other's SQLite locks: retried, never a 500.
  return withBusyRetry(await Deno.openKv(path));
}

if (import.meta.main) {
  installProcessGuard(); // an error nothing handled is logged, never the end of the process
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
  const service = await startService({
    config,
    crons: true,
    onListen: (a) => console.log(`Serpwright listening on http://${a.hostname}:${a.port}`),
  });
  // Graceful stop: finish in-flight requests, flush in-memory usage and counters, close KV.
  const shutdown = async () => {
    await service.close();
    Deno.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, shutdown);
}
