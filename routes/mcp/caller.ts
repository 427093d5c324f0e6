/**
 * Who is calling `/mcp`, carried from the HTTP layer to the tools through the SDK's `AuthInfo`.
 *
 * The bearer is one of our API keys or an OAuth access token (domain/identity/oauth/), both resolved by
 * the `identify` middleware `/v1` uses: a token resolves to the `Principal` of the API key that
 * approved it, so the tools, which never look at the header, see the same caller either way.
 */
import type { AuthInfo } from "@modelcontextprotocol/server";
import type { Principal } from "../../domain/identity/mod.ts";
import type { ApiError } from "../../domain/platform/mod.ts";

export interface McpCaller {
  /** The key's principal, or null for an anonymous caller (public tools only). */
  principal: Principal | null;
  /** The raw bearer the principal was resolved from (kept for idempotency scoping). */
  bearer: string | null;
  /** The client IP as `/v1` computes it (signup limits and signup idempotency scope). */
  ip: string;
  /** Set when this request is over the rate limit: tool calls answer it as a tool error. */
  rateLimited: ApiError | null;
  /**
   * The tool a `tools/call` request names, if that is what the request is: its per-request
   * server then registers only that tool (everything else is unreachable from the request).
   */
  toolCall: string | null;
}

/** Packs a caller into the SDK's pass-through `AuthInfo`. */
export function toAuthInfo(caller: McpCaller): AuthInfo {
  const p = caller.principal;
  return {
    token: caller.bearer ?? "",
    clientId: p ? p.account.id : "anonymous",
    // Scopes an OAuth token would carry; API keys may do everything their mode allows.
    scopes: p ? ["serpwright", `mode:${p.key.mode}`] : [],
    ...(p?.key.expiresAt ? { expiresAt: Math.floor(p.key.expiresAt / 1000) } : {}),
    extra: { caller },
  };
}

/** The caller of a request, from the `AuthInfo` the HTTP layer passed in. */
export function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.caller as McpCaller | undefined;
  if (!caller) throw new Error("MCP request without a caller: the /mcp route always sets one");
  return caller;
}
