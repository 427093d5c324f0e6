/**
 * The crawl's first step goes on from its start URL in the same step (engine.ts: a claim and a
 * commit fewer on a remote KV): on a KV far enough away for a grown step, its rounds fetch the
 * start page's links before it commits, judging them by the robots.txt it fetched (handed over,
 * not read back from KV before its writes are in), and every page is recorded once.
 */
import assert from "node:assert/strict";
import { runAuditJob } from "../../domain/audits/job.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import type { PageRecord } from "../../domain/audit_engine/crawl/store.ts";
import { auditRunner } from "../../jobs/audit_jobs.ts";
import { keys } from "../../kv/keys.ts";
import { withApp } from "../helpers/app.ts";
import { startLiveAudit } from "../helpers/credits.ts";
import { openTestKv } from "../helpers/kv.ts";
import { withLatency } from "../helpers/latency_kv.ts";
import { html, page, robotsRoute, serveSite } from "../helpers/sites.ts";

const site = () =>
  serveSite((p) => {
    if (p === "/robots.txt") return robotsRoute("User-agent: *\nDisallow: /p2\n");
    if (p === "/") {
      return html(page({ title: "Home of the first step site", links: ["/p1", "/p2", "/p3"] }));
    }
    const m = /^\/p([0-9])$/.exec(p);
    if (!m) return undefined;
    const links = Number(m[1]) < 6 ? [`/p${Number(m[1]) + 3}`] : [];
    return html(page({ title: `Page ${m[1]} of the first step site`, key: p, links }));
  });

Deno.test("the first step crawls on from its start URL, judged by the robots.txt it fetched", async () => {
  const s = site();
  // 20 ms a round trip: the step grows (step_size.ts) and takes its frontier in rounds.
  const kv = withLatency(await openTestKv(), 20);
  try {
    await withApp(async (app) => {
      const { accountId, id: auditId } = await startLiveAudit(app, s.origin);
      const deps = app.service.services.deps;
      assert.equal(await runAuditJob(deps, auditId, auditRunner(deps)), "next");
      const state = (await app.kv.get<CrawlState>(keys.auditCrawl(auditId))).value!;
      assert.equal(state.steps, 1, "one step so far");
      assert.ok(state.fetches > 1, `the first step fetched ${state.fetches} pages`);
      assert.ok(!s.hits.includes("/p2"), "robots.txt keeps the crawler from /p2");
      while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
      const audit = await app.kv.get<{ status: string }>(keys.audit(accountId, auditId));
      assert.equal(audit.value?.status, "completed");
      const blocked = await app.kv.get<PageRecord>(keys.auditPage(auditId, `${s.origin}/p2`));
      assert.equal(blocked.value?.state, "blocked");
      // Every page the crawler asked for, once.
      const pages = s.hits.filter((p) => /^\/(p[0-9])?$/.test(p));
      assert.deepEqual(pages.sort(), ["/", "/p1", "/p3", "/p4", "/p6", "/p7"]);
    }, { kv, env: { SERVICE_ROLE: "web" } });
  } finally {
    await s.close();
  }
});
