/**
 * Polling that matches the work (issue 33): the 202 of every job start (audits, articles,
 * re-checks) carries `poll_after_seconds`, estimated from the job's size and the queue ahead
 * (app/jobs/poll_hint.ts), and the same as `Retry-After`, replays included; every 202 the
 * registry declares documents the field. A completed audit links its report (`report_url`)
 * and its live share link.
 */
import assert from "node:assert/strict";
import { OPERATIONS } from "../../app/operations/index.ts";
import { auditPollSeconds, pollAfter, recheckPollSeconds } from "../../app/jobs/poll_hint.ts";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

import type { TestResponse } from "../helpers/app.ts";

function assertPollHint(res: TestResponse) {
  assert.equal(res.status, 202, res.text);
  const poll = res.body.poll_after_seconds;
  assert.ok(Number.isInteger(poll) && poll >= 2 && poll <= 60, res.text);
  assert.equal(res.headers.get("retry-after"), String(poll));
  return poll as number;
}

Deno.test("poll hints: the estimate is the job's size at a pace plus the queue, within 2-60 s", () => {
  assert.equal(auditPollSeconds(25, 0), 2);
  assert.equal(auditPollSeconds(500, 0), 25);
  assert.equal(auditPollSeconds(500, 3), 28);
  assert.equal(auditPollSeconds(100_000, 0), 60);
  assert.equal(recheckPollSeconds(100, 0), 10);
  assert.equal(pollAfter(0, 0), 2);
});

Deno.test("every 202 of a job documents poll_after_seconds", () => {
  // A verification mail is accepted (202) but is not a job the caller polls: its answer says
  // when the link expires, and the mail arrives in the inbox.
  const notPolled = new Set(["accounts.verify_email"]);
  const accepted = OPERATIONS.filter((op) => op.status === 202 && !notPolled.has(op.id));
  assert.ok(accepted.length >= 3);
  for (const op of accepted) {
    // deno-lint-ignore no-explicit-any
    const shape = (op.output as any).shape ?? {};
    assert.ok("poll_after_seconds" in shape, `${op.id}: its 202 has no poll_after_seconds`);
  }
});

Deno.test("Retry-After on every 202: audits, articles, re-checks (and their replays)", async () => {
  const site = serveSite({
    "/": html(page({ title: "Home of the poll hint site", links: ["/a"] })),
    "/a": html(page({ title: null, key: "a" })),
  });
  try {
    await withApp(async (app) => {
      const { live } = await liveWithCredits(app, 500);
      const project = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: site.origin },
      });
      assert.equal(project.status, 201, project.text);
      const pid = project.body.project_id;

      const audit = await app.req("POST", `/v1/projects/${pid}/audits`, {
        key: live,
        headers: { "idempotency-key": "a-1" },
      });
      assertPollHint(audit);
      const replay = await app.req("POST", `/v1/projects/${pid}/audits`, {
        key: live,
        headers: { "idempotency-key": "a-1" },
      });
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      assert.equal(replay.headers.get("retry-after"), String(audit.body.poll_after_seconds));

      const done = await waitForAudit(app, live, audit.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);
      const base = app.service.services.deps.config.publicBaseUrl;
      assert.equal(done.body.report_url, `${base}/v1/audits/${audit.body.audit_id}/report`);
      assert.equal(done.body.share_url, null);
      const share = await app.req("POST", `/v1/audits/${audit.body.audit_id}/shares`, {
        key: live,
        body: {},
      });
      assert.equal(share.status, 201, share.text);
      const linked = await app.req("GET", `/v1/audits/${audit.body.audit_id}`, { key: live });
      assert.equal(linked.body.share_url, share.body.url);

      const recheck = await app.req(
        "POST",
        `/v1/audits/${audit.body.audit_id}/issues/title_missing/recheck`,
        { key: live },
      );
      assertPollHint(recheck);

      const article = await app.req("POST", `/v1/projects/${pid}/articles`, {
        key: live,
        body: { topic: "How to poll a job politely" },
      });
      assertPollHint(article);
    });
  } finally {
    await site.close();
  }
});
