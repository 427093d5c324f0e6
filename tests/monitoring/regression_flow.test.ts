/**
 * A site that regresses between two scheduled runs: the second audit sends `audit.regressed`
 * with the new critical issues, the fixed ones, and the score and category deltas.
 */
import assert from "node:assert/strict";
import { html, page, serveSite } from "../helpers/sites.ts";
import { subscribeProject, withApp } from "../helpers/app.ts";
import { quiet, tickUntilSchedule, waitForAudit } from "../helpers/jobs.ts";
import { startReceiver, verifySignature } from "../webhooks/helpers.ts";

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
        body: { url: receiver.url, events: ["audit.regressed", "audit.completed"] },
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
        const s = await tickUntilSchedule(app, key, projectId, (s) => s.runs === runs);
        const audit = await waitForAudit(app, key, s.last_run.audit_id, { until: ["completed"] });
        return { schedule: s, audit: audit.body };
      };
      const events = (name: string) => receiver.received.filter((e) => e.body.event === name);
      const first = await runAndComplete(Date.parse(put.body.next_run_at), 1);
      await receiver.waitFor(1);
      await quiet(200);
      assert.equal(
        events("audit.regressed").length,
        0,
        "a first audit has nothing to regress from",
      );
      const [firstDone] = events("audit.completed");
      const c0 = firstDone.body.data.changes;
      assert.equal(c0.previous_audit_id, null);
      assert.equal(c0.score, null);
      assert.equal(c0.regressed, false);
      assert.equal(c0.new, first.audit.changes.new, "the counts of GET /v1/audits/{id}");
      assert.equal(firstDone.body.data.scheduled, true);

      broken = true;
      const second = await runAndComplete(Date.parse(first.schedule.next_run_at), 2);
      await receiver.waitFor(3);
      const [evt] = events("audit.regressed");
      const [secondDone] = events("audit.completed").filter((e) =>
        e.body.data.audit_id === second.audit.audit_id
      );
      assert.deepEqual(secondDone.body.data, evt.body.data, "audit.completed carries the same");
      assert.ok(
        verifySignature(hook.body.secret, evt.raw, evt.headers.get("x-serpwright-signature")),
      );
      assert.equal(evt.headers.get("x-serpwright-event"), "audit.regressed");
      const d = evt.body.data;
      const c = d.changes;
      assert.equal(d.project_id, projectId);
      assert.equal(d.audit_id, second.audit.audit_id);
      assert.equal(c.previous_audit_id, first.audit.audit_id);
      assert.equal(d.scheduled, true);
      assert.equal(c.regressed, true);
      assert.deepEqual(
        { new: c.new, persisting: c.persisting, fixed: c.fixed },
        {
          new: second.audit.changes.new,
          persisting: second.audit.changes.persisting,
          fixed: second.audit.changes.fixed,
        },
        "main's counts, extended",
      );
      assert.deepEqual(c.score, {
        before: first.audit.score,
        after: second.audit.score,
        delta: second.audit.score - first.audit.score,
      });
      assert.ok(c.score.delta < 0, `score dropped: ${JSON.stringify(c.score)}`);
      assert.deepEqual(c.reasons, ["score_dropped", "new_critical_issues"]);
      // The lists are the stored per-check comparison: every new critical or warning issue of
      // GET /v1/audits/{id}/issues, beyond any top-10 cut.
      const listed = (await app.req("GET", `/v1/audits/${second.audit.audit_id}/issues?limit=100`, {
        key,
      })).body.data as { check: string; severity: string; change: string }[];
      const of = (severity: string, change: string) =>
        listed.filter((i) => i.severity === severity && i.change === change).map((i) => i.check)
          .sort();
      const newCritical = c.new_critical.map((i: { check: string }) => i.check).sort();
      assert.deepEqual(newCritical, of("critical", "new"));
      assert.deepEqual(
        c.new_warning.map((i: { check: string }) => i.check).sort(),
        of("warning", "new"),
      );
      assert.equal(c.counts.new_critical, newCritical.length);
      for (const check of ["broken_internal_links", "viewport_missing"]) {
        assert.ok(newCritical.includes(check), `${check} in ${newCritical}`);
      }
      for (const i of c.new_critical) {
        assert.ok(i.affected_count >= 1);
        assert.equal(typeof i.title, "string");
      }
      assert.equal(
        c.categories.mobile.after - c.categories.mobile.before,
        c.categories.mobile.delta,
      );
      assert.ok(c.categories.mobile.delta < 0, "the missing viewport costs mobile");
      assert.deepEqual(c.fixed_issues, []);
      assert.equal(c.fixed, 0);

      // Repaired: the next run is a recovery, not a regression.
      broken = false;
      const third = await runAndComplete(Date.parse(second.schedule.next_run_at), 3);
      await receiver.waitFor(4);
      await quiet(200);
      assert.equal(events("audit.regressed").length, 1, "a recovery is not a regression");
      const [thirdDone] = events("audit.completed").filter((e) =>
        e.body.data.audit_id === third.audit.audit_id
      );
      const fixed = thirdDone.body.data.changes.fixed_issues.map((i: { check: string }) => i.check);
      for (const check of ["broken_internal_links", "viewport_missing"]) {
        assert.ok(fixed.includes(check), `${check} fixed in ${fixed}`);
      }
      assert.equal(thirdDone.body.data.changes.regressed, false);
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});
