/**
 * Retention: once an audit has ended, the maintenance sweep deletes its crawl working state
 * (domain/audit_engine/prune.ts) in short batches, while everything the API serves afterwards stays
 * byte for byte: issues, evidence, pages, the audit record, and the next audit's comparison.
 */
import assert from "node:assert/strict";
import {
  backfillPruneMarkers,
  PRUNE_GRACE_MS,
  pruneFinishedAudits,
  workingStatePrefixes,
} from "../../domain/audit_engine/prune.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { pollUntil, waitForAudit } from "../helpers/jobs.ts";
import { html, page, robotsRoute, type Route, serveSite, sitemapRoute } from "../helpers/sites.ts";

async function count(kv: Deno.Kv, prefix: Deno.KvKey): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix })) n++;
  return n;
}

/** Entries per working-state prefix, plus the two single keys. */
async function workingState(kv: Deno.Kv, auditId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of workingStatePrefixes(auditId)) out[String(p[0])] = await count(kv, p);
  for (const k of [keys.auditCrawl(auditId), keys.auditStep(auditId)]) {
    out[String(k[0])] = (await kv.get(k)).versionstamp === null ? 0 : 1;
  }
  return out;
}

const total = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

async function walk(app: TestApp, key: string, path: string) {
  // deno-lint-ignore no-explicit-any
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req("GET", `${path}${sep}limit=3${cursor ? `&cursor=${cursor}` : ""}`, {
      key,
    });
    assert.equal(res.status, 200, res.text);
    all.push(res.body);
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return all;
}

/** Everything the API serves about a completed audit, as one JSON text. */
async function served(app: TestApp, key: string, auditId: string): Promise<string> {
  const base = `/v1/audits/${auditId}`;
  const issues = await walk(app, key, `${base}/issues`);
  const checks = issues.flatMap((p) => p.data.map((i: { check: string }) => i.check));
  const items = [];
  for (const c of checks) items.push(await walk(app, key, `${base}/issues/${c}`));
  return JSON.stringify({
    audit: (await app.req("GET", base, { key })).body,
    issues,
    items,
    pages: await walk(app, key, `${base}/pages`),
    untitled: await walk(app, key, `${base}/pages?check=title_missing`),
    notIndexable: await walk(app, key, `${base}/pages?indexable=false`),
  });
}

/** Nine pages (two untitled, one duplicate pair), a 404, a redirect, robots.txt and a sitemap. */
function routes(origin: () => string, fixed: Set<string>): (path: string) => Route | undefined {
  return (path) => {
    const links = [...Array.from({ length: 6 }, (_, i) => `/p${i}`), "/missing", "/old"];
    if (path === "/") return html(page({ title: "Home of the pruned site", links }));
    if (path === "/old") return { status: 301, headers: { location: "/p0" } };
    if (path === "/robots.txt") {
      return robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${origin()}/sitemap.xml\n`);
    }
    if (path === "/sitemap.xml") {
      return sitemapRoute(["/", "/p0", "/p1", "/p2", "/orphan"].map((p) => origin() + p));
    }
    if (path === "/orphan") return html(page({ title: "An orphan page of the site", key: "o" }));
    const m = /^\/p([0-9])$/.exec(path);
    if (!m) return undefined;
    const i = Number(m[1]);
    const title = i < 2 && !fixed.has(path) ? null : `Article number ${i} of the pruned site`;
    // p4 and p5 share their text (a duplicate pair for the dup and near-dup indexes).
    return html(page({ title, key: i >= 4 ? "twin" : `p${i}` }));
  };
}

Deno.test("a completed audit's working state is pruned; findings, pages and the next comparison are unchanged", () =>
  withApp(async (app) => {
    const fixed = new Set<string>();
    let origin = "";
    const site = serveSite(routes(() => origin, fixed));
    origin = site.origin;
    try {
      const { live: key } = await liveWithCredits(app, 100);
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const projectId = proj.body.project_id;
      const first = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      const a1 = first.body.audit_id;
      assert.equal((await waitForAudit(app, key, a1)).body.status, "completed");

      const before = await served(app, key, a1);
      const state = await workingState(app.kv, a1);
      for (const name of ["audit_crawl", "audit_frontier", "audit_links", "audit_site_pages"]) {
        assert.ok(state[name] > 0, `${name} holds working state before pruning`);
      }
      assert.ok(state.audit_blobs > 0, "robots.txt body stored");
      assert.ok(state.audit_dup_runs > 0 && state.audit_near_sig > 0, "duplicate indexes stored");

      // Within the grace nothing is due: the sweep leaves the audit alone.
      await app.service.tick();
      assert.deepEqual(await workingState(app.kv, a1), state);

      // One commit per run: the sweep stops and resumes where it was, any number of times.
      const later = { kv: app.kv, clock: { now: () => app.clock.now() + PRUNE_GRACE_MS } };
      assert.equal(await pruneFinishedAudits(later, 1), 0);
      const partial = await workingState(app.kv, a1);
      assert.ok(total(partial) > 0 && total(partial) < total(state), "one batch deleted");
      assert.equal(await count(app.kv, keys.auditPrunesDue()), 1, "marker kept until done");
      let runs = 1;
      while (await count(app.kv, keys.auditPrunesDue()) > 0) {
        await pruneFinishedAudits(later, 1);
        runs++;
        assert.ok(runs < 50);
      }
      assert.ok(runs >= 3, `${runs} runs`);
      assert.equal(total(await workingState(app.kv, a1)), 0, "every working prefix is empty");
      assert.equal(await pruneFinishedAudits(later), 0, "nothing left to do");
      assert.equal(await served(app, key, a1), before, "the API serves exactly the same JSON");

      // A second audit after fixing the untitled pages compares with the pruned one.
      fixed.add("/p0").add("/p1");
      app.clock.advance(PRUNE_GRACE_MS);
      const second = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      const a2 = second.body.audit_id;
      const done = (await waitForAudit(app, key, a2)).body;
      assert.equal(done.status, "completed");
      const firstIssues = JSON.parse(before).issues.flatMap((p: { data: unknown[] }) => p.data);
      const fired1 = new Set(firstIssues.map((i: { check: string }) => i.check));
      const issues2 = (await walk(app, key, `/v1/audits/${a2}/issues`)).flatMap((p) => p.data);
      const fired2 = issues2.filter((i) => i.change !== "fixed").map((i) => i.check);
      assert.ok(fired1.has("title_missing"));
      assert.deepEqual(done.changes, {
        previous_audit_id: a1,
        new: fired2.filter((c) => !fired1.has(c)).length,
        persisting: fired2.filter((c) => fired1.has(c)).length,
        fixed: [...fired1].filter((c) => !fired2.includes(c)).length,
      });
      assert.ok(done.changes.persisting > 0);
      const title = issues2.find((i) => i.check === "title_missing");
      assert.equal(title?.change, "fixed");

      // The maintenance tick prunes the second audit once due, and keeps its findings.
      const before2 = await served(app, key, a2);
      assert.ok(total(await workingState(app.kv, a2)) > 0);
      app.clock.advance(PRUNE_GRACE_MS + 1);
      await app.service.tick();
      assert.equal(total(await workingState(app.kv, a2)), 0);
      assert.equal(await served(app, key, a2), before2);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "2" } }));

Deno.test("a failed audit's working state, pages and findings are pruned too", () =>
  withApp(async (app) => {
    let origin = "";
    const slow = routes(() => origin, new Set());
    const site = serveSite((path) => {
      const r = slow(path);
      return r && path.startsWith("/p") ? { ...r, delayMs: 150 } : r;
    });
    origin = site.origin;
    try {
      const { key, accountId } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const projectId = proj.body.project_id;
      const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
      const auditId = res.body.audit_id;
      // Once a few steps have committed, the project disappears: the next step fails the audit.
      const fast = { timeoutMs: 10_000, intervalMs: 10 };
      await pollUntil(() => count(app.kv, keys.auditPages(auditId)), (n) => n >= 4, {
        ...fast,
        what: "four stored pages",
      });
      const projectKey = keys.project(accountId, projectId);
      const project = (await app.kv.get(projectKey)).value;
      await app.kv.delete(projectKey);
      await pollUntil(
        async () =>
          (await app.kv.get<{ status: string }>(keys.audit(accountId, auditId))).value?.status,
        (status) => status === "failed",
        { ...fast, what: "the stored audit failed" },
      );
      await app.kv.set(projectKey, project); // back, so the audit can be read over HTTP
      const audit = (await waitForAudit(app, key, auditId)).body;
      assert.equal(audit.status, "failed");
      assert.equal(audit.error.code, "project_missing");

      const issues = await app.req("GET", `/v1/audits/${auditId}/issues`, { key });
      const pages = await app.req("GET", `/v1/audits/${auditId}/pages`, { key });
      assert.equal(issues.status, 409);
      assert.ok(await count(app.kv, keys.auditPages(auditId)) > 0);
      assert.ok(total(await workingState(app.kv, auditId)) > 0);
      // Page groups are counted in an audit's last step once its records are final, before it
      // can still fail (domain/audits/job.ts): a failed audit's go with its pages.
      await app.kv.set(keys.auditGroup(auditId, "other"), { name: "other", pages: 1 });
      await app.kv.set(keys.auditGroupPage(auditId, "other", `${origin}/`), true);

      app.clock.advance(PRUNE_GRACE_MS + 1);
      await app.service.tick();
      assert.equal(total(await workingState(app.kv, auditId)), 0);
      assert.equal(await count(app.kv, keys.auditPages(auditId)), 0);
      assert.equal(await count(app.kv, keys.auditFindingsAll(auditId)), 0);
      assert.equal(await count(app.kv, keys.auditGroupsAll(auditId)), 0);
      assert.equal(await count(app.kv, keys.auditGroupPagesAll(auditId)), 0);
      assert.equal(await count(app.kv, keys.auditPrunesDue()), 0);
      // The record stays, and the finished audit answers as before.
      const after = await app.req("GET", `/v1/audits/${auditId}`, { key });
      assert.deepEqual(after.body, audit);
      const issuesAfter = await app.req("GET", `/v1/audits/${auditId}/issues`, { key });
      const pagesAfter = await app.req("GET", `/v1/audits/${auditId}/pages`, { key });
      assert.deepEqual([issuesAfter.status, issuesAfter.body], [issues.status, issues.body]);
      assert.deepEqual([pagesAfter.status, pagesAfter.body], [pages.status, pages.body]);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "2" } }));

Deno.test("audits that ended before prune markers existed are marked once by the backfill, a page at a time", () =>
  withApp(async (app) => {
    let origin = "";
    const site = serveSite(routes(() => origin, new Set()));
    origin = site.origin;
    try {
      const { live: key } = await liveWithCredits(app, 100);
      const ids: string[] = [];
      for (const name of ["one", "two", "three"]) {
        const proj = await app.req("POST", "/v1/projects", {
          key,
          body: { url: site.origin, name },
        });
        const res = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
        assert.equal((await waitForAudit(app, key, res.body.audit_id)).body.status, "completed");
        ids.push(res.body.audit_id);
      }
      const before = await Promise.all(ids.map((id) => served(app, key, id)));
      // The service started before the audits ended: they carry their own markers and the
      // backfill (begun at start) leaves them alone.
      assert.equal(await count(app.kv, keys.auditPrunesDue()), 3);
      const later = { kv: app.kv, clock: { now: () => app.clock.now() + 1 } };
      assert.equal(await backfillPruneMarkers(later, 2), 0);

      // As an earlier version left KV: no markers, and no backfill begun.
      for await (const e of app.kv.list({ prefix: keys.auditPrunesDue() })) {
        await app.kv.delete(e.key);
      }
      await app.kv.delete(keys.pruneBackfill());
      app.clock.advance(PRUNE_GRACE_MS + 1);
      // Two crawl states per call: three audits take two calls, then the backfill is done.
      assert.equal(await backfillPruneMarkers(app.service.services.deps, 2), 2);
      assert.equal(await backfillPruneMarkers(app.service.services.deps, 2), 1);
      assert.equal(await backfillPruneMarkers(app.service.services.deps, 2), 0);
      assert.equal(await count(app.kv, keys.auditPrunesDue()), 3);
      assert.equal((await app.kv.get<{ done: boolean }>(keys.pruneBackfill())).value?.done, true);

      // The sweep prunes them like any marked audit; what the API serves stays the same.
      while (await count(app.kv, keys.auditPrunesDue()) > 0) await app.service.tick();
      for (const [i, id] of ids.entries()) {
        assert.equal(total(await workingState(app.kv, id)), 0, id);
        assert.equal(await served(app, key, id), before[i]);
      }
      // Done once: the crawl states are gone and a later run marks nothing.
      assert.equal(await backfillPruneMarkers(app.service.services.deps, 2), 0);
      assert.equal(await count(app.kv, keys.auditPrunesDue()), 0);
    } finally {
      await site.close();
    }
  }));
