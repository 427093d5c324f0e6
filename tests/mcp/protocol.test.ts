/**
 * The 2026-07-28 revision over real HTTP: `server/discover` without a session, stateless
 * requests carrying their protocol version and client capabilities in `_meta` (no `initialize`),
 * the `Mcp-Method` / `Mcp-Name` headers checked against the body before anything runs, the
 * unsupported-version error, and a `tools/list` order that never moves. 2025 clients keep their
 * `initialize` (tests/mcp/flow.test.ts).
 */
import assert from "node:assert/strict";
import { SERVER_INSTRUCTIONS } from "../../routes/mcp/docs.ts";
import { SERVER_INFO, TOOL_DEFS } from "../../routes/mcp/server.ts";
import { withApp } from "../helpers/app.ts";
import { connectMcp, MODERN, modern, postMcp, TASKS_CAPS } from "./helpers.ts";

const SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo";
const TASKS = "io.modelcontextprotocol/tasks";

Deno.test("server/discover: versions, capabilities with the tasks extension, instructions and identity, with no session or key", () =>
  withApp(async (app) => {
    const res = await modern(app, "server/discover");
    assert.equal(res.status, 200, res.text);
    const r = res.body.result;
    assert.deepEqual(r.supportedVersions, [MODERN]);
    assert.deepEqual(r.capabilities.extensions, { [TASKS]: {} });
    assert.equal(r.capabilities.tasks, undefined, "no 2025-style tasks slot");
    assert.deepEqual(r.capabilities.tools, { listChanged: false });
    assert.equal(r.instructions, SERVER_INSTRUCTIONS);
    assert.deepEqual(r._meta[SERVER_INFO_KEY], SERVER_INFO);
    assert.equal(r.resultType, "complete");
    // The same for every caller of the deployment: shared caches may keep it an hour.
    assert.equal(r.ttlMs, 3_600_000);
    assert.equal(r.cacheScope, "public");

    // A 2025 client's initialize is unchanged: its era has no per-request capabilities, and the
    // extension is not offered to it.
    const init = await postMcp(app, {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "old", version: "1" },
      },
    });
    assert.equal(init.status, 200, init.text);
    assert.equal(init.body.result.protocolVersion, "2025-11-25");
    assert.deepEqual(init.body.result.serverInfo, SERVER_INFO);
    assert.equal(init.body.result.capabilities.extensions, undefined);
  }));

Deno.test("stateless 2026-07-28 requests: the version and capabilities ride in each request's _meta, no initialize needed", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    // A first request of a client that never initialized: a keyed tool call.
    const account = await modern(app, "tools/call", { name: "account", arguments: {} }, { key });
    assert.equal(account.status, 200, account.text);
    assert.equal(account.body.result.resultType, "complete");
    assert.equal(account.body.result.structuredContent.account_id, accountId);
    assert.deepEqual(account.body.result._meta[SERVER_INFO_KEY], SERVER_INFO);
    // Other methods alike, each request on its own.
    const listed = await modern(app, "tools/list", {}, { key });
    assert.equal(listed.status, 200, listed.text);
    assert.ok(listed.body.result.tools.some((t: { name: string }) => t.name === "audits"));
    const prompts = await modern(app, "prompts/list", {}, { key });
    assert.equal(prompts.status, 200, prompts.text);

    // An envelope without the required client info is refused, not served as 2025 traffic.
    const bare = await postMcp(app, {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN } },
    }, { "mcp-protocol-version": MODERN, "mcp-method": "tools/list" });
    assert.equal(bare.status, 400, bare.text);
    assert.equal(bare.body.error.code, -32602);

    // A revision the server does not speak: the spec's UnsupportedProtocolVersionError.
    const future = await postMcp(app, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2099-01-01",
          "io.modelcontextprotocol/clientInfo": { name: "t", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    }, { "mcp-protocol-version": "2099-01-01", "mcp-method": "tools/list" });
    assert.equal(future.status, 400, future.text);
    assert.equal(future.body.error.code, -32022);
    assert.ok(future.body.error.data.supported.includes(MODERN));
    assert.equal(future.body.error.data.requested, "2099-01-01");
  }));

Deno.test("Mcp-Method and Mcp-Name must agree with the body: a disagreeing or missing header is 400 -32020 and nothing runs", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const create = { name: "projects", arguments: { action: "create", url: "https://h.example" } };
    const refused: [string, Record<string, string>][] = [
      ["Mcp-Name naming another tool", { "mcp-name": "docs" }],
      ["Mcp-Method naming another method", { "mcp-method": "tools/list" }],
      ["no Mcp-Method", { "mcp-method": "" }],
      ["no Mcp-Name", { "mcp-name": "" }],
      ["no MCP-Protocol-Version", { "mcp-protocol-version": "" }],
    ];
    for (const [label, headers] of refused) {
      const res = await modern(app, "tools/call", create, { key, headers });
      assert.equal(res.status, 400, `${label}: ${res.text}`);
      assert.equal(res.body.error.code, -32020, label);
      assert.equal(res.body.id, 1, label);
    }
    // None of them created the project.
    const projects = await app.req("GET", "/v1/projects", { key });
    assert.deepEqual(projects.body.projects, []);
    // The task methods name their task in Mcp-Name (tasks extension, Streamable HTTP).
    const task = await modern(app, "tasks/get", { taskId: "aud_x" }, {
      key,
      caps: TASKS_CAPS,
      headers: { "mcp-name": "aud_y" },
    });
    assert.equal(task.status, 400, task.text);
    assert.equal(task.body.error.code, -32020);
    // With the headers right, the same call runs.
    const ok = await modern(app, "tools/call", create, { key });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.result.isError, undefined, ok.text);
  }));

Deno.test("tools/list keeps the declared order: the same on every call, in both eras, with and without a key", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const names = (res: { body: { result: { tools: { name: string }[] } } }) =>
      res.body.result.tools.map((t) => t.name);
    const declared = TOOL_DEFS.filter((d) => d.access !== "anonymous").map((d) => d.name);
    const keyless = TOOL_DEFS.filter((d) => d.access !== "key").map((d) => d.name);

    const first = await modern(app, "tools/list", {}, { key });
    const second = await modern(app, "tools/list", {}, { key });
    assert.deepEqual(names(first), declared);
    // Byte for byte (the serverInfo stamp included): a host's cache and a model's prompt cache hit.
    assert.equal(JSON.stringify(second.body.result), JSON.stringify(first.body.result));
    assert.deepEqual(names(await modern(app, "tools/list")), keyless);

    const legacy = await connectMcp(app, { key, era: "2025-11-25" });
    try {
      assert.deepEqual((await legacy.listTools()).tools.map((t) => t.name), declared);
    } finally {
      await legacy.close();
    }
  }));
