/**
 * Re-checking a fix over HTTP and MCP: a site with missing titles and a broken link is audited;
 * a re-check before the fix finds each URL still failing with fresh evidence, and after the site
 * is fixed finds each fixed. Charged per URL from credits (refunded when no URL answers), included
 * with a subscription, refused to sandbox keys; foreign ids 404; site-wide checks 409; replays.
 */
import assert from "node:assert/strict";
import { runAuditJob } from "../../domain/audits/job.ts";
import { listLedger } from "../../domain/billing/credits.ts";
import { claimJob } from "../../domain/jobs/lifecycle.ts";
import { runRecheckJob } from "../../domain/rechecks/job.ts";
import { RECHECK_JOB, RECHECK_LEASE_MS, type RecheckRecord } from "../../domain/rechecks/record.ts";
import { auditRunner } from "../../jobs/audit_jobs.ts";
import { recheckRunner } from "../../jobs/recheck_jobs.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { balanceOf, grantCredits, liveWithCredits } from "../helpers/credits.ts";
import { pollUntil, waitForAudit } from "../helpers/jobs.ts";
import { html, isAgentProbe, page, type Route, serveSite } from "../helpers/sites.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";
import { htmlAnswer, serveLogged } from "../helpers/logged_site.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";
import { startReceiver } from "../webhooks/helpers.ts";

/** A site whose pages /a and /b lack a title and /a links to a 404, until `fix()`. */
function fixableSite() {
  let fixed = false;
  const routes = (p: string): Route | undefined => {
    if (p === "/") {
      return html(page({ title: "Home of the re-check site", links: ["/a", "/b", "/c"] }));
    }
    if (p === "/a") {
      return html(page({
        title: fixed ? "Page A of the re-check site, titled" : null,
        links: [fixed ? "/c" : "/missing"],
        key: "a",
      }));
    }
    if (p === "/b") {
      return html(page({ title: fixed ? "Page B of the re-check site, titled" : null, key: "b" }));
    }
    if (p === "/c") return html(page({ title: "Page C of the re-check site", key: "c" }));
    return undefined;
  };
  const site = serveSite(routes);
  return { site, fix: () => void (fixed = true) };
}

async function auditSite(app: TestApp, key: string, url: string) {
  const proj = await app.req("POST", "/v1/projects", { key, body: { url } });
  assert.equal(proj.status, 201, proj.text);
  const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  assert.equal(started.status, 202, started.text);
  const done = await waitForAudit(app, key, started.body.audit_id);
  assert.equal(done.body.status, "completed", done.text);
  return { projectId: proj.body.project_id as string, auditId: started.body.audit_id as string };
}

/** Starts a re-check and waits for it to end; returns the final re-check. */
async function recheck(app: TestApp, key: string, auditId: string, check: string) {
  const res = await app.req("POST", `/v1/audits/${auditId}/issues/${check}/recheck`, { key });
  assert.equal(res.status, 202, res.text);
  assert.equal(res.body.poll, `/v1/rechecks/${res.body.recheck_id}`);
  const done = await pollUntil(
    () => app.req("GET", res.body.poll, { key }),
    (r) => r.body?.status === "completed" || r.body?.status === "failed",
    { what: `re-check ${res.body.recheck_id}` },
  );
  return { accepted: res.body, done: done.body };
}

// deno-lint-ignore no-explicit-any
const byUrl = (items: any[]): Record<string, any> =>
  Object.fromEntries(items.map((i) => [new URL(i.url).pathname, i]));

Deno.test("re-check before and after a fix: still_failing with fresh evidence, then fixed; charged per URL", () =>
  withApp(async (app) => {
    const { site, fix } = fixableSite();
    try {
      const { accountId, live } = await liveWithCredits(app, 100);
      const { auditId } = await auditSite(app, live, site.origin);
      const issue = await app.req("GET", `/v1/audits/${auditId}/issues/title_missing`, {
        key: live,
      });
      assert.equal(issue.body.affected_count, 2, issue.text);
      assert.equal(await balanceOf(app, accountId), 75);

      // Before the fix: each URL still fails, with evidence in the findings' shape.
      const before = await recheck(app, live, auditId, "title_missing");
      assert.equal(before.accepted.urls_checked, 2);
      assert.equal(before.accepted.urls_left_out, 0);
      assert.deepEqual(before.accepted.charge, { funding: "credits", credits: 1 });
      assert.equal(before.done.status, "completed", JSON.stringify(before.done));
      assert.deepEqual(before.done.counts, { fixed: 0, still_failing: 2, not_checked: 0 });
      const items = byUrl(before.done.items);
      assert.deepEqual(Object.keys(items).sort(), ["/a", "/b"]);
      assert.equal(items["/a"].result, "still_failing");
      assert.equal(items["/a"].status, 200);
      assert.deepEqual(items["/a"].evidence, [{ url: site.url("/a") }]);
      assert.deepEqual(issue.body.data.find((e: { url: string }) => e.url === site.url("/a")), {
        url: site.url("/a"),
      });
      const links = await recheck(app, live, auditId, "broken_internal_links");
      assert.deepEqual(links.done.counts, { fixed: 0, still_failing: 1, not_checked: 0 });
      const [broken] = links.done.items[0].evidence;
      assert.equal(broken.url, site.url("/a"));
      assert.equal(broken.target, site.url("/missing"));
      assert.equal(broken.status, 404);
      // 1 credit per 10 URLs or part of 10: two re-checks of 1 and 2 URLs cost 1 credit each.
      assert.equal(await balanceOf(app, accountId), 73);

      // Fixed: the same URLs now pass; only they were fetched (not /c, not the home page).
      fix();
      const seen = site.hits.length;
      const after = await recheck(app, live, auditId, "title_missing");
      assert.deepEqual(after.done.counts, { fixed: 2, still_failing: 0, not_checked: 0 });
      for (const i of after.done.items) {
        assert.equal(i.result, "fixed");
        assert.equal(i.status, 200);
        assert.deepEqual(i.evidence, []);
        assert.equal(i.reason, null);
      }
      assert.deepEqual(
        [...new Set(site.hits.slice(seen))].sort(),
        ["/a", "/b", "/robots.txt"],
      );
      const linksAfter = await recheck(app, live, auditId, "broken_internal_links");
      assert.equal(linksAfter.done.items[0].result, "fixed");
      assert.equal(await balanceOf(app, accountId), 71);
      const debits = (await listLedger(app.kv, accountId)).filter((e) =>
        e.reason === "recheck_urls"
      );
      assert.deepEqual(debits.map((e) => [e.kind, e.amount]), Array(4).fill(["debit", 1]));

      // The audit itself is unchanged: its findings still list what it found.
      const still = await app.req("GET", `/v1/audits/${auditId}/issues/title_missing`, {
        key: live,
      });
      assert.equal(still.body.affected_count, 2);

      // A subscription includes re-checks: nothing is charged.
      const projectId = before.done.project_id;
      await subscribeProject(app, accountId, projectId);
      const included = await recheck(app, live, auditId, "title_missing");
      assert.deepEqual(included.accepted.charge, { funding: "subscription", credits: 0 });
      assert.equal(included.done.status, "completed");
      assert.equal(await balanceOf(app, accountId), 71);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "1" } }));

Deno.test("re-check: foreign and unknown ids 404, refused and empty checks 409, sandbox 402, replays, refund when nothing answers", () =>
  withApp(async (app) => {
    const { site } = fixableSite();
    let closed = false;
    try {
      const { key: sandboxKey, accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      await grantCredits(app, accountId, 100);
      const { auditId, projectId } = await auditSite(app, live, site.origin);
      const post = (key: string, path: string, headers?: Record<string, string>) =>
        app.req("POST", path, { key, ...(headers ? { headers } : {}) });
      const path = (check: string, audit = auditId) =>
        `/v1/audits/${audit}/issues/${check}/recheck`;

      // Another account, and the account's own sandbox key (the other mode), see nothing.
      const other = await liveWithCredits(app, 100);
      assert.equal(errorCode(await post(other.live, path("title_missing"))), "not_found");
      assert.equal(errorCode(await post(sandboxKey, path("title_missing"))), "not_found");
      assert.equal(errorCode(await post(live, path("title_missing", "aud_nope"))), "not_found");
      const unknown = await post(live, path("no_such_check"));
      assert.equal(unknown.status, 404);
      assert.equal(errorCode(unknown), "not_found");

      // Site-wide checks and checks that did not fire: 409, with the reason.
      const siteWide = await post(live, path("sitemap_missing"));
      assert.equal(siteWide.status, 409);
      assert.equal(errorCode(siteWide), "invalid_state");
      assert.match(siteWide.body.error.message, /cannot be re-checked on its own URLs/);
      for (const check of ["duplicate_content", "orphan_page", "deep_page", "llms_txt_missing"]) {
        assert.equal(errorCode(await post(live, path(check))), "invalid_state", check);
      }
      const quiet = await post(live, path("h1_missing"));
      assert.equal(errorCode(quiet), "invalid_state");
      assert.match(quiet.body.error.message, /did not fire/);

      // An audit not completed yet: 409.
      const second = await app.req("POST", `/v1/projects/${projectId}/audits`, { key: live });
      const early = await post(live, path("title_missing", second.body.audit_id));
      assert.equal(errorCode(early), "invalid_state");
      assert.match(early.body.error.message, /completed/);
      await waitForAudit(app, live, second.body.audit_id);
      assert.equal(await balanceOf(app, accountId), 50, "nothing charged for a refusal");

      // A replay with the same Idempotency-Key answers the same re-check, charged once.
      const h = { "idempotency-key": crypto.randomUUID() };
      const first = await post(live, path("title_missing"), h);
      const again = await post(live, path("title_missing"), h);
      assert.equal(first.status, 202);
      assert.equal(again.status, 202);
      assert.equal(again.headers.get("idempotent-replayed"), "true");
      assert.equal(again.body.recheck_id, first.body.recheck_id);
      assert.equal(await balanceOf(app, accountId), 49);
      await pollUntil(
        () => app.req("GET", first.body.poll, { key: live }),
        (r) => r.body.status === "completed",
      );
      assert.equal(
        errorCode(await app.req("GET", first.body.poll, { key: other.live })),
        "not_found",
      );
      assert.equal(
        errorCode(await app.req("GET", "/v1/rechecks/rck_nope", { key: live })),
        "not_found",
      );

      // The site is gone: no URL answers, the re-check fails and the credit comes back.
      await site.close();
      closed = true;
      const gone = await recheck(app, live, auditId, "title_missing");
      assert.equal(gone.done.status, "failed");
      assert.equal(gone.done.error.code, "site_unreachable");
      assert.equal(await balanceOf(app, accountId), 49);
      const refunds = (await listLedger(app.kv, accountId)).filter((e) => e.kind === "refund");
      assert.deepEqual(refunds.map((e) => [e.amount, e.reason]), [[1, "refund_recheck_urls"]]);
    } finally {
      if (!closed) await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "2" } }));

Deno.test("re-check: a sandbox key is refused (402) on its own audit; nothing is created", () =>
  withApp(async (app) => {
    const { site } = fixableSite();
    try {
      const { key } = await app.signup();
      const { auditId } = await auditSite(app, key, site.origin);
      const res = await app.req("POST", `/v1/audits/${auditId}/issues/title_missing/recheck`, {
        key,
      });
      assert.equal(res.status, 402);
      assert.equal(errorCode(res), "payment_required");
      const left: unknown[] = [];
      for await (const e of app.kv.list({ prefix: ["rechecks"] })) left.push(e.key);
      assert.deepEqual(left, []);
      const account = await app.req("GET", "/v1/account", { key });
      assert.equal(account.status, 200);
    } finally {
      await site.close();
    }
  }));

Deno.test("re-check over MCP: the audits tool's recheck and recheck_get run the same operations; recheck.completed is sent", () =>
  withApp(async (app) => {
    const { site, fix } = fixableSite();
    const receiver = startReceiver();
    const { live } = await liveWithCredits(app, 100);
    const client = await connectMcp(app, { key: live });
    try {
      await app.req("POST", "/v1/webhooks", {
        key: live,
        body: { url: receiver.url, events: ["recheck.completed"] },
      });
      const { auditId } = await auditSite(app, live, site.origin);
      fix();
      const started = await call(client, "audits", {
        action: "recheck",
        audit_id: auditId,
        check: "title_missing",
        wait: 30,
      });
      assert.equal(started.status, "completed", JSON.stringify(started));
      assert.deepEqual(started.counts, { fixed: 2, still_failing: 0, not_checked: 0 });
      const got = await call(client, "audits", {
        action: "recheck_get",
        recheck_id: started.recheck_id,
      });
      const rest = await app.req("GET", `/v1/rechecks/${started.recheck_id}`, {
        key: live,
      });
      assert.deepEqual(got, rest.body);
      const [evt] = await receiver.waitFor(1, 15_000);
      assert.equal(evt.headers.get("x-serpwright-event"), "recheck.completed");
      assert.deepEqual(evt.body.data, {
        recheck_id: rest.body.recheck_id,
        audit_id: auditId,
        project_id: rest.body.project_id,
        check: "title_missing",
        status: "completed",
        urls_checked: 2,
        urls_left_out: 0,
        counts: rest.body.counts,
        completed_at: rest.body.completed_at,
        poll: rest.body.poll,
      });
      const refused = await client.callTool({
        name: "audits",
        arguments: { action: "recheck", audit_id: auditId, check: "robots_txt_missing" },
      });
      assert.equal(refused.isError, true);
      // deno-lint-ignore no-explicit-any
      assert.equal((refused._meta as any)?.["com.serpwright/error"]?.error?.code, "invalid_state");
    } finally {
      await client.close();
      await receiver.close();
      await site.close();
    }
  }));

Deno.test("re-check of a check with more than 100 affected URLs: the first 100 by URL, the rest counted as left out", () =>
  withApp(async (app) => {
    const paths = Array.from({ length: 105 }, (_, i) => `/p${String(i).padStart(3, "0")}`);
    const site = serveSite((p) =>
      p === "/"
        ? html(page({ title: "Home of a site of untitled pages", links: paths }))
        : paths.includes(p)
        ? html(page({ title: null, key: p }))
        : undefined
    );
    try {
      const { accountId, live } = await liveWithCredits(app, 100);
      const { auditId } = await auditSite(app, live, site.origin);
      const { accepted, done } = await recheck(app, live, auditId, "title_missing");
      assert.equal(accepted.affected_count, 105);
      assert.equal(accepted.urls_checked, 100);
      assert.equal(accepted.urls_left_out, 5);
      assert.deepEqual(accepted.charge, { funding: "credits", credits: 10 });
      assert.equal(await balanceOf(app, accountId), 100 - 25 - 10);
      assert.deepEqual(done.counts, { fixed: 0, still_failing: 100, not_checked: 0 });
      assert.deepEqual(
        done.items.map((i: { url: string }) => new URL(i.url).pathname),
        paths.slice(0, 100),
      );
    } finally {
      await site.close();
    }
  }));

Deno.test("re-check: a step whose worker died is taken over after its lease, not charged twice", () =>
  withApp(async (app) => {
    const { site, fix } = fixableSite();
    try {
      const deps = app.service.services.deps;
      const { accountId, live } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: live,
      });
      // A web process runs no job: this test is the worker.
      while ((await runAuditJob(deps, started.body.audit_id, auditRunner(deps))) === "next");
      fix();
      const res = await app.req(
        "POST",
        `/v1/audits/${started.body.audit_id}/issues/title_missing/recheck`,
        { key: live },
      );
      const id = res.body.recheck_id;
      // A worker claims the first step and dies in it.
      const dead = await claimJob(deps, RECHECK_JOB, id);
      assert.ok(dead);
      const runner = recheckRunner(deps);
      assert.equal(await runRecheckJob(deps, id, runner), "idle", "held by the dead worker");
      app.clock.advance(RECHECK_LEASE_MS + 1);
      while ((await runRecheckJob(deps, id, runner)) === "next");
      const done = (await app.req("GET", `/v1/rechecks/${id}`, { key: live })).body;
      assert.equal(done.status, "completed", JSON.stringify(done));
      assert.deepEqual(done.counts, { fixed: 2, still_failing: 0, not_checked: 0 });
      const record = (await app.kv.get<RecheckRecord>(keys.recheck(accountId, id))).value!;
      assert.equal(record.attempts, 2);
      assert.equal(await balanceOf(app, accountId), 100 - 25 - 1);
      assert.equal((await app.kv.get(keys.runningJob("recheck", id))).value, null);
    } finally {
      await site.close();
    }
  }, { env: { SERVICE_ROLE: "web", CRAWL_STEP_PAGES: "1" } }));

Deno.test("with JOB_QUEUE=table a re-check runs its steps and leaves no job row", () =>
  withApp(async (app) => {
    const { site } = fixableSite();
    try {
      const { live } = await liveWithCredits(app, 100);
      const { auditId } = await auditSite(app, live, site.origin);
      const { done } = await recheck(app, live, auditId, "title_missing");
      assert.deepEqual(done.counts, { fixed: 0, still_failing: 2, not_checked: 0 });
      await pollUntil(
        async () => {
          let n = 0;
          for await (const _ of app.kv.list({ prefix: ["job_queue"] })) n++;
          return n;
        },
        (n) => n === 0,
        { timeoutMs: 10_000, intervalMs: 50, what: "no job row left" },
      );
    } finally {
      await site.close();
    }
  }, { env: { JOB_QUEUE: "table", CRAWL_STEP_PAGES: "1" } }));

Deno.test("a re-check asks as its audit asked: the audit's user_agent preset on every fetch", () =>
  withApp(async (app) => {
    const agents: string[] = [];
    const site = serveSite((p) => {
      if (p === "/") return html(page({ title: "Home of the preset site", links: ["/a"] }));
      if (p !== "/a") return undefined;
      return {
        handler: (req: Request) => {
          const ua = req.headers.get("user-agent");
          if (!isAgentProbe(ua)) agents.push(ua ?? "");
          return new Response(page({ title: null, key: "a" }), {
            headers: { "content-type": "text/html; charset=utf-8" },
          });
        },
      };
    });
    try {
      const { live } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: live,
        body: { user_agent: "googlebot_smartphone" },
      });
      assert.equal(started.status, 202, started.text);
      const done = await waitForAudit(app, live, started.body.audit_id);
      assert.equal(done.body.status, "completed", done.text);
      const crawled = agents.length;
      assert.ok(crawled >= 1 && agents.every((a) => a.includes("Googlebot")), agents.join("\n"));

      const { done: re } = await recheck(app, live, started.body.audit_id, "title_missing");
      assert.deepEqual(re.counts, { fixed: 0, still_failing: 1, not_checked: 0 });
      const mine = agents.slice(crawled);
      assert.equal(mine.length, 1, "the re-check fetched /a once");
      assert.ok(mine[0].includes("Googlebot") && mine[0].includes("Serpwright"), mine[0]);
    } finally {
      await site.close();
    }
  }));

Deno.test("a staging audit's re-check is refused (409 invalid_state, reason staging_audit), nothing charged or fetched; one accepted before the rule fails refunded, never 'fixed' from the login page", () =>
  withApp(async (app) => {
    // A staging site: with the right Basic credentials /a and /b lack a title; without them every
    // path answers 200 with a login page that has one (which would read as "fixed").
    const basic = `Basic ${btoa("reviewer:staging-pw")}`;
    const unauthenticated: string[] = [];
    const guarded = (title: string | null, links: string[] = []) => (req: Request) => {
      if (req.headers.get("authorization") !== basic) {
        unauthenticated.push(new URL(req.url).pathname);
        return htmlAnswer(page({ title: "Sign in to the staging site", key: "login" }));
      }
      return htmlAnswer(page({ title, links, key: title ?? "untitled" }));
    };
    const site = serveLogged(() => ({
      "/": guarded("Staging home of the re-check test", ["/a", "/b"]),
      "/a": guarded(null),
      "/b": guarded(null),
    }));
    try {
      const deps = app.service.services.deps;
      const { accountId, live } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: live,
        body: { auth: { type: "basic", user: "reviewer", password: "staging-pw" } },
      });
      assert.equal(started.status, 202, started.text);
      const auditId = started.body.audit_id;
      // A web process runs no job: this test is the worker.
      while ((await runAuditJob(deps, auditId, auditRunner(deps))) === "next");
      const issue = await app.req("GET", `/v1/audits/${auditId}/issues/title_missing`, {
        key: live,
      });
      assert.equal(issue.body.affected_count, 2, issue.text);
      assert.deepEqual(unauthenticated, [], "the audit sent its credentials");
      assert.equal((await app.kv.get(keys.auditAuth(auditId))).value, null, "gone with the audit");
      const balance = await balanceOf(app, accountId);
      const requests = site.log.length;

      // REST and MCP: refused before anything is charged, created or fetched.
      const path = `/v1/audits/${auditId}/issues/title_missing/recheck`;
      const refused = await app.req("POST", path, { key: live });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(errorCode(refused), "invalid_state");
      assert.equal(refused.body.reason, "staging_audit");
      assert.match(refused.body.error.message, /staging site with credentials/);
      const client = await connectMcp(app, { key: live });
      try {
        const e = await callError(client, "audits", {
          action: "recheck",
          audit_id: auditId,
          check: "title_missing",
        });
        assert.equal(e.code, "invalid_state", e.text);
      } finally {
        await client.close();
      }
      assert.equal(await balanceOf(app, accountId), balance);
      assert.equal(site.log.length, requests, "nothing fetched");
      const rechecks = [];
      for await (const e of app.kv.list({ prefix: ["rechecks", accountId] })) rechecks.push(e);
      assert.deepEqual(rechecks, []);

      // A re-check accepted before this rule (the audit's mask hidden while it is created): its
      // step fails it, refunded, without fetching a page as the login wall.
      const auditKey = keys.audit(accountId, auditId);
      const record = (await app.kv.get<AuditRecord>(auditKey)).value!;
      await app.kv.set(auditKey, { ...record, auth: undefined });
      const accepted = await app.req("POST", path, { key: live });
      assert.equal(accepted.status, 202, accepted.text);
      await app.kv.set(auditKey, record);
      const id = accepted.body.recheck_id;
      while ((await runRecheckJob(deps, id, recheckRunner(deps))) === "next");
      const done = (await app.req("GET", `/v1/rechecks/${id}`, { key: live })).body;
      assert.equal(done.status, "failed", JSON.stringify(done));
      assert.equal(done.error.code, "recheck_failed");
      assert.match(done.error.message, /staging site with credentials/);
      assert.deepEqual(done.counts, { fixed: 0, still_failing: 0, not_checked: 0 });
      assert.equal(await balanceOf(app, accountId), balance, "refunded");
      assert.equal(site.log.length, requests, "nothing fetched");
      assert.deepEqual(unauthenticated, []);
    } finally {
      await site.close();
    }
  }, { env: { SERVICE_ROLE: "web" } }));
