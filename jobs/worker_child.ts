/**
 * The `all` role's job runner: a `SERVICE_ROLE=worker` child process on the same KV file,
 * started with this process and restarted when it dies. Crawls, renders and writing then never
 * share the API's event loop or heap: a hostile site can at worst exhaust the child, which the
 * OS and this supervisor replace, while the API keeps answering. The child gets the environment
 * its jobs need, not the operator's and payment secrets (`ADMIN_TOKEN`, `STRIPE_*`).
 *
 * @example
 * ```ts
 * import type { Config } from "../domain/platform/config.ts";
 * declare const config: Config;
 * const child = superviseWorkerChild({ env: Deno.env.toObject(), kvPath: config.kvPath });
 * // ... serve ...
 * await child.stop(); // SIGTERM, wait for its graceful stop (SIGKILL after the grace)
 * ```
 *
 * @module
 */

import { resolve } from "node:path";

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const REPO = new URL("../", import.meta.url).pathname;

/** Variables the child never gets: none of its jobs needs them. */
const WITHHELD = /^(ADMIN_TOKEN|STRIPE_.*|PORT)$/;
const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
const STOP_GRACE_MS = 60_000;
/**
 * Deaths in a row, each within RESTART_MAX_MS of its start, after which the child is deemed
 * impossible to keep alive (it cannot open its KV, its flags are refused...): the supervisor gives
 * up, so the whole process can exit and its own supervisor (systemd, a container) sees it.
 */
const QUICK_DEATHS_LIMIT = 5;

/**
 * The child's V8 old space, MiB (`WORKER_HEAP_MIB`; 0: V8's own limit). Without a cap V8 sizes
 * the heap by the machine's memory and collects lazily: measured, a crawl's worker held 280 MiB
 * of RSS after 2,000 pages whatever its page budget, though what it kept alive was a few tens of
 * MiB; capped, it stayed near 180 MiB at the same pages per second. The site-wide passes keep
 * about 55 bytes per page in typed arrays, outside this cap (domain/audit_engine/crawl/finalize.ts),
 * and their JS heap does not grow with the site (tests/audit_engine/finalize_memory.test.ts).
 */
export const WORKER_HEAP_MIB = 160;

/**
 * The child's V8 young generation (`--max-semi-space-size`, MiB; `WORKER_SEMI_SPACE_MIB`). The API
 * process runs with 2 (`deno task start`); a crawl allocates a page's worth of short-lived objects
 * per page, and with 2 MiB V8 scavenged them so often that collection was a fifth of a crawl's
 * CPU. 16 was no faster than 8 on ~15 KB pages and held ~15 MiB more RSS, which the site-wide
 * passes of a large site need. See docs/deploy.md "Memory of a worker" for the measured trade.
 */
export const WORKER_SEMI_SPACE_MIB = 8;

/**
 * How far the child's old space may grow past what the last full collection kept before the next
 * one, percent (`--heap-growing-percent`; `WORKER_HEAP_GROWING_PERCENT`; 0: V8's own). Under the
 * 160 MiB cap V8 let it grow by only ~15-30%: a crawl promotes ~60 KB a page (a step's records and
 * facts wait for their commit), so the child ran a full collection every ~200 pages, and marking
 * its ~50 MiB of live objects was a fifth of a crawl's CPU. At 75 its helper threads use ~0.15 ms a
 * page less for 6-18 MiB more RSS; 100 saved no more and held more (docs/deploy.md).
 */
export const WORKER_HEAP_GROWING_PERCENT = 75;

/** The child's `MALLOC_ARENA_MAX` unless the parent's environment sets one (glibc's arenas). */
export const WORKER_MALLOC_ARENAS = "2";

/** `env[name]` as a whole number within `min`…`max`, else `fallback`. */
function wholeFrom(
  env: Record<string, string | undefined>,
  name: string,
  fallback: number,
  min = 0,
  max = Infinity,
): number {
  const v = env[name];
  return v !== undefined && /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max
    ? Number(v)
    : fallback;
}

/** The young generation from `WORKER_SEMI_SPACE_MIB` (a whole number of MiB, 1-64), else the default. */
export function workerSemiSpaceMib(env: Record<string, string | undefined>): number {
  return wholeFrom(env, "WORKER_SEMI_SPACE_MIB", WORKER_SEMI_SPACE_MIB, 1, 64);
}

/** The heap cap from `WORKER_HEAP_MIB` (a whole number of MiB; 0: none), else the default. */
export function workerHeapMib(env: Record<string, string | undefined>): number {
  return wholeFrom(env, "WORKER_HEAP_MIB", WORKER_HEAP_MIB);
}

/** The old space's growth from `WORKER_HEAP_GROWING_PERCENT` (whole, 0-300), else the default. */
export function workerHeapGrowingPercent(env: Record<string, string | undefined>): number {
  return wholeFrom(env, "WORKER_HEAP_GROWING_PERCENT", WORKER_HEAP_GROWING_PERCENT, 0, 300);
}

export interface WorkerChild {
  /** The running child's pid, or null between restarts. */
  pid(): number | null;
  /** How many times the child was restarted after dying. */
  restarts(): number;
  /** Stops the child gracefully (it finishes or hands back its jobs) and does not restart it. */
  stop(): Promise<void>;
}

/** Whether this process may start the child (it needs the run permission). */
export function canSpawnWorker(): boolean {
  return Deno.permissions.querySync({ name: "run", command: Deno.execPath() }).state === "granted";
}

const PERMISSIONS = ["net", "env", "read", "write", "sys", "ffi", "run", "import"] as const;
/** A permission this process may hold, by its `Deno.permissions` name. */
export type Grant = typeof PERMISSIONS[number];
const granted = (name: Grant) => Deno.permissions.querySync({ name }).state === "granted";

/**
 * Every permission granted (`--allow-all`): what the browser of rendered audits needs, and so
 * whether the child can render.
 */
export function allPermissions(): boolean {
  return PERMISSIONS.every(granted);
}

/** The KV file both processes open (absolute), or null for a KV Connect URL or Deploy's own. */
export function kvFileOf(kvPath: string, cwd: string): string | null {
  if (kvPath === "" || kvPath === ":memory:" || /^https?:\/\//.test(kvPath)) return null;
  return resolve(cwd, kvPath);
}

/**
 * Whether the child's permissions can name this KV: Deno's permission lists are split on commas,
 * with no escape, so a KV file whose path has one cannot be granted alone (its jobs then run in
 * the parent, with a notice).
 */
export function childCanOpen(kvPath: string): boolean {
  return !(kvFileOf(kvPath, Deno.cwd()) ?? "").includes(",");
}

/**
 * The Deno flags the child runs with, from what this process holds (`granted`) and the KV it
 * opens (`kvPath`). Exported so a test can start a script with exactly these
 * flags and see what they refuse (tests/hardening/worker_child_permissions.test.ts).
 *
 * Without every permission (`deno task start`): read and write of the KV file only (not its
 * folder, which may be the repository with its `.env`; SQLite's `-wal` and `-shm` files are the
 * database's own business, not Deno's), the network (a crawl goes anywhere public), the
 * environment (scrubbed before the spawn, so it holds only the child's own) and `sys` as granted;
 * no run, FFI or import. Modules load without a read permission (Deno's own loader), so no
 * source, cache or `node_modules` path is needed. Deno 2.9 itself refuses `/proc` without
 * `--allow-all`; the read list keeps every other file of the parent's out (its `.env`, its keys,
 * other KV files).
 *
 * With every permission (`deno task start:render`): `--allow-all`, because the render browser
 * cannot run under narrower flags in Deno 2.9: Deno lets only a process holding every permission
 * unconditionally (no scope, no `--deny-*`) read `/proc`, which playwright-core reads as it loads
 * (its WSL probe of `/proc/sys/fs/binfmt_misc`) and the browser pool reads after each page (its
 * process tree and memory); killing a hung browser's processes needs an unscoped `--allow-run`;
 * and a process allowed to run Chromium can run any program through Chromium's own launcher
 * switches anyway. docs/operators.md "Worker child permissions" says what that leaves open.
 */
export function workerChildPermissions(o: {
  kvPath: string;
  granted: (name: Grant) => boolean;
}): string[] {
  if (PERMISSIONS.every(o.granted)) return ["--allow-all"];
  const flags: string[] = [];
  // The child runs in the repository: a relative path is read from there, as the child reads it.
  const file = kvFileOf(o.kvPath, REPO);
  if (file && o.granted("read") && o.granted("write")) {
    flags.push(`--allow-read=${file}`, `--allow-write=${file}`);
  }
  for (const name of ["net", "env", "sys"] as const) {
    if (o.granted(name)) flags.push(`--allow-${name}`);
  }
  return flags;
}

/**
 * The child's whole `deno run` command line after the executable: `main` is main.ts (a test
 * passes its own script to run under the very same flags).
 */
export function workerChildArgs(
  o: {
    kvPath: string;
    granted?: (name: Grant) => boolean;
    main?: string;
    heapMib?: number;
    semiSpaceMib?: number;
    growingPercent?: number;
  },
): string[] {
  const heap = o.heapMib ?? WORKER_HEAP_MIB;
  const semi = o.semiSpaceMib ?? WORKER_SEMI_SPACE_MIB;
  const growing = o.growingPercent ?? WORKER_HEAP_GROWING_PERCENT;
  return [
    "run",
    // A permission the child lacks fails at once; it never waits on a prompt.
    "--no-prompt",
    // What deno.json's `unstable` says, whichever config Deno finds for the child.
    "--unstable-kv",
    "--unstable-cron",
    // The young generation (WORKER_SEMI_SPACE_MIB), an old space capped so V8 collects instead
    // of growing (WORKER_HEAP_MIB), and room to grow between its full collections below that cap
    // (WORKER_HEAP_GROWING_PERCENT).
    `--v8-flags=--max-semi-space-size=${semi}${heap > 0 ? `,--max-old-space-size=${heap}` : ""}${
      growing > 0 ? `,--heap-growing-percent=${growing}` : ""
    }`,
    ...workerChildPermissions({ kvPath: o.kvPath, granted: o.granted ?? granted }),
    o.main ?? MAIN,
  ];
}

/** Starts the child and keeps it running until `stop()`. */
export function superviseWorkerChild(opts: {
  env: Record<string, string>;
  /** The KV the parent opened (`KV_PATH` as configured): the child opens the same. */
  kvPath: string;
  onLog?: (line: Record<string, unknown>) => void;
  /**
   * Called with a dead child's worker id (each child gets its own, `SERPWRIGHT_WORKER_ID`, and
   * names it in the leases it takes) before its replacement starts: the parent hands that
   * child's jobs back at once rather than waiting for their leases to run out.
   */
  onDeath?: (workerId: string) => Promise<unknown>;
  /** Called once when the child keeps dying at start (QUICK_DEATHS_LIMIT in a row); no restart follows. */
  onGiveUp?: (reason: string) => void;
  /** The first restart's delay, doubled after each quick death (default RESTART_MIN_MS). */
  restartMinMs?: number;
}): WorkerChild {
  const log = opts.onLog ?? ((l) => console.log(JSON.stringify(l)));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (!WITHHELD.test(k)) env[k] = v;
  // The child runs in the repository; a relative KV path is the parent's, made absolute, so both
  // open one file and the child's read and write permissions name that file.
  const kvPath = kvFileOf(opts.kvPath, Deno.cwd()) ?? opts.kvPath;
  Object.assign(env, {
    KV_PATH: kvPath,
    SERVICE_ROLE: "worker",
    HEALTH_PORT: "0",
    HOST: "127.0.0.1",
    // The child reads its stdin, a pipe from this process, and stops at its end (exitWithParent).
    SERPWRIGHT_PARENT_PIPE: "1",
  });
  // glibc gives threads that allocate at once arenas of their own (up to 8 a core); two held a
  // 10,000-page crawl's child at 186–187 MiB of RSS against 198–201, at the same CPU. An
  // operator's own value is kept.
  env.MALLOC_ARENA_MAX ??= WORKER_MALLOC_ARENAS;
  let child: Deno.ChildProcess | null = null;
  let stopping = false;
  let restarts = 0;
  const minDelay = opts.restartMinMs ?? RESTART_MIN_MS;
  let delay = minDelay;
  let quickDeaths = 0;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let exited: Promise<unknown> = Promise.resolve();

  const start = () => {
    timer = null;
    if (stopping) return;
    const startedAt = Date.now();
    const workerId = `wrk_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
    child = new Deno.Command(Deno.execPath(), {
      args: workerChildArgs({
        kvPath,
        heapMib: workerHeapMib(opts.env),
        semiSpaceMib: workerSemiSpaceMib(opts.env),
        growingPercent: workerHeapGrowingPercent(opts.env),
      }),
      cwd: REPO,
      env: { ...env, SERPWRIGHT_WORKER_ID: workerId },
      clearEnv: true,
      stdin: "piped",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const me = child;
    exited = me.status.then(async (status) => {
      if (child === me) child = null;
      if (stopping) return;
      if (opts.onDeath) {
        try {
          await opts.onDeath(workerId);
        } catch (err) {
          // Not fatal: the leases then run out as they would for a worker on another machine.
          log({
            level: "error",
            msg: "hand-back of a dead worker's jobs failed",
            error: String(err),
          });
        }
      }
      // A child that lived a while restarts at once; one that keeps dying backs off.
      const lived = Date.now() - startedAt > RESTART_MAX_MS;
      delay = lived ? minDelay : delay;
      quickDeaths = lived ? 0 : quickDeaths + 1;
      if (opts.onGiveUp && quickDeaths >= QUICK_DEATHS_LIMIT) {
        stopping = true;
        opts.onGiveUp(
          `the job worker child died ${quickDeaths} times in a row within ${RESTART_MAX_MS} ms ` +
            `of its start (last exit code ${status.code}, signal ${status.signal ?? "none"})`,
        );
        return;
      }
      log({ level: "error", msg: "job worker exited; restarting", code: status.code, delay });
      restarts++;
      timer = setTimeout(start, delay);
      delay = Math.min(RESTART_MAX_MS, delay * 2);
    });
  };
  start();

  return {
    pid: () => child?.pid ?? null,
    restarts: () => restarts,
    async stop() {
      stopping = true;
      if (timer) clearTimeout(timer);
      const c = child;
      if (!c) return;
      try {
        c.kill("SIGTERM");
      } catch { /* already gone */ }
      const kill = setTimeout(() => {
        try {
          c.kill("SIGKILL");
        } catch { /* gone */ }
      }, STOP_GRACE_MS);
      await exited;
      clearTimeout(kill);
    },
  };
}

/**
 * In the child: ends the process (gracefully) when the parent that started it is gone. The
 * parent holds the write end of the child's stdin, and nothing writes to it: its end of file
 * means the parent exited, was SIGKILLed, or (`deno task dev --watch`) restarted its program in
 * the same process, which a parent-pid check would miss. An orphan would otherwise keep working
 * the queue beside the parent's next child.
 */
export function exitWithParent(shutdown: () => Promise<void>): void {
  (async () => {
    try {
      for await (const _ of Deno.stdin.readable) { /* the parent never writes */ }
    } catch { /* a closed pipe ends the loop too */ }
    await shutdown();
  })();
}
