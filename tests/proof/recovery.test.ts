/**
 * Recovery in seconds, with real processes: a worker SIGKILLed in the middle of an audit's step
 * costs that one step, not the audit's lease. Under the `all` role the supervisor that restarts
 * the child hands the child's jobs back at once (the lease here is 2 minutes, longer than the
 * test waits, so only the hand-back can explain the audit moving again); a separate worker process
 * that vanishes is noticed through its short, renewed lease (6 s here; 20 s by default). The
 * seconds themselves are measured by `deno task bench recovery`, not asserted.
 */
import assert from "node:assert/strict";
import { html, page, serveSite } from "../helpers/sites.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import {
  CHILD_POLL,
  FAST_MAINTENANCE,
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  startWorker,
  tempKvPath,
  until,
} from "./process.ts";

const STEP = 5;

/** A site of `n` slow pages linked from its home page. */
function slowSite(n: number) {
  const routes: Record<string, ReturnType<typeof html>> = {};
  const links = Array.from({ length: n }, (_, i) => `/p${i}`);
  routes["/"] = html(page({ title: "Slow site for the recovery test", links }));
  for (let i = 0; i < n; i++) {
    routes[`/p${i}`] = {
      ...html(page({ title: `Recovery page ${i}`, key: `r${i}` })),
      delayMs: 300,
    };
  }
  return serveSite(routes);
}

const pageHits = (hits: string[]) => hits.filter((h) => /^\/p\d+$/.test(h));

Deno.test("the all role: a SIGKILLed worker child's audit is handed back by its supervisor at once", async () => {
  const N = 30;
  const site = slowSite(N);
  const kvFile = await tempKvPath();
  let s: ServerProcess | null = null;
  const env = {
    JOB_RUNNER: "child",
    ...FAST_MAINTENANCE,
    CRAWL_STEP_PAGES: String(STEP),
    // Longer than this test waits: a lease running out cannot be what moves the audit.
    JOB_LEASE_MS: "120000",
  };
  try {
    s = await startServer(kvFile.path, env);
    const server = s;
    const childPid = async () =>
      (await server.req("GET", "/admin/health", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })).body.process.worker?.pid as number | undefined;
    const first = await until(childPid, 15_000, "the worker child");
    const { accountId, key } = await liveAccount(s);
    await postStripe(s, await packPaidEvent(s, accountId));
    const project = await newProject(s, key, site.origin);
    const started = await s.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const id = started.body.audit_id;
    await until(() => Promise.resolve(pageHits(site.hits).length >= 8), 30_000, "pages");
    Deno.kill(first, "SIGKILL");
    const atKill = pageHits(site.hits).length;
    await until(
      () => Promise.resolve(pageHits(site.hits).length > atKill + STEP),
      60_000,
      "the crawl to move again",
    );
    const done = (await waitForAudit(s, key, id, { ...CHILD_POLL, timeoutMs: 60_000 })).body;
    assert.equal(done.status, "completed", JSON.stringify(done));
    const pages = pageHits(site.hits);
    assert.equal(new Set(pages).size, N, "every page was crawled");
    assert.ok(pages.length - N <= STEP, `only the killed step is repeated: ${pages.length - N}`);
  } catch (err) {
    console.error(s?.logs());
    throw err;
  } finally {
    await killAll(s);
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("separate workers: a vanished worker's audit moves again once its short lease runs out", async () => {
  const N = 30;
  const site = slowSite(N);
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let w1: ServerProcess | null = null;
  let w2: ServerProcess | null = null;
  // A 6 s lease renewed every third, as the production one (20 s) is: the same heartbeat, a
  // shorter wait (the production figure is the recovery bench's). No supervisor sees the death.
  const env = { ...FAST_MAINTENANCE, CRAWL_STEP_PAGES: String(STEP), JOB_LEASE_MS: "6000" };
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...env });
    w1 = await startWorker(kvFile.path, env);
    const { accountId, key } = await liveAccount(web);
    await postStripe(web, await packPaidEvent(web, accountId));
    const project = await newProject(web, key, site.origin);
    const started = await web.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const id = started.body.audit_id;
    await until(() => Promise.resolve(pageHits(site.hits).length >= 8), 30_000, "pages");
    // The survivor's own claims hold 20 s (roles.test.ts): on a loaded machine a 6 s lease of its
    // own could run out mid-step, and that step would rightly be taken over and fetched again too.
    w2 = await startWorker(kvFile.path, { ...env, JOB_LEASE_MS: "20000" });
    await w1.kill();
    const atKill = pageHits(site.hits).length;
    // Generous: the lease plus a sweep, far below the 15 minutes of the old lease.
    await until(
      () => Promise.resolve(pageHits(site.hits).length > atKill + STEP),
      90_000,
      "the crawl to move again",
    );
    const done = (await waitForAudit(web, key, id, { ...CHILD_POLL, timeoutMs: 60_000 })).body;
    assert.equal(done.status, "completed", JSON.stringify(done));
    const pages = pageHits(site.hits);
    assert.equal(new Set(pages).size, N, "every page was crawled");
    assert.ok(pages.length - N <= STEP, `only the killed step is repeated: ${pages.length - N}`);
  } catch (err) {
    console.error(web?.logs(), w1?.logs(), w2?.logs());
    throw err;
  } finally {
    await killAll(web, w1, w2);
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("a worker stopped gracefully (SIGTERM) hands its audit back before it exits", async () => {
  const N = 30;
  const site = slowSite(N);
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let w1: ServerProcess | null = null;
  let w2: ServerProcess | null = null;
  // A lease longer than the test waits: only a hand-back lets the other worker go on.
  const env = { ...FAST_MAINTENANCE, CRAWL_STEP_PAGES: String(STEP), JOB_LEASE_MS: "120000" };
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...env });
    w1 = await startWorker(kvFile.path, env);
    const { accountId, key } = await liveAccount(web);
    await postStripe(web, await packPaidEvent(web, accountId));
    const project = await newProject(web, key, site.origin);
    const started = await web.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const id = started.body.audit_id;
    await until(() => Promise.resolve(pageHits(site.hits).length >= 8), 30_000, "pages");
    w2 = await startWorker(kvFile.path, env);
    await w1.stop();
    assert.equal((await w1.status).code, 0, "a clean exit");
    const done = (await waitForAudit(web, key, id, { ...CHILD_POLL, timeoutMs: 60_000 })).body;
    assert.equal(done.status, "completed", JSON.stringify(done));
    const pages = pageHits(site.hits);
    assert.equal(new Set(pages).size, N, "every page was crawled");
    assert.equal(pages.length, N, "nothing fetched twice: the step in flight finished first");
  } catch (err) {
    console.error(web?.logs(), w1?.logs(), w2?.logs());
    throw err;
  } finally {
    await killAll(web, w1, w2);
    await site.close();
    await kvFile.remove();
  }
});
