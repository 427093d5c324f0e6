/**
 * The use cases behind the machine-facing OAuth endpoints of `/mcp`'s authorization server:
 * exchanging a grant for tokens (OAuth 2.1 §3.2), registering a client (RFC 7591, within its
 * network's hourly budget) and revoking a token (RFC 7009). Each ends a connected app's cached
 * keys where a grant ends. The routes (routes/oauth/endpoints.ts) read the form or JSON body,
 * call one of these and answer the RFCs' JSON shapes; an `OAuthError` thrown here is that shape.
 *
 * @example
 * ```ts
 * import type { Services } from "../services.ts";
 * import { exchangeToken } from "./endpoints.ts";
 * declare const services: Services;
 * const tokens = await exchangeToken(services, {
 *   grant_type: "refresh_token", refresh_token: "mcp_rt_…", client_id: "https://app.example/client.json",
 * });
 * ```
 *
 * @module
 */
import {
  addressBlock,
  OAuthError,
  registerClient,
  registrationResponse,
} from "../../domain/identity/mod.ts";
// Past identity/mod.ts on purpose: it loads oauth4webapi, kept off a worker's load (layers.test.ts).
import {
  redeemCode,
  refresh,
  revokeToken,
  type TokenResponse,
} from "../../domain/identity/oauth/tokens.ts";
import type { Services } from "../services.ts";

/** Drops an account's cached keys when one of its grants ended. */
function grantEnded(s: Services): (accountId: string) => void {
  return (accountId) => s.resolver.invalidateAccount(accountId);
}

/**
 * The token endpoint: `authorization_code` (with PKCE) or `refresh_token`, for a public client
 * (a `client_secret` is refused: the server issues none).
 */
export async function exchangeToken(
  s: Services,
  p: Record<string, string>,
): Promise<TokenResponse> {
  if (p.client_secret !== undefined) {
    throw new OAuthError(
      "invalid_client",
      "This server issues no client secrets (public clients, PKCE)",
      401,
    );
  }
  switch (p.grant_type) {
    case "authorization_code":
      return await redeemCode(s.deps, {
        code: p.code,
        clientId: p.client_id,
        redirectUri: p.redirect_uri,
        codeVerifier: p.code_verifier,
        resource: p.resource,
      }, grantEnded(s));
    case "refresh_token":
      return await refresh(s.deps, {
        refreshToken: p.refresh_token,
        clientId: p.client_id,
        resource: p.resource,
      }, grantEnded(s));
    case undefined:
      throw new OAuthError("invalid_request", "grant_type: required");
    default:
      throw new OAuthError(
        "unsupported_grant_type",
        "grant_type: authorization_code or refresh_token",
      );
  }
}

/**
 * Spends the registration budget of the caller's address block (as signup's daily cap: rotating
 * addresses inside one IPv4 /24 or IPv6 /48, a /64 included, spends one budget). Called before
 * the body is read.
 */
export async function spendRegistrationBudget(s: Services, ip: string): Promise<void> {
  const block = addressBlock(ip);
  const decision = await s.limits.registration.hit(block);
  if (!decision.allowed) {
    throw new OAuthError(
      "temporarily_unavailable",
      `At most ${decision.limit} registrations per hour from one network (${block}); ` +
        `retry in ${decision.retryAfter} s`,
      429,
      { "Retry-After": String(decision.retryAfter) },
    );
  }
}

/** Registers a client from its parsed metadata; answers the registration response. */
export async function registerOAuthClient(
  s: Services,
  metadata: unknown,
): Promise<ReturnType<typeof registrationResponse>> {
  return registrationResponse(await registerClient(s.deps, metadata));
}

/**
 * Revokes the grant a token belongs to (the token type hint is only a hint: the prefix says what
 * the token is). Unknown tokens change nothing.
 */
export async function revokeOAuthToken(s: Services, p: Record<string, string>): Promise<void> {
  if (!p.token) throw new OAuthError("invalid_request", "token: required");
  await revokeToken(s.deps, p.token, p.client_id, grantEnded(s));
}
