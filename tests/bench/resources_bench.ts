/**
 * `broken_resources` at scale: the same 10,000-page site (every page loads a stylesheet, a script
 * and one of 2,000 images, 20 of them missing) audited twice in one run, the service as a child
 * process on a KV file: once with resource checks off (`CRAWL_MAX_RESOURCES=0`, the crawl as it
 * was before the check) and once with the default cap (5,000 distinct resources). Prints pages/s,
 * peak RSS, requests to the site and what the check found, and the ratios of the second run to
 * the first.
 *
 * Run: deno run -A tests/bench/resources_bench.ts   (BENCH_RESOURCE_PAGES to scale it)
 */
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { rssOf, startSiteProcess } from "./site_process.ts";

const PAGES = Number(Deno.env.get("BENCH_RESOURCE_PAGES") ?? 10_000);
const MiB = 1024 * 1024;

interface Run {
  secs: number;
  served: number;
  peakMiB: number;
  broken: number | null;
}

async function audit(maxResources: string | null): Promise<Run> {
  const site = await startSiteProcess("big_site.ts", String(PAGES), "resources");
  const kvFile = await tempKvPath();
  const server = await startServer(
    kvFile.path,
    {
      CRAWL_MAX_PAGES: String(PAGES),
      CRAWL_CONCURRENCY: "8",
      RATE_LIMIT_PER_MINUTE: "100000000",
      JOB_LEASE_MS: "60000",
      ...(maxResources === null ? {} : { CRAWL_MAX_RESOURCES: maxResources }),
    },
    30_000,
    ["--v8-flags=--max-semi-space-size=2"],
  );
  try {
    const { accountId, key } = await liveAccount(server);
    const paid = await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
    if (paid.status !== 200) throw new Error(`credits: ${paid.text}`);
    const project = await newProject(server, key, site.origin);
    let peak = rssOf(server.pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 100);
    const t0 = performance.now();
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    let done;
    while (true) {
      done = await server.req("GET", `/v1/audits/${started.body.audit_id}`, { key });
      if (done.body.status === "completed" || done.body.status === "failed") break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const secs = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    if (done.body.status !== "completed") throw new Error(`audit: ${done.text}`);
    const issue = await server.req(
      "GET",
      `/v1/audits/${started.body.audit_id}/issues/broken_resources`,
      { key },
    );
    return {
      secs,
      served: (await site.stats()).served,
      peakMiB: peak / MiB,
      broken: issue.status === 200 ? issue.body.affected_count : null,
    };
  } finally {
    await server.kill();
    await site.close();
    await kvFile.remove();
  }
}

const line = (name: string, r: Run) =>
  `${name}: ${PAGES} pages in ${r.secs.toFixed(1)} s = ${(PAGES / r.secs).toFixed(0)} pages/s, ` +
  `${r.served} requests to the site, peak RSS ${r.peakMiB.toFixed(0)} MiB, broken_resources ` +
  `${r.broken === null ? "not fired" : `${r.broken} affected`}`;

const off = await audit("0");
console.log(line("resources off (before the check)", off));
const on = await audit(null);
console.log(line("resources on (default cap)", on));
console.log(
  `ratio on/off: pages/s ${((PAGES / on.secs) / (PAGES / off.secs)).toFixed(2)}×, peak RSS ` +
    `${(on.peakMiB / off.peakMiB).toFixed(2)}×, requests ${(on.served / off.served).toFixed(2)}×`,
);
