/**
 * The `WWW-Authenticate` challenges of `/mcp` (RFC 6750 §3, RFC 9728 §5.1): every 401 names the
 * protected-resource metadata and the scope, so a host that holds no credential (the browser-based
 * "add a connector" screens) can start the OAuth flow from the answer alone. A host with an API
 * key never needs it.
 *
 * Which requests need a credential: a present but unusable one (bad key, expired token), a keyless
 * `subscriptions/listen`, and a keyless `tools/call` of a tool that exists only for signed-in
 * callers. Everything else stays public (`initialize`, `tools/list` with its public tools, the
 * signup, plans and docs tools), as before OAuth.
 *
 * @module
 */
import { OAUTH_SCOPE, resourceMetadataUrl } from "../../domain/identity/mod.ts";
import type { ToolDef } from "./kit.ts";
import { TOOL_DEFS } from "./server.ts";

/** Tool names only a signed-in caller has (no public or anonymous tool shares the name). */
const KEYED_ONLY: ReadonlySet<string> = (() => {
  const defs = TOOL_DEFS as ToolDef[];
  const open = new Set(defs.filter((d) => d.access !== "key").map((d) => d.name));
  return new Set(defs.filter((d) => d.access === "key" && !open.has(d.name)).map((d) => d.name));
})();

/** True when a keyless call of `tool` should be answered 401 with a challenge. */
export function needsCredential(tool: string): boolean {
  return KEYED_ONLY.has(tool);
}

/** RFC 6750 quoted-string: no quote or backslash survives unescaped. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, "\\$&").replace(/[\r\n]/g, " ")}"`;
}

/**
 * The challenge value: `Bearer resource_metadata="…", scope="mcp"`, with `error="invalid_token"`
 * and a description when a credential was presented and refused.
 */
export function bearerChallenge(baseUrl: string, refused?: { description: string }): string {
  const params = [
    `resource_metadata=${quoted(resourceMetadataUrl(baseUrl))}`,
    `scope=${quoted(OAUTH_SCOPE)}`,
  ];
  if (refused) {
    params.push(`error="invalid_token"`, `error_description=${quoted(refused.description)}`);
  }
  return `Bearer ${params.join(", ")}`;
}
