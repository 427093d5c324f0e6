/**
 * Connects the MCP SDK's own client to `/mcp` of a running test app over HTTP, in the era asked
 * for, with an optional API key and a client IP of its own (TRUST_PROXY is on in tests).
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { freshIp, type TestApp } from "../helpers/app.ts";

export type Era = "modern" | "2025-11-25" | "2025-06-18";

export interface McpOptions {
  key?: string;
  era?: Era;
  ip?: string;
}

export async function connectMcp(app: TestApp | string, opts: McpOptions = {}): Promise<Client> {
  const base = typeof app === "string" ? app : app.url;
  const era = opts.era ?? "modern";
  const headers: Record<string, string> = { "x-forwarded-for": opts.ip ?? freshIp() };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const client = new Client(
    { name: "serpwright-tests", version: "1.0.0" },
    era === "modern"
      ? { versionNegotiation: { mode: { pin: "2026-07-28" } } }
      : { supportedProtocolVersions: [era] },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

/** A tool call's structured result; throws with the text when it is a tool error. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) {
    throw new Error(`${name} failed: ${JSON.stringify(res.content)}`);
  }
  return res.structuredContent;
}

/** A tool call's structured result and its text (the compact rendering); throws on a tool error. */
export async function callText(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ structured: any; text: string }> {
  const res = await client.callTool({ name, arguments: args });
  if (res.isError) throw new Error(`${name} failed: ${JSON.stringify(res.content)}`);
  // deno-lint-ignore no-explicit-any
  const text = (res.content as any[]).map((c) => c.text).join("\n");
  return { structured: res.structuredContent, text };
}

/** A tool call expected to fail: returns its `error.code` after checking the error shape. */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ code: string; body: any; text: string }> {
  const res = await client.callTool({ name, arguments: args });
  if (!res.isError) throw new Error(`${name} succeeded: ${JSON.stringify(res.structuredContent)}`);
  // deno-lint-ignore no-explicit-any
  const body = (res._meta as any)?.["com.serpwright/error"];
  if (res.structuredContent !== undefined) {
    throw new Error("tool errors carry no structuredContent");
  }
  const e = body?.error;
  if (
    !e || typeof e.code !== "string" || typeof e.message !== "string" ||
    !String(e.doc_url).endsWith(`#${e.code}`)
  ) {
    throw new Error(`not the error shape: ${JSON.stringify(res)}`);
  }
  // deno-lint-ignore no-explicit-any
  const text = (res.content as any[]).map((c) => c.text).join("\n");
  if (!text.startsWith(`Error ${e.code}: `)) {
    throw new Error(`text does not lead with the code: ${text}`);
  }
  if (JSON.stringify(JSON.parse(text.split("\n").at(-1)!)) !== JSON.stringify(body)) {
    throw new Error("the text's last line is not the error body");
  }
  return { code: e.code, body, text };
}

/**
 * One raw POST to `/mcp` of `body` (JSON), past the SDK: the status, the headers, and the answer's
 * JSON (an SSE answer's `data:` lines joined; null when it is not JSON) with its text.
 */
export async function postMcp(
  app: Pick<TestApp, "url">,
  body: unknown,
  headers: Record<string, string> = {},
  // deno-lint-ignore no-explicit-any
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(`${app.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const data = text.startsWith("event:") || text.startsWith("data:")
    ? text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("")
    : text;
  // deno-lint-ignore no-explicit-any
  let json: any = null;
  try {
    json = JSON.parse(data);
  } catch { /* not JSON */ }
  return { status: res.status, headers: res.headers, body: json, text };
}

export const MODERN = "2026-07-28";
/** Client capabilities declaring the tasks extension (`io.modelcontextprotocol/tasks`). */
export const TASKS_CAPS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** A 2026-07-28 request envelope (`params._meta`), with the client capabilities given. */
export function envelope(caps: Record<string, unknown> = {}) {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "serpwright-tests", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": caps,
  };
}

export interface ModernOptions {
  key?: string;
  /** The client capabilities of this one request. */
  caps?: Record<string, unknown>;
  /** Headers added to (or, with "", removed from) the standard ones. */
  headers?: Record<string, string>;
  ip?: string;
  id?: number | string;
}

/**
 * One stateless 2026-07-28 request, with no `initialize` before it: the envelope in `_meta` and
 * the standard headers (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` from `params.name`
 * or `params.taskId`).
 */
export function modern(
  app: Pick<TestApp, "url">,
  method: string,
  params: Record<string, unknown> = {},
  opts: ModernOptions = {},
) {
  const name = typeof params.name === "string"
    ? params.name
    : typeof params.taskId === "string"
    ? params.taskId
    : null;
  const headers: Record<string, string> = {
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...(name !== null ? { "mcp-name": name } : {}),
    "x-forwarded-for": opts.ip ?? freshIp(),
    ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
  };
  for (const [k, v] of Object.entries(opts.headers ?? {})) {
    if (v === "") delete headers[k];
    else headers[k] = v;
  }
  return postMcp(app, {
    jsonrpc: "2.0",
    id: opts.id ?? 1,
    method,
    params: { ...params, _meta: envelope(opts.caps) },
  }, headers);
}
