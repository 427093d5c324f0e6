/**
 * `PUT|GET|DELETE /v1/projects/{projectId}/schedule`: the /v1 rules (auth, rate-limit headers,
 * error shape, not_found for foreign ids), who may schedule how often, and PUT as a replace.
 */
import assert from "node:assert/strict";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";

async function liveProject(app: TestApp, url = "https://sched.example") {
  const { accountId, key: sandboxKey } = await app.signup();
  const key = await app.liveKey(accountId);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url } });
  assert.equal(proj.status, 201, proj.text);
  return { accountId, key, sandboxKey, projectId: proj.body.project_id as string };
}

const path = (projectId: string) => `/v1/projects/${projectId}/schedule`;

Deno.test("schedule: auth, rate-limit headers, error shape and not_found for foreign or missing ids", () =>
  withApp(async (app) => {
    const a = await liveProject(app);
    const b = await liveProject(app);
    const body = { cadence: "weekly", hour_utc: 6 };
    const unauth = await app.req("PUT", path(a.projectId), { body });
    assert.equal(unauth.status, 401);
    assert.equal(errorCode(unauth), "unauthorized");
    for (const [method, sendBody] of [["PUT", body], ["GET", undefined], ["DELETE", undefined]]) {
      for (const id of [a.projectId, "proj_missing"]) {
        const res = await app.req(method as string, path(id), { key: b.key, body: sendBody });
        assert.equal(res.status, 404, `${method} ${id}: ${res.text}`);
        assert.equal(errorCode(res), "not_found");
        for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
          assert.match(res.headers.get(h) ?? "", /^\d+$/, h);
        }
      }
    }
    // The foreign PUT created nothing on A's project.
    assert.equal((await app.req("GET", path(a.projectId), { key: a.key })).status, 404);
    const ok = await app.req("PUT", path(a.projectId), { key: a.key, body });
    assert.equal(ok.status, 201, ok.text);
    assert.match(ok.headers.get("x-ratelimit-remaining") ?? "", /^\d+$/);
  }));

Deno.test("schedule: sandbox keys cannot schedule; the catalogue's cadence per funding", () =>
  withApp(async (app) => {
    const { accountId, key: sandboxKey } = await app.signup();
    const sandboxProject = await app.req("POST", "/v1/projects", {
      key: sandboxKey,
      body: { url: "https://sandbox.example" },
    });
    const refused = await app.req("PUT", path(sandboxProject.body.project_id), {
      key: sandboxKey,
      body: { cadence: "monthly", hour_utc: 0 },
    });
    assert.equal(refused.status, 403);
    assert.equal(errorCode(refused), "schedule_not_allowed");

    const key = await app.liveKey(accountId);
    const mk = async () =>
      (await app.req("POST", "/v1/projects", { key, body: { url: "https://p.example" } })).body
        .project_id as string;
    // Credits: daily allowed, each run 25 credits.
    const credits = await mk();
    const c = await app.req("PUT", path(credits), { key, body: { cadence: "daily", hour_utc: 3 } });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(c.body.funding, {
      kind: "credits",
      plan: null,
      max_cadence: "daily",
      credits_per_run: 25,
    });
    // Basic: weekly at most.
    const basic = await mk();
    await subscribeProject(app, accountId, basic, "basic");
    const daily = await app.req("PUT", path(basic), {
      key,
      body: { cadence: "daily", hour_utc: 3 },
    });
    assert.equal(daily.status, 403);
    assert.equal(errorCode(daily), "schedule_not_allowed");
    assert.match(daily.body.error.message, /weekly/);
    const weekly = await app.req("PUT", path(basic), {
      key,
      body: { cadence: "weekly", hour_utc: 3 },
    });
    assert.equal(weekly.status, 201, weekly.text);
    assert.deepEqual(weekly.body.funding, {
      kind: "subscription",
      plan: "basic",
      max_cadence: "weekly",
      credits_per_run: 0,
    });
    // Pro: daily.
    const pro = await mk();
    await subscribeProject(app, accountId, pro, "pro");
    const proDaily = await app.req("PUT", path(pro), {
      key,
      body: { cadence: "daily", hour_utc: 3 },
    });
    assert.equal(proDaily.status, 201, proDaily.text);
    assert.equal(proDaily.body.funding.plan, "pro");
  }));

Deno.test("schedule: PUT replaces (201 then 200, same next run when unchanged), GET, DELETE", () =>
  withApp(async (app) => {
    const { key, projectId } = await liveProject(app);
    // Monday 2026-11-23 12:00 UTC.
    const first = await app.req("PUT", path(projectId), {
      key,
      body: { cadence: "weekly", hour_utc: 9, day_of_week: "friday" },
    });
    assert.equal(first.status, 201, first.text);
    const s = first.body;
    assert.equal(s.project_id, projectId);
    assert.equal(s.cadence, "weekly");
    assert.equal(s.hour_utc, 9);
    assert.equal(s.day_of_week, "friday");
    assert.equal(s.day_of_month, null);
    assert.equal(s.status, "active");
    assert.equal(s.paused_reason, null);
    assert.equal(s.last_run, null);
    assert.equal(s.runs, 0);
    // Friday 27 November, within the 09:00 hour.
    const next = Date.parse(s.next_run_at);
    assert.ok(
      next >= Date.parse("2026-11-27T09:00:00Z") && next < Date.parse("2026-11-27T10:00:00Z"),
      s.next_run_at,
    );

    app.clock.advance(60_000);
    const again = await app.req("PUT", path(projectId), {
      key,
      body: { cadence: "weekly", hour_utc: 9, day_of_week: "friday" },
    });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, s, "an unchanged PUT changes nothing");

    const monthly = await app.req("PUT", path(projectId), {
      key,
      body: { cadence: "monthly", hour_utc: 0, day_of_month: 28 },
    });
    assert.equal(monthly.status, 200, monthly.text);
    assert.equal(monthly.body.day_of_week, null);
    assert.equal(monthly.body.day_of_month, 28);
    assert.equal(monthly.body.next_run_at.slice(0, 13), "2026-11-28T00");
    assert.deepEqual((await app.req("GET", path(projectId), { key })).body, monthly.body);
    // Only one index entry survives the replacements.
    let due = 0;
    for await (const _ of app.kv.list({ prefix: ["schedules_due"] })) due++;
    assert.equal(due, 1);

    const del = await app.req("DELETE", path(projectId), { key });
    assert.equal(del.status, 200, del.text);
    assert.deepEqual(del.body, { deleted: true, project_id: projectId });
    assert.equal((await app.req("GET", path(projectId), { key })).status, 404);
    assert.equal((await app.req("DELETE", path(projectId), { key })).status, 404);
    due = 0;
    for await (const _ of app.kv.list({ prefix: ["schedules_due"] })) due++;
    assert.equal(due, 0);
  }));

Deno.test("schedule: invalid bodies answer 400 naming the field", () =>
  withApp(async (app) => {
    const { key, projectId } = await liveProject(app);
    for (
      const [body, field] of [
        [{ cadence: "hourly", hour_utc: 1 }, "cadence"],
        [{ cadence: "daily", hour_utc: 24 }, "hour_utc"],
        [{ cadence: "daily" }, "hour_utc"],
        [{ cadence: "daily", hour_utc: 1, day_of_week: "monday" }, "day_of_week"],
        [{ cadence: "weekly", hour_utc: 1, day_of_month: 3 }, "day_of_month"],
        [{ cadence: "monthly", hour_utc: 1, day_of_month: 31 }, "day_of_month"],
        [{ cadence: "weekly", hour_utc: 1, extra: true }, "extra"],
      ] as const
    ) {
      const res = await app.req("PUT", path(projectId), { key, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(errorCode(res), "invalid_request");
      assert.match(res.body.error.message, new RegExp(field), res.body.error.message);
    }
    assert.equal((await app.req("GET", path(projectId), { key })).status, 404);
  }));
