/**
 * The audit's findings over HTTP: issues with their texts and changes, the evidence items of an
 * issue, the page inventory; cursor pagination that loses and repeats nothing; filters; 404 for
 * foreign ids and 409 before completion; new/persisting/fixed across two audits; and the crawl
 * running as many small steps through both queue adapters.
 */
import assert from "node:assert/strict";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";
import { startReceiver } from "../webhooks/helpers.ts";

/** Follows next_cursor from the first page to the last; returns every item and the page count. */
async function walk(app: TestApp, key: string, path: string, limit: number) {
  // deno-lint-ignore no-explicit-any
  const all: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req(
      "GET",
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
      { key },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= limit);
    all.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  return { all, pages };
}

/** Twelve pages: a home linking ten articles (two without a title), a 404 and a redirect. */
function siteRoutes(): Record<string, Route> {
  const links = [...Array.from({ length: 10 }, (_, i) => `/p${i}`), "/missing", "/old"];
  const routes: Record<string, Route> = {
    "/": html(page({ title: "Home of the findings site", links })),
    "/old": { status: 301, headers: { location: "/p0" } },
  };
  for (let i = 0; i < 10; i++) {
    routes[`/p${i}`] = html(
      page({ title: i < 2 ? null : `Article number ${i} of the findings site`, key: `p${i}` }),
    );
  }
  return routes;
}

Deno.test("issues, evidence and pages over HTTP: texts, pagination without loss, filters, several steps", () =>
  withApp(async (app) => {
    const site = serveSite(siteRoutes());
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
      const auditId = started.body.audit_id;
      const audit = (await waitForAudit(app, key, auditId)).body;
      assert.equal(audit.status, "completed");
      assert.deepEqual(audit.changes.previous_audit_id, null);
      const state = (await app.kv.get<CrawlState>(keys.auditCrawl(auditId))).value!;
      assert.ok(state.steps >= 6, `the crawl ran as ${state.steps} steps of 2 pages`);

      // Pages: every URL once, sorted, whatever the page size, also under concurrent walks.
      const whole = await walk(app, key, `/v1/audits/${auditId}/pages`, 100);
      assert.equal(whole.all.length, 13);
      const urls = whole.all.map((p) => p.url);
      assert.deepEqual(urls, [...urls].sort());
      const walks = await Promise.all(
        [3, 3, 5, 1].map((n) => walk(app, key, `/v1/audits/${auditId}/pages`, n)),
      );
      for (const w of walks) assert.deepEqual(w.all.map((p) => p.url), urls);
      assert.ok(walks[0].pages >= 5);
      const missing = whole.all.find((p) => p.url.endsWith("/missing"));
      assert.equal(missing.status, 404);
      assert.equal(missing.indexable, false);
      assert.equal(missing.not_indexable_reason, "error_status");
      assert.equal(missing.inlinks, 1);
      // A linked 404 is charged once, as a broken link on the page that links to it.
      assert.ok(!missing.checks.includes("http_4xx"));
      const home = whole.all.find((p) => p.url === site.origin + "/");
      assert.equal(home.depth, 0);
      assert.equal(home.outlinks, 12);
      assert.ok(home.checks.includes("broken_internal_links"));
      const old = whole.all.find((p) => p.url.endsWith("/old"));
      assert.equal(old.redirect_target, site.origin + "/p0");

      // Link scores: HTML 200 pages only; the home page links every article (and /p0 a second
      // time through /old: counted once, so /p0 ranks with the others); nothing links home.
      const score = (path: string) =>
        whole.all.find((p) => p.url === site.origin + path).link_score;
      assert.equal(missing.link_score, null);
      assert.equal(old.link_score, null);
      const articles = Array.from({ length: 10 }, (_, i) => score(`/p${i}`));
      assert.deepEqual(articles, Array(10).fill(100));
      assert.ok(Number.isInteger(home.link_score) && home.link_score < 100, `${home.link_score}`);

      // Filters.
      const e4 = await walk(app, key, `/v1/audits/${auditId}/pages?status=4xx`, 10);
      assert.deepEqual(e4.all.map((p) => p.url), [site.origin + "/missing"]);
      const notIdx = await walk(app, key, `/v1/audits/${auditId}/pages?indexable=false`, 10);
      assert.deepEqual(notIdx.all.map((p) => p.url), [
        site.origin + "/missing",
        site.origin + "/old",
      ]);
      const untitled = await walk(app, key, `/v1/audits/${auditId}/pages?check=title_missing`, 1);
      assert.deepEqual(untitled.all.map((p) => p.url), [site.origin + "/p0", site.origin + "/p1"]);
      assert.equal(untitled.pages, 2);

      // Issues: texts, order, paging and filters.
      const issues = await walk(app, key, `/v1/audits/${auditId}/issues`, 2);
      const one = await walk(app, key, `/v1/audits/${auditId}/issues`, 100);
      assert.deepEqual(issues.all, one.all);
      assert.ok(issues.pages >= 3);
      const rank = { critical: 0, warning: 1, info: 2 } as Record<string, number>;
      for (let i = 1; i < one.all.length; i++) {
        assert.ok(rank[one.all[i - 1].severity] <= rank[one.all[i].severity], "worst first");
      }
      for (const i of one.all) {
        assert.ok(i.meaning.length > 10 && i.fix.length > 10, i.check);
        assert.ok(i.doc_url.endsWith(`/docs/checks#${i.check}`));
        assert.equal(i.change, "new");
        assert.ok(i.affected_count >= 1);
      }
      const crit = await walk(app, key, `/v1/audits/${auditId}/issues?severity=critical`, 100);
      assert.ok(crit.all.length > 0 && crit.all.every((i) => i.severity === "critical"));
      const cat = await walk(app, key, `/v1/audits/${auditId}/issues?category=structure`, 100);
      assert.ok(cat.all.every((i) => i.category === "structure"));
      assert.ok(one.all.some((i) => i.check === "title_missing" && i.affected_count === 2));

      // Items of one issue, with evidence; unknown check 404; a bad cursor 400.
      const broken = await walk(
        app,
        key,
        `/v1/audits/${auditId}/issues/broken_internal_links`,
        100,
      );
      assert.deepEqual(broken.all, [{
        url: site.origin + "/",
        target: site.origin + "/missing",
        anchor: "Guide number 10",
        status: 404,
        failure: null,
      }]);
      const titles = await walk(app, key, `/v1/audits/${auditId}/issues/title_missing`, 1);
      assert.deepEqual(titles.all.map((i) => i.url), [site.origin + "/p0", site.origin + "/p1"]);
      const none = await app.req("GET", `/v1/audits/${auditId}/issues/no_such_check`, { key });
      assert.equal(none.status, 404);
      const quiet = await app.req("GET", `/v1/audits/${auditId}/issues/redirect_loop`, { key });
      assert.equal(quiet.status, 200);
      assert.deepEqual(quiet.body.data, []);
      const garbage = await app.req("GET", `/v1/audits/${auditId}/pages?cursor=%%%`, { key });
      assert.equal(garbage.status, 400);
      const tooMany = await app.req("GET", `/v1/audits/${auditId}/pages?limit=101`, { key });
      assert.equal(tooMany.status, 400);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "2" } }));

Deno.test("findings endpoints: 404 for foreign and unknown ids, 409 until the audit completed", () =>
  withApp(async (app) => {
    const site = serveSite({
      "/": { ...html(page({ title: "A slow home page for the test" })), delayMs: 300 },
    });
    try {
      const a = await app.signup();
      const b = await app.signup();
      const proj = await app.req("POST", "/v1/projects", {
        key: a.key,
        body: { url: site.origin },
      });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key: a.key,
      });
      const id = started.body.audit_id;
      const paths = [
        `/v1/audits/${id}/issues`,
        `/v1/audits/${id}/issues/title_missing`,
        `/v1/audits/${id}/pages`,
      ];
      for (const p of paths) {
        const early = await app.req("GET", p, { key: a.key });
        assert.equal(early.status, 409, `${p}: ${early.text}`);
        assert.equal(early.body.error.code, "invalid_state");
      }
      await waitForAudit(app, a.key, id);
      for (const p of paths) {
        assert.equal((await app.req("GET", p, { key: a.key })).status, 200, p);
        const foreign = await app.req("GET", p, { key: b.key });
        assert.equal(foreign.status, 404, p);
        assert.equal(foreign.body.error.code, "not_found");
        const unknown = await app.req("GET", p.replace(id, "aud_missing"), { key: a.key });
        assert.equal(unknown.status, 404, p);
        assert.equal((await app.req("GET", p)).status, 401, `${p} needs a key`);
      }
    } finally {
      await site.close();
    }
  }));

Deno.test("two audits of a changing site: new, persisting and fixed issues, on the audit and audit.completed", async () => {
  let second = false;
  const site = serveSite((path) => {
    if (path === "/") {
      return html(page({ title: "Home of the changing site", links: ["/a", "/missing", "/b"] }));
    }
    if (path === "/a") {
      return html(page({ title: second ? "Page A now has a title" : null, key: "a" }));
    }
    if (path === "/b") {
      return html(
        page({
          title: "Page B of the changing site",
          key: "b",
          viewport: second ? null : undefined,
        }),
      );
    }
    return undefined;
  });
  const receiver = startReceiver();
  try {
    await withApp(async (app) => {
      const { live } = await liveWithCredits(app, 50);
      await app.req("POST", "/v1/webhooks", {
        key: live,
        body: { url: receiver.url, events: ["audit.completed"] },
      });
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      const path = `/v1/projects/${proj.body.project_id}/audits`;
      const first = (await waitForAudit(
        app,
        live,
        (await app.req("POST", path, { key: live })).body.audit_id,
      )).body;
      second = true;
      const next = (await waitForAudit(
        app,
        live,
        (await app.req("POST", path, { key: live })).body.audit_id,
      )).body;

      const issues = await walk(app, live, `/v1/audits/${next.audit_id}/issues`, 100);
      const change = (id: string) => issues.all.find((i) => i.check === id)?.change;
      assert.equal(change("title_missing"), "fixed");
      assert.equal(issues.all.find((i) => i.check === "title_missing").affected_count, 0);
      assert.equal(change("broken_internal_links"), "persisting");
      assert.equal(change("viewport_missing"), "new");
      const fixed = await walk(app, live, `/v1/audits/${next.audit_id}/issues?change=fixed`, 100);
      assert.deepEqual(fixed.all.map((i) => i.check), ["title_missing"]);
      // Fixed issues come after every issue that still fires.
      const firstFixed = issues.all.findIndex((i) => i.change === "fixed");
      assert.ok(issues.all.slice(firstFixed).every((i) => i.change === "fixed"));

      assert.equal(next.changes.previous_audit_id, first.audit_id);
      assert.equal(next.changes.fixed, 1);
      assert.equal(next.changes.new, issues.all.filter((i) => i.change === "new").length);
      assert.equal(
        next.changes.persisting,
        issues.all.filter((i) => i.change === "persisting").length,
      );
      assert.ok(next.changes.new >= 1 && next.changes.persisting >= 1);
      assert.equal(first.changes.previous_audit_id, null);

      const events = await receiver.waitFor(2, 15_000);
      const data = events.map((e) => e.body.data);
      const last = data.find((d) => d.audit_id === next.audit_id);
      // The event's changes extend the audit's additively (the regression comparison).
      const counts = Object.fromEntries(
        Object.keys(next.changes).map((k) => [k, last.changes[k]]),
      );
      assert.deepEqual(counts, next.changes);
      assert.deepEqual(last.changes.fixed_issues.map((i: { check: string }) => i.check), [
        "title_missing",
      ]);
    });
  } finally {
    await receiver.close();
    await site.close();
  }
});

Deno.test("a multi-step crawl gives the same issues through the table queue as through the KV queue", async () => {
  const site = serveSite(siteRoutes());
  try {
    const results: string[] = [];
    for (const queue of ["kv", "table"]) {
      await withApp(async (app) => {
        const { key } = await app.signup();
        const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
        const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
          key,
        });
        const audit = (await waitForAudit(app, key, started.body.audit_id)).body;
        assert.equal(audit.status, "completed", queue);
        const state = (await app.kv.get<CrawlState>(keys.auditCrawl(audit.audit_id))).value!;
        assert.ok(state.steps >= 4, `${queue}: ${state.steps} steps`);
        const issues = await walk(app, key, `/v1/audits/${audit.audit_id}/issues`, 100);
        results.push(JSON.stringify(issues.all.map((i) => [i.check, i.affected_count])));
      }, { env: { JOB_QUEUE: queue, CRAWL_STEP_PAGES: "3" } });
    }
    assert.equal(results[0], results[1]);
  } finally {
    await site.close();
  }
});
