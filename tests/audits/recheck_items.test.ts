/**
 * A re-check answers per item of the check: a page with two broken links, one of them fixed,
 * re-checks as one link fixed (with the target's fresh status) and one still failing; the other
 * link removed closes it too. Checks judged on the page itself count the URL as the one item.
 */
import assert from "node:assert/strict";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { pollUntil, waitForAudit } from "../helpers/jobs.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";

async function auditSite(app: TestApp, key: string, url: string) {
  const proj = await app.req("POST", "/v1/projects", { key, body: { url } });
  assert.equal(proj.status, 201, proj.text);
  const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  assert.equal(started.status, 202, started.text);
  const done = await waitForAudit(app, key, started.body.audit_id);
  assert.equal(done.body.status, "completed", done.text);
  return started.body.audit_id as string;
}

async function recheck(app: TestApp, key: string, auditId: string, check: string) {
  const res = await app.req("POST", `/v1/audits/${auditId}/issues/${check}/recheck`, { key });
  assert.equal(res.status, 202, res.text);
  const done = await pollUntil(
    () => app.req("GET", res.body.poll, { key }),
    (r) => r.body?.status === "completed" || r.body?.status === "failed",
    { what: `re-check ${res.body.recheck_id}` },
  );
  assert.equal(done.body.status, "completed", done.text);
  return done.body;
}

Deno.test("re-check per link: one of two broken links fixed reads one fixed and one still_failing, then both closed", () =>
  withApp(async (app) => {
    // /p links to /gone-a and /gone-b, both 404; step 1 serves /gone-a, step 2 drops /gone-b.
    let step = 0;
    const routes = (p: string): Route | undefined => {
      if (p === "/") return html(page({ title: "Home of the per-item site", links: ["/p"] }));
      if (p === "/p") {
        const links = step < 2 ? ["/gone-a", "/gone-b"] : ["/gone-a"];
        return html(page({ title: "A page with two broken links", links, key: "p", h1: null }));
      }
      if (p === "/gone-a" && step >= 1) {
        return html(page({ title: "Gone A is back online", key: "a" }));
      }
      return undefined;
    };
    const site = serveSite(routes);
    try {
      const { live } = await liveWithCredits(app, 100);
      const auditId = await auditSite(app, live, site.origin);

      const before = await recheck(app, live, auditId, "broken_internal_links");
      assert.equal(before.items.length, 1);
      assert.deepEqual(
        before.items[0].item_results.map((p: { target: string; result: string }) => [
          new URL(p.target).pathname,
          p.result,
        ]).sort(),
        [["/gone-a", "still_failing"], ["/gone-b", "still_failing"]],
      );
      assert.deepEqual(before.item_counts, { fixed: 0, still_failing: 2, not_checked: 0 });

      step = 1;
      const one = await recheck(app, live, auditId, "broken_internal_links");
      // The page still fails as a whole (the existing per-URL fields are unchanged)...
      assert.equal(one.items[0].result, "still_failing");
      assert.deepEqual(one.counts, { fixed: 0, still_failing: 1, not_checked: 0 });
      // ...and per link, the fixed one is visible with its fresh status.
      const parts = Object.fromEntries(
        one.items[0].item_results.map((p: { target: string }) => [new URL(p.target).pathname, p]),
      );
      assert.deepEqual(parts["/gone-a"], {
        target: site.url("/gone-a"),
        result: "fixed",
        status: 200,
        failure: null,
        link_removed: false,
      });
      assert.deepEqual(parts["/gone-b"], {
        target: site.url("/gone-b"),
        result: "still_failing",
        status: 404,
        failure: null,
        link_removed: false,
      });
      assert.deepEqual(one.item_counts, { fixed: 1, still_failing: 1, not_checked: 0 });
      assert.deepEqual(one.items[0].evidence.map((e: { target: string }) => e.target), [
        site.url("/gone-b"),
      ]);

      // Removing the other link closes it: every item fixed, the page fixed.
      step = 2;
      const both = await recheck(app, live, auditId, "broken_internal_links");
      assert.equal(both.items[0].result, "fixed");
      assert.deepEqual(both.item_counts, { fixed: 2, still_failing: 0, not_checked: 0 });
      const removed = both.items[0].item_results.find((p: { target: string }) =>
        p.target === site.url("/gone-b")
      );
      assert.equal(removed.link_removed, true);
      assert.equal(removed.status, null);

      // A check judged on the page itself: the URL is the one item, counted as counts.
      const h1 = await recheck(app, live, auditId, "h1_missing");
      assert.deepEqual(h1.items.map((i: { result: string }) => i.result), ["still_failing"]);
      assert.equal(h1.items[0].item_results, undefined);
      assert.deepEqual(h1.item_counts, h1.counts);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_STEP_PAGES: "1" } }));
