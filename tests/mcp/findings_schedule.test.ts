/**
 * The MCP twins of the audit findings listings (`audits` actions `issues`, `issue`, `pages`) and
 * of the schedule resource (`schedule` tool): the same bodies as `/v1`, the same filters and
 * paging, `invalid_state` before completion and `not_found` for foreign ids.
 */
import assert from "node:assert/strict";
import { GOOD_HEADERS, html, page, serveSite } from "../helpers/sites.ts";
import { errorCode, withApp } from "../helpers/app.ts";
import { call, callError, callText, connectMcp } from "./helpers.ts";

/** A small site with defects; its home page waits until `open()` so a test can see it running. */
function gatedSite() {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const home = page({ title: "Home", viewport: null, links: ["/a", "/b", "/gone"] });
  const site = serveSite((path) => {
    if (path === "/") {
      return {
        handler: async () => {
          await gate;
          return new Response(home, { headers: GOOD_HEADERS });
        },
      };
    }
    if (path === "/a") return html(page({ title: "A page about a", links: ["/b"] }));
    if (path === "/b") return html(page({ title: "A page about b", description: "" }));
    return undefined; // 404
  });
  return { site, open };
}

Deno.test("audits issues/issue/pages through MCP equal the /v1 listings; invalid_state before completion; foreign ids not_found", async () => {
  const { site, open } = gatedSite();
  try {
    await withApp(async (app) => {
      const a = await app.signup();
      const b = await app.signup();
      const ca = await connectMcp(app, { key: a.key });
      const cb = await connectMcp(app, { key: b.key });
      try {
        const project = await call(ca, "projects", { action: "create", url: site.origin });
        const audit = await call(ca, "audits", {
          action: "start",
          project_id: project.project_id,
        });
        const id = audit.audit_id;

        // Still running (the home page is held): both sides refuse the listing alike.
        const early = await callError(ca, "audits", { action: "issues", audit_id: id });
        assert.equal(early.code, "invalid_state");
        const earlyRest = await app.req("GET", `/v1/audits/${id}/issues`, { key: a.key });
        assert.equal(earlyRest.status, 409);
        assert.equal(errorCode(earlyRest), "invalid_state");

        open();
        const done = await call(ca, "audits", { action: "get", audit_id: id, wait: 30 });
        assert.equal(done.status, "completed");

        const rest = async (path: string) => {
          const res = await app.req("GET", path, { key: a.key });
          assert.equal(res.status, 200, res.text);
          return res.body;
        };
        // Issues: unfiltered, filtered, and paged with the cursor, as on /v1.
        const all = await call(ca, "audits", { action: "issues", audit_id: id });
        assert.deepEqual(all, await rest(`/v1/audits/${id}/issues?limit=10`));
        assert.ok(
          all.data.length >= 3,
          JSON.stringify(all.data.map((i: { check: string }) => i.check)),
        );
        const critical = await call(ca, "audits", {
          action: "issues",
          audit_id: id,
          severity: "critical",
        });
        assert.deepEqual(
          critical,
          await rest(`/v1/audits/${id}/issues?severity=critical&limit=10`),
        );
        assert.ok(
          critical.data.every((i: { severity: string }) => i.severity === "critical"),
        );
        const { structured: first, text: firstText } = await callText(ca, "audits", {
          action: "issues",
          audit_id: id,
          limit: 2,
        });
        // The first page says how many issues are left: every check that fires, and the fixed.
        const total = all.changes.new + all.changes.persisting + all.changes.fixed;
        assert.match(firstText, new RegExp(`\\. ${total - 2} more: call again with cursor `));
        assert.deepEqual(first, await rest(`/v1/audits/${id}/issues?limit=2`));
        assert.equal(first.data.length, 2);
        const cursor = first.next_cursor;
        assert.ok(cursor);
        const second = await call(ca, "audits", {
          action: "issues",
          audit_id: id,
          limit: 2,
          cursor,
        });
        assert.deepEqual(
          second,
          await rest(`/v1/audits/${id}/issues?limit=2&cursor=${encodeURIComponent(cursor)}`),
        );
        assert.deepEqual(
          [...first.data, ...second.data].map((i: { check: string }) => i.check),
          all.data.slice(0, 4).map((i: { check: string }) => i.check),
        );

        // One check's affected items.
        const check = "broken_internal_links";
        const items = await call(ca, "audits", { action: "issue", audit_id: id, check });
        assert.deepEqual(items, await rest(`/v1/audits/${id}/issues/${check}?limit=10`));
        assert.ok(items.data.length >= 1);

        // The page inventory, with and without filters.
        const pages = await call(ca, "audits", { action: "pages", audit_id: id });
        assert.deepEqual(pages, await rest(`/v1/audits/${id}/pages?limit=10`));
        assert.ok(pages.data.some((p: { url: string }) => p.url.endsWith("/gone")));
        const broken = await call(ca, "audits", {
          action: "pages",
          audit_id: id,
          status: "4xx",
          indexable: false,
        });
        assert.deepEqual(
          broken,
          await rest(`/v1/audits/${id}/pages?status=4xx&indexable=false&limit=10`),
        );
        assert.deepEqual(broken.data.map((p: { status: number }) => p.status), [404]);

        // The same errors as /v1: an unknown check, a bad filter, a missing field.
        const unknown = await callError(ca, "audits", {
          action: "issue",
          audit_id: id,
          check: "nope",
        });
        assert.equal(
          unknown.code,
          errorCode(await app.req("GET", `/v1/audits/${id}/issues/nope`, { key: a.key })),
        );
        const badLimit = await callError(ca, "audits", {
          action: "pages",
          audit_id: id,
          limit: 101,
        });
        assert.equal(badLimit.code, "invalid_request");
        assert.match(badLimit.body.error.message, /^limit: /);
        const badSeverity = await callError(ca, "audits", {
          action: "issues",
          audit_id: id,
          severity: "fatal",
        });
        assert.equal(badSeverity.code, "invalid_request");
        assert.match(badSeverity.body.error.message, /^severity: /);
        const noCheck = await callError(ca, "audits", { action: "issue", audit_id: id });
        assert.match(noCheck.body.error.message, /^check: /);

        // Another account's audit is not found through every listing, as on /v1.
        for (
          const args of [
            { action: "issues", audit_id: id },
            { action: "issue", audit_id: id, check },
            { action: "pages", audit_id: id },
          ]
        ) {
          const e = await callError(cb, "audits", args);
          assert.equal(e.code, "not_found", JSON.stringify(args));
        }
        const foreignRest = await app.req("GET", `/v1/audits/${id}/issues`, { key: b.key });
        assert.equal(foreignRest.status, 404);
      } finally {
        await ca.close();
        await cb.close();
      }
    });
  } finally {
    open();
    await site.close();
  }
});

Deno.test("the schedule tool: get/set/delete as PUT/GET/DELETE /v1/projects/{id}/schedule", () =>
  withApp(async (app) => {
    const a = await app.signup();
    const live = await app.liveKey(a.accountId);
    const b = await app.signup();
    const sandbox = await connectMcp(app, { key: a.key });
    const ca = await connectMcp(app, { key: live });
    const cb = await connectMcp(app, { key: await app.liveKey(b.accountId) });
    try {
      const project = await call(ca, "projects", {
        action: "create",
        url: "https://sched.example",
      });
      const pid = project.project_id;
      const path = `/v1/projects/${pid}/schedule`;

      const none = await callError(ca, "schedule", { action: "get", project_id: pid });
      assert.equal(none.code, "not_found");

      const { structured: set, text: setText } = await callText(ca, "schedule", {
        action: "set",
        project_id: pid,
        cadence: "weekly",
        hour_utc: 6,
        day_of_week: "friday",
      });
      assert.match(setText, /^Created: /);
      assert.equal(set.day_of_week, "friday");
      assert.equal(set.funding.kind, "credits");
      const got = await call(ca, "schedule", { action: "get", project_id: pid });
      const restGet = await app.req("GET", path, { key: live });
      assert.deepEqual(got, restGet.body);
      assert.deepEqual(set, restGet.body);

      // A repeated set changes nothing, as a repeated PUT (200 on /v1).
      const { structured: again, text: againText } = await callText(ca, "schedule", {
        action: "set",
        project_id: pid,
        cadence: "weekly",
        hour_utc: 6,
        day_of_week: "friday",
      });
      assert.match(againText, /^Replaced: /);
      assert.deepEqual(again, restGet.body);
      const restPut = await app.req("PUT", path, {
        key: live,
        body: { cadence: "weekly", hour_utc: 6, day_of_week: "friday" },
      });
      assert.equal(restPut.status, 200);
      assert.deepEqual(restPut.body, again);

      // The same refusals: validation, foreign projects, and a sandbox key of the same account,
      // to which the live project does not exist (visibility before its own limits).
      const badHour = await callError(ca, "schedule", {
        action: "set",
        project_id: pid,
        cadence: "daily",
        hour_utc: 24,
      });
      assert.equal(badHour.code, "invalid_request");
      assert.match(badHour.body.error.message, /^hour_utc: /);
      const missing = await callError(ca, "schedule", { action: "set", project_id: pid });
      assert.match(missing.body.error.message, /^cadence: /);
      const sandboxed = await callError(sandbox, "schedule", {
        action: "set",
        project_id: pid,
        cadence: "monthly",
        hour_utc: 0,
      });
      assert.equal(sandboxed.code, "not_found");
      // Nor does it read or remove the live project's schedule.
      for (const action of ["get", "delete"]) {
        const e = await callError(sandbox, "schedule", { action, project_id: pid });
        assert.equal(e.code, "not_found", `sandbox ${action}`);
      }
      for (const method of ["GET", "DELETE"]) {
        assert.equal(
          (await app.req(method, path, { key: a.key })).status,
          404,
          `sandbox ${method}`,
        );
      }
      for (const action of ["get", "set", "delete"]) {
        const e = await callError(cb, "schedule", {
          action,
          project_id: pid,
          ...(action === "set" ? { cadence: "weekly", hour_utc: 1 } : {}),
        });
        assert.equal(e.code, "not_found", action);
      }
      assert.deepEqual((await app.req("GET", path, { key: live })).body, restGet.body);

      const deleted = await call(ca, "schedule", { action: "delete", project_id: pid });
      assert.deepEqual(deleted, { deleted: true, project_id: pid });
      assert.equal((await app.req("GET", path, { key: live })).status, 404);
      const twice = await callError(ca, "schedule", { action: "delete", project_id: pid });
      assert.equal(twice.code, "not_found");
    } finally {
      await sandbox.close();
      await ca.close();
      await cb.close();
    }
  }));
