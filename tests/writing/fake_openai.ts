/**
 * A fake OpenAI-compatible server on 127.0.0.1 (port 0) speaking the real chat-completions wire
 * format. Each test scripts its replies; the server records every request it saw.
 */

export interface SeenRequest {
  path: string;
  auth: string | null;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** What a script returns for one request: a chat reply, or a raw HTTP error. */
export type Reply =
  | { content: string; finishReason?: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { delayMs: number; then: Reply };

export interface FakeOpenAI {
  baseURL: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
export function startFakeOpenAI(script: (body: any, index: number) => Reply): FakeOpenAI {
  const requests: SeenRequest[] = [];
  const aborter = new AbortController();
  const render = async (reply: Reply, body: { model?: string }): Promise<Response> => {
    if ("delayMs" in reply) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, reply.delayMs);
        aborter.signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        });
      });
      return render(reply.then, body);
    }
    if ("status" in reply) {
      return Response.json(
        reply.body ?? { error: { message: `fake error ${reply.status}`, type: "server_error" } },
        { status: reply.status, headers: reply.headers },
      );
    }
    return Response.json({
      id: `chatcmpl-${requests.length}`,
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model ?? "fake",
      choices: [{
        index: 0,
        message: { role: "assistant", content: reply.content },
        finish_reason: reply.finishReason ?? "stop",
      }],
      usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
    });
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: aborter.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
        return Response.json({ error: { message: "not found" } }, { status: 404 });
      }
      const body = await req.json();
      requests.push({ path: url.pathname, auth: req.headers.get("authorization"), body });
      return render(script(body, requests.length - 1), body);
    },
  );
  return {
    baseURL: `http://127.0.0.1:${server.addr.port}/v1`,
    requests,
    async close() {
      aborter.abort();
      await server.finished;
    },
  };
}

/** The JSON-schema name a request asked for (`article_outline`, `article_section`, …). */
// deno-lint-ignore no-explicit-any
export function schemaName(body: any): string {
  return body?.response_format?.json_schema?.name ?? body?.response_format?.type ?? "none";
}

/** Text of the last user message. */
// deno-lint-ignore no-explicit-any
export function userText(body: any): string {
  // deno-lint-ignore no-explicit-any
  const users = (body?.messages ?? []).filter((m: any) => m.role === "user");
  return users.at(-1)?.content ?? "";
}
