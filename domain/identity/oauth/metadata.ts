/**
 * The discovery documents: RFC 9728 protected-resource metadata for `/mcp` and RFC 8414
 * authorization-server metadata, both derived from the operator's `PUBLIC_BASE_URL` (the issuer
 * is that URL, so it must be what clients reach; behind a proxy set it to the public origin).
 *
 * @module
 */

/** The MCP endpoint's path (routes/mcp/docs.ts `MCP_PATH` serves the same). */
export const MCP_RESOURCE_PATH = "/mcp";

/** The one scope: everything the approving key may do over MCP. */
export const OAUTH_SCOPE = "mcp";

/** Where the authorization server's endpoints live, under the issuer. */
export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
  revoke: "/oauth/revoke",
} as const;

/** The canonical URI of the MCP server (RFC 8707 `resource`, the tokens' audience). */
export function mcpResourceUrl(baseUrl: string): string {
  return `${baseUrl}${MCP_RESOURCE_PATH}`;
}

/** The path-suffixed RFC 9728 metadata URL of `/mcp` (what the 401 challenge names). */
export function resourceMetadataUrl(baseUrl: string): string {
  return `${new URL(baseUrl).origin}/.well-known/oauth-protected-resource${
    new URL(mcpResourceUrl(baseUrl)).pathname
  }`;
}

/**
 * True when `resource` names this server's MCP endpoint. Scheme and host compare
 * case-insensitively (MCP asks servers to accept upper case there); the rest exactly.
 */
export function isOurResource(resource: string, baseUrl: string): boolean {
  try {
    const u = new URL(resource);
    return u.hash === "" && u.href === new URL(mcpResourceUrl(baseUrl)).href &&
      !resource.endsWith("#");
  } catch {
    return false;
  }
}

/** RFC 9728 §2: the protected-resource metadata of `/mcp`. */
export function protectedResourceMetadata(baseUrl: string) {
  return {
    resource: mcpResourceUrl(baseUrl),
    authorization_servers: [baseUrl],
    scopes_supported: [OAUTH_SCOPE],
    bearer_methods_supported: ["header"],
    resource_name: "Serpwright MCP server",
    resource_documentation: `${baseUrl}/docs/agents#mcp-oauth`,
  };
}

/** RFC 8414 §2 (with RFC 9207, RFC 7009, RFC 7591 and CIMD fields). */
export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}${OAUTH_PATHS.authorize}`,
    token_endpoint: `${baseUrl}${OAUTH_PATHS.token}`,
    registration_endpoint: `${baseUrl}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${baseUrl}${OAUTH_PATHS.revoke}`,
    scopes_supported: [OAUTH_SCOPE],
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    token_endpoint_auth_methods_supported: ["none"],
    revocation_endpoint_auth_methods_supported: ["none"],
    code_challenge_methods_supported: ["S256"],
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: true,
    service_documentation: `${baseUrl}/docs/agents#mcp-oauth`,
  };
}
