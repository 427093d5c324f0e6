/**
 * Issue 22 §3 through the real app over HTTP: an audit of a loopback site with what real sites
 * showed (a broken image and stylesheet, a frameset with a missing frame and a page reached only
 * through a frame, inline SVG links, a quirks-mode doctype, a jQuery file named old but holding a
 * fixed version) answers with the new findings and their evidence, keeps the resource cap in
 * `limits_hit`, and lists nothing the defects must not cause.
 */
import assert from "node:assert/strict";
import { type TestApp, withApp } from "../helpers/app.ts";
import { base, DOCTYPE_HTML40, file, jqueryFile, SVG_LINKS } from "./check_cases.ts";
import { html, type Route, serveSite } from "../helpers/sites.ts";

async function completed(app: TestApp, key: string, auditId: string) {
  for (let i = 0; i < 800; i++) {
    const res = await app.req("GET", `/v1/audits/${auditId}`, { key });
    if (res.body.status === "completed" || res.body.status === "failed") return res.body;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`audit ${auditId} never finished`);
}

function site(o: string): Record<string, Route | undefined> {
  return base(o, {
    "/": { links: ["/a", "/frames", "/svg", "/old-doctype"] },
    "/a": {
      head: '<link rel="stylesheet" href="/css/gone.css">' +
        '<script src="/js/jquery-1.8.3.min.js" defer></script>',
      body: '<img src="/img/gone.png" alt="" width="1" height="1">' +
        '<img src="/img/one.png" alt="" width="1" height="1">' +
        '<img src="/img/two.png" alt="" width="1" height="1">',
    },
    "/svg": { body: SVG_LINKS },
    "/old-doctype": { doctype: DOCTYPE_HTML40 },
  }, {
    "/frames": html(
      `<!DOCTYPE html><html lang="en"><head><title>Frames of the API fixture site</title></head>` +
        `<frameset cols="25%,75%"><frame src="/nav-frame"><frame src="/missing-frame">` +
        `</frameset></html>`,
    ),
    "/nav-frame": html(
      `<!DOCTYPE html><html lang="en"><head><title>Navigation frame of the fixture</title></head>` +
        `<body><a href="/">home</a></body></html>`,
    ),
    "/js/jquery-1.8.3.min.js": jqueryFile("3.7.1"),
    "/img/one.png": file("image/png"),
    "/img/two.png": file("image/png"),
  });
}

Deno.test("over HTTP: broken resources, frames, SVG links, quirks doctype and library content in one audit", () =>
  withApp(async (app) => {
    let routes: Record<string, Route | undefined> | null = null;
    let served: ReturnType<typeof serveSite> | null = null;
    served = serveSite((p) => (routes ??= site(served!.origin))[p]);
    try {
      const o = served.origin;
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: o } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key,
      });
      assert.equal(started.status, 202, started.text);
      const id = started.body.audit_id;
      const audit = await completed(app, key, id);
      assert.equal(audit.status, "completed", JSON.stringify(audit));

      const issues = await app.req("GET", `/v1/audits/${id}/issues?limit=100`, { key });
      const byCheck = new Map(
        issues.body.data.map((i: { check: string }) => [i.check, i] as const),
      );
      const broken = byCheck.get("broken_resources") as Record<string, unknown>;
      assert.ok(broken, "broken_resources is listed");
      assert.equal(broken.severity, "warning");
      assert.equal(broken.category, "structure");
      assert.equal(broken.affected_count, 2, "two pages: /a and the frameset");
      assert.match(String(broken.fix), /Restore/);

      const items = await app.req("GET", `/v1/audits/${id}/issues/broken_resources?limit=100`, {
        key,
      });
      assert.deepEqual(
        items.body.data.map((i: Record<string, unknown>) => [
          i.url,
          i.resource,
          i.element,
          i.attribute,
          i.status,
        ]).sort(),
        [
          [`${o}/a`, `${o}/css/gone.css`, "link rel=stylesheet", "href", 404],
          [`${o}/a`, `${o}/img/gone.png`, "img", "src", 404],
          [`${o}/frames`, `${o}/missing-frame`, "frame", "src", 404],
        ].sort(),
      );

      const quirks = await app.req("GET", `/v1/audits/${id}/issues/doctype_quirks`, { key });
      assert.deepEqual(quirks.body.data.map((i: { url: string }) => i.url), [`${o}/old-doctype`]);
      assert.equal(quirks.body.data[0].mode, "quirks");

      // What must not fire: the frameset is no dead end, SVG links are not uncrawlable, the
      // missing frame is not also a 4xx URL, the file named 1.8.3 holds 3.7.1.
      for (
        const quiet of ["dead_end_page", "uncrawlable_links", "http_4xx", "vulnerable_js_library"]
      ) {
        assert.ok(!byCheck.has(quiet), `${quiet} must not be listed`);
      }

      // The frame-only page was crawled: it is in the page inventory.
      const pages = await app.req("GET", `/v1/audits/${id}/pages?limit=100`, { key });
      const urls = pages.body.data.map((p: { url: string }) => p.url);
      assert.ok(urls.includes(`${o}/nav-frame`), urls.join(" "));
      const framesPage = pages.body.data.find((p: { url: string }) => p.url === `${o}/frames`);
      assert.ok(framesPage.checks.includes("broken_resources"));
    } finally {
      await served.close();
    }
  }));

Deno.test("over HTTP: the resource cap (CRAWL_MAX_RESOURCES) is reported in limits_hit", () =>
  withApp(async (app) => {
    let routes: Record<string, Route | undefined> | null = null;
    let served: ReturnType<typeof serveSite> | null = null;
    served = serveSite((p) => (routes ??= site(served!.origin))[p]);
    try {
      const { key } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: served.origin } });
      const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
        key,
      });
      const audit = await completed(app, key, started.body.audit_id);
      assert.equal(audit.status, "completed");
      const hit = audit.limits_hit.find((h: { limit: string }) => h.limit === "resources");
      assert.ok(hit, JSON.stringify(audit.limits_hit));
      assert.equal(hit.value, 2);
      assert.ok(hit.left_out >= 1);
      assert.match(hit.unit, /resources not checked/);
    } finally {
      await served.close();
    }
  }, { env: { CRAWL_MAX_RESOURCES: "2" } }));
