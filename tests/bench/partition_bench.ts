/**
 * Issue 34 item 3, one audit across many workers: one audit's pages/s with 1, 2 and 4 `worker`
 * processes (`CRAWL_PARTITIONS` = workers) beside a `web` process, all on one KV file, against
 * a generated site (servers/big_site.ts, its own process) that answers every page after 50 ms,
 * so a worker mostly waits and more workers speed the crawl up even on 2 cores. Each layout
 * also prints the pages the site served twice (0: every page fetched once).
 *
 * Run: deno task bench partition   (SERPWRIGHT_PAGES=<n> to change the site's size)
 */
import { waitForAudit } from "../helpers/jobs.ts";
import {
  CHILD_POLL,
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  startWorker,
  tempKvPath,
} from "../proof/process.ts";
import { startSiteProcess } from "./site_process.ts";

const PAGES = Number(Deno.env.get("SERPWRIGHT_PAGES") ?? 1_200);
const DELAY_MS = 50;
const ENV = {
  CRAWL_MAX_PAGES: String(PAGES + 100),
  CRAWL_CONCURRENCY: "4",
  JOB_LEASE_MS: "",
};

const rows: string[] = [];
let single = 0;
for (const workers of [1, 2, 4]) {
  const site = await startSiteProcess("big_site.ts", String(PAGES), "plain", `delay=${DELAY_MS}`);
  const kv = await tempKvPath();
  let web: ServerProcess | null = null;
  const procs: ServerProcess[] = [];
  try {
    web = await startServer(kv.path, { SERVICE_ROLE: "web", ...ENV });
    for (let i = 0; i < workers; i++) {
      procs.push(await startWorker(kv.path, { ...ENV, CRAWL_PARTITIONS: String(workers) }));
    }
    const { accountId, key } = await liveAccount(web);
    await postStripe(web, await packPaidEvent(web, accountId));
    const project = await newProject(web, key, site.origin);
    const t0 = performance.now();
    const res = await web.req("POST", `/v1/projects/${project}/audits`, { key });
    if (res.status !== 202) throw new Error(res.text);
    const done = await waitForAudit(web, key, res.body.audit_id, {
      ...CHILD_POLL,
      timeoutMs: 600_000,
    });
    const s = (performance.now() - t0) / 1000;
    if (done.body.status !== "completed") throw new Error(done.text);
    const stats = await site.stats();
    const pps = stats.distinct / s;
    if (workers === 1) single = pps;
    rows.push(
      `${workers} worker(s): ${stats.distinct} pages in ${s.toFixed(1)} s = ` +
        `${pps.toFixed(1)} pages/s (${(pps / single).toFixed(2)}× one worker), ` +
        `served twice: ${stats.twice}`,
    );
    console.log(rows.at(-1));
  } finally {
    await killAll(web, ...procs);
    await site.close();
    await kv.remove();
  }
}
console.log(
  `\npartitioned crawl, ${PAGES}-page site answering in ${DELAY_MS} ms, ` +
    `CRAWL_CONCURRENCY ${ENV.CRAWL_CONCURRENCY} per worker, audit accepted → completed:`,
);
for (const r of rows) console.log(`  ${r}`);
