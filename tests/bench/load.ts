/**
 * Drives a server with wrk when it is installed (a C load generator barely competes with the server
 * for the 2 cores), else with autocannon from npm. Returns requests/s and latency percentiles.
 */
import autocannon from "autocannon";

export interface LoadResult {
  tool: string;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

export async function hasWrk(): Promise<boolean> {
  try {
    const out = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.code === 0 || out.code === 1;
  } catch {
    return false;
  }
}

export async function load(
  url: string,
  opts: { connections?: number; seconds?: number; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const connections = opts.connections ?? 50;
  const seconds = opts.seconds ?? 5;
  if (await hasWrk()) {
    const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency"];
    for (const [k, v] of Object.entries(opts.headers ?? {})) args.push("-H", `${k}: ${v}`);
    const out = await new Deno.Command("wrk", { args: [...args, url], stdout: "piped" }).output();
    const text = new TextDecoder().decode(out.stdout);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? 0);
    const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
    const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(
      text,
    );
    return {
      tool: "wrk",
      rps,
      p50Ms: latency(text, "50%"),
      p99Ms: latency(text, "99%"),
      non2xx,
      errors: errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
    };
  }
  const r = await autocannon({ url, connections, duration: seconds, headers: opts.headers });
  return {
    tool: "autocannon",
    rps: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
}

function latency(text: string, pct: string): number {
  const m = new RegExp(`\\s${pct.replace("%", "%")}\\s+([\\d.]+)(us|ms|s)`).exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === "us" ? v / 1000 : m[2] === "s" ? v * 1000 : v;
}

/** Starts a Deno script as a child process and waits until it answers on `readyUrl`. */
export async function spawnServer(
  script: string,
  env: Record<string, string>,
  readyUrl: string,
): Promise<Deno.ChildProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", script],
    env,
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(readyUrl);
      await res.body?.cancel();
      return child;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  child.kill();
  throw new Error(`${script} did not start`);
}

export async function stop(child: Deno.ChildProcess): Promise<void> {
  try {
    child.kill("SIGTERM");
  } catch { /* already gone */ }
  await child.status;
}
