/**
 * Issue 21, "Visibility after funding": a sandbox key cannot see its account's live projects
 * (`GET /v1/projects/{id}` is 404 for it), so it cannot start work on one either, however the
 * project is paid for. Checks run authentication → visibility → limits → funding → effect: the
 * refusal is 404 `not_found`, over `/v1` and MCP alike, before anything is charged or written.
 */
import assert from "node:assert/strict";
import { errorCode, subscribeProject, type TestApp, withApp } from "../helpers/app.ts";
import { callError, connectMcp } from "../mcp/helpers.ts";

/** Every entry of the store but the rate-limit windows (each request moves those). */
async function storeSnapshot(kv: Deno.Kv): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for await (const e of kv.list({ prefix: [] })) {
    if (e.key[0] === "rate_limits") continue;
    out.set(JSON.stringify(e.key), e.versionstamp);
  }
  return out;
}

/** What changed between two snapshots: keys added, removed or rewritten. */
function storeDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const changed: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v) changed.push(k);
  for (const k of before.keys()) if (!after.has(k)) changed.push(`-${k}`);
  return changed;
}

/** An account with a live `pro` project, and the sandbox key it signed up with. */
async function liveProProject(app: TestApp) {
  const { key: sandbox, accountId } = await app.signup();
  const live = await app.liveKey(accountId);
  const project = await app.req("POST", "/v1/projects", {
    key: live,
    body: { url: "https://pro.example" },
  });
  assert.equal(project.status, 201, project.text);
  const projectId = project.body.project_id as string;
  await subscribeProject(app, accountId, projectId, "pro");
  const seen = await app.req("GET", `/v1/projects/${projectId}`, { key: sandbox });
  assert.equal(seen.status, 404, "the sandbox key cannot see the live project");
  return { sandbox, live, accountId, projectId };
}

/** The sandbox side's usage and the live project's counts: the trial and the project untouched. */
async function assertNothingStarted(
  app: TestApp,
  who: { sandbox: string; live: string; projectId: string },
) {
  const account = await app.req("GET", "/v1/account", { key: who.sandbox });
  assert.deepEqual(account.body.sandbox_usage, { audits: 0, articles: 0 });
  const project = await app.req("GET", `/v1/projects/${who.projectId}`, { key: who.live });
  assert.deepEqual(project.body.counts, { keywords: 0, articles: 0, audits: 0 });
  assert.equal(project.body.status, "setup");
}

Deno.test("visibility before funding: a sandbox key starting an audit or an article on a live pro project gets 404 over /v1, and nothing is written", () =>
  withApp(async (app) => {
    const who = await liveProProject(app);
    const attempts: [string, Record<string, unknown> | undefined][] = [
      [`/v1/projects/${who.projectId}/audits`, undefined],
      [`/v1/projects/${who.projectId}/audits`, { render: true }],
      [`/v1/projects/${who.projectId}/articles`, { topic: "Running shoes for flat feet" }],
    ];
    for (const [path, body] of attempts) {
      const before = await storeSnapshot(app.kv);
      const res = await app.req("POST", path, {
        key: who.sandbox,
        ...(body ? { body } : {}),
        headers: { "idempotency-key": crypto.randomUUID() },
      });
      assert.equal(res.status, 404, `${path} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(errorCode(res), "not_found");
      assert.deepEqual(storeDiff(before, await storeSnapshot(app.kv)), [], `${path} wrote`);
    }
    await assertNothingStarted(app, who);
  }));

Deno.test("visibility before funding: the MCP audits and articles tools answer not_found on a live pro project and start nothing", () =>
  withApp(async (app) => {
    const who = await liveProProject(app);
    const client = await connectMcp(app, { key: who.sandbox });
    try {
      const attempts: [string, Record<string, unknown>][] = [
        ["audits", { action: "start", project_id: who.projectId }],
        ["audits", { action: "start", project_id: who.projectId, wait: 1 }],
        ["audits", { action: "start", project_id: who.projectId, render: true }],
        ["articles", { action: "start", project_id: who.projectId, topic: "Flat feet shoes" }],
      ];
      for (const [tool, args] of attempts) {
        const before = await storeSnapshot(app.kv);
        const refused = await callError(client, tool, args);
        assert.equal(refused.code, "not_found", `${tool} ${JSON.stringify(args)}`);
        assert.deepEqual(
          storeDiff(before, await storeSnapshot(app.kv)),
          [],
          `${tool} ${JSON.stringify(args)} wrote`,
        );
      }
    } finally {
      await client.close();
    }
    await assertNothingStarted(app, who);
  }));
