/**
 * The errors of the OAuth endpoints, in the RFCs' own shape (`{"error", "error_description"}`,
 * RFC 6749 §5.2, RFC 7591 §3.2.2) rather than the `/v1` one: OAuth clients parse these codes.
 *
 * @module
 */

/** The codes the endpoints answer (RFC 6749, 7009, 7591, 8707). */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "unsupported_response_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "unsupported_token_type"
  | "temporarily_unavailable"
  | "slow_down";

/** Thrown by the domain; the route renders it as JSON (token, register) or a page (authorize). */
export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    readonly description: string,
    /** HTTP status: 400 unless the RFC says otherwise (401 for invalid_client at the token endpoint). */
    readonly status: 400 | 401 | 403 | 429 | 503 = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${code}: ${description}`);
    this.name = "OAuthError";
  }

  /** The RFC 6749 §5.2 body. */
  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.description };
  }
}
