/**
 * Crawl at scale, the service as a child process (`main.ts` on a KV file) and the site as another
 * (tests/bench/servers/big_site.ts), so each one's memory is its own:
 *
 * 1. 10,000 pages: peak RSS of the service, pages/s, and `GET /v1/account` p99 while it crawls.
 * 2. 20,000 pages, SIGKILL at the middle: how many pages the restarted process fetched twice
 *    (a step is CRAWL_STEP_PAGES pages).
 * 3. 100,000 pages: completes; peak RSS and the RSS curve against pages crawled; pages/s with the
 *    KV writes; then the first page of the issues and pages listings, p99.
 *
 * `BENCH_CRAWL_PAGES` scales scenario 3 down for a quick run (default 100000).
 * Run: deno run -A tests/bench/crawl_scale_bench.ts
 */
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { accountLatencies, p99, rssOf, startSiteProcess } from "./site_process.ts";

const BIG = Number(Deno.env.get("BENCH_CRAWL_PAGES") ?? 100_000);
/** As `deno task start` runs the service: a 2 MiB young generation (see docs/contributors.md). */
const FLAGS = ["--v8-flags=--max-semi-space-size=2"];
const STEP_PAGES = 100;
const MiB = 1024 * 1024;

const env = (maxPages: number) => ({
  CRAWL_MAX_PAGES: String(maxPages),
  CRAWL_CONCURRENCY: "8",
  CRAWL_STEP_PAGES: String(STEP_PAGES),
  RATE_LIMIT_PER_MINUTE: "100000000",
  JOB_LEASE_MS: "60000",
});

async function account(server: ServerProcess) {
  const { accountId, key } = await liveAccount(server);
  const paid = await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
  if (paid.status !== 200) throw new Error(`credits: ${paid.text}`);
  return key;
}

async function waitDone(server: ServerProcess, key: string, auditId: string, onTick: () => void) {
  while (true) {
    const r = await server.req("GET", `/v1/audits/${auditId}`, { key });
    if (r.body.status === "completed" || r.body.status === "failed") return r.body;
    onTick();
    await new Promise((r) => setTimeout(r, 250));
  }
}

// 1. 10,000 pages with the account endpoint measured meanwhile.
{
  const pages = 10_000;
  const site = await startSiteProcess("big_site.ts", String(pages));
  const kvFile = await tempKvPath();
  const server = await startServer(kvFile.path, env(pages), 30_000, FLAGS);
  try {
    const key = await account(server);
    const project = await newProject(server, key, site.origin);
    const base = rssOf(server.pid);
    let peak = base;
    const t0 = performance.now();
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 100);
    const finished = waitDone(server, key, started.body.audit_id, () => {});
    const lat = await accountLatencies(server.url, key, finished);
    const done = await finished;
    clearInterval(sampler);
    const secs = (performance.now() - t0) / 1000;
    const served = (await site.stats()).served;
    console.log(
      `crawl 10k: ${done.status}, ${served} requests in ${secs.toFixed(1)} s = ` +
        `${(served / secs).toFixed(0)} pages/s; peak RSS ${(peak / MiB).toFixed(0)} MiB ` +
        `(target <= 160) ${peak / MiB <= 160 ? "OK" : "MISS"}; ${
          (base / MiB).toFixed(0)
        } MiB before`,
    );
    const q = p99(lat);
    console.log(
      `crawl 10k: GET /v1/account p99 ${q.toFixed(1)} ms over ${lat.length} requests while ` +
        `crawling (target < 20) ${q < 20 ? "OK" : "MISS"}`,
    );
  } finally {
    await server.kill();
    await site.close();
    await kvFile.remove();
  }
}

// 2. 20,000 pages, SIGKILL in the middle.
{
  const pages = 20_000;
  const site = await startSiteProcess("big_site.ts", String(pages));
  const kvFile = await tempKvPath();
  let server = await startServer(
    kvFile.path,
    { ...env(pages), JOB_LEASE_MS: "2000" },
    30_000,
    FLAGS,
  );
  try {
    const key = await account(server);
    const project = await newProject(server, key, site.origin);
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    while ((await site.stats()).served < pages / 2) await new Promise((r) => setTimeout(r, 50));
    await server.kill();
    const atKill = (await site.stats()).served;
    server = await startServer(kvFile.path, { ...env(pages), JOB_LEASE_MS: "2000" }, 30_000, FLAGS);
    const done = await waitDone(server, key, started.body.audit_id, () => {});
    const s = await site.stats();
    console.log(
      `crawl 20k kill: ${done.status}; killed after ${atKill} requests; ${s.twice} pages fetched ` +
        `twice (one step is ${STEP_PAGES} pages) ${s.twice <= STEP_PAGES ? "OK" : "MISS"}`,
    );
  } finally {
    await server.kill();
    await site.close();
    await kvFile.remove();
  }
}

// 3. The big one.
{
  const site = await startSiteProcess("big_site.ts", String(BIG));
  const kvFile = await tempKvPath();
  const server = await startServer(kvFile.path, env(BIG), 30_000, FLAGS);
  try {
    const key = await account(server);
    const project = await newProject(server, key, site.origin);
    const base = rssOf(server.pid);
    let peak = base;
    const curve: string[] = [];
    let nextMark = BIG / 10;
    const t0 = performance.now();
    const started = await server.req("POST", `/v1/projects/${project}/audits`, { key });
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(server.pid))), 100);
    let crawlSecs = 0;
    const done = await waitDone(server, key, started.body.audit_id, () => {
      site.stats().then((s) => {
        if (s.served >= nextMark) {
          curve.push(`${s.served}:${(rssOf(server.pid) / MiB).toFixed(0)}`);
          nextMark += BIG / 10;
        }
        if (s.served >= BIG && crawlSecs === 0) crawlSecs = (performance.now() - t0) / 1000;
      }).catch(() => {});
    });
    clearInterval(sampler);
    const secs = (performance.now() - t0) / 1000;
    const served = (await site.stats()).served;
    console.log(
      `crawl ${BIG / 1000}k: ${done.status}, ${served} requests, ${secs.toFixed(0)} s end to end ` +
        `(crawl ${crawlSecs.toFixed(0)} s, then the site-wide checks) = ` +
        `${(served / secs).toFixed(0)} pages/s (target >= 300) ${
          served / secs >= 300 ? "OK" : "MISS"
        }`,
    );
    console.log(
      `crawl ${BIG / 1000}k: peak RSS ${(peak / MiB).toFixed(0)} MiB (target <= 256) ${
        peak / MiB <= 256 ? "OK" : "MISS"
      }; ${(base / MiB).toFixed(0)} MiB before; RSS curve pages:MiB ${curve.join(" ")}`,
    );
    for (const path of ["issues", "pages"]) {
      const lat: number[] = [];
      for (let i = 0; i < 200; i++) {
        const t = performance.now();
        const r = await server.req("GET", `/v1/audits/${done.audit_id}/${path}?limit=50`, { key });
        lat.push(performance.now() - t);
        if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
      }
      const q = p99(lat);
      console.log(
        `crawl ${BIG / 1000}k: GET /v1/audits/{id}/${path} first page p99 ${q.toFixed(1)} ms ` +
          `(target < 50) ${q < 50 ? "OK" : "MISS"}`,
      );
    }
  } finally {
    await server.kill();
    await site.close();
    await kvFile.remove();
  }
}
