/**
 * A schedule is live-side work, and the checks run in the one order (authentication → visibility
 * → limits → funding → effect): a sandbox key gets the 404 of an unknown project on a live
 * project's schedule (get, set and delete alike, before `schedule_not_allowed` or
 * `rendering_unavailable`), sees no schedule a live key set on its sandbox project, and removes
 * nothing; through `/v1` and through the MCP `schedule` tool alike. Setting and removing re-read
 * the calling key strongly: a key revoked behind the auth cache's back cannot do either.
 */
import assert from "node:assert/strict";
import { hashKey } from "../../domain/identity/key_hash.ts";
import type { ApiKeyRecord } from "../../domain/identity/types.ts";
import { keys } from "../../kv/keys.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { callError, connectMcp } from "../mcp/helpers.ts";

const path = (projectId: string) => `/v1/projects/${projectId}/schedule`;

/** Everything stored about schedules: the records, their due index and their claimed slots. */
async function scheduleStore(app: TestApp): Promise<string> {
  const rows: unknown[] = [];
  for (const prefix of [["schedules"], ["schedules_due"], ["schedule_slots"]]) {
    for await (const e of app.kv.list({ prefix })) rows.push([e.key, e.value, e.versionstamp]);
  }
  return JSON.stringify(rows);
}

/** An account with a sandbox key and a live key, a project of each side, both scheduled live. */
async function setup(app: TestApp) {
  const { accountId, key: sandboxKey } = await app.signup();
  const liveKey = await app.liveKey(accountId);
  const create = async (key: string, url: string) => {
    const res = await app.req("POST", "/v1/projects", { key, body: { url } });
    assert.equal(res.status, 201, res.text);
    return res.body.project_id as string;
  };
  const liveProject = await create(liveKey, "https://live.example");
  const sandboxProject = await create(sandboxKey, "https://sandbox.example");
  const schedules: Record<string, unknown> = {};
  for (const pid of [liveProject, sandboxProject]) {
    const put = await app.req("PUT", path(pid), {
      key: liveKey,
      body: { cadence: "weekly", hour_utc: 6, day_of_week: "friday" },
    });
    assert.equal(put.status, 201, put.text);
    schedules[pid] = put.body;
  }
  return { accountId, sandboxKey, liveKey, liveProject, sandboxProject, schedules };
}

Deno.test("finding: a sandbox key neither reads, sets nor removes a live key's schedule (/v1)", () =>
  withApp(async (app) => {
    const s = await setup(app);
    const before = await scheduleStore(app);
    const put = { cadence: "monthly", hour_utc: 1 };

    // The live project does not exist for the sandbox key: 404 on each method, whatever the body
    // would otherwise be refused for (a sandbox key, a rendered run on a server without one).
    const live = path(s.liveProject);
    for (
      const [method, body] of [
        ["GET", undefined],
        ["PUT", put],
        ["PUT", { ...put, render: true }],
        ["DELETE", undefined],
      ] as const
    ) {
      const res = await app.req(method, live, { key: s.sandboxKey, body });
      assert.equal(res.status, 404, `${method} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorCode(res), "not_found");
      assert.match(res.body.error.message, /^No project /);
    }

    // Its own sandbox project: the live key's schedule is not there for it, and it cannot set one.
    const sandbox = path(s.sandboxProject);
    for (const method of ["GET", "DELETE"]) {
      const res = await app.req(method, sandbox, { key: s.sandboxKey });
      assert.equal(res.status, 404, `${method}: ${res.text}`);
      assert.equal(errorCode(res), "not_found");
    }
    const refused = await app.req("PUT", sandbox, { key: s.sandboxKey, body: put });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(errorCode(refused), "schedule_not_allowed");

    // Nothing changed: both schedules as the live key set them, the store untouched.
    assert.equal(await scheduleStore(app), before);
    for (const pid of [s.liveProject, s.sandboxProject]) {
      const res = await app.req("GET", path(pid), { key: s.liveKey });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, s.schedules[pid]);
    }
  }));

Deno.test("finding: a sandbox key neither reads, sets nor removes a live key's schedule (MCP)", () =>
  withApp(async (app) => {
    const s = await setup(app);
    const before = await scheduleStore(app);
    const client = await connectMcp(app, { key: s.sandboxKey });
    try {
      const set = { action: "set", cadence: "monthly", hour_utc: 1 };
      for (
        const args of [
          { action: "get" },
          set,
          { ...set, render: true },
          { action: "delete" },
        ]
      ) {
        const e = await callError(client, "schedule", { ...args, project_id: s.liveProject });
        assert.equal(e.code, "not_found", JSON.stringify(args));
        assert.match(e.body.error.message, /^No project /);
      }
      for (const action of ["get", "delete"]) {
        const e = await callError(client, "schedule", { action, project_id: s.sandboxProject });
        assert.equal(e.code, "not_found", action);
      }
      const refused = await callError(client, "schedule", {
        ...set,
        project_id: s.sandboxProject,
      });
      assert.equal(refused.code, "schedule_not_allowed");
    } finally {
      await client.close();
    }
    assert.equal(await scheduleStore(app), before);
    for (const pid of [s.liveProject, s.sandboxProject]) {
      const res = await app.req("GET", path(pid), { key: s.liveKey });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, s.schedules[pid]);
    }
  }));

Deno.test("schedule set and delete re-read the calling key: revoked behind the cache, both 401", () =>
  withApp(async (app) => {
    const s = await setup(app);
    // One live key per attempt: a strong re-read refreshes the cache, so each key is tried once.
    const [restPut, restDelete, mcpSet, mcpDelete] = [
      s.liveKey,
      ...await Promise.all([0, 1, 2].map(() => app.liveKey(s.accountId))),
    ];
    const setClient = await connectMcp(app, { key: mcpSet });
    const deleteClient = await connectMcp(app, { key: mcpDelete });
    try {
      // Warm the auth cache with each key, then revoke them in the store only (as another process
      // would): a cached key still reads, but cannot change a schedule.
      for (const key of [restPut, restDelete]) {
        assert.equal((await app.req("GET", path(s.liveProject), { key })).status, 200);
      }
      for (const client of [setClient, deleteClient]) {
        await callError(client, "schedule", { action: "get", project_id: "proj_missing" });
      }
      for (const key of [restPut, restDelete, mcpSet, mcpDelete]) {
        const entry = await app.kv.get<ApiKeyRecord>(keys.apiKey(hashKey(key)));
        await app.kv.set(entry.key, { ...entry.value!, revokedAt: app.clock.now() });
      }
      const before = await scheduleStore(app);

      const body = { cadence: "daily", hour_utc: 2 };
      const put = await app.req("PUT", path(s.liveProject), { key: restPut, body });
      assert.equal(put.status, 401, put.text);
      assert.equal(errorCode(put), "key_revoked");
      const del = await app.req("DELETE", path(s.liveProject), { key: restDelete });
      assert.equal(del.status, 401, del.text);
      assert.equal(errorCode(del), "key_revoked");
      const set = await callError(setClient, "schedule", {
        action: "set",
        project_id: s.liveProject,
        ...body,
      });
      assert.equal(set.code, "key_revoked");
      const removed = await callError(deleteClient, "schedule", {
        action: "delete",
        project_id: s.liveProject,
      });
      assert.equal(removed.code, "key_revoked");
      assert.equal(await scheduleStore(app), before);
    } finally {
      await setClient.close();
      await deleteClient.close();
    }
  }));
