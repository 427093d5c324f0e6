import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

async function crawledPages(app: TestApp, key: string, accountId: string, projectId: string) {
  const res = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
  await waitForAudit(app, key, res.body.audit_id);
  const rec = await app.kv.get<{ status: string; jobsCompleted: number }>(
    keys.audit(accountId, res.body.audit_id),
  );
  assert.equal(rec.value?.status, "completed");
  return rec.value!.jobsCompleted;
}

Deno.test("a pro subscription's audits crawl up to 5x CRAWL_MAX_PAGES; basic ones stop at it", () =>
  withApp(async (app) => {
    const paths = ["/", "/p1", "/p2", "/p3", "/p4", "/p5", "/p6"];
    const routes = Object.fromEntries(
      paths.map((p, i) => [p, html(page({ title: `Depth test page ${i}`, key: p, links: paths }))]),
    );
    const site = serveSite(routes);
    try {
      const { accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      const basic = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: site.origin },
      });
      const pro = await app.req("POST", "/v1/projects", {
        key: live,
        body: { url: site.url("/p1") },
      });
      await subscribeProject(app, accountId, basic.body.project_id, "basic");
      await subscribeProject(app, accountId, pro.body.project_id, "pro");
      const basicPages = await crawledPages(app, live, accountId, basic.body.project_id);
      const proPages = await crawledPages(app, live, accountId, pro.body.project_id);
      assert.ok(basicPages <= 2, `basic crawled ${basicPages}`);
      assert.ok(proPages >= 7, `pro crawled ${proPages}`);
    } finally {
      await site.close();
    }
  }, { env: { CRAWL_MAX_PAGES: "2" } }));
