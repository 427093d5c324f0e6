/**
 * A worker's memory against the site's size (issue 34 §2), in one run:
 *
 * 1. The site-wide passes (crawl/finalize.ts) at 100,000 and 300,000 pages, and 1,000,000 with
 *    `SERPWRIGHT_DEEP=1`: a crawl written straight to KV (tests/helpers/synthetic_crawl.ts), the
 *    passes run in a child under the worker child's own V8 flags (jobs/worker_child.ts), then
 *    again under the flags before the heap cap (`--max-semi-space-size=2` only). Prints the
 *    child's peak RSS (the kernel's high-water mark), its anonymous part at the end, the largest
 *    V8 heap and external memory (the passes' typed arrays) sampled and the seconds, then the
 *    slopes of peak RSS and of peak external memory per 100,000 pages. `BENCH_MEMORY_PERIOD=10`
 *    makes one page in ten redirect and one in ten answer 404 (default: one in 1,000 of each);
 *    `BENCH_MEMORY_LINKS=40` adds 40 links a page to the generator's 4;
 *    `BENCH_MEMORY_NEAR=1` writes every HTML page's text signature and LSH bands too, so the
 *    near-duplicate pass reads bands of the site's size (default: none, as before).
 * 2. The crawl's first 3,000 pages with a page budget of 5,000 and of 100,000, then 100,000 with
 *    the worker's heap uncapped (`WORKER_HEAP_MIB=0`, as before the cap): the real service
 *    (`main.ts`, `JOB_RUNNER=child`) against tests/bench/servers/big_site.ts, the worker child's
 *    RSS sampled — whether the early RSS is sized by the budget.
 *
 * 3. With `BENCH_MEMORY_FULL=100000`: one audit of that many pages end to end, the worker child's
 *    peak RSS while crawling and in the site-wide step, on the issue's ~15 KB pages
 *    (`BENCH_MEMORY_KB=0`: the ~2.8 KB ones).
 *
 * `BENCH_MEMORY_SIZES=50000,100000` picks other sizes for part 1 (empty: none);
 * `BENCH_MEMORY_CRAWL=0` skips part 2. Run: deno task bench crawl_memory
 */
import { workerChildArgs } from "../../jobs/worker_child.ts";
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { runFinalizeChild, writeSyntheticCrawl } from "../helpers/synthetic_crawl.ts";
import { childrenOf, rssOf, startSiteProcess } from "./site_process.ts";

const MiB = 1024 * 1024;
const DEEP = Deno.env.get("SERPWRIGHT_DEEP") === "1";
const SIZES =
  (Deno.env.get("BENCH_MEMORY_SIZES") ?? (DEEP ? "100000,300000,1000000" : "100000,300000"))
    .split(",").filter(Boolean).map(Number);

/** The V8 flags the worker child runs with, as main.ts starts it. */
const workerFlags = workerChildArgs({ kvPath: "/tmp/x.sqlite" })
  .find((a) => a.startsWith("--v8-flags="))!.slice("--v8-flags=".length).split(",");
const before = ["--max-semi-space-size=2"];
const mib = (b: number) => (b / MiB).toFixed(0);
const PERIOD = Number(Deno.env.get("BENCH_MEMORY_PERIOD") ?? 1000);
const NEAR = Deno.env.get("BENCH_MEMORY_NEAR") === "1";
/** `BENCH_MEMORY_LINKS=<n>`: n more links a page than the generator's 4 (big_site.ts's ~15 KB pages have 35). */
const EXTRA_LINKS = Number(Deno.env.get("BENCH_MEMORY_LINKS") ?? 0);

// 1. The site-wide passes.
const peaks: { n: number; hwm: number; external: number }[] = [];
for (const n of SIZES) {
  const kvFile = await tempKvPath();
  try {
    const kv = await Deno.openKv(kvFile.path);
    const t0 = performance.now();
    await writeSyntheticCrawl(kv, "a1", n, PERIOD, NEAR, EXTRA_LINKS);
    kv.close();
    const wrote = (performance.now() - t0) / 1000;
    for (
      const [label, flags] of [["worker flags", workerFlags], ["no heap cap", before]] as const
    ) {
      const r = await runFinalizeChild(kvFile.path, "a1", n, [0], [...flags]);
      if (label === "worker flags") peaks.push({ n, hwm: r.hwm, external: r.externalPeak });
      console.log(
        `passes ${n} pages (${label}: ${flags.join(" ")}): peak RSS ${mib(r.hwm)} MiB ` +
          `(${mib(r.before)} before the passes; ${mib(r.anon)} anon + ${mib(r.file)} file at the ` +
          `end), V8 heap peak ${mib(r.heapPeak)} MiB, external ${mib(r.externalPeak)} MiB, ` +
          `${r.secs.toFixed(1)} s; written in ` +
          `${wrote.toFixed(0)} s`,
      );
    }
  } finally {
    await kvFile.remove();
  }
}
for (let i = 1; i < peaks.length; i++) {
  const a = peaks[i - 1], b = peaks[i];
  const per = (x: number, y: number) => ((y - x) / MiB) / ((b.n - a.n) / 100_000);
  console.log(
    `slope ${a.n} → ${b.n} (period ${PERIOD}${NEAR ? ", near bands" : ""}): ${
      per(a.hwm, b.hwm).toFixed(1)
    } MiB of peak RSS per 100,000 pages, ${
      per(a.external, b.external).toFixed(1)
    } of peak external memory (the typed arrays) ` +
      `(worker ≤ 256 MiB: ${b.hwm / MiB <= 256 ? "OK" : "MISS"} at ${b.n})`,
  );
}

/** The service as `deno task start` runs it, its jobs in the worker child. */
const crawlEnv = (budget: number) => ({
  JOB_RUNNER: "child",
  CRAWL_MAX_PAGES: String(budget),
  CRAWL_CONCURRENCY: "8",
  CRAWL_STEP_PAGES: "100",
  RATE_LIMIT_PER_MINUTE: "100000000",
  JOB_LEASE_MS: "60000",
});

// 2. The crawl's first pages, the worker child's RSS, by page budget.
if (Deno.env.get("BENCH_MEMORY_CRAWL") !== "0") {
  // The last: the worker child as it ran before its heap cap (WORKER_HEAP_MIB=0).
  for (const [budget, heap] of [[5_000, ""], [100_000, ""], [100_000, "0"]] as const) {
    const site = await startSiteProcess("big_site.ts", "100000");
    const kvFile = await tempKvPath();
    const server = await startServer(
      kvFile.path,
      { ...crawlEnv(budget), ...(heap ? { WORKER_HEAP_MIB: heap } : {}) },
      30_000,
      ["--v8-flags=--max-semi-space-size=2"],
    );
    try {
      const { accountId, key } = await liveAccount(server);
      await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
      const project = await newProject(server, key, site.origin);
      await server.req("POST", `/v1/projects/${project}/audits`, { key });
      const t0 = performance.now();
      let peak = 0;
      const curve: string[] = [];
      let served = 0;
      while (served < 3_000 && performance.now() - t0 < 120_000) {
        await new Promise((r) => setTimeout(r, 500));
        served = (await site.stats()).served;
        const rss = childrenOf(server.pid).map(rssOf).reduce((a, b) => Math.max(a, b), 0);
        peak = Math.max(peak, rss);
        if (curve.length === 0 || served >= Number(curve.at(-1)!.split(":")[0]) + 500) {
          curve.push(`${served}:${mib(rss)}`);
        }
      }
      const secs = (performance.now() - t0) / 1000;
      console.log(
        `crawl, page budget ${budget}${
          heap ? `, WORKER_HEAP_MIB=${heap}` : ""
        }: ${served} pages in ${secs.toFixed(0)} s ` +
          `(${(served / secs).toFixed(0)} pages/s); worker child peak RSS ${mib(peak)} MiB; ` +
          `pages:MiB ${curve.join(" ")}`,
      );
    } finally {
      await server.kill();
      await site.close();
      await kvFile.remove();
    }
  }
}

// 3. With BENCH_MEMORY_FULL=<pages>: one audit of that many pages end to end, the worker child's
// peak RSS over the crawl and over its site-wide step.
const full = Number(Deno.env.get("BENCH_MEMORY_FULL") ?? 0);
/** `BENCH_MEMORY_KB`: the pages' size for part 3, KB (default 15, the issue's; 0: ~2.8 KB). */
const FULL_KB = Number(Deno.env.get("BENCH_MEMORY_KB") ?? 15);
if (full > 0) {
  const site = await startSiteProcess("big_site.ts", String(full), `kb=${FULL_KB}`);
  const kvFile = await tempKvPath();
  const server = await startServer(kvFile.path, crawlEnv(full), 30_000, [
    "--v8-flags=--max-semi-space-size=2",
  ]);
  try {
    const { accountId, key } = await liveAccount(server);
    await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
    const project = await newProject(server, key, site.origin);
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    const t0 = performance.now();
    let crawlPeak = 0, finalPeak = 0, crawlSecs = 0;
    const curve: string[] = [];
    let status = "";
    while (true) {
      await new Promise((r) => setTimeout(r, 1000));
      const served = (await site.stats()).served;
      const rss = childrenOf(server.pid).map(rssOf).reduce((a, b) => Math.max(a, b), 0);
      // The crawl is over once every page was served; the rest is the site-wide step.
      if (served < full) crawlPeak = Math.max(crawlPeak, rss);
      else {
        crawlSecs ||= (performance.now() - t0) / 1000;
        finalPeak = Math.max(finalPeak, rss);
      }
      if (curve.length === 0 || served >= Number(curve.at(-1)!.split(":")[0]) + full / 10) {
        curve.push(`${served}:${mib(rss)}`);
      }
      const r = await server.req("GET", `/v1/audits/${started.body.audit_id}`, { key });
      status = r.body.status;
      if (status === "completed" || status === "failed") break;
    }
    const secs = (performance.now() - t0) / 1000;
    // Whether the link graph fit its cap (link_score.ts MAX_EDGES): a score among the first pages
    // (a 404 listed first has none either way).
    const first = await server.req("GET", `/v1/audits/${started.body.audit_id}/pages?limit=20`, {
      key,
    });
    const score = (first.body.data ?? []).find((p: { link_score: number | null }) =>
      p.link_score !== null
    )?.link_score;
    console.log(
      `audit of ${full} pages: ${status} in ${secs.toFixed(0)} s (crawl ${
        crawlSecs.toFixed(0)
      } s); ` +
        `worker child peak RSS ${mib(crawlPeak)} MiB crawling, ${mib(finalPeak)} MiB after ` +
        `(site-wide step); link score ${score ?? "none (graph past its cap)"}; ` +
        `pages:MiB ${curve.join(" ")}`,
    );
  } finally {
    await server.kill();
    await site.close();
    await kvFile.remove();
  }
}
