/**
 * What the process benchmarks share: a site server from `servers/` as a process of its own (so
 * its memory and CPU are not counted with the service's), a process's RSS, and a p99.
 *
 * @example
 * ```ts
 * const site = await startSiteProcess("big_site.ts", "10000");
 * console.log(site.origin, rssOf(Deno.pid), p99([1, 2, 3]));
 * await site.close();
 * ```
 */

export interface SiteProcess {
  origin: string;
  /** The big site's counters (`GET /__stats`). */
  stats(): Promise<
    { served: number; distinct: number; twice: number; htmlBytes?: number; notModified?: number }
  >;
  close(): Promise<void>;
}

/** Starts `servers/<script>` with `arg`; resolves once it printed its port. */
export async function startSiteProcess(
  script: string,
  ...args: string[]
): Promise<SiteProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL(`./servers/${script}`, import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${script} exited`);
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  const origin = `http://127.0.0.1:${Number(text.trim())}`;
  return {
    origin,
    stats: async () => await (await fetch(`${origin}/__stats`)).json(),
    close: async () => {
      child.kill("SIGKILL");
      await child.status;
    },
  };
}

/**
 * A process's children (Linux /proc): those of every one of its threads, since a child is listed
 * under the thread that spawned it. None when the process is gone.
 */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      try {
        const text = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`);
        for (const c of text.trim().split(/\s+/)) if (c) out.push(Number(c));
      } catch {
        // a thread that ended while read
      }
    }
  } catch {
    // the process ended
  }
  return out;
}

/** Resident set size of a process, bytes (Linux /proc); 0 when it is gone. */
export function rssOf(pid: number | null | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The 99th percentile of a sample (NaN when empty). */
export function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))] ?? NaN;
}

/**
 * `GET /v1/account` with `key` every 10 ms until `stop` settles: the latencies, ms (what another
 * client of the service sees while the service works).
 */
export async function accountLatencies(
  baseUrl: string,
  key: string,
  stop: Promise<unknown>,
): Promise<number[]> {
  const lat: number[] = [];
  let running = true;
  stop.finally(() => (running = false)).catch(() => {});
  while (running) {
    const t = performance.now();
    const r = await fetch(`${baseUrl}/v1/account`, { headers: { authorization: `Bearer ${key}` } });
    await r.body?.cancel();
    lat.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 10));
  }
  return lat;
}
