/**
 * How an agent finds the service on its own (issue 33 item 4):
 *
 * - `/.well-known/mcp/server-card.json` (and `/.well-known/mcp/server-card`): the MCP Server Card
 *   of SEP-2127, built from the registry's `server.json` (`serverJsonFor`, so the two cannot drift:
 *   name, title, description, version, website and remotes are the same values), with what a card
 *   adds: each remote's protocol versions and authentication, and the server's capabilities. The
 *   tools are left out (optional in the card): `tools/list` is the one place they are described.
 * - `/.well-known/api-catalog` (RFC 9727): a linkset (RFC 9264) anchored at the API, pointing at
 *   the OpenAPI document (`service-desc`), the agent docs (`service-doc`), the status
 *   (`status`) and the MCP server card; HEAD answers the `Link` header only.
 * - `/status`: a small public liveness answer, the catalog's `status` link.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv, Services } from "./env.ts";
import { MCP_PATH } from "./mcp/docs.ts";
import { serverJsonFor } from "./mcp/route.ts";
import { MCP_SERVER_VERSION, SERVER_INFO } from "./mcp/server.ts";
import { TASKS_EXTENSION } from "./mcp/task_wire.ts";

export const SERVER_CARD_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/** The revisions `/mcp` answers (the 2026-07-28 one, and the 2025 ones through `initialize`). */
export const MCP_PROTOCOL_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"];
export const API_CATALOG_PROFILE = "https://www.rfc-editor.org/info/rfc9727";

/** The MCP Server Card (SEP-2127) of this deployment, in step with `/server.json`. */
export function serverCardFor(baseUrl: string) {
  const entry = serverJsonFor(baseUrl);
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: entry.name,
    version: entry.version,
    description: entry.description,
    title: entry.title,
    websiteUrl: entry.websiteUrl,
    remotes: entry.remotes.map((r) => ({
      ...r,
      supportedProtocolVersions: MCP_PROTOCOL_VERSIONS,
      // Keyless calls reach signup, plans and docs; an API key (bearer) or OAuth unlock the rest.
      authentication: { required: false, schemes: ["bearer", "oauth2"] },
    })),
    capabilities: {
      tools: { listChanged: false },
      resources: { listChanged: false },
      prompts: { listChanged: false },
      extensions: { [TASKS_EXTENSION]: {} },
    },
    _meta: {
      "com.serpwright/serverInfo": { name: SERVER_INFO.name, version: MCP_SERVER_VERSION },
      "com.serpwright/openapi": `${baseUrl}/v1/openapi.json`,
    },
  };
}

/** The API catalog (RFC 9727) of this deployment: one linkset entry for the API. */
export function apiCatalogFor(baseUrl: string) {
  return {
    linkset: [{
      anchor: `${baseUrl}/v1`,
      "service-desc": [{ href: `${baseUrl}/v1/openapi.json`, type: "application/openapi+json" }],
      "service-doc": [
        { href: `${baseUrl}/docs/agents`, type: "text/html" },
        { href: `${baseUrl}/llms.txt`, type: "text/plain" },
      ],
      status: [{ href: `${baseUrl}/status`, type: "application/json" }],
      "service-meta": [
        { href: `${baseUrl}/.well-known/mcp/server-card.json`, type: "application/json" },
        { href: `${baseUrl}/server.json`, type: "application/json" },
      ],
    }, {
      anchor: `${baseUrl}${MCP_PATH}`,
      "service-desc": [
        { href: `${baseUrl}/.well-known/mcp/server-card.json`, type: "application/json" },
      ],
      "service-doc": [{ href: `${baseUrl}/docs/agents#mcp`, type: "text/html" }],
    }],
  };
}

export function discoveryRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const baseUrl = s.deps.config.publicBaseUrl;
  const card = JSON.stringify(serverCardFor(baseUrl), null, 2);
  const json = { "Content-Type": "application/json", "Cache-Control": "public, max-age=3600" };
  for (const path of ["/.well-known/mcp/server-card.json", "/.well-known/mcp/server-card"]) {
    app.get(path, (c) => c.body(card, 200, json));
  }
  const catalogUrl = `${baseUrl}/.well-known/api-catalog`;
  const catalog = JSON.stringify(apiCatalogFor(baseUrl), null, 2);
  const linkset = {
    "Content-Type": `application/linkset+json; profile="${API_CATALOG_PROFILE}"`,
    "Cache-Control": "public, max-age=3600",
    Link: `<${catalogUrl}>; rel="api-catalog"`,
  };
  app.on("HEAD", "/.well-known/api-catalog", (c) => c.body(null, 200, linkset));
  app.get("/.well-known/api-catalog", (c) => c.body(catalog, 200, linkset));
  app.get(
    "/status",
    (c) =>
      c.json({ status: "ok", service: SERVER_INFO.name, mcp: `${baseUrl}${MCP_PATH}` }, 200, {
        "Cache-Control": "no-store",
      }),
  );
}
