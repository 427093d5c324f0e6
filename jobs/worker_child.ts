/**
 * The `all` role's job runner: a `SERVICE_ROLE=worker` child process on the same KV file,
 * started with this process and restarted when it dies. Crawls, renders and writing then never
 * share the API's event loop or heap: a hostile site can at worst exhaust the child, which the
 * OS and this supervisor replace, while the API keeps answering. The child gets the environment
 * its jobs need, not the operator's and payment secrets (`ADMIN_TOKEN`, `STRIPE_*`).
 *
 * @example
 * ```ts
 * const child = superviseWorkerChild({ env: Deno.env.toObject() });
 * // ... serve ...
 * await child.stop(); // SIGTERM, wait for its graceful stop (SIGKILL after the grace)
 * ```
 *
 * @module
 */

const MAIN = new URL("../main.ts", import.meta.url).pathname;
const REPO = new URL("../", import.meta.url).pathname;

/** Variables the child never gets: none of its jobs needs them. */
const WITHHELD = /^(ADMIN_TOKEN|STRIPE_.*|PORT)$/;
const RESTART_MIN_MS = 1_000;
const RESTART_MAX_MS = 30_000;
const STOP_GRACE_MS = 60_000;

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

/**
 * The child's permissions: those this process has, the run permission only when it has every
 * permission (the browser of rendered audits needs them all, as `deno task start:render` gives).
 */
function permissionFlags(): string[] {
  if (allPermissions()) return ["--allow-all"];
  return PERMISSIONS.filter((n) => n !== "run" && n !== "ffi" && granted(n)).map((n) =>
    `--allow-${n}`
  );
}

const PERMISSIONS = ["net", "env", "read", "write", "sys", "ffi", "run", "import"] as const;
const granted = (name: typeof PERMISSIONS[number]) =>
  Deno.permissions.querySync({ name }).state === "granted";

/**
 * Every permission granted (`--allow-all`): what the browser of rendered audits needs, and so
 * whether the child can render.
 */
export function allPermissions(): boolean {
  return PERMISSIONS.every(granted);
}

/** Starts the child and keeps it running until `stop()`. */
export function superviseWorkerChild(opts: {
  env: Record<string, string>;
  onLog?: (line: Record<string, unknown>) => void;
}): WorkerChild {
  const log = opts.onLog ?? ((l) => console.log(JSON.stringify(l)));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(opts.env)) if (!WITHHELD.test(k)) env[k] = v;
  Object.assign(env, {
    SERVICE_ROLE: "worker",
    HEALTH_PORT: "0",
    HOST: "127.0.0.1",
    // The child reads its stdin, a pipe from this process, and stops at its end (exitWithParent).
    SERPWRIGHT_PARENT_PIPE: "1",
  });
  let child: Deno.ChildProcess | null = null;
  let stopping = false;
  let restarts = 0;
  let delay = RESTART_MIN_MS;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let exited: Promise<unknown> = Promise.resolve();

  const start = () => {
    timer = null;
    if (stopping) return;
    const startedAt = Date.now();
    child = new Deno.Command(Deno.execPath(), {
      // The young-generation size `deno task start` runs with (see README "Measured").
      args: ["run", "--v8-flags=--max-semi-space-size=2", ...permissionFlags(), MAIN],
      cwd: REPO,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "inherit",
      stderr: "inherit",
    }).spawn();
    const me = child;
    exited = me.status.then((status) => {
      if (child === me) child = null;
      if (stopping) return;
      // A child that lived a while restarts at once; one that keeps dying backs off.
      delay = Date.now() - startedAt > RESTART_MAX_MS ? RESTART_MIN_MS : delay;
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
