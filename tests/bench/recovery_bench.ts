/**
 * Issue 34 item 6, recovery in seconds: how long an audit's crawl stands still after its worker
 * is SIGKILLed mid-step, with the production lease (no `JOB_LEASE_MS`), in each role layout:
 *
 * 1. `all` role, embedded worker child (`deno task start`): the supervisor hands the dead
 *    child's jobs back; the crawl waits for the restarted child only.
 * 2. `web` + two `worker` processes: nobody sees the death; the short lease runs out and a sweep
 *    of the surviving worker sends the audit again.
 * 3. The heartbeat's KV cost: renewals (commits of the record and its running marker) per minute
 *    of one audit inside one long step, counted from the marker's versionstamp.
 *
 * "Moves again" is the first page request the site receives after the kill. Before this change
 * the issue measured about 15 minutes (the audit lease) for layout 1.
 * Run: deno task bench recovery
 */
import { openTestKv } from "../helpers/kv.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";
import { keys } from "../../kv/keys.ts";
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

const pageHits = (hits: string[]) => hits.filter((h) => /^\/p\d+$/.test(h)).length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function slowSite(n: number, delayMs: number) {
  const routes: Record<string, ReturnType<typeof html>> = {};
  const links = Array.from({ length: n }, (_, i) => `/p${i}`);
  routes["/"] = html(page({ title: "Recovery bench site", links }));
  for (let i = 0; i < n; i++) {
    routes[`/p${i}`] = { ...html(page({ title: `Recovery bench ${i}`, key: `b${i}` })), delayMs };
  }
  return serveSite(routes);
}

/** Starts an audit through `api` and waits until `minHits` pages were requested. */
async function auditRunning(
  api: ServerProcess,
  site: ReturnType<typeof slowSite>,
  minHits: number,
) {
  const { accountId, key } = await liveAccount(api);
  await postStripe(api, await packPaidEvent(api, accountId));
  const project = await newProject(api, key, site.origin);
  const res = await api.req("POST", `/v1/projects/${project}/audits`, { key });
  if (res.status !== 202) throw new Error(res.text);
  while (pageHits(site.hits) < minHits) await sleep(50);
  return { accountId, auditId: res.body.audit_id as string };
}

/** Seconds from now until the site sees a page request it had not seen before. */
async function secondsUntilMoving(site: ReturnType<typeof slowSite>, limitMs = 120_000) {
  // Requests the dead worker sent before it died may still land in the first instants.
  await sleep(300);
  const t0 = performance.now() - 300;
  const base = pageHits(site.hits);
  while (pageHits(site.hits) === base) {
    if (performance.now() - t0 > limitMs) return Infinity;
    await sleep(50);
  }
  return (performance.now() - t0) / 1000;
}

const STEP = { CRAWL_STEP_PAGES: "5", JOB_LEASE_MS: "" };

// 1. Embedded child.
{
  const site = slowSite(60, 300);
  const kv = await tempKvPath();
  let s: ServerProcess | null = null;
  try {
    s = await startServer(kv.path, { JOB_RUNNER: "child", ...STEP });
    const health = async () =>
      (await s!.req("GET", "/admin/health", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })).body.process.worker?.pid as number | undefined;
    let pid: number | undefined;
    while (!(pid = await health())) await sleep(100);
    await auditRunning(s, site, 8);
    Deno.kill(pid, "SIGKILL");
    const secs = await secondsUntilMoving(site);
    console.log(
      `all role, child SIGKILLed mid-step: crawl moving again after ${secs.toFixed(1)} s`,
    );
  } finally {
    await s?.kill();
    await site.close();
    await kv.remove();
  }
}

// 2. Separate worker processes.
{
  const site = slowSite(60, 300);
  const kv = await tempKvPath();
  const procs: ServerProcess[] = [];
  try {
    const web = await startServer(kv.path, { SERVICE_ROLE: "web", ...STEP });
    procs.push(web);
    const w1 = await startWorker(kv.path, STEP);
    procs.push(w1);
    await auditRunning(web, site, 8);
    procs.push(await startWorker(kv.path, STEP));
    await w1.kill();
    const secs = await secondsUntilMoving(site);
    console.log(
      `web + 2 workers, a worker SIGKILLed mid-step: crawl moving again after ${secs.toFixed(1)} s`,
    );
  } finally {
    await Promise.all(procs.map((p) => p.kill()));
    await site.close();
    await kv.remove();
  }
}

// 3. Heartbeat cost: one audit inside one long step (slow pages, a large step).
{
  const site = slowSite(400, 2_000);
  const kv = await tempKvPath();
  const procs: ServerProcess[] = [];
  try {
    const env = { CRAWL_STEP_PAGES: "400", CRAWL_STEP_SECONDS: "120", JOB_LEASE_MS: "" };
    const web = await startServer(kv.path, { SERVICE_ROLE: "web", ...env });
    procs.push(web);
    procs.push(await startWorker(kv.path, env));
    const { auditId } = await auditRunning(web, site, 2);
    const reader = await openTestKv(kv.path);
    try {
      const windowMs = 40_000;
      let last: string | null = null;
      let writes = -1;
      const end = performance.now() + windowMs;
      while (performance.now() < end) {
        const m = await reader.get(keys.runningJob("audit", auditId));
        if (m.versionstamp !== last) {
          writes++;
          last = m.versionstamp;
        }
        await sleep(100);
      }
      const perMin = writes * 60_000 / windowMs;
      console.log(
        `heartbeat: ${perMin.toFixed(1)} renewals/min per running audit ` +
          `(each one commit of 2 keys after 1 read: ${(2 * perMin).toFixed(1)} key writes/min)`,
      );
    } finally {
      reader.close();
    }
  } finally {
    await Promise.all(procs.map((p) => p.kill()));
    await site.close();
    await kv.remove();
  }
}
