/**
 * The MCP server one request is served by: built per request (stateless, so any process can serve
 * any request) for its caller, from tool definitions compiled once per process. A plain tool call
 * needs no server: `toolFor` hands the route the one tool it reaches (see fast_call.ts).
 */
import { MCP_SERVER_VERSION, SERVER_INFO } from "./server_info.ts";
import { McpServer, ResourceNotFoundError, ResourceTemplate } from "@modelcontextprotocol/server";
import { z } from "zod";
import { keyActor } from "../../app/actor.ts";
import { execute } from "../../app/operation.ts";
import { getAuditOp } from "../../app/operations/audits.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import { activeShareUrl } from "../../domain/shares/mod.ts";
import type { Services } from "../env.ts";
import type { McpCaller } from "./caller.ts";
import type { Outcome, ToolSpec } from "./fast_call.ts";
import {
  errorsMarkdown,
  hostConfigSnippet,
  quickstartMarkdown,
  SERVER_INSTRUCTIONS,
} from "./docs.ts";
import { compileTools, jsonResult, registerTools, type ToolDef } from "./kit.ts";
import { TASKS_EXTENSION } from "./task_wire.ts";
import {
  APP_RESOURCE_META,
  appHtml,
  ARTICLE_APP_URI,
  AUDIT_APP_URI,
  UI_MIME_TYPE,
} from "./apps.ts";
import { registerTaskMethods } from "./tasks.ts";
import { accountTool, apiKeysTool, signupTool } from "./tools/accounts.ts";
import { billingTool, publicBillingTool } from "./tools/billing.ts";
import { articlesTool, auditsTool } from "./tools/jobs.ts";
import { projectsTool } from "./tools/projects.ts";
import { scheduleTool } from "./tools/schedule.ts";
import { webhooksTool } from "./tools/webhooks.ts";

export { MCP_SERVER_VERSION, SERVER_INFO };

const DocsInput = z.object({
  topic: z.enum(["quickstart", "errors", "connect"]).describe(
    "quickstart: the flow in tool calls. errors: each error code and what to do. connect: " +
      "the MCP host configuration.",
  ),
}).strict();

const docsTool: ToolDef<typeof DocsInput> = {
  name: "docs",
  title: "Serpwright docs",
  description: "How Serpwright works, for an agent: the quickstart in tool calls, the error " +
    "codes and what to do about each, or how to configure an MCP host with an API key.",
  input: DocsInput,
  output: z.object({ topic: z.string(), url: z.string() }),
  access: "public",
  annotations: { readOnlyHint: true, idempotentHint: true },
  run(args, ctx) {
    const b = ctx.baseUrl;
    const docs = {
      quickstart: { markdown: quickstartMarkdown(b), url: `${b}/docs/agents#mcp` },
      errors: { markdown: errorsMarkdown(b), url: `${b}/docs/errors` },
      connect: {
        markdown: "Add this to the MCP host's configuration (replace the key with yours):\n\n" +
          "```json\n" + hostConfigSnippet(b) + "\n```\n",
        url: `${b}/docs/agents#mcp`,
      },
    }[args.topic];
    // The Markdown is the text; the structured result names the page, not a second copy.
    return Promise.resolve({
      structured: { topic: args.topic, url: docs.url },
      summary: docs.markdown,
      rest: `GET ${docs.url}`,
    });
  },
};

/**
 * Every tool, in the order `tools/list` shows them (this declared order, the same on every
 * process and every request: hosts cache the list and models' prompt caches hit); which are
 * listed depends on the key.
 */
export const TOOL_DEFS = [
  signupTool,
  accountTool,
  apiKeysTool,
  projectsTool,
  auditsTool,
  scheduleTool,
  articlesTool,
  publicBillingTool,
  billingTool,
  webhooksTool,
  docsTool,
] as unknown as ToolDef[];

const TOOLS = compileTools(TOOL_DEFS);
const APP_PAGES = { audit: appHtml("audit"), article: appHtml("article") };

const AuditSiteArgs = z.object({ url: z.string().describe("The site to audit") });
const WriteArticleArgs = z.object({
  topic: z.string().describe("What the article is about"),
  project_id: z.string().optional().describe("The project, if it exists already"),
});

/**
 * The tool a `tools/call` of `caller` reaches, exactly as `buildMcpServer` would register it
 * (same listing rules, same callback), captured from the registration instead of building a
 * server; null when the call reaches no tool of this caller (the SDK then answers "not found").
 */
export function toolFor(services: Services, caller: McpCaller): ToolSpec | null {
  const name = caller.toolCall;
  if (name === null) return null;
  let found: ToolSpec | null = null;
  const capture = {
    registerTool(n: string, config: ToolSpec["config"], callback: ToolSpec["callback"]) {
      if (n === name && typeof callback === "function") found = { name: n, config, callback };
    },
  };
  try {
    registerTools(capture as unknown as McpServer, TOOLS, services, caller);
  } catch {
    return null; // registration wants more of the server than registerTool: build one
  }
  return found;
}

/**
 * A server whose one tool does what a fast call did (sends its notifications, then returns or
 * throws the same), so the SDK renders the answer of an unusual call without running it again.
 */
export function buildReplayServer(tool: ToolSpec, outcome: Outcome): McpServer {
  const server = new McpServer(SERVER_INFO, { instructions: SERVER_INSTRUCTIONS });
  server.registerTool(
    tool.name,
    tool.config as never,
    (async (_args: unknown, sdk: { mcpReq: { notify(n: unknown): Promise<void> } }) => {
      if (outcome.kind === "unreached") throw new Error(`${tool.name} was not run`);
      for (const n of outcome.notifications) await sdk.mcpReq.notify(n);
      if (outcome.kind === "threw") throw outcome.error;
      return outcome.result;
    }) as never,
  );
  return promiseNoPushes(server);
}

/**
 * `server/discover` is the same for every caller of a deployment: shared caches may keep it an
 * hour. Lists depend on the key (keyless callers see three tools) and stay private.
 */
const CACHE_HINTS = { "server/discover": { ttlMs: 3_600_000, cacheScope: "public" as const } };

/**
 * Builds the server for one request of `caller`, in the protocol era the SDK serves it in. A
 * 2026-07-28 server also offers the tasks extension (tasks.ts): advertised in `server/discover`
 * and answering `tasks/get`, `tasks/cancel` and `tasks/update`; 2025-era clients keep the
 * start-and-poll tools.
 */
export function buildMcpServer(
  services: Services,
  caller: McpCaller,
  era: "modern" | "legacy" = "modern",
): McpServer {
  const baseUrl = services.deps.config.publicBaseUrl;
  const server = new McpServer(SERVER_INFO, {
    instructions: SERVER_INSTRUCTIONS,
    cacheHints: CACHE_HINTS,
  });
  registerTools(server, TOOLS, services, caller);
  if (era === "modern") {
    server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    registerTaskMethods(server, services, caller);
  }
  // A tool call reaches nothing else: the resources and prompts are built for other requests.
  if (caller.toolCall !== null) return promiseNoPushes(server);

  server.registerResource("quickstart", "serpwright://docs/quickstart", {
    title: "Quickstart (MCP)",
    description: "The whole flow in tool calls, and how to connect with a key",
    mimeType: "text/markdown",
  }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/markdown", text: quickstartMarkdown(baseUrl) }],
  }));
  server.registerResource("errors", "serpwright://docs/errors", {
    title: "Error codes",
    description: "Every error.code with its HTTP status, meaning and what to do",
    mimeType: "text/markdown",
  }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/markdown", text: errorsMarkdown(baseUrl) }],
  }));
  const principal = caller.principal;
  if (principal) {
    // The MCP Apps the audits and articles tools link (apps.ts): the same page for every caller.
    for (
      const [name, uri, kind, title] of [
        ["audit_report_app", AUDIT_APP_URI, "audit", "Audit report (MCP App)"],
        ["article_preview_app", ARTICLE_APP_URI, "article", "Article preview (MCP App)"],
      ] as const
    ) {
      server.registerResource(name, uri, {
        title,
        description: `Renders the ${kind} a tool result carries, for hosts with MCP Apps`,
        mimeType: UI_MIME_TYPE,
        _meta: APP_RESOURCE_META,
      }, (u) => ({
        contents: [{
          uri: u.href,
          mimeType: UI_MIME_TYPE,
          text: APP_PAGES[kind],
          _meta: APP_RESOURCE_META,
        }],
      }));
    }
    server.registerResource(
      "audit_report",
      new ResourceTemplate("serpwright://audits/{audit_id}", { list: undefined }),
      {
        title: "Audit report",
        description: "An audit of this account as JSON: status, score and summary, the URL of " +
          "its HTML report (report_url, with the key) and of its share link (share_url, for a " +
          "human without a key; null until the audits tool's share action makes one)",
        mimeType: "application/json",
      },
      async (uri, vars) => {
        try {
          // The get operation of `GET /v1/audits/{auditId}` and the audits tool's get.
          const { body: result } = await execute(
            services,
            getAuditOp,
            keyActor(principal, caller.ip),
            {
              params: { auditId: String(vars.audit_id) },
              query: {},
              body: {},
            },
          );
          const audit = jsonResult(result, `${baseUrl}/v1/audits/${vars.audit_id}`);
          // The report it links: the keyed HTML page, and the newest live share link (one a
          // human opens without a key) when there is one to repeat.
          const links = {
            report_url: `${baseUrl}/v1/audits/${audit.audit_id}/report`,
            share_url: await activeShareUrl(services.deps, principal.account.id, audit.audit_id),
          };
          return {
            contents: [{
              uri: uri.href,
              mimeType: "application/json",
              text: JSON.stringify({ ...audit, ...links }, null, 2),
            }],
          };
        } catch (err) {
          if (err instanceof ApiError && err.code === "not_found") {
            throw new ResourceNotFoundError(uri.href);
          }
          throw err;
        }
      },
    );
  }

  server.registerPrompt("audit_site", {
    title: "Audit a site",
    description: "Run a technical SEO audit of a site and explain what to fix first",
    argsSchema: AuditSiteArgs,
  }, ({ url }) => ({
    messages: [{
      role: "user",
      content: {
        type: "text",
        text: `Audit ${url} with the Serpwright tools. List the projects and reuse the one for ` +
          `this site, or create it. Start an audit with wait 60 and, while it runs, call audits get ` +
          `with wait 60 until it completes. Then give the score and, for the top issues, what ` +
          `each means and what to fix first, and the report's link (audits share for a human). ` +
          `If a tool answers an error, act on its error.code.`,
      },
    }],
  }));
  server.registerPrompt("write_article", {
    title: "Write a draft article",
    description: "Generate a draft SEO article for a project and hand back the markdown",
    argsSchema: WriteArticleArgs,
  }, ({ topic, project_id }) => ({
    messages: [{
      role: "user",
      content: {
        type: "text",
        text: `Write a draft SEO article about "${topic}" with the Serpwright tools` +
          (project_id ? ` for project ${project_id}` : " (list the projects to pick the site)") +
          `. Start it with articles start, then call articles get with wait 60 until it is ready, then ` +
          `show the title, QA score and the markdown. It is a draft: nothing is published.`,
      },
    }],
  }));
  return promiseNoPushes(server);
}

/**
 * The SDK advertises `listChanged` for every registered kind; this server never pushes a change
 * (stateless, and `/mcp` refuses `subscriptions/listen`), so it promises none.
 */
function promiseNoPushes(server: McpServer): McpServer {
  const caps = server.server.getCapabilities();
  for (const kind of ["tools", "resources", "prompts"] as const) {
    if (caps[kind]) server.server.registerCapabilities({ [kind]: { listChanged: false } });
  }
  return server;
}
