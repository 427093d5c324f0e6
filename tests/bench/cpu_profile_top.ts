/**
 * The top self-time functions of a V8 CPU profile (`--cpu-prof`), as shares of the sampled time:
 * where a benchmark's CPU goes (crawl_cpu_bench.ts with `BENCH_CPU_PROFILE=<dir>`).
 * Run: deno run --allow-read tests/bench/cpu_profile_top.ts <file.cpuprofile> [count]
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
const [file, count = "25"] = Deno.args;
const profile = JSON.parse(await Deno.readTextFile(file)) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const n = byId.get(id)!;
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const f = n.callFrame;
  const where = f.url
    ? `${f.url.replace(/^.*\/(node_modules|npm|ext|domain|kv|jobs)\//, "$1/")}:${f.lineNumber + 1}`
    : "";
  const key = `${f.functionName || "(anonymous)"} ${where}`.trim();
  self.set(key, (self.get(key) ?? 0) + dt);
});
const idle = self.get("(idle)") ?? 0;
const busy = total - idle;
console.log(`sampled ${(total / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(1)} s`);
for (
  const [k, v] of [...self].filter(([k]) => k !== "(idle)").sort((a, b) => b[1] - a[1]).slice(
    0,
    Number(count),
  )
) {
  console.log(`${(100 * v / busy).toFixed(1).padStart(5)}%  ${k}`);
}
