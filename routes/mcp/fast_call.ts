/**
 * The direct answer to the one request an agent sends most: a plain `tools/call`.
 *
 * `createMcpHandler` serves a tool call by building a server, connecting it to a per-request
 * transport, classifying and validating the message and its result with the SDK's zod wire
 * schemas, and tearing it all down again: several times the cost of the tool itself (issue 21).
 * For a call in the ordinary shape this module does the part of that work that can change the
 * answer, and answers the same bytes:
 *
 * - `plainToolCall` admits a request only when every check the SDK would make on it is known to
 *   pass: one JSON-RPC request with exactly `jsonrpc`, `id`, `method` and `params`; `params` with
 *   only `name`, `arguments` (an object) and `_meta`; either a valid 2026-07-28 envelope (the
 *   SDK's own classifier decides, once per distinct envelope) with the standard headers agreeing
 *   with the body, or no `_meta` at all and a 2025 protocol version header the SDK serves, with
 *   the `Accept` the 2025 transport demands. No progress token, no task, no request state:
 *   anything else is the SDK's to answer.
 * - `servesFast` admits a tool only when its registration uses nothing the SDK would act on
 *   before the call (scope challenges, `x-mcp-header` parameters) or after it (a non-object
 *   output schema, which 2025 results wrap).
 * - A start of a 2026-07-28 client that declares the tasks extension answers a task handle
 *   (`CreateTaskResult`), rendered here: the SDK has no form for it (task_wire.ts).
 * - `callFast` validates the arguments and the structured result with the tool's own Standard
 *   Schemas, as `McpServer` does, and renders a result of the ordinary shape (text content, an
 *   object `structuredContent`, `isError`, `_meta` of our own) in the SDK's wire form: the key
 *   order its result schemas give, `resultType` and the `serverInfo` stamp on 2026-07-28, an SSE
 *   `message` event on 2025 (whose transport answers a POST with a stream). Anything else that
 *   happened (invalid arguments, a throw, a result of another shape, a notification sent during
 *   the call) comes back as an `Outcome` the SDK replays, so its answer is the SDK's without
 *   running the tool twice.
 *
 * tests/mcp/fast_call.test.ts sends the same requests both ways and compares the bytes.
 */
import {
  type AuthInfo,
  classifyInboundRequest,
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  isJsonContentType,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import { SERVER_INFO } from "./server_info.ts";
import { declaresTasks } from "./task_wire.ts";

/** The one modern revision the SDK serves (its `SUPPORTED_MODERN_PROTOCOL_VERSIONS`). */
const MODERN = "2026-07-28";
/** The 2025 revisions its stateless fallback accepts in `MCP-Protocol-Version`. */
const LEGACY_VERSIONS = new Set(SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v < MODERN));
const ENVELOPE_KEYS = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
]);
const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const PARAMS_KEYS = new Set(["name", "arguments", "_meta"]);
/** Registration options the SDK does nothing with when it runs a call. */
const PASSIVE_CONFIG_KEYS = new Set([
  "title",
  "description",
  "inputSchema",
  "outputSchema",
  "annotations",
  "icons",
  "_meta",
]);
const TARGET = "draft-2020-12";

/**
 * `enabled` off sends every call to the SDK (tests compare the two answers); `answered` counts
 * the calls answered here.
 */
export const fastCalls = { enabled: true, answered: 0 };

/** The headers of the 2025 transport's answer to a POST: an SSE stream. */
export const SSE_HEADERS = {
  "Content-Type": "text/event-stream",
  "Cache-Control": "no-cache, no-transform",
  Connection: "keep-alive",
  "X-Accel-Buffering": "no",
};
export const JSON_HEADERS = { "Content-Type": "application/json" };

/** A `tools/call` the SDK would dispatch to the tool unchanged. */
export interface PlainCall {
  era: "modern" | "legacy";
  id: string | number;
  name: string;
  args: Record<string, unknown> | undefined;
  meta: Record<string, unknown> | undefined;
}

interface StandardResult {
  value?: unknown;
  issues?: readonly unknown[];
}
interface StandardSchema {
  "~standard": {
    validate(value: unknown): StandardResult | Promise<StandardResult>;
    jsonSchema?: { input(o: unknown): unknown; output(o: unknown): unknown };
  };
}

/** A tool as registered on an `McpServer`: `registerTool(name, config, callback)`. */
export interface ToolSpec {
  name: string;
  config: Record<string, unknown> & { inputSchema?: unknown; outputSchema?: unknown };
  callback: (args: unknown, extra: unknown) => unknown;
}

/**
 * What a call did, when its answer is left to the SDK: the replayed server's tool does the same
 * (sends the same notifications, then returns or throws the same) without running anything.
 */
export type Outcome =
  | { kind: "returned"; result: unknown; notifications: unknown[] }
  | { kind: "threw"; error: unknown; notifications: unknown[] }
  /** The arguments failed the input schema: the SDK answers before the tool runs. */
  | { kind: "unreached" };

/** The answer of a call: the wire text, or an outcome for the SDK to answer. */
export type FastAnswer = { text: string } | { replay: Outcome };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function keysWithin(o: Record<string, unknown>, allowed: Set<string>): boolean {
  for (const k of Object.keys(o)) if (!allowed.has(k)) return false;
  return true;
}

/**
 * The SDK's verdict on a 2026-07-28 envelope, by its JSON: a client sends the same envelope on
 * every call, and the classifier's zod checks cost more than the rest of a call.
 */
const envelopeVerdicts = new Map<string, boolean>();
const MAX_VERDICTS = 512;

function envelopeAccepted(meta: Record<string, unknown>): boolean {
  const key = JSON.stringify(meta);
  let ok = envelopeVerdicts.get(key);
  if (ok === undefined) {
    const route = classifyInboundRequest({
      httpMethod: "POST",
      protocolVersionHeader: MODERN,
      mcpMethodHeader: "tools/call",
      mcpNameHeader: "probe",
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "tools/call",
        params: { name: "probe", arguments: {}, _meta: meta },
      },
    });
    ok = route.kind === "modern" && route.messageKind === "request" &&
      route.classification.revision === MODERN;
    if (envelopeVerdicts.size >= MAX_VERDICTS) envelopeVerdicts.clear();
    envelopeVerdicts.set(key, ok);
  }
  return ok;
}

/**
 * The call, when `message` (a parsed POST body with these headers) is a `tools/call` the SDK
 * would pass to the tool as it is; null for anything it would treat otherwise.
 */
export function plainToolCall(message: unknown, headers: Headers): PlainCall | null {
  if (!fastCalls.enabled) return null;
  if (!isJsonContentType(headers.get("content-type"))) return null;
  if (!isPlainObject(message) || !keysWithin(message, REQUEST_KEYS)) return null;
  const { jsonrpc, id, method, params } = message;
  if (jsonrpc !== "2.0" || method !== "tools/call") return null;
  if (typeof id !== "string" && !Number.isSafeInteger(id)) return null;
  if (!isPlainObject(params) || !keysWithin(params, PARAMS_KEYS)) return null;
  const { name, arguments: args, _meta: meta } = params;
  if (typeof name !== "string") return null;
  if (args !== undefined && !isPlainObject(args)) return null;
  const version = headers.get("mcp-protocol-version");

  if (meta === undefined) {
    if ("_meta" in params) return null;
    // The 2025 stateless transport: its Accept rule, and a version header it serves (or none).
    const accept = headers.get("accept");
    if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
      return null;
    }
    if (version !== null && !LEGACY_VERSIONS.has(version)) return null;
    return { era: "legacy", id: id as string | number, name, args, meta: undefined };
  }

  // 2026-07-28: a valid envelope, and the standard headers (SEP-2243) agreeing with the body.
  if (!isPlainObject(meta) || !keysWithin(meta, ENVELOPE_KEYS)) return null;
  if (meta[PROTOCOL_VERSION_META_KEY] !== MODERN || version !== MODERN) return null;
  if (headers.get("mcp-method") !== "tools/call") return null;
  // A name sent as an `=?base64?…?=` sentinel is decoded by the SDK; that is its to check.
  if (headers.get("mcp-name") !== name || name.startsWith("=?")) return null;
  if (!envelopeAccepted(meta)) return null;
  return { era: "modern", id: id as string | number, name, args, meta };
}

/** Per schema object (compiled once per process): nothing in it the SDK acts on. */
const inputSchemaFast = new WeakMap<object, boolean>();
const outputSchemaFast = new WeakMap<object, boolean>();

function jsonSchemaOf(schema: unknown, io: "input" | "output"): unknown {
  const std = (schema as StandardSchema | undefined)?.["~standard"];
  if (typeof std?.validate !== "function" || !std.jsonSchema) return undefined;
  return std.jsonSchema[io]({ target: TARGET });
}

function memo(
  cache: WeakMap<object, boolean>,
  schema: unknown,
  check: () => boolean,
): boolean {
  if (schema === null || typeof schema !== "object") return false;
  let ok = cache.get(schema);
  if (ok === undefined) {
    try {
      ok = check();
    } catch {
      ok = false;
    }
    cache.set(schema, ok);
  }
  return ok;
}

/** Whether a call of this tool can be answered here (see the module comment). */
export function servesFast(tool: ToolSpec): boolean {
  if (!keysWithin(tool.config, PASSIVE_CONFIG_KEYS)) return false;
  const { inputSchema, outputSchema } = tool.config;
  // `Mcp-Param-*` headers declared in the input schema are checked by the SDK before dispatch.
  const inputOk = memo(inputSchemaFast, inputSchema, () => {
    const json = jsonSchemaOf(inputSchema, "input");
    return isPlainObject(json) && !JSON.stringify(json).includes("x-mcp-header");
  });
  if (!inputOk) return false;
  // A non-object output root makes the SDK wrap `structuredContent` on 2025.
  return outputSchema === undefined || memo(outputSchemaFast, outputSchema, () => {
    const json = jsonSchemaOf(outputSchema, "output");
    return isPlainObject(json) && json.type === "object";
  });
}

function issuesOf(r: StandardResult): boolean {
  return r.issues !== undefined && r.issues.length > 0;
}

/**
 * Runs the call as `McpServer` runs it (input validation, the callback with the request's
 * `authInfo`, output validation) and renders its answer, or hands back what happened for the SDK
 * to answer.
 */
export async function callFast(
  call: PlainCall,
  tool: ToolSpec,
  authInfo: AuthInfo,
  request: Request,
): Promise<FastAnswer> {
  const { inputSchema, outputSchema } = tool.config as {
    inputSchema: StandardSchema;
    outputSchema?: StandardSchema;
  };
  let input: StandardResult;
  try {
    input = await inputSchema["~standard"].validate(call.args ?? {});
  } catch {
    input = { issues: [null] }; // the SDK answers the validator's throw
  }
  if (issuesOf(input)) return { replay: { kind: "unreached" } };

  const notifications: unknown[] = [];
  const modern = call.era === "modern";
  const extra = {
    sessionId: undefined,
    // Only this path renders a task handle (kit.ts `ToolContext.tasks`).
    taskHandles: modern && declaresTasks(call.meta),
    mcpReq: {
      id: call.id,
      method: "tools/call",
      _meta: call.meta,
      // The reserved keys of a 2026-07-28 `_meta`: all a plain call's `_meta` holds.
      envelope: modern ? call.meta : undefined,
      // Read only by a call that waits: a request's signal, once touched, costs Deno.serve an
      // abort (and its DOMException) after every response.
      get signal() {
        return request.signal;
      },
      // Nothing is pushed without a progress token; whatever a tool sends anyway is replayed.
      notify: (n: unknown) => {
        notifications.push(n);
        return Promise.resolve();
      },
      log: () => Promise.resolve(),
    },
    http: { authInfo, req: request },
  };
  let result: unknown;
  try {
    result = await tool.callback(input.value, extra);
  } catch (error) {
    return { replay: { kind: "threw", error, notifications } };
  }
  const returned: Outcome = { kind: "returned", result, notifications };
  if (extra.taskHandles && isPlainObject(result) && result.resultType === "task") {
    fastCalls.answered++;
    return { text: renderTask(call, result) };
  }
  if (notifications.length > 0 || !isPlainObject(result)) return { replay: returned };
  const shape = plainResult(result);
  if (!shape) return { replay: returned };
  try {
    if (outputSchema !== undefined && !shape.isError) {
      if (shape.structuredContent === undefined) return { replay: returned };
      const output = await outputSchema["~standard"].validate(shape.structuredContent);
      if (issuesOf(output)) return { replay: returned };
    }
    const text = render(call, shape);
    fastCalls.answered++;
    return { text };
  } catch {
    return { replay: returned }; // a validator or JSON.stringify threw: the SDK's to answer
  }
}

interface PlainResult {
  _meta?: Record<string, unknown>;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const RESULT_KEYS = new Set(["content", "structuredContent", "isError", "_meta"]);

/** The result, when it is of the shape rendered here: text blocks, object data, our own meta. */
function plainResult(r: Record<string, unknown>): PlainResult | null {
  if (!keysWithin(r, RESULT_KEYS)) return null;
  const { content, structuredContent, isError, _meta } = r;
  if (!Array.isArray(content)) return null;
  for (const block of content) {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") {
      return null;
    }
    if (Object.keys(block).length !== 2) return null;
  }
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return null;
  if (isError !== undefined && typeof isError !== "boolean") return null;
  if (_meta !== undefined) {
    if (!isPlainObject(_meta)) return null;
    // Keys the SDK's result schemas type (progress, tasks, serverInfo) are its business.
    for (const k of Object.keys(_meta)) {
      if (k === "progressToken" || k.startsWith("io.modelcontextprotocol/")) return null;
    }
  }
  return r as unknown as PlainResult;
}

/**
 * A task handle (`CreateTaskResult`, tasks extension): the task's fields, `resultType: "task"`,
 * then the `serverInfo` stamp every 2026-07-28 result carries. The SDK has no form for it (its
 * `McpServer` would check it as a `CallToolResult`), so it is only ever answered from here.
 */
function renderTask(call: PlainCall, task: Record<string, unknown>): string {
  const result = { ...task, resultType: "task", _meta: { [SERVER_INFO_META_KEY]: SERVER_INFO } };
  return JSON.stringify({ result, jsonrpc: "2.0", id: call.id });
}

/**
 * The SDK's wire form of a result: the keys in its result schemas' order (`_meta`, `content`,
 * `structuredContent`, `isError`), then on 2026-07-28 the `resultType` default and the
 * `serverInfo` stamp (merged into our `_meta`, or appended as a `_meta` of its own).
 */
function render(call: PlainCall, r: PlainResult): string {
  const result: Record<string, unknown> = {};
  if (r._meta !== undefined) result._meta = r._meta;
  result.content = r.content.map((b) => ({ type: "text", text: b.text }));
  if (r.structuredContent !== undefined) result.structuredContent = r.structuredContent;
  if (r.isError !== undefined) result.isError = r.isError;
  if (call.era === "modern") {
    result.resultType = "complete";
    result._meta = { ...r._meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  }
  const message = JSON.stringify({ result, jsonrpc: "2.0", id: call.id });
  return call.era === "modern" ? message : `event: message\ndata: ${message}\n\n`;
}
