/**
 * broken_fragment in a rendered audit (issue 32): an anchor a script writes is missing from the
 * served HTML (a raw audit reports the link) and present in the rendered DOM (a rendered audit,
 * whose anchors join the page's stored set, does not), while an anchor missing from both stays
 * reported. Through the API with the packaged Chromium.
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "broken_fragment: a script-written anchor is missing raw, present rendered",
  ...OPTS,
  fn: async () => {
    const site = serveSite({
      "/": html(page({
        title: "Home of the rendered anchors site",
        links: ["/app", "/app#tab-2", "/app#tab-9"],
      })),
      "/app": html(page({
        title: "An app page whose tabs a script builds",
        key: "app",
        links: ["/"],
        body: '<div id="tabs"></div><script src="/tabs.js"></script>',
      })),
      // A script file: the fixture's security headers allow no inline script.
      "/tabs.js": {
        body: 'const t = document.createElement("section"); t.id = "tab-2"; ' +
          'document.getElementById("tabs").append(t);',
        headers: { "content-type": "text/javascript" },
      },
    });
    try {
      await withApp(async (app) => {
        const { live } = await liveWithCredits(app, 100);
        const proj = await app.req("POST", "/v1/projects", {
          key: live,
          body: { url: site.origin },
        });
        const missing = async (render: boolean) => {
          const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
            key: live,
            body: { render },
          });
          assert.equal(started.status, 202, started.text);
          const audit = (await waitForAudit(app, live, started.body.audit_id, {
            timeoutMs: 120_000,
          })).body;
          assert.equal(audit.status, "completed", JSON.stringify(audit));
          const res = await app.req(
            "GET",
            `/v1/audits/${audit.audit_id}/issues/broken_fragment`,
            { key: live },
          );
          assert.equal(res.status, 200, res.text);
          return res.body.data.map((i: { missing_anchor: string }) => i.missing_anchor).sort();
        };
        assert.deepEqual(await missing(false), ["tab-2", "tab-9"]);
        assert.deepEqual(await missing(true), ["tab-9"]);
      });
    } finally {
      await site.close();
    }
  },
});
