import assert from "node:assert/strict";
import { createProject } from "../../domain/projects/projects.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, subscribeProject, withApp } from "../helpers/app.ts";
import { balanceOf, grantCredits, liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

function smallSite(delayMs = 0) {
  return serveSite({
    "/": { ...html(page({ title: "Home of the test site", links: ["/a", "/b"] })), delayMs },
    "/a": html(page({ title: "Page A of the test site", key: "a" })),
    "/b": html(page({ title: "Page B of the test site", key: "b", viewport: null })),
  });
}

Deno.test("sandbox audit over HTTP: 202, queue, completed with score and summary, budget of 1", () =>
  withApp(async (app) => {
    const site = smallSite();
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const projectId = proj.body.project_id;
      const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      assert.equal(res.status, 202);
      assert.match(res.body.audit_id, /^aud_/);
      assert.equal(res.body.status, "queued");
      assert.equal(res.body.poll, `/v1/audits/${res.body.audit_id}`);

      const done = await waitForAudit(app, key, res.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);
      assert.equal(done.body.project_id, projectId);
      assert.ok(
        Number.isInteger(done.body.score) && done.body.score >= 0 && done.body.score <= 100,
      );
      const s = done.body.summary;
      assert.deepEqual(Object.keys(s.categories).sort(), [
        "agents",
        "indexability",
        "mobile",
        "performance",
        "security",
        "structure",
      ]);
      assert.ok(s.top_issues.length <= 10);
      assert.ok(
        s.top_issues.some((t: { check: string }) => t.check === "viewport_missing"),
        "the page without a viewport is found",
      );
      assert.ok(done.body.started_at && done.body.completed_at);
      assert.equal("error" in done.body, false);

      const detail = await app.req("GET", `/v1/projects/${projectId}`, { key });
      assert.equal(detail.body.counts.audits, 1);
      assert.equal(detail.body.status, "running");
      assert.equal(detail.body.latest_audit.audit_id, res.body.audit_id);
      assert.equal(detail.body.latest_audit.score, done.body.score);
      assert.deepEqual(detail.body.latest_audit.summary, s);
      const me = await app.req("GET", "/v1/account", { key });
      assert.deepEqual(me.body.sandbox_usage, { audits: 1, articles: 0 });

      const again = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      assert.equal(again.status, 403);
      assert.equal(errorCode(again), "sandbox_limit_reached");
    } finally {
      await site.close();
    }
  }));

Deno.test("an audit queued or running is returned as is, with nothing charged twice", () =>
  withApp(async (app) => {
    const site = smallSite(300);
    try {
      const { accountId, live } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const path = `/v1/projects/${proj.body.project_id}/audits`;
      const results = await Promise.all(
        Array.from({ length: 5 }, () => app.req("POST", path, { key: live })),
      );
      for (const r of results) assert.equal(r.status, 202, r.text);
      assert.equal(new Set(results.map((r) => r.body.audit_id)).size, 1);
      assert.equal(await balanceOf(app, accountId), 75, "25 credits, once");
      const done = await waitForAudit(app, live, results[0].body.audit_id);
      assert.equal(done.body.status, "completed");
      // A new audit after completion is a new charge.
      const next = await app.req("POST", path, { key: live });
      assert.equal(next.status, 202);
      assert.notEqual(next.body.audit_id, results[0].body.audit_id);
      assert.equal(await balanceOf(app, accountId), 50);
      await waitForAudit(app, live, next.body.audit_id);
      const detail = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key: live });
      assert.equal(detail.body.counts.audits, 2);
    } finally {
      await site.close();
    }
  }));

Deno.test("gating: 402 insufficient_credits with details; a sandbox key cannot see the live project (404)", () =>
  withApp(async (app) => {
    const { key: sandboxKey, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const proj = await app.req("POST", "/v1/projects", {
      key: live,
      body: { url: "https://example.com" },
    });
    const path = `/v1/projects/${proj.body.project_id}/audits`;
    await grantCredits(app, accountId, 24);
    const poor = await app.req("POST", path, { key: live });
    assert.equal(poor.status, 402);
    assert.equal(errorCode(poor), "insufficient_credits");
    assert.equal(poor.body.required_credits, 25);
    assert.equal(poor.body.balance_credits, 24);
    assert.equal(typeof poor.body.purchase, "string");
    assert.equal(typeof poor.body.subscription_alternative, "string");
    const sandbox = await app.req("POST", path, { key: sandboxKey });
    assert.equal(sandbox.status, 404);
    assert.equal(errorCode(sandbox), "not_found");
    const detail = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key: live });
    assert.equal(detail.body.counts.audits, 0, "refusals create nothing");
    assert.equal(await balanceOf(app, accountId), 24);
    const foreign = await app.signup();
    const nf = await app.req("POST", path, { key: foreign.key });
    assert.equal(nf.status, 404);
    assert.equal(errorCode(nf), "not_found");
  }));

Deno.test("a subscribed project's audits are included: no credits move", () =>
  withApp(async (app) => {
    const site = smallSite();
    try {
      const { accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const projectId = proj.body.project_id;
      await subscribeProject(app, accountId, projectId);
      const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key: live });
      assert.equal(res.status, 202);
      assert.equal(await balanceOf(app, accountId), 0);
      const done = await waitForAudit(app, live, res.body.audit_id);
      assert.equal(done.body.status, "completed");
    } finally {
      await site.close();
    }
  }));

Deno.test("a refused target fails the audit with an error and refunds the credits", () =>
  withApp(async (app) => {
    const { accountId, live } = await liveWithCredits(app, 30);
    // Refused at creation since issue 16; a project stored before that (or a name whose DNS
    // answer changed since) still meets the guard when the audit runs.
    const deps = app.service.services.deps;
    const project = await createProject(
      { ...deps, config: { ...deps.config, allowPrivateTargets: true } },
      { accountId, mode: "live" },
      { url: "http://127.0.0.1:9/" },
    );
    const proj = { body: { project_id: project.id } };
    const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key: live });
    assert.equal(res.status, 202);
    const failed = await waitForAudit(app, live, res.body.audit_id);
    assert.equal(failed.body.status, "failed");
    assert.equal(failed.body.error.code, "target_refused");
    assert.equal("score" in failed.body, false);
    // Charged when accepted (the audit may have failed already: this process starts it at
    // once), then refunded.
    const ledger: { kind: string; ref: string; amount: number }[] = [];
    for await (
      const e of app.kv.list<{ kind: string; ref: string; amount: number }>({
        prefix: keys.ledgerOfAccount(accountId),
      })
    ) if (e.value.ref === res.body.audit_id) ledger.push(e.value);
    assert.deepEqual(ledger.map((e) => [e.kind, e.amount]), [["debit", 25], ["refund", 25]]);
    assert.equal(await balanceOf(app, accountId), 30, "refunded");
    const detail = await app.req("GET", `/v1/projects/${proj.body.project_id}`, { key: live });
    assert.equal(detail.body.latest_audit, null);
  }, { env: { ALLOW_PRIVATE_TARGETS: "0" } }));

Deno.test("a run whose worker died is resumed by the stale-job sweep without a second charge", () =>
  withApp(async (app) => {
    const site = smallSite();
    try {
      const { accountId, live } = await liveWithCredits(app, 25);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: live,
      });
      const auditId = res.body.audit_id;
      await waitForAudit(app, live, auditId, { until: ["completed"] });
      // Rewind the record to "running under a dead worker's lease", as a crash would leave it.
      const key = keys.audit(accountId, auditId);
      const rec = (await app.kv.get<Record<string, unknown>>(key)).value!;
      await app.kv.set(key, {
        ...rec,
        status: "running",
        completedAt: null,
        score: null,
        summary: null,
        attempts: 1,
        // A worker that died inside a crawl step leaves the step open under its lease.
        inStep: true,
        leaseUntil: app.clock.now() + 60_000,
      });
      await app.kv.set(keys.runningJob("audit", auditId), {
        id: auditId,
        accountId,
        leaseUntil: app.clock.now() + 60_000,
      });
      await app.service.tick();
      assert.equal(
        (await app.req("GET", `/v1/audits/${auditId}`, { key: live })).body.status,
        "running",
        "lease still held",
      );
      app.clock.advance(61_000);
      await app.service.tick();
      const done = await waitForAudit(app, live, auditId);
      assert.equal(done.body.status, "completed");
      assert.equal(await balanceOf(app, accountId), 0, "charged once");
      assert.equal((await app.kv.get(keys.runningJob("audit", auditId))).value, null);
    } finally {
      await site.close();
    }
  }));

Deno.test("GET /v1/audits/{id} is 404 for foreign and unknown ids", () =>
  withApp(async (app) => {
    const site = smallSite();
    try {
      const a = await app.signup();
      const b = await app.signup();
      const proj = await app.req("POST", "/v1/projects", {
        key: a.key,
        body: { url: site.origin },
      });
      const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: a.key,
      });
      await waitForAudit(app, a.key, res.body.audit_id);
      assert.equal(
        (await app.req("GET", `/v1/audits/${res.body.audit_id}`, { key: b.key })).status,
        404,
      );
      assert.equal((await app.req("GET", "/v1/audits/aud_missing", { key: a.key })).status, 404);
    } finally {
      await site.close();
    }
  }));
