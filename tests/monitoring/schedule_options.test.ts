/**
 * A schedule carries audit options (issue 22 §1): the PUT validates and stores them, GET and the
 * MCP schedule tool echo them, and every scheduled audit is started with them (its crawl obeys
 * them, its record shows them).
 */
import assert from "node:assert/strict";
import { subscribeProject, withApp } from "../helpers/app.ts";
import { tickUntilSchedule, waitForAudit } from "../helpers/jobs.ts";
import { isAgentProbe, page, serveSite } from "../helpers/sites.ts";
import { call, connectMcp } from "../mcp/helpers.ts";

Deno.test("scheduled audits run with the schedule's options", async () => {
  const agents: string[] = [];
  const route = (body: string) => ({
    handler: (req: Request) => {
      const ua = req.headers.get("user-agent");
      if (!isAgentProbe(ua)) agents.push(ua ?? ""); // the agents probes ask as each bot class
      return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  const site = serveSite({
    "/": route(page({ title: "Scheduled scoped home", key: "h", links: ["/shop/1", "/news/2"] })),
    "/shop/1": route(page({ title: "Shop page one of the site", key: "s" })),
    "/news/2": route(page({ title: "News page two of the site", key: "n" })),
  });
  try {
    await withApp(async (app) => {
      const { accountId } = await app.signup();
      const key = await app.liveKey(accountId);
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const projectId = proj.body.project_id as string;
      await subscribeProject(app, accountId, projectId, "pro");
      const options = { exclude: ["/news/**"], user_agent: "bingbot" };
      const put = await app.req("PUT", `/v1/projects/${projectId}/schedule`, {
        key,
        body: { cadence: "daily", hour_utc: 7, ...options },
      });
      assert.equal(put.status, 201, put.text);
      assert.deepEqual(put.body.options, options);
      const got = await app.req("GET", `/v1/projects/${projectId}/schedule`, { key });
      assert.deepEqual(got.body.options, options);

      // The same PUT again changes nothing; other options replace the schedule (200).
      const again = await app.req("PUT", `/v1/projects/${projectId}/schedule`, {
        key,
        body: { cadence: "daily", hour_utc: 7, ...options },
      });
      assert.equal(again.status, 200);
      assert.equal(again.body.updated_at, put.body.updated_at, "unchanged");

      // The MCP schedule tool shows (and sets) the same options.
      const client = await connectMcp(app, { key });
      try {
        const viaMcp = await call(client, "schedule", { action: "get", project_id: projectId });
        assert.deepEqual(viaMcp.options, options);
      } finally {
        await client.close();
      }

      app.clock.set(Date.parse(put.body.next_run_at));
      const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === 1);
      assert.equal(s.last_run.outcome, "started");
      const audit = await waitForAudit(app, key, s.last_run.audit_id);
      assert.equal(audit.body.status, "completed", audit.text);
      assert.equal(audit.body.trigger, "schedule");
      assert.deepEqual(audit.body.options, options);
      assert.equal(audit.body.scope.left_out.exclude, 1);
      assert.ok(!site.hits.includes("/news/2"), site.hits.join());
      assert.ok(site.hits.includes("/shop/1"));
      assert.ok(agents.length >= 2 && agents.every((a) => a.includes("bingbot/2.0")));

      // Setting the schedule through MCP with other options replaces them.
      const client2 = await connectMcp(app, { key });
      try {
        const set = await call(client2, "schedule", {
          action: "set",
          project_id: projectId,
          cadence: "daily",
          hour_utc: 7,
          max_depth: 0,
        });
        assert.deepEqual(set.options, { max_depth: 0, user_agent: "serpwright" });
      } finally {
        await client2.close();
      }
    });
  } finally {
    await site.close();
  }
});
