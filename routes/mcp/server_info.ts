/**
 * The MCP server's identity, apart from the server that registers the tools, so the fast-call path
 * (fast_call.ts) names it without importing the server back.
 *
 * @module
 */

/** The server's version in `serverInfo` and server.json; the tool surface's, not the API's. */
export const MCP_SERVER_VERSION = "1.0.0";

/** The server's identity: `serverInfo` in `initialize` and on every 2026-07-28 result. */
export const SERVER_INFO = {
  name: "serpwright",
  title: "Serpwright SEO automation",
  version: MCP_SERVER_VERSION,
};
