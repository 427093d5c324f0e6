/**
 * Long work as MCP tasks (`io.modelcontextprotocol/tasks`, 2026-07-28) over real HTTP: a start
 * from a client that declares the extension answers a task handle once the job is in KV, and the
 * official tasks client (`@modelcontextprotocol/ext-tasks`) polls it to the result the poll tool
 * answers; every answer is checked against that package's wire schemas. Cancelling a queued job
 * refunds it as a failed job is; a running or finished one is acknowledged and left alone. Tasks
 * are the account's: another's, unknown or malformed ids are not found. Clients without the
 * extension keep the start-and-poll answer.
 */
import assert from "node:assert/strict";
import {
  createTaskSessionFromClient,
  resultFromTaskOutcome,
} from "@modelcontextprotocol/ext-tasks/client";
import {
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  GetTaskResultV2Schema,
} from "@modelcontextprotocol/ext-tasks/core/v2";
import { AUDIT_JOB } from "../../domain/audits/lifecycle.ts";
import { listLedger } from "../../domain/billing/credits.ts";
import { claimJob } from "../../domain/jobs/lifecycle.ts";
import { JOB_TASK_TTL_MS } from "../../domain/jobs/tasks.ts";
import { keys } from "../../kv/keys.ts";
import { CANCEL_META } from "../../routes/mcp/tasks.ts";
import { freshIp, type TestApp, withApp } from "../helpers/app.ts";
import { balanceOf, liveWithCredits } from "../helpers/credits.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { connectMcp, MODERN, modern, type ModernOptions, TASKS_CAPS } from "./helpers.ts";

/** A 2026-07-28 request from a client that declares the tasks extension. */
function withTasks(
  app: TestApp,
  key: string,
  method: string,
  params: Record<string, unknown>,
  opts: ModernOptions = {},
) {
  return modern(app, method, params, { key, caps: TASKS_CAPS, ...opts });
}

/** Parses with an ext-tasks wire schema, failing with the issues. */
function wire<T>(
  schema: { safeParse(v: unknown): { success: boolean; data?: T; error?: unknown } },
  value: unknown,
): T {
  const r = schema.safeParse(value);
  assert.ok(
    r.success,
    `not the tasks wire shape: ${JSON.stringify(r.error)}\n${JSON.stringify(value)}`,
  );
  return r.data as T;
}

async function newProject(app: TestApp, key: string, url: string): Promise<string> {
  const res = await app.req("POST", "/v1/projects", { key, body: { url } });
  assert.equal(res.status, 201, res.text);
  return res.body.project_id;
}

/**
 * The official tasks client on `/mcp` for `key`: the SDK's client for discovery, and the raw
 * 2026-07-28 requests the package frames for tools/call and tasks/* (its `rawDispatch`).
 */
async function taskSession(app: TestApp, key: string) {
  const client = await connectMcp(app, { key });
  const ip = freshIp();
  let id = 0;
  const session = createTaskSessionFromClient(client, {
    endpointId: "serpwright-tests",
    // deno-lint-ignore no-explicit-any
    rawDispatch: async (request: any) => {
      const params = request.params ?? {};
      const name = request.method === "tools/call" ? params.name : params.taskId;
      const res = await fetch(`${app.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${key}`,
          "x-forwarded-for": ip,
          "mcp-protocol-version": MODERN,
          "mcp-method": request.method,
          ...(typeof name === "string" ? { "mcp-name": name } : {}),
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: ++id, ...request }),
      });
      const body = await res.json();
      return body.error
        ? { kind: "error", error: body.error }
        : { kind: "result", result: body.result };
    },
    v2RequestFraming: {
      protocolVersion: MODERN,
      clientInfo: { name: "serpwright-tests", version: "1.0.0" },
      clientCapabilities: {},
    },
  });
  return {
    session,
    client,
    async close() {
      await session.close();
      await client.close();
    },
  };
}

Deno.test("tasks: a start answers a handle once the job is in KV; the tasks client polls it to the poll tool's result", async () => {
  const site = serveSite({
    "/": html(page({ title: "Home of the task test site", links: ["/a"] })),
    "/a": html(page({ title: "Page A of the task test site", key: "a" })),
  });
  try {
    await withApp(async (app) => {
      const { key, accountId } = await app.signup();
      const projectId = await newProject(app, key, site.origin);

      // The handle: answered only once the audit and its task are committed.
      const start = await withTasks(app, key, "tools/call", {
        name: "audits",
        arguments: { action: "start", project_id: projectId, idempotency_key: "task-1" },
      });
      assert.equal(start.status, 200, start.text);
      const handle = wire(CreateTaskResultV2Schema, start.body.result);
      assert.equal(handle.resultType, "task");
      assert.match(handle.taskId, /^aud_/);
      assert.equal(handle.ttlMs, 7 * 24 * 3_600_000);
      assert.equal(handle.pollIntervalMs, 100);
      assert.ok(!("content" in start.body.result), "a handle, not a CallToolResult");
      assert.equal((await app.kv.get(keys.audit(accountId, handle.taskId))).value !== null, true);
      const stored = (await app.kv.get(keys.jobTask(accountId, handle.taskId))).value;
      assert.deepEqual(stored && { ...stored, createdAt: 0 }, {
        taskId: handle.taskId,
        accountId,
        kind: "audit",
        createdAt: 0,
        keyId: (await app.req("GET", "/v1/api-keys", { key })).body.keys[0].id,
      });
      // The same idempotency key: the same job, so the same task.
      const again = await withTasks(app, key, "tools/call", {
        name: "audits",
        arguments: { action: "start", project_id: projectId, idempotency_key: "task-1" },
      });
      assert.equal(again.body.result.taskId, handle.taskId);
      assert.equal(again.body.result.createdAt, handle.createdAt);

      // tasks/get, as the official client polls it: working, then completed with the result.
      const get = await withTasks(app, key, "tasks/get", { taskId: handle.taskId });
      const seen = wire(GetTaskResultV2Schema, get.body.result);
      assert.equal(seen.taskId, handle.taskId);
      const tasks = await taskSession(app, key);
      try {
        const execution = await tasks.session.callTool("articles", {
          action: "start",
          project_id: projectId,
          topic: "How tasks replace polling",
        });
        assert.equal(execution.kind, "task");
        const { outcome } = await execution.settle();
        // deno-lint-ignore no-explicit-any
        const article: any = resultFromTaskOutcome(outcome);
        assert.equal(article.isError, undefined);
        assert.equal(article.structuredContent.status, "ready");

        // The audit's task to its end, through the raw wire.
        let done = seen;
        for (let i = 0; i < 200 && done.status === "working"; i++) {
          await new Promise((r) => setTimeout(r, 50));
          const res = await withTasks(app, key, "tasks/get", { taskId: handle.taskId });
          done = wire(GetTaskResultV2Schema, res.body.result);
        }
        assert.equal(done.status, "completed");
        // deno-lint-ignore no-explicit-any
        const result = (done as any).result;
        // Exactly what the poll tool answers for that audit.
        const polled = await tasks.client.callTool({
          name: "audits",
          arguments: { action: "get", audit_id: handle.taskId },
        });
        assert.deepEqual(result.content, polled.content);
        assert.deepEqual(result.structuredContent, polled.structuredContent);
        assert.equal(result.structuredContent.status, "completed");
        assert.match(done.statusMessage!, /completed: score \d+\/100/);

        // A finished task cannot be cancelled: acknowledged (the extension's rule), left alone.
        const cancel = await withTasks(app, key, "tasks/cancel", { taskId: handle.taskId });
        assert.equal(cancel.status, 200, cancel.text);
        wire(CancelTaskResultV2Schema, cancel.body.result);
        assert.deepEqual(
          { ...cancel.body.result._meta[CANCEL_META], message: undefined },
          { cancelled: false, status: "completed", message: undefined },
        );
        assert.match(cancel.body.result._meta[CANCEL_META].message, /already ended/);
        const after = await withTasks(app, key, "tasks/get", { taskId: handle.taskId });
        assert.equal(after.body.result.status, "completed");
        const me = await app.req("GET", "/v1/account", { key });
        assert.deepEqual(me.body.sandbox_usage, { audits: 1, articles: 1 });
      } finally {
        await tasks.close();
      }
    }, { env: { MCP_TASK_POLL_MS: "100" } });
  } finally {
    await site.close();
  }
});

Deno.test("tasks/cancel: a queued audit or article fails 'cancelled' and is refunded as a failed job; a running one is left to finish", () =>
  withApp(async (app) => {
    // A web process: nothing works the jobs, so they stay queued until a claim below.
    const { accountId, live } = await liveWithCredits(app, 100);
    const projectId = await newProject(app, live, "https://cancel.example");
    const start = (name: string, args: Record<string, unknown>) =>
      withTasks(app, live, "tools/call", { name, arguments: { ...args, project_id: projectId } });

    const audit = (await start("audits", { action: "start" })).body.result;
    assert.equal(audit.resultType, "task", JSON.stringify(audit));
    assert.equal(await balanceOf(app, accountId), 75);
    const cancel = await withTasks(app, live, "tasks/cancel", { taskId: audit.taskId });
    assert.equal(cancel.status, 200, cancel.text);
    wire(CancelTaskResultV2Schema, cancel.body.result);
    assert.equal(cancel.body.result._meta[CANCEL_META].cancelled, true);
    assert.equal(cancel.body.result._meta[CANCEL_META].status, "cancelled");
    // The refund of a failed job: the balance back, one refund line for this job.
    assert.equal(await balanceOf(app, accountId), 100);
    const refunds = (await listLedger(app.kv, accountId)).filter((e) => e.kind === "refund");
    assert.deepEqual(refunds.map((e) => [e.amount, e.ref]), [[25, audit.taskId]]);
    // The task is cancelled; the audit, over /v1, failed with the code `cancelled`.
    const got = await withTasks(app, live, "tasks/get", { taskId: audit.taskId });
    assert.equal(wire(GetTaskResultV2Schema, got.body.result).status, "cancelled");
    const rest = await app.req("GET", `/v1/audits/${audit.taskId}`, { key: live });
    assert.equal(rest.body.status, "failed");
    assert.equal(rest.body.error.code, "cancelled");
    // Cancelling again changes nothing (no second refund).
    const twice = await withTasks(app, live, "tasks/cancel", { taskId: audit.taskId });
    assert.equal(twice.body.result._meta[CANCEL_META].cancelled, false);
    assert.equal(await balanceOf(app, accountId), 100);

    // An article alike, here on a sandbox key: the trial allowance comes back.
    const trial = await app.signup();
    const trialProject = await newProject(app, trial.key, "https://trial.example");
    const article = (await withTasks(app, trial.key, "tools/call", {
      name: "articles",
      arguments: { action: "start", project_id: trialProject, topic: "Cancelled drafts" },
    })).body.result;
    assert.equal(article.resultType, "task");
    const usage = async () =>
      (await app.req("GET", "/v1/account", { key: trial.key })).body.sandbox_usage.articles;
    assert.equal(await usage(), 1);
    await withTasks(app, trial.key, "tasks/cancel", { taskId: article.taskId });
    assert.equal(await usage(), 0);
    const draft = await app.req("GET", `/v1/articles/${article.taskId}`, { key: trial.key });
    assert.deepEqual([draft.body.status, draft.body.error.code], ["failed", "cancelled"]);

    // A running audit (a worker claimed it): acknowledged, not cancelled, still charged.
    const running = (await start("audits", { action: "start" })).body.result;
    const claim = await claimJob(app.service.services.deps, AUDIT_JOB, running.taskId);
    assert.ok(claim, "the worker's claim");
    const charged = await balanceOf(app, accountId);
    const refused = await withTasks(app, live, "tasks/cancel", { taskId: running.taskId });
    assert.equal(refused.status, 200, refused.text);
    assert.equal(refused.body.result._meta[CANCEL_META].cancelled, false);
    assert.equal(refused.body.result._meta[CANCEL_META].status, "working");
    assert.match(refused.body.result._meta[CANCEL_META].message, /already running/);
    assert.equal(await balanceOf(app, accountId), charged);
    const still = await withTasks(app, live, "tasks/get", { taskId: running.taskId });
    assert.equal(still.body.result.status, "working");
    assert.match(still.body.result.statusMessage, /is running/);
    // A start that adopts the project's running audit (as on /v1) hands back that audit's task.
    const adopted = (await start("audits", { action: "start" })).body.result;
    assert.equal(adopted.taskId, running.taskId);
    // A start that fails answers at once, as the tool error it is: no task.
    const refusedStart = await withTasks(app, live, "tools/call", {
      name: "audits",
      arguments: { action: "start", project_id: "proj_nope" },
    });
    assert.equal(refusedStart.body.result.isError, true, refusedStart.text);
    assert.equal(refusedStart.body.result.taskId, undefined);
    assert.match(refusedStart.body.result.content[0].text, /^Error not_found:/);
  }, { env: { SERVICE_ROLE: "web" } }));

Deno.test("tasks are the account's: foreign, unknown and malformed ids are not found; no extension is -32021; no key finds none", () =>
  withApp(async (app) => {
    const owner = await app.signup();
    const other = await app.signup();
    const projectId = await newProject(app, owner.key, "https://mine.example");
    const { taskId } = (await withTasks(app, owner.key, "tools/call", {
      name: "audits",
      arguments: { action: "start", project_id: projectId },
    })).body.result;

    for (
      const [label, key, id] of [
        ["another account", other.key, taskId],
        ["an audit id with no task", owner.key, "aud_0000000000000000000000"],
        ["a malformed id", owner.key, "../../accounts"],
      ] as const
    ) {
      for (const method of ["tasks/get", "tasks/cancel", "tasks/update"]) {
        const params = method === "tasks/update"
          ? { taskId: id, inputResponses: {} }
          : { taskId: id };
        const res = await withTasks(app, key, method, params);
        assert.equal(res.status, 200, `${label} ${method}: ${res.text}`);
        assert.equal(res.body.error?.code, -32602, `${label} ${method}: ${res.text}`);
        assert.match(res.body.error.message, /Task not found/);
      }
    }
    // The other account's cancel did nothing.
    const rest = await app.req("GET", `/v1/audits/${taskId}`, { key: owner.key });
    assert.equal(rest.body.status, "queued");
    // tasks/update on a known task: nothing outstanding, acknowledged.
    const update = await withTasks(app, owner.key, "tasks/update", {
      taskId,
      inputResponses: { x: { action: "accept" } },
    });
    assert.equal(update.body.result?.resultType, "complete", update.text);

    // Past its ttlMs a task is gone (the audit itself stays readable over /v1 and `get`).
    app.clock.advance(JOB_TASK_TTL_MS);
    const expired = await withTasks(app, owner.key, "tasks/get", { taskId });
    assert.equal(expired.body.error?.code, -32602, expired.text);
    app.clock.advance(-JOB_TASK_TTL_MS);

    // A request that does not declare the extension: Missing Required Client Capability.
    for (const method of ["tasks/get", "tasks/cancel"]) {
      const res = await modern(app, method, { taskId }, { key: owner.key });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.code, -32021);
      assert.deepEqual(res.body.error.data.requiredCapabilities, TASKS_CAPS);
    }
    // No key: no account, so no task (not a 401: the extension's own answers stay visible).
    const keyless = await modern(app, "tasks/get", { taskId }, { caps: TASKS_CAPS });
    assert.equal(keyless.status, 200, keyless.text);
    assert.equal(keyless.body.error.code, -32602);
    // The 2025 revision's tasks/result and tasks/list are gone from the extension.
    for (const method of ["tasks/result", "tasks/list"]) {
      const gone = await modern(app, method, { taskId }, { key: owner.key, caps: TASKS_CAPS });
      assert.equal(gone.body.error?.code, -32601, `${method}: ${gone.text}`);
    }
  }, { env: { SERVICE_ROLE: "web" } }));

Deno.test("clients without the tasks extension keep the start-and-poll answer", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const projectId = await newProject(app, key, "https://classic.example");
    const classic = (res: { body: { result: Record<string, unknown> } }) => {
      const r = res.body.result;
      assert.equal(r.taskId, undefined, JSON.stringify(r));
      assert.notEqual(r.resultType, "task");
      // deno-lint-ignore no-explicit-any
      const s = r.structuredContent as any;
      assert.match(s.audit_id, /^aud_/);
      assert.equal(s.poll, `/v1/audits/${s.audit_id}`);
      // A sandbox audit's budget (25 pages, 2 s) plus the job queued ahead of it (web role).
      assert.equal(s.poll_after_seconds, 3);
    };
    // (The second start adopts the audit the first queued, as on /v1.)
    const args = { action: "start", project_id: projectId };
    // A 2026-07-28 request without the extension in its capabilities.
    classic(await modern(app, "tools/call", { name: "audits", arguments: args }, { key }));
    // A 2025 client (capabilities are per connection there, and carry no extension).
    const legacy = await connectMcp(app, { key, era: "2025-11-25" });
    try {
      const res = await legacy.callTool({ name: "audits", arguments: args });
      classic({ body: { result: res as Record<string, unknown> } });
    } finally {
      await legacy.close();
    }
  }, { env: { SERVICE_ROLE: "web" } }));
