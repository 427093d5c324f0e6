/**
 * The direct answer to a plain `tools/call` (routes/mcp/fast_call.ts) is the SDK's answer: the
 * same requests are sent with the fast path on and off and the responses compared byte for byte,
 * over real HTTP in every era served, keyed and anonymous; requests of any other shape are left
 * to the SDK; results of unusual shapes (and throws, invalid arguments or output) are replayed
 * through the SDK to the same bytes; and a 2025-era call that waits gets the SSE stream at once.
 */
import assert from "node:assert/strict";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { toAuthInfo } from "../../routes/mcp/caller.ts";
import {
  callFast,
  fastCalls,
  plainToolCall,
  servesFast,
  type ToolSpec,
} from "../../routes/mcp/fast_call.ts";
import { buildReplayServer, SERVER_INFO } from "../../routes/mcp/server.ts";
import { GOOD_HEADERS, page, serveSite } from "../helpers/sites.ts";
import { freshIp, startTestApp, type TestApp, withApp } from "../helpers/app.ts";

const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "fast-call-tests", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

type Era = "modern" | "2025-11-25" | "2025-06-18" | "2025 (no version header)";
const ERAS: Era[] = ["modern", "2025-11-25", "2025-06-18", "2025 (no version header)"];

/** A `tools/call` as the SDK's clients send it in `era`: body and headers. */
function toolCall(era: Era, name: string, args?: Record<string, unknown>, id: unknown = 1) {
  const params: Record<string, unknown> = { name };
  if (args !== undefined) params.arguments = args;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  if (era === "modern") {
    params._meta = ENVELOPE;
    headers["mcp-protocol-version"] = MODERN;
    headers["mcp-method"] = "tools/call";
    headers["mcp-name"] = name;
  } else if (era !== "2025 (no version header)") {
    headers["mcp-protocol-version"] = era;
  }
  return { body: { jsonrpc: "2.0", id, method: "tools/call", params }, headers };
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** The headers that do not change from one request to the next. */
const COMPARED = [
  "content-type",
  "cache-control",
  "connection",
  "x-accel-buffering",
  "x-content-type-options",
  "x-ratelimit-limit",
  "retry-after",
  "www-authenticate",
];

async function post(
  app: TestApp,
  req: { body: unknown; headers: Record<string, string> },
  key?: string,
  ip = freshIp(),
): Promise<Answer> {
  const headers: Record<string, string> = { ...req.headers, "x-forwarded-for": ip };
  if (key) headers.authorization = `Bearer ${key}`;
  const res = await fetch(`${app.url}/mcp`, {
    method: "POST",
    headers,
    body: typeof req.body === "string" ? req.body : JSON.stringify(req.body),
  });
  const kept: Record<string, string> = {};
  for (const h of COMPARED) {
    const v = res.headers.get(h);
    if (v !== null) kept[h] = v;
  }
  return { status: res.status, headers: kept, text: await res.text() };
}

/** The request answered by the SDK, then by the fast path; whether the fast path took it. */
async function bothWays(
  app: TestApp,
  req: { body: unknown; headers: Record<string, string> },
  key?: string,
) {
  const ip = freshIp();
  fastCalls.enabled = false;
  let sdk: Answer;
  try {
    sdk = await post(app, req, key, ip);
  } finally {
    fastCalls.enabled = true;
  }
  const before = fastCalls.answered;
  const fast = await post(app, req, key, ip);
  return { sdk, fast, tookFastPath: fastCalls.answered > before };
}

Deno.test("plain tool calls: the same bytes as the SDK's, in 2026-07-28 and 2025 eras, keyed and anonymous", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const project = await app.req("POST", "/v1/projects", {
      key,
      body: { url: "https://fast.example" },
    });
    assert.equal(project.status, 201, project.text);
    const cases: [string, string | undefined, Record<string, unknown> | undefined, unknown][] = [
      ["account", key, {}, 1],
      ["account", key, undefined, "request-7"],
      ["docs", undefined, { topic: "errors" }, 0],
      ["docs", key, { topic: "connect" }, Number.MAX_SAFE_INTEGER],
      // Tool errors: the kit's validation, a strict schema, the domain's answer.
      ["docs", undefined, { topic: "nope" }, 2],
      ["docs", key, { topic: "errors", extra: true }, 3],
      ["signup", undefined, { email: "not an email" }, 4],
      ["projects", key, { action: "list" }, 5],
      ["projects", key, { action: "get", project_id: "prj_missing" }, 6],
    ];
    for (const era of ERAS) {
      for (const [name, k, args, id] of cases) {
        const what = `${era} ${name} ${JSON.stringify(args)} ${k ? "keyed" : "anonymous"}`;
        const { sdk, fast, tookFastPath } = await bothWays(app, toolCall(era, name, args, id), k);
        assert.ok(tookFastPath, `${what}: answered by the fast path`);
        assert.deepEqual(fast, sdk, what);
        assert.equal(sdk.status, 200, what);
      }
    }
  }));

Deno.test("calls the SDK must answer itself are left to it, with the same answers", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const modern = toolCall("modern", "account", {});
    const legacy = toolCall("2025-11-25", "account", {});
    const cases: [string, { body: unknown; headers: Record<string, string> }, string?][] = [
      ["an unknown tool", toolCall("modern", "nope", {}), key],
      ["a keyed tool without a key", toolCall("2025-11-25", "account", {})],
      ["a progress token (2025)", {
        ...legacy,
        body: { ...legacy.body, params: { name: "account", _meta: { progressToken: 1 } } },
      }, key],
      ["a progress token (2026-07-28)", {
        ...modern,
        body: {
          ...modern.body,
          params: { name: "account", _meta: { ...ENVELOPE, progressToken: 1 } },
        },
      }, key],
      ["an empty _meta (2025)", {
        ...legacy,
        body: { ...legacy.body, params: { name: "account", _meta: {} } },
      }, key],
      ["Mcp-Name disagreeing", {
        ...modern,
        headers: { ...modern.headers, "mcp-name": "docs" },
      }, key],
      ["no Mcp-Method", {
        ...modern,
        headers: { ...modern.headers, "mcp-method": "" },
      }, key],
      ["MCP-Protocol-Version disagreeing", {
        ...modern,
        headers: { ...modern.headers, "mcp-protocol-version": "2025-11-25" },
      }, key],
      ["a malformed envelope", {
        ...modern,
        body: {
          ...modern.body,
          params: {
            name: "account",
            _meta: { ...ENVELOPE, "io.modelcontextprotocol/clientCapabilities": "all" },
          },
        },
      }, key],
      ["an unsupported 2025 version", {
        ...legacy,
        headers: { ...legacy.headers, "mcp-protocol-version": "2024-01-01" },
      }, key],
      ["an Accept without event-stream (2025)", {
        ...legacy,
        headers: { ...legacy.headers, accept: "application/json" },
      }, key],
      ["a text/plain body", {
        ...modern,
        headers: { ...modern.headers, "content-type": "text/plain" },
      }, key],
      ["a fractional id", { ...modern, body: { ...modern.body, id: 1.5 } }, key],
      ["a null id", { ...legacy, body: { ...legacy.body, id: null } }, key],
      ["array arguments", {
        ...legacy,
        body: { ...legacy.body, params: { name: "account", arguments: [] } },
      }, key],
      ["an extra member", { ...legacy, body: { ...legacy.body, extra: 1 } }, key],
      ["a task", {
        ...legacy,
        body: { ...legacy.body, params: { name: "account", task: { ttl: 1000 } } },
      }, key],
      ["a notification", {
        ...legacy,
        body: { jsonrpc: "2.0", method: "tools/call", params: { name: "account" } },
      }, key],
      ["a batch", { ...legacy, body: [legacy.body] }, key],
      ["broken JSON", { ...legacy, body: '{"jsonrpc":"2.0",' }, key],
    ];
    for (const [what, req, k] of cases) {
      const { sdk, fast, tookFastPath } = await bothWays(app, req, k);
      assert.ok(!tookFastPath, `${what}: left to the SDK`);
      assert.deepEqual(fast, sdk, what);
    }
  }));

Deno.test("over the rate limit: the fast path answers the same rate_limited tool error as the SDK", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const spend = await app.req("GET", "/v1/account", { key });
    assert.equal(spend.status, 200);
    // The seconds to wait move on between the two requests at a second's boundary.
    const seconds = (a: Answer) => ({
      ...a,
      headers: { ...a.headers, "retry-after": "N" },
      text: a.text.replace(/(retry_after_seconds\\?":)\d+/g, "$1N")
        .replace(/retry in \d+ s/g, "retry in N s"),
    });
    for (const era of ["modern", "2025-11-25"] as Era[]) {
      const { sdk, fast, tookFastPath } = await bothWays(app, toolCall(era, "account", {}), key);
      assert.ok(tookFastPath, era);
      assert.match(fast.text, /rate_limited/);
      assert.ok(fast.headers["retry-after"], "Retry-After");
      assert.deepEqual(seconds(fast), seconds(sdk), era);
    }
  }, { env: { RATE_LIMIT_PER_MINUTE: "1" } }));

// --- Results of every shape, on a bare SDK handler: the fast answer or the SDK's replay of it.

const Out = z.object({ n: z.number(), s: z.string() });

/** A Standard Schema like the kit's: JSON Schema given, validated with zod. */
function standard(schema: z.ZodType, io: "input" | "output") {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io });
  return {
    "~standard": {
      version: 1,
      vendor: "tests",
      validate: (value: unknown) => {
        const r = schema.safeParse(value);
        return r.success
          ? { value: r.data }
          : { issues: r.error.issues.map((i) => ({ message: i.message, path: i.path })) };
      },
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

function spec(
  result: unknown | (() => unknown),
  opts: { output?: boolean; input?: z.ZodType } = {},
): ToolSpec {
  const config: ToolSpec["config"] = {
    title: "Fake",
    description: "A tool answering a fixed result",
    inputSchema: standard(opts.input ?? z.object({ a: z.number().optional() }), "input"),
    annotations: { readOnlyHint: true },
  };
  if (opts.output !== false) config.outputSchema = standard(Out, "output");
  return {
    name: "fake",
    config,
    callback: () => {
      if (typeof result === "function") return (result as () => unknown)();
      return Promise.resolve(structuredClone(result));
    },
  };
}

const authInfo = toAuthInfo({
  principal: null,
  bearer: null,
  ip: "192.0.2.1",
  rateLimited: null,
  toolCall: "fake",
});

async function sdkAnswer(tool: ToolSpec, era: Era, args: Record<string, unknown>) {
  const handler = createMcpHandler(() => {
    const server = new McpServer(SERVER_INFO);
    server.registerTool(tool.name, tool.config as never, tool.callback as never);
    return server;
  });
  const { body, headers } = toolCall(era, tool.name, args);
  const res = await handler.fetch(
    new Request("http://127.0.0.1/mcp", { method: "POST", headers, body: JSON.stringify(body) }),
    { authInfo },
  );
  return await res.text();
}

async function fastAnswer(tool: ToolSpec, era: Era, args: Record<string, unknown>) {
  const { body, headers } = toolCall(era, tool.name, args);
  const request = new Request("http://127.0.0.1/mcp", { method: "POST", headers });
  const call = plainToolCall(body, request.headers);
  assert.ok(call, "a plain call");
  assert.ok(servesFast(tool), "a tool served fast");
  const answer = await callFast(call, tool, authInfo, request);
  if ("text" in answer) return { text: answer.text, replayed: false };
  const handler = createMcpHandler(() => buildReplayServer(tool, answer.replay));
  const res = await handler.fetch(request, { authInfo, parsedBody: body });
  return { text: await res.text(), replayed: true };
}

Deno.test("every result shape: rendered like the SDK, or replayed through it", async () => {
  const text = (t: string) => ({ type: "text", text: t });
  const cases: [string, ToolSpec, boolean, Record<string, unknown>?][] = [
    [
      "text and structured content",
      spec({ content: [text("hi")], structuredContent: { n: 1, s: "x" } }),
      false,
    ],
    [
      "keys in another order",
      spec({ structuredContent: { s: "x", n: 1 }, content: [{ text: "a", type: "text" }] }),
      false,
    ],
    [
      "two text blocks, no output schema",
      spec({ content: [text("a"), text("b")] }, { output: false }),
      false,
    ],
    [
      "an error with _meta",
      spec({ content: [text("no")], _meta: { "com.example/e": { code: "x" } }, isError: true }),
      false,
    ],
    [
      "isError false",
      spec({ content: [text("ok")], structuredContent: { n: 2, s: "y" }, isError: false }),
      false,
    ],
    [
      "_meta on a success",
      spec({
        _meta: { "com.example/m": 1 },
        content: [text("ok")],
        structuredContent: { n: 3, s: "z" },
      }),
      false,
    ],
    [
      "unicode and escapes",
      spec({ content: [text('é "q" \n \u2028 😀')], structuredContent: { n: -0.5, s: "\u0000" } }),
      false,
    ],
    [
      "an image block",
      spec({
        content: [{ type: "image", data: "aGk=", mimeType: "image/png" }],
        structuredContent: { n: 1, s: "x" },
      }),
      true,
    ],
    [
      "annotated text",
      spec({
        content: [{ ...text("a"), annotations: { priority: 1 } }],
        structuredContent: { n: 1, s: "x" },
      }),
      true,
    ],
    [
      "array structured content",
      spec({ content: [], structuredContent: [1, 2] }, { output: false }),
      true,
    ],
    [
      "an extra result key",
      spec({ content: [text("a")], structuredContent: { n: 1, s: "x" }, extra: 1 }),
      true,
    ],
    [
      "a serverInfo of its own",
      spec({
        content: [text("a")],
        _meta: { "io.modelcontextprotocol/serverInfo": { name: "x", version: "1" } },
        structuredContent: { n: 1, s: "x" },
      }),
      true,
    ],
    ["no content", spec({ structuredContent: { n: 1, s: "x" } }), true],
    ["a string result", spec("just text"), true],
    ["structured content missing", spec({ content: [text("a")] }), true],
    [
      "structured content failing the schema",
      spec({ content: [text("a")], structuredContent: { n: "one", s: "x" } }),
      true,
    ],
    ["a throw", spec(() => Promise.reject(new Error("boom"))), true],
    [
      "arguments failing the input schema",
      spec({ content: [text("a")] }, { input: z.object({ a: z.string() }) }),
      true,
      { a: 1 },
    ],
  ];
  for (const era of ["modern", "2025-11-25"] as Era[]) {
    for (const [what, tool, replayed, args] of cases) {
      const expected = await sdkAnswer(tool, era, args ?? {});
      const got = await fastAnswer(tool, era, args ?? {});
      assert.equal(got.text, expected, `${era}: ${what}`);
      assert.equal(got.replayed, replayed, `${era}: ${what} ${replayed ? "replayed" : "rendered"}`);
    }
  }
});

Deno.test("a tool the SDK acts on before or after the call is not served fast", () => {
  assert.ok(servesFast(spec({ content: [] })));
  const scoped = spec({ content: [] });
  scoped.config = { ...scoped.config, scopeChallenge: () => undefined };
  assert.ok(!servesFast(scoped), "scope challenge");
  const header = spec({ content: [] });
  header.config = {
    ...header.config,
    inputSchema: {
      "~standard": {
        ...(header.config.inputSchema as { "~standard": object })["~standard"],
        jsonSchema: {
          input: () => ({
            type: "object",
            properties: { r: { type: "string", "x-mcp-header": "R" } },
          }),
          output: () => ({}),
        },
      },
    },
  };
  assert.ok(!servesFast(header), "x-mcp-header parameter");
  const wrapped = spec({ content: [] });
  wrapped.config = { ...wrapped.config, outputSchema: standard(z.array(z.number()), "output") };
  assert.ok(!servesFast(wrapped), "non-object output schema");
});

Deno.test("a 2025-era call that waits gets its SSE stream at once and its answer when the job moves", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const site = serveSite(() => ({
    handler: async () => {
      await released;
      return new Response(page({ title: "Held page" }), { headers: GOOD_HEADERS });
    },
  }));
  const app = await startTestApp();
  try {
    const { key } = await app.signup();
    const project = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
    const audit = await app.req("POST", `/v1/projects/${project.body.project_id}/audits`, { key });
    assert.equal(audit.status, 202, audit.text);
    const req = toolCall("2025-11-25", "audits", {
      action: "get",
      audit_id: audit.body.audit_id,
      wait: 4,
    });
    const before = fastCalls.answered;
    const started = performance.now();
    const res = await fetch(`${app.url}/mcp`, {
      method: "POST",
      headers: { ...req.headers, authorization: `Bearer ${key}` },
      body: JSON.stringify(req.body),
    });
    const headersAfter = performance.now() - started;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.ok(headersAfter < 3_000, `the stream opened after ${Math.round(headersAfter)} ms`);
    setTimeout(release, 200);
    const text = await res.text();
    assert.ok(fastCalls.answered > before, "answered by the fast path");
    assert.match(text, /^event: message\ndata: /);
    const message = JSON.parse(text.slice(text.indexOf("data: ") + 6));
    assert.equal(message.id, 1);
    assert.equal(message.result.isError, undefined, text);
    assert.ok(message.result.structuredContent.audit_id, text);
  } finally {
    release();
    await app.close();
    await site.close();
  }
});
