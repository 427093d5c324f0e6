/**
 * The records of the OAuth 2.1 authorization server (domain/identity/oauth/), as stored in KV (key
 * families in kv/keys.ts, typed in domain/platform/store.ts). Times are epoch milliseconds of the service
 * clock; every record also carries a KV expiry (`expireIn`) a little past its own, so the store
 * cleans itself, but the expiry that decides is always the field, read against the clock.
 *
 * @module
 */
import type { KeyMode } from "../types.ts";

/** The client metadata the service keeps and shows (from a CIMD document or a registration). */
export interface ClientMetadata {
  /** The `client_id`: an https URL (CIMD) or the id the registration endpoint issued. */
  clientId: string;
  /** Shown on the consent page; escaped there. */
  clientName: string;
  /** Exact redirect URIs (loopback ones match any port, RFC 8252 §7.3). */
  redirectUris: string[];
  /** `cimd` (a Client ID Metadata Document) or `dcr` (RFC 7591). */
  kind: "cimd" | "dcr";
  /** The `client_uri`, when the client gave one (shown as a link-free host only). */
  clientUri: string | null;
}

/** A client registered through `POST /oauth/register`. */
export interface RegisteredClient extends ClientMetadata {
  kind: "dcr";
  applicationType: "web" | "native";
  createdAt: number;
  /**
   * When an approval first used it. Until then it is unverified (its errors are shown, never
   * redirected) and expires a day after its registration.
   */
  usedAt: number | null;
  /**
   * When the registration ends (client_life.ts): a day after it was made, or after its last grant
   * ended, whichever is later; moved while it has grants. Absent on records written before it
   * existed (unused ones then end a day after `createdAt`).
   */
  expiresAt?: number;
}

/**
 * The mark that an approval used a metadata-document client (whose document is only cached): it
 * is verified while the mark lasts, which is as long as its grants, and a day after.
 */
export interface ClientUse {
  clientId: string;
  usedAt: number;
  expiresAt: number;
}

/** A grant listed under its client, so the client's life can follow its grants. */
export interface ClientGrantRef {
  accountId: string;
  /** The grant's own expiry (its refresh token's), moved at each refresh. */
  expiresAt: number;
}

/** A Client ID Metadata Document as fetched, validated and cached. */
export interface CachedClientDoc extends ClientMetadata {
  kind: "cimd";
  fetchedAt: number;
  /** Refetched after this (the document's `Cache-Control: max-age`, clamped). */
  freshUntil: number;
}

/**
 * An authorization request as the sign-in page carries it (sealed, domain/identity/oauth/ticket.ts):
 * everything `GET /oauth/authorize` checked, and nothing in the store until a key signs in.
 */
export interface AuthTicket {
  v: 1;
  /** Random; names the browser cookie and, once a key signs in, the stored request. */
  id: string;
  clientId: string;
  clientName: string;
  clientKind: "cimd" | "dcr";
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string;
  /** SHA-256 hex of the browser cookie this request is bound to (login CSRF). */
  browserHash: string;
  /** The per-form token every POST must carry (compared in constant time). */
  csrf: string;
  /** Wrong keys tried so far; past a few the request ends (each wrong try seals a new ticket). */
  failures: number;
  createdAt: number;
  expiresAt: number;
}

/**
 * An authorization request once an API key signed in on its page (`id` is the ticket's); kept
 * until the ticket expires, answered or not, so a ticket is answered once.
 */
export interface AuthRequestRecord {
  id: string;
  /** SHA-256 hex of the browser cookie (the ticket's), checked again on every POST. */
  browserHash: string;
  /** The SHA-256 hex of the API key that signed in and will approve. */
  keyHash: string;
  /** When the human approved or denied; a request answered once is never answered again. */
  answeredAt: number | null;
  createdAt: number;
  expiresAt: number;
}

/** An authorization code: one use, a minute long, bound to the client, redirect and PKCE. */
export interface CodeRecord {
  clientId: string;
  clientName: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope: string;
  accountId: string;
  mode: KeyMode;
  keyId: string;
  keyHash: string;
  expiresAt: number;
  /** Set when redeemed; a second redemption revokes the grant it made (OAuth 2.1 §4.1.3). */
  redeemedAt: number | null;
  grantId: string | null;
}

/**
 * One approval: a connected app. Its tokens (the family) act as the approving API key, never more:
 * they resolve to that key's principal, so revoking the key, or its expiry, ends them too.
 */
export interface GrantRecord {
  id: string;
  accountId: string;
  mode: KeyMode;
  keyId: string;
  keyHash: string;
  clientId: string;
  clientName: string;
  /** The redirect URI the approval went to (its host is shown in listings). */
  redirectUri: string;
  scope: string;
  resource: string;
  createdAt: number;
  /** The last token issue (the code's redemption, then each refresh). */
  refreshedAt: number;
  /** The current refresh token's expiry: the grant ends then unless refreshed. */
  expiresAt: number;
  /** SHA-256 hex of the current refresh token. */
  refreshHash: string;
  revokedAt: number | null;
  /** Why it ended: `client` (RFC 7009), `user`, `key_revoked`, `code_reuse`, `refresh_reuse`. */
  revokedReason: string | null;
}

/** An access token: opaque, stored by hash, checked against its grant on each uncached use. */
export interface AccessTokenRecord {
  grantId: string;
  accountId: string;
  keyHash: string;
  clientId: string;
  /** The audience (RFC 8707): the canonical URL of `/mcp` it was issued for. */
  resource: string;
  scope: string;
  expiresAt: number;
}

/** A refresh token; once rotated it stays stored so a replay is recognised as reuse. */
export interface RefreshTokenRecord {
  grantId: string;
  accountId: string;
  clientId: string;
  expiresAt: number;
  rotatedAt: number | null;
}
