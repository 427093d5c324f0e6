/**
 * Untrusted work apart from the API, measured with the service as child processes on a KV file
 * and the sites as processes of their own:
 *
 * 1. `GET /v1/account` p99 idle and while a 10,000-page crawl runs, for the `all` role with jobs
 *    inline (the old way, the baseline of this run), the `all` role with its worker child (the
 *    default), and a web process plus one worker: ratio to idle and the web process's RSS.
 * 2. The same p99 during a sandbox audit of the link bomb and of the robots.txt bomb, with the
 *    service's RSS (web and worker processes together).
 * 3. A crawl of BENCH_CRAWL_PAGES pages (default 100,000) with one worker: pages/s and the
 *    worker's peak RSS, the web process's RSS before and after; then two audits of half that size
 *    (at most 20,000 pages each) at once, with one worker and with two: the ratio (a single audit
 *    is one chain of steps, so a second worker speeds up audits side by side, not one audit).
 *
 * Run: deno run -A tests/bench/isolation_bench.ts (or `deno task bench isolation`)
 */
import {
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  startWorker,
  tempKvPath,
} from "../proof/process.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";
import { accountLatencies, p99, rssOf, startSiteProcess } from "./site_process.ts";

const BIG = Number(Deno.env.get("BENCH_CRAWL_PAGES") ?? 100_000);
const FLAGS = ["--v8-flags=--max-semi-space-size=2"];
const MiB = 1024 * 1024;

const mb = (b: number) => `${(b / MiB).toFixed(0)} MiB`;

const env = (maxPages: number) => ({
  CRAWL_MAX_PAGES: String(maxPages),
  CRAWL_CONCURRENCY: "8",
  CRAWL_STEP_PAGES: "100",
  RATE_LIMIT_PER_MINUTE: "100000000",
  ACCOUNT_RATE_LIMIT_PER_MINUTE: "100000000",
  JOB_LEASE_MS: "60000",
});

type Setup = "all, jobs inline" | "all, worker child" | "web + 1 worker";

/** The processes of one setup: the one that serves HTTP, and the pids that run jobs. */
interface Service {
  web: ServerProcess;
  workers: ServerProcess[];
  jobPids(): Promise<number[]>;
  close(): Promise<void>;
}

async function startSetup(setup: Setup, kvPath: string, extra: Record<string, string>) {
  const workers: ServerProcess[] = [];
  let web: ServerProcess;
  if (setup === "web + 1 worker") {
    web = await startServer(kvPath, { SERVICE_ROLE: "web", ...extra }, 30_000, FLAGS);
    workers.push(await startWorker(kvPath, extra, 30_000, FLAGS));
  } else {
    const runner = setup === "all, jobs inline" ? "inline" : "child";
    web = await startServer(kvPath, { JOB_RUNNER: runner, ...extra }, 30_000, FLAGS);
  }
  const service: Service = {
    web,
    workers,
    async jobPids() {
      if (setup === "all, jobs inline") return [web.pid];
      if (workers.length > 0) return workers.map((w) => w.pid);
      const h = await web.req("GET", "/admin/health", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return [h.body.process.worker?.pid].filter(Boolean);
    },
    async close() {
      await Promise.all([web.kill(), ...workers.map((w) => w.kill())]);
    },
  };
  return service;
}

const probe = (server: ServerProcess, key: string, stop: Promise<unknown>) =>
  accountLatencies(server.url, key, stop);

async function waitDone(server: ServerProcess, key: string, auditId: string) {
  while (true) {
    const r = await server.req("GET", `/v1/audits/${auditId}`, { key });
    if (r.body.status === "completed" || r.body.status === "failed") return r.body;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function paidKey(server: ServerProcess) {
  const { accountId, key, sandboxKey } = await liveAccount(server);
  await postStripe(server, await packPaidEvent(server, accountId, "pack_10000"));
  return { key, sandboxKey };
}

// 1. A 10,000-page crawl, in each setup.
{
  const pages = 10_000;
  const site = await startSiteProcess("big_site.ts", String(pages));
  try {
    for (const setup of ["all, jobs inline", "all, worker child", "web + 1 worker"] as Setup[]) {
      const kvFile = await tempKvPath();
      const s = await startSetup(setup, kvFile.path, env(pages));
      try {
        const { key } = await paidKey(s.web);
        const project = await newProject(s.web, key, site.origin);
        const idle = await probe(s.web, key, new Promise((r) => setTimeout(r, 3_000)));
        const webBefore = rssOf(s.web.pid);
        let webPeak = webBefore;
        let jobPeak = 0;
        const sampler = setInterval(async () => {
          webPeak = Math.max(webPeak, rssOf(s.web.pid));
          const pids = await s.jobPids().catch(() => []);
          if (setup !== "all, jobs inline") {
            jobPeak = Math.max(jobPeak, pids.reduce((n, p) => n + rssOf(p), 0));
          }
        }, 200);
        const t0 = performance.now();
        const started = await s.web.req("POST", `/v1/projects/${project}/audits`, { key });
        const done = waitDone(s.web, key, started.body.audit_id);
        const busy = await probe(s.web, key, done);
        const secs = (performance.now() - t0) / 1000;
        clearInterval(sampler);
        const [qi, qb] = [p99(idle), p99(busy)];
        console.log(
          `10k crawl, ${setup}: ${(await done).status} in ${secs.toFixed(0)} s; ` +
            `GET /v1/account p99 idle ${qi.toFixed(1)} ms, crawling ${qb.toFixed(1)} ms ` +
            `(${(qb / qi).toFixed(2)}x idle; target <= 2x and < 20 ms) ${
              qb <= 2 * qi && qb < 20 ? "OK" : "MISS"
            }; web RSS ${mb(webBefore)} -> peak ${mb(webPeak)}` +
            (jobPeak ? `; job process peak ${mb(jobPeak)}` : ""),
        );
      } finally {
        await s.close();
        await kvFile.remove();
      }
    }
  } finally {
    await site.close();
  }
}

// 2. The link bomb and the robots bomb, audited with a sandbox key.
for (const bomb of ["links", "robots"]) {
  const site = await startSiteProcess("bomb_site.ts", bomb);
  try {
    for (const setup of ["all, jobs inline", "all, worker child"] as Setup[]) {
      const kvFile = await tempKvPath();
      const s = await startSetup(setup, kvFile.path, env(200));
      try {
        const { key, sandboxKey } = await paidKey(s.web);
        const project = await newProject(s.web, sandboxKey, site.origin);
        const idle = await probe(s.web, key, new Promise((r) => setTimeout(r, 2_000)));
        let peak = 0;
        const sampler = setInterval(async () => {
          const pids = setup === "all, jobs inline" ? [] : await s.jobPids().catch(() => []);
          peak = Math.max(peak, [s.web.pid, ...pids].reduce((n, p) => n + rssOf(p), 0));
        }, 100);
        const t0 = performance.now();
        const started = await s.web.req("POST", `/v1/projects/${project}/audits`, {
          key: sandboxKey,
        });
        const done = waitDone(s.web, sandboxKey, started.body.audit_id);
        const busy = await probe(s.web, key, done);
        clearInterval(sampler);
        const audit = await done;
        const q = p99(busy);
        console.log(
          `${bomb} bomb, ${setup}: ${audit.status} in ${
            ((performance.now() - t0) / 1000).toFixed(1)
          } s ` +
            `(limits hit: ${
              (audit.limits_hit ?? []).map((h: { limit: string }) => h.limit).join(", ")
            }); ` +
            `GET /v1/account p99 ${q.toFixed(1)} ms (idle ${p99(idle).toFixed(1)}; target < 50) ${
              q < 50 ? "OK" : "MISS"
            }; service RSS peak ${mb(peak)} (target < 300) ${peak < 300 * MiB ? "OK" : "MISS"}`,
        );
      } finally {
        await s.close();
        await kvFile.remove();
      }
    }
  } finally {
    await site.close();
  }
}

// 3. The big crawl with one worker, then two half-size audits with one worker and with two.
{
  const site = await startSiteProcess("big_site.ts", String(BIG));
  try {
    const kvFile = await tempKvPath();
    const s = await startSetup("web + 1 worker", kvFile.path, env(BIG));
    try {
      const { key } = await paidKey(s.web);
      const project = await newProject(s.web, key, site.origin);
      const webBefore = rssOf(s.web.pid);
      let webPeak = webBefore;
      let workerPeak = 0;
      const sampler = setInterval(() => {
        webPeak = Math.max(webPeak, rssOf(s.web.pid));
        workerPeak = Math.max(workerPeak, rssOf(s.workers[0].pid));
      }, 200);
      const t0 = performance.now();
      const started = await s.web.req("POST", `/v1/projects/${project}/audits`, { key });
      const done = await waitDone(s.web, key, started.body.audit_id);
      const secs = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      console.log(
        `${BIG / 1000}k crawl, one worker: ${done.status} in ${secs.toFixed(0)} s = ` +
          `${(BIG / secs).toFixed(0)} pages/s end to end; worker peak RSS ${mb(workerPeak)} ` +
          `(target <= 256) ${workerPeak <= 256 * MiB ? "OK" : "MISS"}; web RSS ${mb(webBefore)} ` +
          `-> peak ${mb(webPeak)} (flat: +${mb(webPeak - webBefore)})`,
      );
    } finally {
      await s.close();
      await kvFile.remove();
    }

    const rates: number[] = [];
    for (const n of [1, 2]) {
      const kv2 = await tempKvPath();
      // Two audits side by side, each half the big crawl up to 20,000 pages (the ratio is what
      // this measures; the big crawl above is the absolute figure).
      const half = Math.min(20_000, Math.floor(BIG / 2));
      const web = await startServer(kv2.path, { SERVICE_ROLE: "web", ...env(half) }, 30_000, FLAGS);
      const workers = [];
      for (let i = 0; i < n; i++) {
        workers.push(
          await startWorker(kv2.path, { ...env(half), WORKER_CONCURRENCY: "2" }, 30_000, FLAGS),
        );
      }
      try {
        const { key } = await paidKey(web);
        const projects = [
          await newProject(web, key, site.origin),
          await newProject(web, key, `${site.origin}/p/1`),
        ];
        const t0 = performance.now();
        const ids = [];
        for (const p of projects) {
          ids.push((await web.req("POST", `/v1/projects/${p}/audits`, { key })).body.audit_id);
        }
        await Promise.all(ids.map((id) => waitDone(web, key, id)));
        const secs = (performance.now() - t0) / 1000;
        rates.push((2 * half) / secs);
        console.log(
          `two ${half / 1000}k audits at once, ${n} worker(s): ${secs.toFixed(0)} s = ` +
            `${((2 * half) / secs).toFixed(0)} pages/s`,
        );
      } finally {
        await Promise.all([web.kill(), ...workers.map((w) => w.kill())]);
        await kv2.remove();
      }
    }
    console.log(
      `two workers / one worker, audits side by side: ${(rates[1] / rates[0]).toFixed(2)}x`,
    );
  } finally {
    await site.close();
  }
}
