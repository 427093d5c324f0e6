/**
 * Scheduled runs with the injected clock: the maintenance tick (what Deno.cron runs) dispatches
 * due schedules through the queue, and the handler starts audits through `createAudit`.
 */
import assert from "node:assert/strict";
import type { AuditRecord } from "../../domain/audits/record.ts";
import { keys } from "../../kv/keys.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { balanceOf, grantCredits } from "../helpers/credits.ts";
import { quiet, tickUntilSchedule, waitForAudit } from "../helpers/jobs.ts";
import { startReceiver } from "../webhooks/helpers.ts";

const path = (projectId: string) => `/v1/projects/${projectId}/schedule`;

/** A site whose home page waits for `release()` while `held`, so an audit stays running. */
function gatedSite() {
  let open: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const site = serveSite({
    "/": {
      handler: async () => {
        await gate;
        return new Response(page({ title: "Scheduled site home page" }), {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      },
    },
  });
  return {
    site,
    hold() {
      gate = new Promise((r) => (open = r));
    },
    release: () => open(),
  };
}

async function setup(app: TestApp, url: string, funding: "basic" | "pro" | "credits" = "basic") {
  const { accountId } = await app.signup();
  const key = await app.liveKey(accountId);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url, name: "Watched" } });
  const projectId = proj.body.project_id as string;
  if (funding !== "credits") await subscribeProject(app, accountId, projectId, funding);
  return { accountId, key, projectId };
}

async function auditCount(app: TestApp, key: string, projectId: string): Promise<number> {
  return (await app.req("GET", `/v1/projects/${projectId}`, { key })).body.counts.audits;
}

Deno.test("due times: nothing before the run time, one audit at it, next run a cadence later", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  try {
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, site.origin);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "tuesday" },
      });
      const runAt = Date.parse(put.body.next_run_at);
      assert.equal(put.body.next_run_at.slice(0, 13), "2026-11-24T06");

      app.clock.set(runAt - 1);
      await app.service.tick();
      await quiet(100);
      assert.equal(await auditCount(app, key, projectId), 0, "not before its run time");

      app.clock.set(runAt);
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(s.last_run.outcome, "started");
      assert.equal(s.last_run.due_at, "2026-11-24T06:00:00.000Z");
      assert.equal(Date.parse(s.next_run_at), runAt + 7 * 86_400_000);
      const auditId = s.last_run.audit_id;
      const audit = (await waitForAudit(app, key, auditId, { until: ["completed"] })).body;
      assert.equal(audit.project_id, projectId);
      for (let i = 0; i < 3; i++) await app.service.tick();
      await quiet(100);
      assert.equal(await auditCount(app, key, projectId), 1, "one audit per due time");
    });
  } finally {
    await site.close();
  }
});

Deno.test("an audit records who started it: the schedule's says schedule, an API call's says api", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  try {
    await withApp(async (app) => {
      const { accountId, key, projectId } = await setup(app, site.origin);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "tuesday" },
      });
      app.clock.set(Date.parse(put.body.next_run_at));
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(s.last_run.outcome, "started");
      const scheduledId = s.last_run.audit_id as string;
      const stored = async (id: string) =>
        (await app.kv.get<AuditRecord>(keys.audit(accountId, id))).value!;
      assert.equal((await stored(scheduledId)).trigger, "schedule");
      const done = async (id: string) =>
        (await waitForAudit(app, key, id, { until: ["completed"] })).body;
      assert.equal((await done(scheduledId)).trigger, "schedule");

      const manual = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      assert.equal(manual.status, 202);
      assert.notEqual(manual.body.audit_id, scheduledId, "a new audit, not the scheduled one");
      assert.equal((await stored(manual.body.audit_id)).trigger, "api");
      assert.equal((await done(manual.body.audit_id)).trigger, "api");

      // A record from before the field existed reads as started by the API.
      const { trigger: _, ...old } = await stored(scheduledId);
      await app.kv.set(keys.audit(accountId, scheduledId), old);
      const legacy = await app.req("GET", `/v1/audits/${scheduledId}`, { key });
      assert.equal(legacy.body.trigger, "api");
    });
  } finally {
    await site.close();
  }
});

Deno.test("catch-up after downtime: three missed days run once, then the next slot after now", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  try {
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, site.origin, "pro");
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });
      const firstRun = Date.parse(put.body.next_run_at);
      // The service was down from before the first run until three days later.
      const back = firstRun + 3 * 86_400_000 + 60_000;
      app.clock.set(back);
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs >= 1);
      assert.equal(s.runs, 1);
      assert.equal(s.last_run.due_at, "2026-11-24T06:00:00.000Z", "the oldest missed slot");
      assert.equal(Date.parse(s.next_run_at), firstRun + 4 * 86_400_000, "the next after now");
      for (let i = 0; i < 5; i++) await app.service.tick();
      await quiet(150);
      assert.equal(await auditCount(app, key, projectId), 1, "caught up once, not three times");
    });
  } finally {
    await site.close();
  }
});

Deno.test("credit-funded: a run pays 25 credits like an API audit; an empty balance pauses the schedule with schedule.paused; PUT resumes", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { accountId, key, projectId } = await setup(app, site.origin, "credits");
      const hook = await app.req("POST", "/v1/webhooks", {
        key,
        body: { url: receiver.url, events: ["schedule.paused"] },
      });
      assert.equal(hook.status, 201, hook.text);
      await grantCredits(app, accountId, 30);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });
      app.clock.set(Date.parse(put.body.next_run_at));
      const first = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(first.last_run.outcome, "started");
      assert.equal(await balanceOf(app, accountId), 5, "charged 25 credits");
      await waitForAudit(app, key, first.last_run.audit_id, { until: ["completed"] });

      app.clock.set(Date.parse(first.next_run_at));
      const paused = await tickUntilSchedule(app, key, projectId, (s) => s.status === "paused");
      assert.equal(paused.paused_reason, "insufficient_credits");
      assert.equal(paused.next_run_at, null);
      assert.equal(paused.last_run.outcome, "paused");
      assert.equal(paused.last_run.audit_id, null);
      assert.equal(await balanceOf(app, accountId), 5, "nothing charged");
      assert.equal(await auditCount(app, key, projectId), 1, "no audit started");
      const [evt] = await receiver.waitFor(1);
      assert.equal(evt.body.event, "schedule.paused");
      assert.equal(evt.headers.get("x-serpwright-event"), "schedule.paused");
      assert.equal(evt.body.data.project_id, projectId);
      assert.equal(evt.body.data.reason, "insufficient_credits");
      assert.equal(evt.body.data.required_credits, 25);
      assert.equal(evt.body.data.balance_credits, 5);

      // Paused: later slots do nothing, and no second event.
      app.clock.advance(3 * 86_400_000);
      for (let i = 0; i < 3; i++) await app.service.tick();
      await quiet(150);
      assert.equal(await auditCount(app, key, projectId), 1);
      assert.equal(receiver.received.length, 1);

      // A PUT resumes it from now.
      const resumed = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });
      assert.equal(resumed.status, 200);
      assert.equal(resumed.body.status, "active");
      assert.equal(resumed.body.paused_reason, null);
      assert.ok(Date.parse(resumed.body.next_run_at) > app.clock.now());
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});

Deno.test("an audit queued or running at the due time serves the slot: no second audit", async () => {
  const gated = gatedSite();
  try {
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, gated.site.origin);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "tuesday" },
      });
      // Started a second before the slot (this process runs it at once): a start days earlier
      // would be past its crawl deadline by the slot, and over before the slot's tick.
      const due = Date.parse(put.body.next_run_at);
      app.clock.set(due - 1_000);
      gated.hold();
      const manual = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      assert.equal(manual.status, 202);
      app.clock.set(due);
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(s.last_run.outcome, "audit_in_progress");
      assert.equal(s.last_run.audit_id, manual.body.audit_id);
      assert.equal(await auditCount(app, key, projectId), 1);
      gated.release();
      await waitForAudit(app, key, manual.body.audit_id, { until: ["completed"] });
    });
  } finally {
    gated.release();
    await gated.site.close();
  }
});

Deno.test("a schedule deleted mid-run: the running audit completes, no later slot runs", async () => {
  const gated = gatedSite();
  try {
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, gated.site.origin);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "tuesday" },
      });
      gated.hold();
      app.clock.set(Date.parse(put.body.next_run_at));
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      const auditId = s.last_run.audit_id;
      await waitForAudit(app, key, auditId, { until: ["running"] });
      const del = await app.req("DELETE", path(projectId), { key });
      assert.equal(del.status, 200, del.text);
      gated.release();
      const done = (await waitForAudit(app, key, auditId, { until: ["completed"] })).body;
      assert.equal(typeof done.score, "number");
      // Weeks later: nothing more.
      app.clock.advance(21 * 86_400_000);
      for (let i = 0; i < 3; i++) await app.service.tick();
      await quiet(150);
      assert.equal(await auditCount(app, key, projectId), 1);
      assert.equal((await app.req("GET", path(projectId), { key })).status, 404);
      let left = 0;
      for await (const _ of app.kv.list({ prefix: ["schedules_due"] })) left++;
      assert.equal(left, 0, "no index entry left behind");
    });
  } finally {
    gated.release();
    await gated.site.close();
  }
});

Deno.test("a schedule deleted between dispatch and run: the queued message starts nothing", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  try {
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, site.origin);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "tuesday" },
      });
      app.clock.set(Date.parse(put.body.next_run_at));
      const { runDueSchedule } = await import("../../domain/monitoring/dispatch.ts");
      await app.req("DELETE", path(projectId), { key });
      assert.equal(await runDueSchedule(app.service.services.deps, projectId), "not_due");
      await app.service.tick();
      await quiet(100);
      assert.equal(await auditCount(app, key, projectId), 0);
    });
  } finally {
    await site.close();
  }
});

Deno.test("rendered schedules: priced as rendered audits, each run renders, 503 where nothing renders", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  try {
    await withApp(async (app) => {
      const { accountId, key, projectId } = await setup(app, site.origin, "credits");
      const body = { cadence: "daily", hour_utc: 6, render: true };
      const put = await app.req("PUT", path(projectId), { key, body });
      assert.equal(put.status, 201, put.text);
      assert.equal(put.body.render, true);
      assert.equal(put.body.funding.credits_per_run, 75, "a rendered audit's credits");
      // The same schedule without render is a change (a raw one, 25 credits a run).
      const raw = await app.req("PUT", path(projectId), { key, body: { ...body, render: false } });
      assert.equal(raw.body.render, false);
      assert.equal(raw.body.funding.credits_per_run, 25);
      const again = await app.req("PUT", path(projectId), { key, body });
      assert.equal(again.body.render, true);

      // Subscribed projects: pro includes rendering, basic pays the add-on.
      for (const [plan, credits] of [["pro", 0], ["basic", 50]] as const) {
        const other = await setup(app, site.origin, plan);
        const res = await app.req("PUT", path(other.projectId), {
          key: other.key,
          body: { ...body, cadence: "weekly" },
        });
        assert.equal(res.status, 201, res.text);
        assert.equal(res.body.funding.credits_per_run, credits, plan);
      }

      await grantCredits(app, accountId, 80);
      app.clock.set(Date.parse(again.body.next_run_at));
      const ran = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(ran.last_run.outcome, "started");
      assert.equal(await balanceOf(app, accountId), 5, "charged 75 credits");
      const audit = (await waitForAudit(app, key, ran.last_run.audit_id, { timeoutMs: 60_000 }))
        .body;
      assert.equal(audit.status, "completed", JSON.stringify(audit.error));
      assert.ok(audit.render.pages_rendered >= 1, JSON.stringify(audit.render));
    });

    // A server that cannot render refuses a rendered schedule, and stores nothing.
    await withApp(async (app) => {
      const { key, projectId } = await setup(app, site.origin, "pro");
      const res = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "daily", hour_utc: 6, render: true },
      });
      assert.equal(res.status, 503);
      assert.equal(res.body.error.code, "rendering_unavailable");
      const none = await app.req("GET", path(projectId), { key });
      assert.equal(none.status, 404);
    }, { env: { RENDERING: "off" } });
  } finally {
    await site.close();
  }
});

Deno.test("a rendered schedule on a server that can no longer render pauses with rendering_unavailable", async () => {
  const site = serveSite({ "/": html(page({ title: "Scheduled site home page" })) });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { accountId, key, projectId } = await setup(app, site.origin, "credits");
      await app.req("POST", "/v1/webhooks", {
        key,
        body: { url: receiver.url, events: ["schedule.paused"] },
      });
      await grantCredits(app, accountId, 100);
      const put = await app.req("PUT", path(projectId), {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });
      // As a deployment that could render stored it before this one (RENDERING=off) took over.
      const entry = await app.kv.get<Record<string, unknown>>(keys.schedule(projectId));
      assert.ok(entry.value);
      await app.kv.set(entry.key, { ...entry.value, render: true });

      app.clock.set(Date.parse(put.body.next_run_at));
      const paused = await tickUntilSchedule(app, key, projectId, (s) => s.status === "paused");
      assert.equal(paused.paused_reason, "rendering_unavailable");
      assert.equal(paused.render, true);
      assert.equal(await balanceOf(app, accountId), 100, "nothing charged");
      assert.equal(await auditCount(app, key, projectId), 0, "no raw audit in its place");
      const [evt] = await receiver.waitFor(1);
      assert.equal(evt.body.data.reason, "rendering_unavailable");
    }, { env: { RENDERING: "off" } });
  } finally {
    await receiver.close();
    await site.close();
  }
});
