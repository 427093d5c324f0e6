/**
 * MCP tasks across processes on one KV file: a task opened through process A is found, read and
 * cancelled through process B (the task and its job live in KV, nothing in a process), and both
 * list the tools in the same order. Web processes: nothing works the job, so it stays queued.
 */
import assert from "node:assert/strict";
import { modern, TASKS_CAPS } from "../mcp/helpers.ts";
import { killAll, nextIp, type ServerProcess, startServer, tempKvPath } from "./process.ts";

Deno.test("two processes: a task opened on A is read and cancelled on B, refunded; tools/list is the same on both", async () => {
  const kvFile = await tempKvPath();
  const servers: ServerProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      servers.push(await startServer(kvFile.path, { SERVICE_ROLE: "web" }));
    }
    const [a, b] = servers;
    const signup = await a.req("POST", "/v1/accounts", {
      body: { email: `tasks-${crypto.randomUUID()}@example.com` },
      ip: nextIp(),
    });
    assert.equal(signup.status, 201, signup.text);
    const key = signup.body.api_key as string;
    const project = await a.req("POST", "/v1/projects", {
      key,
      body: { url: "https://two-processes.example" },
    });
    assert.equal(project.status, 201, project.text);

    const opts = { key, caps: TASKS_CAPS };
    const start = await modern(a, "tools/call", {
      name: "audits",
      arguments: { action: "start", project_id: project.body.project_id },
    }, opts);
    assert.equal(start.body.result?.resultType, "task", start.text);
    const { taskId } = start.body.result;

    // B finds it at once: the handle was answered only after the task was committed.
    const got = await modern(b, "tasks/get", { taskId }, opts);
    assert.equal(got.status, 200, got.text);
    assert.deepEqual([got.body.result.taskId, got.body.result.status], [taskId, "working"]);
    assert.equal(got.body.result.createdAt, start.body.result.createdAt);

    const cancel = await modern(b, "tasks/cancel", { taskId }, opts);
    assert.equal(cancel.body.result._meta["com.serpwright/cancel"].cancelled, true, cancel.text);
    const after = await modern(a, "tasks/get", { taskId }, opts);
    assert.equal(after.body.result.status, "cancelled");
    const account = await a.req("GET", "/v1/account", { key });
    assert.equal(account.body.sandbox_usage.audits, 0, "the trial audit is back");

    // The tool list is the same, byte for byte, on both processes.
    const listA = await modern(a, "tools/list", {}, { key });
    const listB = await modern(b, "tools/list", {}, { key });
    assert.equal(listA.status, 200, listA.text);
    assert.equal(JSON.stringify(listB.body.result), JSON.stringify(listA.body.result));
  } catch (err) {
    servers.forEach((s, i) => console.error(`process ${i}:\n${s.logs()}`));
    throw err;
  } finally {
    await killAll(...servers);
    await kvFile.remove();
  }
});
