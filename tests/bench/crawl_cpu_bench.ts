/**
 * CPU per page (issue 34 item 1): the CPU milliseconds the service spends per crawled page (its
 * user + system time over the pages, the worker child included), beside the floor measured in
 * the same run: a bare `fetch` of the same pages (8 in flight) plus a bare `htmlparser2` parse of
 * each, in this process. The site runs as its own process (tests/bench/servers/big_site.ts), so
 * neither side pays for serving. The issue's target: the service within 2x the floor.
 *
 * `BENCH_CPU_PAGES` sets the sizes (comma-separated; default 10000, with `SERPWRIGHT_DEEP=1`
 * 10000,100000); the jobs run in the worker child, as `deno task start` runs them (its peak RSS
 * printed), or with `BENCH_CPU_RUNNER=inline` in the service's own process;
 * `BENCH_CPU_PROFILE=<dir>` writes the service's CPU profile there (tests/bench/cpu_profile_top.ts
 * reads it), its jobs inline unless `BENCH_CPU_RUNNER=child` (then only the API is profiled).
 * Beside the total it prints the CPU by thread and by phase: the crawl (up to the last page
 * fetched) and the site-wide passes after it.
 * Run: deno task bench crawl_cpu
 */
import process from "node:process";
import { Parser } from "htmlparser2";
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { childrenOf, startSiteProcess } from "./site_process.ts";

const SIZES = (Deno.env.get("BENCH_CPU_PAGES") ??
  (Deno.env.get("SERPWRIGHT_DEEP") === "1" ? "10000,100000" : "10000")).split(",").map(Number);
/** `BENCH_CPU_PROFILE=<dir>`: the service writes a V8 CPU profile there (read it with cpu_profile_top.ts). */
const PROFILE_DIR = Deno.env.get("BENCH_CPU_PROFILE");
/** `BENCH_CPU_KB`: the pages' size in KB (default 15, the issue's ~15 KB pages; 0: ~2.8 KB). */
const PAGE_KB = Number(Deno.env.get("BENCH_CPU_KB") ?? 15);
const FLAGS = [
  "--v8-flags=--max-semi-space-size=2",
  ...(PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : []),
];
/**
 * Jobs in the worker child by default, as `deno task start` runs them (its flags:
 * jobs/worker_child.ts, `WORKER_SEMI_SPACE_MIB` and `WORKER_HEAP_GROWING_PERCENT` passed
 * through), and the child's peak RSS printed; `BENCH_CPU_RUNNER=inline`: in the service's own
 * process under FLAGS.
 */
const RUNNER = (Deno.env.get("BENCH_CPU_RUNNER") ?? (PROFILE_DIR ? "inline" : "child")) === "inline"
  ? "inline"
  : "child";
const TICK_MS = 10; // /proc reports CPU in clock ticks of 1/100 s on Linux
/** How often the audit's status (and the site's requests served) is polled, ms. */
const POLL_MS = 250;

/** `pid` and its live descendants (Linux /proc). */
function processTree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(processTree)];
}

/** User + system CPU of `pid` and every live descendant, ms (Linux /proc). */
function treeCpuMs(pid: number): number {
  let total = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = Deno.readTextFileSync(`/proc/${p}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += (Number(f[11]) + Number(f[12])) * TICK_MS;
    } catch {
      // a process that ended while read
    }
  }
  return total;
}

/**
 * CPU of the live threads of `pid` and its descendants by role, ms (Linux /proc/<pid>/task): the
 * JavaScript threads, Deno KV's SQLite threads (`sw-*`), V8's helper threads (GC and compilation)
 * and the rest (the async runtime's I/O threads). Threads that already ended are not counted.
 */
function threadCpuMs(root: number): Record<string, number> {
  const out: Record<string, number> = { js: 0, kv: 0, v8: 0, other: 0 };
  for (const pid of processTree(root)) {
    try {
      for (const e of Deno.readDirSync(`/proc/${pid}/task`)) {
        const stat = Deno.readTextFileSync(`/proc/${pid}/task/${e.name}/stat`);
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        const ms = (Number(f[11]) + Number(f[12])) * TICK_MS;
        const role = e.name === String(pid)
          ? "js"
          : /^sw-/.test(name)
          ? "kv"
          : /^V8 /.test(name)
          ? "v8"
          : "other";
        out[role] += ms;
      }
    } catch {
      // the process ended
    }
  }
  return out;
}

/** CPU of every thread role (`threadCpuMs`) added up, ms. */
function sum(byRole: Record<string, number>): number {
  return Object.values(byRole).reduce((a, b) => a + b, 0);
}

/** The kernel's high-water mark of RSS of `pid`'s first child process, MiB (Linux /proc). */
function childPeakMib(pid: number): number {
  const child = childrenOf(pid)[0];
  try {
    const status = Deno.readTextFileSync(`/proc/${child}/status`);
    return Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024);
  } catch {
    return 0; // no child, or it ended
  }
}

/** The floor: fetch every page 8 at a time and parse it with a bare htmlparser2. */
async function floorCpuMs(origin: string, pages: number): Promise<number> {
  const before = process.cpuUsage();
  let next = 0;
  let tags = 0;
  const worker = async () => {
    while (next < pages) {
      const i = next++;
      const text = await (await fetch(`${origin}/p/${i}`)).text();
      const parser = new Parser({ onopentag: () => tags++ }, { decodeEntities: true });
      parser.write(text);
      parser.end();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const used = process.cpuUsage(before);
  if (tags === 0) throw new Error("the floor parsed nothing");
  return (used.user + used.system) / 1000;
}

for (const pages of SIZES) {
  const site = await startSiteProcess("big_site.ts", String(pages), `kb=${PAGE_KB}`);
  const kvFile = await tempKvPath();
  const server = await startServer(
    kvFile.path,
    {
      CRAWL_MAX_PAGES: String(pages),
      CRAWL_CONCURRENCY: "8",
      RATE_LIMIT_PER_MINUTE: "100000000",
      JOB_RUNNER: RUNNER,
      ...Object.fromEntries(
        ["WORKER_SEMI_SPACE_MIB", "WORKER_HEAP_GROWING_PERCENT"].flatMap((name) => {
          const v = Deno.env.get(name);
          return v === undefined ? [] : [[name, v]];
        }),
      ),
    },
    30_000,
    FLAGS,
  );
  try {
    const floor = await floorCpuMs(site.origin, pages);
    const { accountId, key } = await liveAccount(server);
    const paid = await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
    if (paid.status !== 200) throw new Error(`credits: ${paid.text}`);
    const project = await newProject(server, key, site.origin);
    const servedBefore = (await site.stats()).served;
    const cpuBefore = treeCpuMs(server.pid!);
    const threadsBefore = threadCpuMs(server.pid!);
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    let status = "";
    // The crawl ends with its last fetch; the site-wide passes follow. The service's threads are
    // read at each poll that sees the site serve more: the last such reading ends the crawl (to
    // within one poll, POLL_MS).
    let served = servedBefore;
    let atLastFetch = threadsBefore;
    while (status !== "completed" && status !== "failed") {
      await new Promise((r) => setTimeout(r, POLL_MS));
      const now = (await site.stats()).served;
      if (now > served) {
        served = now;
        atLastFetch = threadCpuMs(server.pid!);
      }
      status = (await server.req("GET", `/v1/audits/${started.body.audit_id}`, { key })).body
        .status;
    }
    const cpu = treeCpuMs(server.pid!) - cpuBefore;
    const threads = threadCpuMs(server.pid!);
    const child = RUNNER === "child"
      ? `; worker child peak RSS ${childPeakMib(server.pid!)} MiB`
      : "";
    const crawled = (await site.stats()).served - servedBefore;
    const perPage = cpu / crawled;
    const floorPer = floor / pages;
    console.log(
      `crawl cpu ${pages / 1000}k: ${status}; service ${perPage.toFixed(2)} ms CPU per page ` +
        `(${crawled} requests, worker child included); floor (bare fetch, 8 in flight, + bare ` +
        `htmlparser2 parse) ${floorPer.toFixed(2)} ms; ratio ${(perPage / floorPer).toFixed(1)}x ` +
        `(target <= 2x) ${perPage / floorPer <= 2 ? "OK" : "MISS"}; jobs ${RUNNER}${child}; ` +
        `${PAGE_KB ? `~${PAGE_KB} KB` : "~2.8 KB"} pages`,
    );
    const per = (role: string, from = threadsBefore, to = threads) =>
      ((to[role] - from[role]) / crawled).toFixed(2);
    console.log(
      `  by thread, ms a page: JavaScript ${per("js")}, KV's SQLite ${per("kv")}, ` +
        `V8 helpers (GC, compiler) ${per("v8")}, other ${per("other")}`,
    );
    const phase = (from: Record<string, number>, to: Record<string, number>) =>
      `${((sum(to) - sum(from)) / crawled).toFixed(2)} (JavaScript ${per("js", from, to)}, ` +
      `SQLite ${per("kv", from, to)}, V8 helpers ${per("v8", from, to)})`;
    console.log(
      `  by phase, ms a page: crawl (fetch, parse, page checks, writes) ${
        phase(threadsBefore, atLastFetch)
      }; site-wide passes ${phase(atLastFetch, threads)}`,
    );
  } finally {
    // A profile is written only by a process that exits on its own.
    await (PROFILE_DIR ? server.stop() : server.kill());
    await site.close();
    await kvFile.remove();
  }
}
