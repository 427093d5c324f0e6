/**
 * `/mcp`: the service as a remote MCP server (Streamable HTTP) on the same Hono app and process as
 * `/v1`. Stateless: every request is served on its own for its caller, nothing is pinned to a
 * process or a session, so several processes and Deno Deploy serve it as they serve `/v1`.
 * 2026-07-28 requests and 2025-era ones (2025-11-25, 2025-06-18: `initialize`, then stateless
 * calls) are both answered by the SDK's `createMcpHandler`, from a server built per request,
 * except a plain `tools/call`: that one is answered here, with the SDK's bytes, without a server
 * (fast_call.ts; the SDK's per-request server cost several times the tool itself).
 *
 * The HTTP rules are `/v1`'s: the bearer is resolved by the same `identify` middleware (same key
 * cache), every request spends the same rate-limit budget with the same `X-RateLimit-*` headers,
 * bodies are capped at 64 KiB, and HTTP-level errors use the `/v1` error shape. Two MCP-specific
 * choices: a present but unusable key or OAuth access token is refused with 401 and a
 * `WWW-Authenticate: Bearer` challenge naming the RFC 9728 metadata (challenge.ts), and a
 * `tools/call` over the rate limit is answered as a `rate_limited` tool error the model can act
 * on (with `Retry-After`), while other methods over the limit get the 429.
 *
 * One HTTP request is one JSON-RPC message, so one request spends one rate-limit unit and runs at
 * most one tool: a JSON-RPC batch (an array body; batching left MCP in 2025-06-18, and every
 * revision served here is that or later) is refused with 400 `Invalid Request` before anything in
 * it runs. The server pushes nothing (stateless, no notifications), so no stream is held open for
 * anyone: a keyless `subscriptions/listen` is 401 like a bad key, a keyed one 404 `Method not
 * found`, and a GET (the 2025 standalone stream) is the SDK's 405 for everyone, the spec's answer
 * for "no stream here" (a 401 there would send an OAuth-capable host into an authorization flow
 * before an anonymous signup).
 */
import {
  type AuthInfo,
  createMcpHandler,
  validateHostHeader,
  validateOriginHeader,
} from "@modelcontextprotocol/server";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../../domain/platform/mod.ts";
import type { AppEnv, Services } from "../env.ts";
import { identify } from "../middleware/auth.ts";
import { after } from "../middleware/coarse_timer.ts";
import { MAX_BODY_BYTES, readTextCapped } from "../middleware/json_body.ts";
import { rateLimit } from "../middleware/rate_limit.ts";
import { clientIp } from "../middleware/request_id.ts";
import serverJson from "../../server.json" with { type: "json" };
import { callerOf, type McpCaller, toAuthInfo } from "./caller.ts";
import { bearerChallenge, needsCredential } from "./challenge.ts";
import { MCP_PATH } from "./docs.ts";
import {
  callFast,
  type FastAnswer,
  JSON_HEADERS,
  type Outcome,
  type PlainCall,
  plainToolCall,
  servesFast,
  SSE_HEADERS,
  type ToolSpec,
} from "./fast_call.ts";
import { buildMcpServer, buildReplayServer, MCP_SERVER_VERSION, toolFor } from "./server.ts";

const LOCAL_HOSTS = ["localhost", "127.0.0.1", "[::1]"];
const BEARER = /^Bearer (\S+)$/;
const BATCH_REFUSED = "Invalid Request: JSON-RPC batches are not accepted (MCP dropped them in " +
  "2025-06-18); send one message per HTTP request";
const LISTEN_REFUSED = "Method not found: subscriptions/listen (this server sends no " +
  "notifications; poll with the tools instead)";

/** How long a 2025-era fast call may run before its answer becomes a stream (see answerFast). */
const LEGACY_HOLD_MS = 1_000;
/** The 2025 transport's keep-alive interval on an open stream (the SDK's default). */
const KEEP_ALIVE_MS = 15_000;

/** What the SDK handler's factory builds a replay server from (see fast_call.ts). */
interface Replay {
  tool: ToolSpec;
  outcome: Outcome;
}

function isEventStream(res: Response): boolean {
  return (res.headers.get("content-type") ?? "").startsWith("text/event-stream");
}

/**
 * The SSE stream of a call that is still running: a keep-alive comment every KEEP_ALIVE_MS, then
 * the call's `message` event, then the end; the client going away stops the keep-alives.
 */
function heldStream(event: Promise<string>, signal: AbortSignal): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let keepAlive: ReturnType<typeof setInterval> | undefined;
  const stop = () => clearInterval(keepAlive);
  return new ReadableStream({
    start(controller) {
      keepAlive = setInterval(() => {
        try {
          controller.enqueue(encoder.encode(": keepalive\n\n"));
        } catch {
          stop();
        }
      }, KEEP_ALIVE_MS);
      signal.addEventListener("abort", stop, { once: true });
      event.then((text) => {
        stop();
        try {
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
        } catch { /* the client went away */ }
      }, (err) => {
        stop();
        try {
          controller.error(err);
        } catch { /* the client went away */ }
      });
    },
    cancel: stop,
  });
}

/** A JSON-RPC error answered by the route itself, through Hono (request id, rate-limit headers). */
function jsonRpcError(
  c: Context<AppEnv>,
  status: 400 | 404,
  code: number,
  message: string,
  id: string | number | null,
) {
  return c.json({ jsonrpc: "2.0", error: { code, message }, id }, status);
}

/** The registry entry, pointing at this deployment's endpoint. */
export function serverJsonFor(baseUrl: string) {
  return {
    ...serverJson,
    version: MCP_SERVER_VERSION,
    websiteUrl: `${baseUrl}/docs/agents`,
    remotes: serverJson.remotes.map((r) => ({ ...r, url: `${baseUrl}${MCP_PATH}` })),
  };
}

export function mcpRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const baseUrl = s.deps.config.publicBaseUrl;
  const publicHost = new URL(baseUrl).hostname;
  const handler = createMcpHandler(({ authInfo, era }) => {
    const replay = authInfo?.extra?.replay as Replay | undefined;
    return replay
      ? buildReplayServer(replay.tool, replay.outcome)
      : buildMcpServer(s, callerOf(authInfo), era);
  }, { maxRequestBodySize: MAX_BODY_BYTES });
  // API keys and, here only, OAuth access tokens (resolved to their approving key's principal).
  const whoIsCalling = identify(s, { tokens: true });
  const challenge = bearerChallenge(baseUrl);
  const limit = rateLimit(s);
  // DNS rebinding only threatens a server on a local address: there the Host must be local too.
  // Browser origins are checked everywhere (requests without Origin, i.e. non-browser clients, pass).
  // (The checks of @modelcontextprotocol/hono's hostHeaderValidation and originValidation, as one
  // middleware, with the verdict on this deployment's Host remembered instead of parsed each time.)
  const isLocal = LOCAL_HOSTS.includes(publicHost) ||
    LOCAL_HOSTS.includes(`[${publicHost}]`);
  const allowedOrigins = [...new Set([publicHost, ...LOCAL_HOSTS])];
  const hostVerdicts = new Map<string | undefined, ReturnType<typeof validateHostHeader>>();
  const refuse = (c: Context<AppEnv>, message: string) =>
    c.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, 403);
  app.use(MCP_PATH, async function mcpGuards(c: Context<AppEnv>, next) {
    if (isLocal) {
      const host = c.req.header("host");
      let verdict = hostVerdicts.get(host);
      if (verdict === undefined) {
        verdict = validateHostHeader(host, LOCAL_HOSTS);
        if (hostVerdicts.size >= 64) hostVerdicts.clear();
        hostVerdicts.set(host, verdict);
      }
      if (!verdict.ok) return refuse(c, verdict.message);
    }
    const origin = validateOriginHeader(c.req.header("origin"), allowedOrigins);
    if (!origin.ok) return refuse(c, origin.message);
    await next();
  });
  app.on(["GET", "POST", "DELETE"], MCP_PATH, async (c: Context<AppEnv>) => {
    // `/v1`'s identification and limiter, wrapped around the exchange as they wrap a `/v1` route,
    // so the limiter finds the exchange's response after `next` (calling them with an empty
    // `next` made Hono build and copy a placeholder response on every request).
    await whoIsCalling(c, async () => {
      let served = false;
      try {
        await limit(c, async () => {
          served = true;
          c.res = await serve(c, null);
        });
      } catch (err) {
        if (served || !(err instanceof ApiError) || err.code !== "rate_limited") throw err;
        c.res = await serve(c, err);
      }
    });
    return c.res;
  });

  async function serve(c: Context<AppEnv>, rateLimited: ApiError | null): Promise<Response> {
    let body: string | undefined;
    let parsed: unknown = undefined;
    if (c.req.method === "POST") {
      // The body rules of `/v1`: 64 KiB, and the whole body within REQUEST_BODY_TIMEOUT_MS (408).
      body = await readTextCapped(c.req.raw, MAX_BODY_BYTES, s.deps.config.bodyTimeoutMs);
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined; // the SDK answers its own parse error
      }
    }
    // Nothing in a batch runs: the SDK's 2025-era transport would run every element of it.
    if (Array.isArray(parsed)) return jsonRpcError(c, 400, -32600, BATCH_REFUSED, null);
    const message = parsed as
      | { method?: unknown; id?: unknown; params?: { name?: unknown } }
      | undefined;
    const toolCall = message?.method === "tools/call" && typeof message.params?.name === "string"
      ? message.params.name
      : null;
    if (rateLimited) {
      // Only a tool call can carry the refusal to the model; everything else is the plain 429.
      if (toolCall === null || c.get("authError")) throw rateLimited;
      for (const [k, v] of Object.entries(rateLimited.headers ?? {})) c.header(k, v);
    }

    const authError = c.get("authError");
    if (authError) {
      const e = authError instanceof ApiError
        ? authError
        : new ApiError("unauthorized", "Unknown API key");
      throw new ApiError(e.code, e.message, e.extra, {
        "WWW-Authenticate": bearerChallenge(baseUrl, { description: e.code }),
      });
    }
    // A keyless call of a tool only signed-in callers have: the 401 that starts an OAuth flow.
    if (!c.get("principal") && toolCall !== null && needsCredential(toolCall)) {
      throw new ApiError(
        "unauthorized",
        `The tool '${toolCall}' needs a credential: sign in through OAuth (see WWW-Authenticate) ` +
          "or send `Authorization: Bearer <API_KEY>`",
        undefined,
        { "WWW-Authenticate": challenge },
      );
    }

    const principal = c.get("principal");
    const listen = message?.method === "subscriptions/listen";
    if (!principal && listen) {
      throw new ApiError(
        "unauthorized",
        "An API key is required for this request: send `Authorization: Bearer <API_KEY>`",
        undefined,
        { "WWW-Authenticate": challenge },
      );
    }
    if (listen) {
      const id = typeof message.id === "string" || typeof message.id === "number"
        ? message.id
        : null;
      return jsonRpcError(c, 404, -32601, LISTEN_REFUSED, id);
    }
    const caller: McpCaller = {
      principal,
      bearer: principal ? BEARER.exec(c.req.header("authorization") ?? "")?.[1] ?? null : null,
      ip: clientIp(c, s.deps.config),
      rateLimited,
      toolCall,
    };
    const authInfo = toAuthInfo(caller);

    // A plain tool call is answered here, in the SDK's bytes (fast_call.ts); the rest by the SDK.
    const call = toolCall === null ? null : plainToolCall(parsed, c.req.raw.headers);
    const tool = call ? toolFor(s, caller) : null;
    if (call && tool && servesFast(tool)) return await answerFast(c, call, tool, authInfo, parsed);

    // With the parsed body handed over, the SDK does not read the request's (spent) body again.
    const request = body === undefined || parsed !== undefined
      ? c.req.raw
      : new Request(c.req.raw.url, {
        method: "POST",
        headers: c.req.raw.headers,
        body,
        signal: c.req.raw.signal,
      });
    const res = await handler.fetch(request, {
      authInfo,
      ...(parsed !== undefined ? { parsedBody: parsed } : {}),
    });
    // Through Hono, so the request id and rate-limit headers set above are merged in.
    return c.newResponse(res.body, res);
  }

  async function answerFast(
    c: Context<AppEnv>,
    call: PlainCall,
    tool: ToolSpec,
    authInfo: AuthInfo,
    parsed: unknown,
  ) {
    const answer = callFast(call, tool, authInfo, c.req.raw);
    /** The SDK's answer to what the call did, from a server that replays it. */
    const replay = (outcome: Outcome) =>
      handler.fetch(c.req.raw, {
        authInfo: { ...authInfo, extra: { ...authInfo.extra, replay: { tool, outcome } } },
        parsedBody: parsed,
      });
    let done: FastAnswer | null;
    if (call.era === "modern") {
      done = await answer;
    } else {
      // The 2025 transport answers a POST with an SSE stream opened at once, with keep-alives
      // while the call runs: a call still running after LEGACY_HOLD_MS gets that stream.
      let hold: (v: null) => void = () => {};
      const held = new Promise<null>((r) => hold = r);
      const cancel = after(LEGACY_HOLD_MS, () => hold(null));
      done = await Promise.race([answer, held]).finally(cancel);
      if (done === null) {
        const event = answer.then(async (a) => {
          if ("text" in a) return a.text;
          const res = await replay(a.replay);
          return isEventStream(res) ? await res.text() : "";
        });
        return c.body(heldStream(event, c.req.raw.signal), 200, SSE_HEADERS);
      }
    }
    if ("text" in done) {
      return c.body(done.text, 200, call.era === "modern" ? JSON_HEADERS : SSE_HEADERS);
    }
    const res = await replay(done.replay);
    return c.newResponse(res.body, res);
  }

  const registryEntry = JSON.stringify(serverJsonFor(baseUrl), null, 2);
  app.get(
    "/server.json",
    (c) => c.body(registryEntry, 200, { "Content-Type": "application/json" }),
  );
}
