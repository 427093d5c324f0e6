/**
 * Issue 34 item 5: the cost of telemetry on `GET /v1/account` (authenticated, 50 connections):
 *
 * - before: the service as it was before telemetry existed (the parent of the commit that added
 *   telemetry/mod.ts, extracted with `git archive` to a temporary folder; `BENCH_BASE_REF`
 *   picks another commit);
 * - off: this tree, `OTEL_DENO` unset (the default);
 * - on: this tree, `OTEL_DENO=true`, exporting OTLP/HTTP protobuf to a sink in this process
 *   (metrics every 5 s; every request's span exported).
 *
 * Rounds alternate (before, off, on, before, off, on) so the machine's drift spreads over all
 * three; the best round of each is printed with the ratios.
 * Run: deno task bench telemetry
 */
import { load, type LoadResult } from "./load.ts";
import { freePort } from "../helpers/ports.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2);
const repo = new URL("../../", import.meta.url).pathname;

async function git(...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd: repo, stdout: "piped" }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")} failed`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** The commit before telemetry: the parent of the one that added telemetry/mod.ts. */
async function baseRef(): Promise<string> {
  const given = Deno.env.get("BENCH_BASE_REF");
  if (given) return given;
  const added = (await git("log", "--diff-filter=A", "--format=%H", "--", "telemetry/mod.ts"))
    .split("\n").filter(Boolean).pop();
  if (!added) throw new Error("telemetry/mod.ts has no commit that added it");
  return `${added}^`;
}

const ref = await baseRef();
const baseDir = await Deno.makeTempDir({ prefix: "serpwright-base-" });
{
  const archive = new Deno.Command("git", {
    args: ["archive", "--format=tar", ref],
    cwd: repo,
    stdout: "piped",
  }).spawn();
  const tar = new Deno.Command("tar", { args: ["-x", "-C", baseDir], stdin: "piped" }).spawn();
  await archive.stdout.pipeTo(tar.stdin);
  if (!(await tar.status).success || !(await archive.status).success) {
    throw new Error(`could not extract ${ref}`);
  }
}

/** An OTLP/HTTP sink: takes every export and discards it. */
const sink = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.arrayBuffer();
  return new Response(null, { status: 200 });
});

async function measure(dir: string, extra: Record<string, string>): Promise<LoadResult> {
  const kvDir = await Deno.makeTempDir();
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      "--unstable-cron",
      "--v8-flags=--max-semi-space-size=2",
      `${dir}/main.ts`,
    ],
    cwd: dir,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      KV_PATH: `${kvDir}/kv.sqlite`,
      RATE_LIMIT_PER_MINUTE: "1000000000",
      ...extra,
    },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    for (let i = 0;; i++) {
      try {
        const res = await fetch(`${base}/v1/plans`);
        await res.body?.cancel();
        if (res.ok) break;
      } catch { /* not yet */ }
      if (i > 600) throw new Error(`${dir} did not start`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const signup = await fetch(`${base}/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com" }),
    }).then((r) => r.json());
    const headers = { authorization: `Bearer ${signup.api_key}` };
    await load(`${base}/v1/account`, { seconds: 1, headers });
    return await load(`${base}/v1/account`, { seconds, headers });
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* gone */ }
    await child.status;
    await Deno.remove(kvDir, { recursive: true }).catch(() => {});
  }
}

const configs = {
  before: () => measure(baseDir, {}),
  off: () => measure(repo, {}),
  on: () =>
    measure(repo, {
      OTEL_DENO: "true",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.addr.port}`,
      OTEL_METRIC_EXPORT_INTERVAL: "5000",
      OTEL_SERVICE_NAME: "serpwright-bench",
    }),
};
const best: Record<string, LoadResult> = {};
try {
  for (let round = 0; round < rounds; round++) {
    for (const [name, run] of Object.entries(configs)) {
      const r = await run();
      if (!best[name] || r.rps > best[name].rps) best[name] = r;
    }
  }
} finally {
  await sink.shutdown();
  await Deno.remove(baseDir, { recursive: true }).catch(() => {});
}

const f = (n: number) => Math.round(n).toLocaleString("en-US");
console.log(
  `telemetry: GET /v1/account, ${best.before.tool}, 50 connections, ${seconds} s, best of ` +
    `${rounds} alternating rounds; before = ${ref}`,
);
for (const name of ["before", "off", "on"]) {
  const r = best[name];
  console.log(
    `telemetry: ${name.padEnd(7)} ${f(r.rps).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  ` +
      `p99 ${r.p99Ms.toFixed(2)} ms  non-2xx ${r.non2xx}  errors ${r.errors}`,
  );
}
const pct = (a: number, b: number) => `${(100 * a / b).toFixed(1)}%`;
console.log(
  `telemetry: off/before ${pct(best.off.rps, best.before.rps)} (target ~100%: zero cost when ` +
    `off), on/off ${pct(best.on.rps, best.off.rps)}`,
);
