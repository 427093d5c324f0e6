/**
 * A site that regresses between two scheduled runs: the second audit sends `audit.regressed`
 * with the new critical issues, the fixed ones, and the score and category deltas.
 */
import assert from "node:assert/strict";
import { html, page, serveSite } from "../audit/sites.ts";
import { subscribeProject, withApp } from "../helpers/app.ts";
import { eventually, quiet, startReceiver, verifySignature } from "../webhooks/helpers.ts";

Deno.test("a site that regresses between two scheduled runs sends audit.regressed with the right issues", async () => {
  let broken = false;
  const site = serveSite((path) => {
    if (path === "/") {
      return html(
        broken
          ? page({ title: "Watched home page", viewport: null, links: ["/guide", "/gone"] })
          : page({ title: "Watched home page", links: ["/guide"] }),
      );
    }
    if (path === "/guide") return html(page({ title: "A guide page of the watched site" }));
    return undefined; // 404
  });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { accountId } = await app.signup();
      const key = await app.liveKey(accountId);
      const hook = await app.req("POST", "/v1/webhooks", {
        key,
        body: { url: receiver.url, events: ["audit.regressed"] },
      });
      const projectId = (await app.req("POST", "/v1/projects", {
        key,
        body: { url: site.origin, name: "Watched" },
      })).body.project_id;
      await subscribeProject(app, accountId, projectId, "pro");
      const put = await app.req("PUT", `/v1/projects/${projectId}/schedule`, {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });

      const runAndComplete = async (at: number, runs: number) => {
        app.clock.set(at);
        const s = await eventually(async () => {
          await app.service.tick();
          const s = (await app.req("GET", `/v1/projects/${projectId}/schedule`, { key })).body;
          return s.runs === runs ? s : null;
        });
        return await eventually(async () => {
          const a = await app.req("GET", `/v1/audits/${s.last_run.audit_id}`, { key });
          return a.body.status === "completed" ? { schedule: s, audit: a.body } : null;
        });
      };
      const first = await runAndComplete(Date.parse(put.body.next_run_at), 1);
      await quiet(200);
      assert.equal(receiver.received.length, 0, "a first audit has nothing to regress from");

      broken = true;
      const second = await runAndComplete(Date.parse(first.schedule.next_run_at), 2);
      const [evt] = await receiver.waitFor(1);
      assert.ok(
        verifySignature(hook.body.secret, evt.raw, evt.headers.get("x-serpwright-signature")),
      );
      assert.equal(evt.headers.get("x-serpwright-event"), "audit.regressed");
      const d = evt.body.data;
      assert.equal(d.project_id, projectId);
      assert.equal(d.audit_id, second.audit.audit_id);
      assert.equal(d.previous_audit_id, first.audit.audit_id);
      assert.equal(d.scheduled, true);
      assert.equal(d.regressed, true);
      assert.deepEqual(d.score, {
        before: first.audit.score,
        after: second.audit.score,
        delta: second.audit.score - first.audit.score,
      });
      assert.ok(d.score.delta < 0, `score dropped: ${JSON.stringify(d.score)}`);
      assert.deepEqual(d.reasons, ["score_dropped", "new_critical_issues"]);
      const newCritical = d.new_critical.map((i: { check: string }) => i.check).sort();
      for (const check of ["broken_internal_links", "viewport_missing"]) {
        assert.ok(newCritical.includes(check), `${check} in ${newCritical}`);
      }
      for (const i of d.new_critical) {
        assert.ok(i.affected_count >= 1);
        assert.equal(typeof i.title, "string");
      }
      assert.equal(
        d.categories.mobile.after - d.categories.mobile.before,
        d.categories.mobile.delta,
      );
      assert.ok(d.categories.mobile.delta < 0, "the missing viewport costs mobile");
      assert.deepEqual(d.fixed, []);

      // Repaired: the next run is a recovery, not a regression.
      broken = false;
      await runAndComplete(Date.parse(second.schedule.next_run_at), 3);
      await quiet(200);
      assert.equal(receiver.received.length, 1, "a recovery is not a regression");
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});
