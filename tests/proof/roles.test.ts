/**
 * The split deployment as real processes on one KV file: a `web` process that runs no job, and
 * `worker` processes that claim jobs from the job table. Audits, articles and webhook
 * deliveries complete through the workers; a worker killed mid-step is replaced by another; the
 * shared periodic work has one leader at a time across three processes.
 */
import assert from "node:assert/strict";
import { html, page, serveSite } from "../helpers/sites.ts";
import {
  CHILD_POLL,
  exited,
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
import { quiet, waitForArticle, waitForAudit } from "../helpers/jobs.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";
import { startReceiver } from "../webhooks/helpers.ts";

async function status(s: ServerProcess, key: string, path: string) {
  return (await s.req("GET", path, { key })).body;
}

Deno.test("web + two workers on one KV file: audits, articles and webhooks complete; web runs no job", async () => {
  const site = serveSite({
    "/": html(page({ title: "Roles test home page", links: ["/a"] })),
    "/a": html(page({ title: "Roles test page A", key: "a" })),
  });
  const rx = startReceiver();
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let w1: ServerProcess | null = null;
  let w2: ServerProcess | null = null;
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...FAST_MAINTENANCE });
    const { accountId, key } = await liveAccount(web);
    const paid = await postStripe(web, await packPaidEvent(web, accountId));
    assert.equal(paid.body.outcome, "credits_granted", paid.text);
    const hook = await web.req("POST", "/v1/webhooks", {
      key,
      body: { url: rx.url, events: ["audit.completed"] },
    });
    assert.equal(hook.status, 201, hook.text);
    const p1 = await newProject(web, key, site.origin);
    const p2 = await newProject(web, key, site.origin);
    const a1 = await web.req("POST", `/v1/projects/${p1}/audits`, { key });
    assert.equal(a1.status, 202, a1.text);

    // Alone, the web process enqueues and never runs the job.
    await quiet(1_500);
    assert.equal((await status(web, key, `/v1/audits/${a1.body.audit_id}`)).status, "queued");

    w1 = await startWorker(kvFile.path, FAST_MAINTENANCE);
    w2 = await startWorker(kvFile.path, FAST_MAINTENANCE);
    const a2 = await web.req("POST", `/v1/projects/${p2}/audits`, { key });
    const art = await web.req("POST", `/v1/projects/${p1}/articles`, {
      key,
      body: { topic: "How the roles of a service share one store" },
    });
    assert.equal(art.status, 202, art.text);
    for (const id of [a1.body.audit_id, a2.body.audit_id]) {
      const done = await waitForAudit(web!, key, id, { ...CHILD_POLL, timeoutMs: 60_000 });
      assert.equal(done.body.status, "completed", JSON.stringify(done.body));
    }
    const article = (await waitForArticle(web!, key, art.body.article_id, {
      ...CHILD_POLL,
      timeoutMs: 60_000,
    })).body;
    assert.equal(article.status, "ready", JSON.stringify(article));
    await until(
      () => Promise.resolve(rx.received.length >= 2),
      30_000,
      "two audit.completed deliveries",
    );
    assert.ok(rx.received.every((r) => r.headers.get("x-serpwright-event") === "audit.completed"));

    // Each worker reports its health; the operator's health names the web role.
    const h1 = await w1.req("GET", "/health");
    assert.equal(h1.status, 200);
    assert.equal(h1.body.role, "worker");
    const adminHealth = await web.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    assert.equal(adminHealth.body.process.role, "web");
  } catch (err) {
    console.error(web?.logs(), w1?.logs(), w2?.logs());
    throw err;
  } finally {
    await killAll(web, w1, w2);
    await rx.close();
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("a worker SIGKILLed mid-step: the other worker resumes the audit and completes it", async () => {
  const N = 24;
  const routes: Record<string, ReturnType<typeof html>> = {};
  const links = Array.from({ length: N }, (_, i) => `/p${i}`);
  routes["/"] = html(page({ title: "Slow site for the kill test", links }));
  for (let i = 0; i < N; i++) {
    routes[`/p${i}`] = { ...html(page({ title: `Slow page ${i}`, key: `k${i}` })), delayMs: 250 };
  }
  const site = serveSite(routes);
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let w1: ServerProcess | null = null;
  let w2: ServerProcess | null = null;
  const env = { ...FAST_MAINTENANCE, CRAWL_STEP_PAGES: "4", JOB_LEASE_MS: "1500" };
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...env });
    w1 = await startWorker(kvFile.path, env);
    const { accountId, key } = await liveAccount(web);
    await postStripe(web, await packPaidEvent(web, accountId));
    const project = await newProject(web, key, site.origin);
    const started = await web.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const id = started.body.audit_id;
    await until(
      () => Promise.resolve(site.hits.filter((h) => h.startsWith("/p")).length >= 6),
      30_000,
      "pages",
    );
    // The survivor's own claims hold 20 s: on a loaded machine a 1.5 s lease of its own could
    // run out mid-step, and that step would rightly be taken over and fetched again too.
    w2 = await startWorker(kvFile.path, { ...env, JOB_LEASE_MS: "20000" });
    await w1.kill();
    const done = (await waitForAudit(web!, key, id, { ...CHILD_POLL, timeoutMs: 90_000 })).body;
    assert.equal(done.status, "completed", JSON.stringify(done));
    const pages = site.hits.filter((h) => /^\/p\d+$/.test(h));
    assert.equal(new Set(pages).size, N, "every page was crawled");
    // Only the killed step is repeated: at most one step's pages are fetched twice.
    assert.ok(pages.length - N <= 4, `re-fetched ${pages.length - N}`);
    // A step repeated is a step taken over, and the survivor says so (unless w1 died between
    // two steps, when nothing is repeated).
    const over = (await w2.req("GET", "/health")).body.telemetry.jobs_taken_over;
    console.log(`pages fetched again: ${pages.length - N}; taken over: ${JSON.stringify(over)}`);
    if (pages.length > N) {
      assert.equal(over.audit, 1, JSON.stringify(over));
      const said = w2.logs().split("\n").filter((l) => l.includes('"msg":"job taken over'));
      assert.equal(said.length, 1, said.join("\n"));
      assert.equal(JSON.parse(said[0]).id, id);
    }
  } catch (err) {
    console.error(web?.logs(), w1?.logs(), w2?.logs());
    throw err;
  } finally {
    await killAll(web, w1, w2);
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("three processes share one leader; it is replaced when it dies", async () => {
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let w1: ServerProcess | null = null;
  let w2: ServerProcess | null = null;
  const leaders = async () => {
    const all = await Promise.all([
      web!.req("GET", "/admin/health", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }),
      w1!.req("GET", "/health").catch(() => null),
      w2!.req("GET", "/health").catch(() => null),
    ]);
    return all.map((r) => (r?.status === 200 ? r.body.process?.leader ?? r.body.leader : null));
  };
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...FAST_MAINTENANCE });
    w1 = await startWorker(kvFile.path, FAST_MAINTENANCE);
    w2 = await startWorker(kvFile.path, FAST_MAINTENANCE);
    // Sampled over a few ticks: never two leaders at once, and one once the lease settles.
    let sawLeader = false;
    for (let i = 0; i < 10; i++) {
      const l = await leaders();
      assert.ok(l.filter((x) => x === true).length <= 1, JSON.stringify(l));
      if (l.includes(true)) sawLeader = true;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(sawLeader, "some process leads");
    // Kill whichever worker leads (or the first); a survivor leads within a lease.
    const l = await leaders();
    const victim = l[2] === true ? w2 : w1;
    await victim.kill();
    const survivorsLead = await until(
      async () => {
        const now = await leaders();
        return now.filter((x) => x === true).length === 1 ? now : null;
      },
      10_000,
      "a leader after the kill",
    );
    assert.equal(survivorsLead.filter((x) => x === true).length, 1);
  } catch (err) {
    console.error(web?.logs(), w1?.logs(), w2?.logs());
    throw err;
  } finally {
    await killAll(web, w1, w2);
    await kvFile.remove();
  }
});

Deno.test("the all role on a KV file runs jobs in a worker child, restarted when it dies", async () => {
  const site = serveSite({ "/": html(page({ title: "All role child worker site" })) });
  const kvFile = await tempKvPath();
  let s: ServerProcess | null = null;
  const health = async () =>
    (await s!.req("GET", "/admin/health", {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })).body.process;
  const audit = async (key: string, project: string) => {
    const started = await s!.req("POST", `/v1/projects/${project}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    return (await waitForAudit(s!, key, started.body.audit_id, {
      ...CHILD_POLL,
      timeoutMs: 60_000,
    })).body;
  };
  try {
    s = await startServer(kvFile.path, { JOB_RUNNER: "child", ...FAST_MAINTENANCE });
    const first = await until(async () => (await health()).worker?.pid, 10_000, "child pid");
    assert.notEqual(first, s.pid);
    const { accountId, key } = await liveAccount(s);
    await postStripe(s, await packPaidEvent(s, accountId));
    const project = await newProject(s, key, site.origin);
    assert.equal((await audit(key, project)).status, "completed");

    // The child dies as an OOM kill would: the parent keeps answering and starts another.
    Deno.kill(first, "SIGKILL");
    const second = await until(
      async () => {
        const p = await health();
        return p.worker?.pid && p.worker.pid !== first ? p.worker : null;
      },
      15_000,
      "a restarted child",
    );
    assert.equal(second.restarts, 1);
    assert.equal((await audit(key, project)).status, "completed");

    // A graceful stop of the parent stops the child too.
    await s.stop();
    await until(
      () => Promise.resolve(exited(second.pid)),
      10_000,
      "the child gone with its parent",
    );
  } catch (err) {
    console.error(s?.logs());
    throw err;
  } finally {
    await killAll(s);
    await site.close();
    await kvFile.remove();
  }
});

Deno.test("the all role's worker child stops when its parent is SIGKILLed", async () => {
  const kvFile = await tempKvPath();
  let s: ServerProcess | null = null;
  let childPid = 0;
  try {
    s = await startServer(kvFile.path, { JOB_RUNNER: "child", ...FAST_MAINTENANCE });
    const pid = childPid = await until(
      async () =>
        (await s!.req("GET", "/admin/health", {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        })).body.process.worker?.pid,
      10_000,
      "child pid",
    );
    // Not `s.kill()`, which waits for the parent's output to end: a live orphan would hold it.
    Deno.kill(s.pid, "SIGKILL");
    // The parent's end of the child's stdin closed with it: the child stops on its own.
    await until(() => Promise.resolve(exited(pid)), 15_000, "the orphaned child gone");
  } catch (err) {
    console.error(s?.logs());
    throw err;
  } finally {
    // An orphan that outlived the test would hold the parent's output pipe open.
    try {
      if (childPid) Deno.kill(childPid, "SIGKILL");
    } catch { /* gone, as it should be */ }
    await killAll(s);
    await kvFile.remove();
  }
});
