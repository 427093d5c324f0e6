// Baseline: the MCP SDK alone on Hono (createMcpHandler, one tool answering constant structured
// content, no auth, no KV): the SDK's own cost of a tool call, which no server built on it avoids.
import { Hono } from "hono";
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";

const output = z.object({ ok: z.boolean() });
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: "floor", version: "1.0.0" });
  server.registerTool("account", { description: "constant", outputSchema: output }, () => ({
    content: [{ type: "text", text: '{"ok":true}' }],
    structuredContent: { ok: true },
  }));
  return server;
});
const app = new Hono();
app.get("/", (c) => c.json({ ok: true }));
app.all("/mcp", (c) => handler.fetch(c.req.raw));
Deno.serve(
  {
    port: Number(Deno.env.get("PORT")),
    hostname: "127.0.0.1",
    onListen: () => console.log("ready"),
  },
  app.fetch,
);
