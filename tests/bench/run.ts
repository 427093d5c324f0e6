/**
 * `deno task bench`: runs every benchmark script in this folder, each in its own process (so one's
 * memory and warm JIT do not colour another's), and prints their lines. Each script measures its
 * baseline in the same run and prints ratios against it, since these machines are noisy.
 * Arguments pick scripts by name: `deno task bench agent` runs agent_bench.ts (issue 33's context
 * budget, before and after in one run). A group name runs its set: `deno task bench crawl` is
 * issue 34's benchmark (CPU a page, memory, one audit across workers, remote KV, telemetry,
 * recovery).
 */
const here = new URL(".", import.meta.url);
const GROUPS: Record<string, string[]> = {
  crawl: ["crawl_", "partition_bench", "remote_kv_bench", "telemetry_bench", "recovery_bench"],
};
const only = Deno.args.flatMap((a) => GROUPS[a] ?? [a]);
const scripts: string[] = [];
for await (const entry of Deno.readDir(here)) {
  if (entry.isFile && entry.name.endsWith("_bench.ts")) scripts.push(entry.name);
}
scripts.sort();
let failed = 0;
for (const name of scripts) {
  if (only.length > 0 && !only.some((o) => name.includes(o))) continue;
  console.log(`\n== ${name}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-cron", new URL(name, here).pathname],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (out.code !== 0) {
    failed++;
    console.log(`${name} exited with ${out.code}`);
  }
}
if (failed > 0) Deno.exit(1);
