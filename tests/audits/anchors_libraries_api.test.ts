/**
 * Issue 32 through the API: a broken `#fragment` (page → link → missing anchor) and libraries
 * read from script content whatever the file's name (`/js/lib.js` holding jQuery 1.8.3 is
 * reported; a file named jquery-1.8.3.min.js holding 3.7.1 is not), with the advisory table's
 * compile date and source in the HTML report.
 */
import assert from "node:assert/strict";
import { ADVISORY_TABLE } from "../../domain/audit_engine/js_libraries.ts";
import { withApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";

const js = (body: string): Route => ({ body, headers: { "content-type": "text/javascript" } });

Deno.test("broken_fragment and content-read libraries over HTTP, the advisory table's date in the report", () =>
  withApp(async (app) => {
    const site = serveSite({
      "/": html(page({
        title: "Home of the anchors and libraries site",
        links: ["/guide", "/guide#install", "/guide#upgrade", "#contents"],
        head: '<script src="/js/lib.js" defer></script>' +
          '<script src="/js/jquery-1.8.3.min.js" defer></script>',
        body: '<nav id="contents">Contents</nav>',
      })),
      "/guide": html(page({
        title: "A guide page of the anchors site",
        key: "guide",
        links: ["/"],
        body: '<h2 id="install">Install</h2>',
      })),
      "/js/lib.js": js("/*! jQuery v1.8.3 jquery.com | jquery.org/license */\n!function(){}();"),
      "/js/jquery-1.8.3.min.js": js(
        "/*! jQuery v3.7.1 | (c) OpenJS Foundation */\n!function(){}();",
      ),
    });
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
      const auditId = started.body.audit_id;
      const audit = (await waitForAudit(app, key, auditId)).body;
      assert.equal(audit.status, "completed");

      const frag = await app.req("GET", `/v1/audits/${auditId}/issues/broken_fragment`, { key });
      assert.equal(frag.status, 200, frag.text);
      assert.deepEqual(
        frag.body.data.map((i: Record<string, unknown>) => ({
          url: i.url,
          link: i.link,
          target: i.target,
          missing_anchor: i.missing_anchor,
        })),
        [{
          url: `${site.origin}/`,
          link: `${site.origin}/guide#upgrade`,
          target: `${site.origin}/guide`,
          missing_anchor: "upgrade",
        }],
      );

      const libs = await app.req("GET", `/v1/audits/${auditId}/issues/vulnerable_js_library`, {
        key,
      });
      assert.equal(libs.status, 200, libs.text);
      const scripts = libs.body.data.map((i: Record<string, unknown>) => [i.script, i.version]);
      assert.deepEqual(scripts, [[`${site.origin}/js/lib.js`, "1.8.3"]]);

      const report = await app.req("GET", `/v1/audits/${auditId}/report`, { key });
      assert.equal(report.status, 200);
      assert.ok(report.text.includes(`compiled ${ADVISORY_TABLE.compiled}`), "the table's date");
      assert.ok(report.text.includes("GitHub Advisory Database"), "the table's source");
    } finally {
      await site.close();
    }
  }));
