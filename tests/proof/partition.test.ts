/**
 * One audit across several worker processes (`CRAWL_PARTITIONS`): a web process and 1, 2 or 3
 * `worker` processes on one KV file crawl the same fixture site. Every layout finds the same
 * issues and evidence as one worker, fetches each page once, and the site sees requests from
 * several workers at once (each worker fetches one page at a time). A worker SIGKILLed while a
 * page of its range hangs: the range is fetched again by another worker once its lease runs out,
 * and the audit completes with the same findings.
 */
import assert from "node:assert/strict";
import { html, isAgentProbe, page, type Route, serveSite } from "../helpers/sites.ts";
import { openTestKv } from "../helpers/kv.ts";
import { keys } from "../../kv/keys.ts";
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
import { waitForAudit } from "../helpers/jobs.ts";
import { ADMIN_TOKEN } from "../helpers/app.ts";

const SECTIONS = 6;
const PER_SECTION = 9;
/** Pages the crawl reaches by links (the home page, sections and their pages). */
const LINKED = 1 + SECTIONS + SECTIONS * PER_SECTION;
const DELAY_MS = 30;

/** A site that counts requests in flight, to show that several workers fetch at once. */
function fixtureSite(hang?: { path: string; gate: Promise<void>; on: () => boolean }) {
  let inFlight = 0;
  let maxInFlight = 0;
  const routes: Record<string, Route> = {
    "/old": { status: 301, headers: { location: "/s0" } },
    "/sitemap.xml": {
      headers: { "content-type": "application/xml" },
      body: `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
        `<url><loc>ORIGIN/</loc></url><url><loc>ORIGIN/orphan</loc></url></urlset>`,
    },
    "/robots.txt": {
      headers: { "content-type": "text/plain" },
      body: "User-agent: *\nAllow: /\nSitemap: ORIGIN/sitemap.xml\n",
    },
    "/orphan": html(page({ title: "An orphan page only the sitemap lists", key: "orphan" })),
    "/": html(page({
      title: "Partitioned crawl home page",
      key: "home",
      links: Array.from({ length: SECTIONS }, (_, s) => `/s${s}`),
    })),
  };
  for (let s = 0; s < SECTIONS; s++) {
    const links = Array.from({ length: PER_SECTION }, (_, i) => `/s${s}/p${i}`);
    if (s === 2) links.push("/missing", "/old");
    routes[`/s${s}`] = html(
      page({ title: `Section number ${s} of the site`, key: `s${s}`, links }),
    );
    for (let i = 0; i < PER_SECTION; i++) {
      const n = s * PER_SECTION + i;
      routes[`/s${s}/p${i}`] = html(page({
        title: n % 7 === 3 ? null : `Page ${i} of section ${s} in the site`,
        key: n % 11 === 5 ? "dup" : `p${n}`,
        links: [`/s${(s + 1) % SECTIONS}/p${i}`, "/"],
      }));
    }
  }
  let origin = "";
  const site = serveSite((path) => {
    const r = routes[path];
    if (!r) return undefined;
    return {
      handler: async (req) => {
        // The agents probes ask for pages beside the crawl (crawl/agent_probes.ts): only the
        // crawl's own requests show how many workers fetch at once.
        const counted = !isAgentProbe(req.headers.get("user-agent"));
        if (counted) inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          if (path.includes(".")) {
            return new Response(String(r.body).replaceAll("ORIGIN", origin), {
              headers: r.headers,
            });
          }
          await new Promise((res) => setTimeout(res, DELAY_MS));
          if (hang && path === hang.path && hang.on()) await hang.gate;
          return new Response(r.body ?? null, {
            status: r.status ?? 200,
            headers: r.headers ?? { "content-type": "text/html; charset=utf-8" },
          });
        } finally {
          if (counted) inFlight--;
        }
      },
    };
  });
  origin = site.origin;
  return { site, maxInFlight: () => maxInFlight };
}

/** The audit's issues and evidence, the site's origin taken out (each run has its own). */
async function findingsOf(server: ServerProcess, key: string, auditId: string, origin: string) {
  const audit = await server.req("GET", `/v1/audits/${auditId}`, { key });
  const issues = await server.req("GET", `/v1/audits/${auditId}/issues?limit=100`, { key });
  assert.equal(issues.status, 200, issues.text);
  const out: Record<string, unknown> = {
    score: audit.body.score,
    summary: audit.body.summary,
  };
  for (const i of issues.body.data) {
    const items = await server.req("GET", `${i.items_url}?limit=100`, { key });
    out[i.check] = {
      affected: i.affected_count,
      // deno-lint-ignore no-explicit-any
      items: items.body.data.map(({ ttfb_ms: _, ...rest }: any) => rest),
    };
  }
  return JSON.parse(JSON.stringify(out).replaceAll(origin, "ORIGIN"));
}

/** Requests per path. */
function counts(hits: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const h of hits) m.set(h, (m.get(h) ?? 0) + 1);
  return m;
}

const ENV = {
  CRAWL_STEP_PAGES: "4",
  // One page at a time per worker, one job at a time per worker: two requests in flight at the
  // site can only come from two processes.
  CRAWL_CONCURRENCY: "1",
  WORKER_CONCURRENCY: "1",
  ...FAST_MAINTENANCE,
};

async function runAudit(
  web: ServerProcess,
  key: string,
  origin: string,
): Promise<string> {
  const projectId = await newProject(web, key, origin);
  const accepted = await web.req("POST", `/v1/projects/${projectId}/audits`, { key });
  assert.equal(accepted.status, 202, accepted.text);
  return accepted.body.audit_id as string;
}

Deno.test("one audit across 1, 2 and 3 worker processes: same findings, each page fetched once; a SIGKILLed worker's range resumes elsewhere", async () => {
  const kvFile = await tempKvPath();
  let web: ServerProcess | null = null;
  let workers: ServerProcess[] = [];
  const sites: { close: () => Promise<void> }[] = [];
  /**
   * `leaseMs`: the workers' job and range leases. Where nothing dies it is the default's 20 s: a
   * loaded machine may starve a worker past a short lease, and then its step is rightly taken over
   * and fetched again (and said: "job taken over"), which this test would misread as a defect.
   */
  const startWorkers = async (n: number, parts: number, leaseMs: number) => {
    await killAll(...workers);
    workers = [];
    for (let i = 0; i < n; i++) {
      workers.push(
        await startWorker(kvFile.path, {
          ...ENV,
          JOB_LEASE_MS: String(leaseMs),
          CRAWL_PARTITIONS: String(parts),
          SERPWRIGHT_WORKER_ID: `wrk_p${parts}_${i}`,
        }),
      );
    }
  };
  try {
    web = await startServer(kvFile.path, { SERVICE_ROLE: "web", ...ENV });
    const w = web;
    const { accountId, key } = await liveAccount(w);
    assert.equal((await postStripe(w, await packPaidEvent(w, accountId))).status, 200);

    let baseline: unknown = null;
    for (const n of [1, 2, 3]) {
      await startWorkers(n, n, 20_000);
      const { site, maxInFlight } = fixtureSite();
      sites.push(site);
      const auditId = await runAudit(w, key, site.origin);
      const done = await waitForAudit(w, key, auditId, { ...CHILD_POLL, timeoutMs: 90_000 });
      assert.equal(done.body.status, "completed", done.text);
      const found = await findingsOf(w, key, auditId, site.origin);
      const twice = [...counts(site.hits)].filter(([, c]) => c > 1);
      console.log(
        `partitioned crawl, ${n} worker(s): ${site.hits.length} requests, at most ` +
          `${maxInFlight()} in flight, fetched twice: ${twice.length}`,
      );
      if (twice.length > 0) {
        // Why a step ran again (a retried step, a lost lease): the processes' warnings say.
        const said = [web, ...workers].map((p, i) =>
          `process ${i}:\n` +
          p!.logs().split("\n").filter((l) => /"level":"(warn|error)"/.test(l)).join("\n")
        );
        console.error(said.join("\n"));
      }
      assert.deepEqual(twice, [], "each page fetched once");
      assert.ok(counts(site.hits).get("/orphan") === 1 && counts(site.hits).get("/s5/p8") === 1);
      assert.equal(
        site.hits.filter((h) => h === "/" || /^\/s\d(\/p\d)?$/.test(h)).length,
        LINKED,
      );
      if (n > 1) assert.ok(maxInFlight() >= 2, `requests in flight at once: ${maxInFlight()}`);
      // Each process counts the pages it fetched itself (its telemetry): together, the crawl's.
      const health = await Promise.all(workers.map((p) => p.req("GET", "/health")));
      const counted = health.map((h) => h.body.telemetry.crawl.pages as number);
      assert.equal(
        counted.reduce((a, b) => a + b, 0),
        done.body.crawl.pages_fetched,
        `pages counted per worker: ${counted.join(" + ")}`,
      );
      if (baseline === null) {
        baseline = found;
        assert.ok("title_missing" in found && "broken_internal_links" in found);
      } else {
        assert.deepEqual(found, baseline, `${n} workers find what one does`);
      }
    }

    // SIGKILL the worker whose range holds a hanging page; the others go on, and the range is
    // fetched again elsewhere once its lease runs out (a short one, 1.5 s).
    await startWorkers(3, 3, 1_500);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let hanging = true;
    const { site } = fixtureSite({ path: "/s3/p4", gate, on: () => hanging });
    sites.push(site);
    const auditId = await runAudit(w, key, site.origin);
    await until(() => Promise.resolve(site.hits.includes("/s3/p4")), 60_000, "the hanging page");
    const kv = await openTestKv(kvFile.path);
    let holder = "";
    try {
      holder = await until(
        async () => {
          const rec = (await kv.get<{ seq: number }>(keys.auditPage(auditId, site.url("/s3/p4"))))
            .value;
          if (!rec) return null;
          for await (
            const c of kv.list<{ holder: string; end: number }>({
              prefix: keys.auditSlicesOf(auditId, "claim"),
            })
          ) {
            const start = c.key[3] as number;
            if (start <= rec.seq && rec.seq < c.value.end) return c.value.holder;
          }
          return null;
        },
        10_000,
        "the claim of the hanging page",
      );
    } finally {
      kv.close();
    }
    const victim = workers.find((p) => holder.startsWith(`wrk_p3_${workers.indexOf(p)}:`));
    assert.ok(victim, `a worker holds the range: ${holder}`);
    await victim.kill();
    const killedAt = Date.now();
    hanging = false;
    release();
    await until(
      () => Promise.resolve(site.hits.filter((h) => h === "/s3/p4").length >= 2),
      60_000,
      "the killed worker's range fetched again",
    );
    const movedMs = Date.now() - killedAt;
    const done = await waitForAudit(w, key, auditId, { ...CHILD_POLL, timeoutMs: 90_000 });
    assert.equal(done.body.status, "completed", done.text);
    const twice = [...counts(site.hits)].filter(([, c]) => c > 1).map(([h]) => h);
    console.log(
      `partitioned crawl, SIGKILL of ${holder.split(":")[0]} mid-range: its range fetched again ` +
        `${movedMs} ms after the kill; fetched twice: ${twice.length} (${twice.join(" ")}), ` +
        `step size ${ENV.CRAWL_STEP_PAGES}`,
    );
    assert.ok(movedMs < 60_000);
    assert.ok(twice.length >= 1 && twice.length <= Number(ENV.CRAWL_STEP_PAGES), `${twice}`);
    assert.deepEqual(await findingsOf(w, key, auditId, site.origin), baseline);
  } finally {
    await killAll(web, ...workers);
    for (const s of sites) await s.close();
    await kvFile.remove();
  }
});

Deno.test("the all role, partitioned: a SIGKILLed worker child's ranges are handed back by its supervisor at once", async () => {
  const N = 40;
  const links = Array.from({ length: N }, (_, i) => `/p${i}`);
  const routes: Record<string, Route> = {
    "/": html(page({ title: "Partitioned recovery site", links })),
  };
  for (const l of links) {
    routes[l] = { ...html(page({ title: `Recovery page ${l}`, key: l })), delayMs: 300 };
  }
  const site = serveSite(routes);
  const kvFile = await tempKvPath();
  let s: ServerProcess | null = null;
  const step = 5;
  try {
    s = await startServer(kvFile.path, {
      JOB_RUNNER: "child",
      ...FAST_MAINTENANCE,
      CRAWL_STEP_PAGES: String(step),
      CRAWL_CONCURRENCY: "2",
      CRAWL_PARTITIONS: "2",
      // Longer than this test waits: no lease (audit, range, helper slot) can run out in it, so
      // only the supervisor's hand-back can move the audit again.
      JOB_LEASE_MS: "120000",
    });
    const server = s;
    const childPid = async () =>
      (await server.req("GET", "/admin/health", {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })).body.process.worker?.pid as number | undefined;
    const first = await until(childPid, 15_000, "the worker child");
    const { accountId, key } = await liveAccount(s);
    await postStripe(s, await packPaidEvent(s, accountId));
    const auditId = await runAudit(s, key, site.origin);
    const pageHits = () => site.hits.filter((h) => /^\/p\d+$/.test(h));
    await until(() => Promise.resolve(pageHits().length >= 12), 30_000, "pages");
    Deno.kill(first, "SIGKILL");
    const killedAt = Date.now();
    const atKill = pageHits().length;
    await until(() => Promise.resolve(pageHits().length > atKill + 2), 60_000, "the crawl to move");
    const movedMs = Date.now() - killedAt;
    const done = await waitForAudit(s, key, auditId, { ...CHILD_POLL, timeoutMs: 90_000 });
    assert.equal(done.body.status, "completed", done.text);
    const pages = pageHits();
    console.log(
      `partitioned crawl, embedded child SIGKILLed: moving again ${movedMs} ms after the kill; ` +
        `${pages.length - N} page fetches repeated (two ranges of ${step} in flight at most)`,
    );
    assert.equal(new Set(pages).size, N, "every page was crawled");
    assert.ok(pages.length - N <= 2 * step, `only the ranges in flight are repeated`);
  } catch (err) {
    console.error(s?.logs());
    throw err;
  } finally {
    await killAll(s);
    await site.close();
    await kvFile.remove();
  }
});
