/**
 * The token endpoint's grants and the revocation endpoint (OAuth 2.1 §4.1.3, §4.3; RFC 7636,
 * RFC 8707, RFC 7009). Every refusal is an `OAuthError` with the RFC's code and nothing issued:
 *
 * - a code is one use: a second redemption ends the grant the first one made (`code_reuse`);
 * - the code's client, redirect URI (when sent) and PKCE verifier must match (`invalid_grant`);
 * - `resource`, when sent, must be this server's `/mcp` (`invalid_target`);
 * - a refresh token rotates: the new pair replaces it in one commit, and the old one kept as
 *   "rotated" so its replay ends the whole family (`refresh_reuse`);
 * - the approving key must still be usable at every refresh; the tokens are never worth more
 *   than that key (they resolve to its principal at `/mcp`);
 * - an account has at most `MAX_ACTIVE_GRANTS` live grants (`invalid_grant` past it), and each
 *   grant keeps its client alive while it lives (client_life.ts).
 *
 * PKCE's S256 transform is computed by `oauth4webapi` (the maintained client library the tests
 * drive the flow with), not by hand, and compared in constant time.
 *
 * @module
 */
import { calculatePKCECodeChallenge } from "oauth4webapi";
import { atomically } from "../../../kv/atomic.ts";
import { atomic, type Deps, keys, newId, read, readMany, secureEqual } from "../../platform/mod.ts";
import { OAuthError } from "./errors.ts";
import { holdClient, readClientLife } from "./client_life.ts";
import { endGrant, makeRoomForGrant } from "./grants.ts";
import { isOurResource, mcpResourceUrl } from "./metadata.ts";
import { digest, expireInFor, LIFETIME, newSecret, PREFIX } from "./secrets.ts";
import type { AccessTokenRecord, GrantRecord, RefreshTokenRecord } from "./types.ts";

/** The RFC 6749 §5.1 answer. */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * Told the account whose grant just ended, so the caller drops this process's cached tokens at
 * once (other processes follow the revocation signal the end wrote).
 */
export type GrantEnded = (accountId: string) => void;

/** The parameters of `grant_type=authorization_code`. */
export interface CodeExchange {
  code?: string;
  clientId?: string;
  redirectUri?: string;
  codeVerifier?: string;
  resource?: string;
}

function invalidGrant(text: string): OAuthError {
  return new OAuthError("invalid_grant", text);
}

function checkResource(deps: Deps, resource: string | undefined): void {
  if (resource !== undefined && !isOurResource(resource, deps.config.publicBaseUrl)) {
    throw new OAuthError(
      "invalid_target",
      `resource: this server issues tokens for ${mcpResourceUrl(deps.config.publicBaseUrl)} only`,
    );
  }
}

/** The approving key, if it may still approve (not revoked, not expired). */
async function keyUsable(deps: Deps, keyHash: string): Promise<boolean> {
  const key = (await read(deps.kv, keys.apiKey(keyHash), "strong")).value;
  const now = deps.clock.now();
  return !!key && key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}

/** A fresh access and refresh token pair for a grant, and their records. */
function mintPair(
  grant: Pick<GrantRecord, "id" | "accountId" | "keyHash" | "clientId" | "scope" | "resource">,
  now: number,
) {
  const access = newSecret("access");
  const refresh = newSecret("refresh");
  const accessRecord: AccessTokenRecord = {
    grantId: grant.id,
    accountId: grant.accountId,
    keyHash: grant.keyHash,
    clientId: grant.clientId,
    resource: grant.resource,
    scope: grant.scope,
    expiresAt: now + LIFETIME.accessMs,
  };
  const refreshRecord: RefreshTokenRecord = {
    grantId: grant.id,
    accountId: grant.accountId,
    clientId: grant.clientId,
    expiresAt: now + LIFETIME.refreshMs,
    rotatedAt: null,
  };
  const response: TokenResponse = {
    access_token: access,
    token_type: "Bearer",
    expires_in: LIFETIME.accessMs / 1000,
    refresh_token: refresh,
    scope: grant.scope,
  };
  return {
    response,
    accessHash: digest(access),
    refreshHash: digest(refresh),
    accessRecord,
    refreshRecord,
  };
}

/**
 * Redeems an authorization code (`grant_type=authorization_code`): checks it, creates the grant
 * and its first token pair in the code's own commit.
 */
export async function redeemCode(
  deps: Deps,
  x: CodeExchange,
  onEnd: GrantEnded = () => {},
): Promise<TokenResponse> {
  if (!x.code) throw new OAuthError("invalid_request", "code: required");
  if (!x.clientId) throw new OAuthError("invalid_request", "client_id: required (public client)");
  if (!x.codeVerifier) throw new OAuthError("invalid_request", "code_verifier: required (PKCE)");
  const { kv, clock } = deps;
  const codeKey = keys.oauthCode(digest(x.code));
  const entry = await read(kv, codeKey, "strong");
  const code = entry.value;
  const now = clock.now();
  if (!code || !x.code.startsWith(PREFIX.code)) throw invalidGrant("Unknown authorization code");
  if (code.redeemedAt !== null) {
    // OAuth 2.1 §4.1.3: a code used twice revokes what its first use issued.
    if (code.grantId) {
      await endGrant(deps, code.accountId, code.grantId, "code_reuse");
      onEnd(code.accountId);
    }
    throw invalidGrant(
      "The authorization code was already used; the tokens issued from it are revoked",
    );
  }
  if (code.expiresAt <= now) throw invalidGrant("The authorization code expired");
  if (!secureEqual(x.clientId, code.clientId)) {
    throw invalidGrant("The authorization code was issued to another client");
  }
  if (x.redirectUri !== undefined && x.redirectUri !== code.redirectUri) {
    throw invalidGrant("redirect_uri: not the one of the authorization request");
  }
  checkResource(deps, x.resource);
  if (!VERIFIER.test(x.codeVerifier)) {
    throw invalidGrant("code_verifier: 43 to 128 characters of [A-Za-z0-9._~-]");
  }
  const challenge = await calculatePKCECodeChallenge(x.codeVerifier);
  if (!secureEqual(challenge, code.codeChallenge)) {
    throw invalidGrant("code_verifier: does not match the code_challenge (PKCE S256)");
  }
  if (!(await keyUsable(deps, code.keyHash))) {
    throw invalidGrant("The API key that approved this request is no longer usable");
  }

  const grantId = newId(PREFIX.grant.slice(0, -1), now);
  const base = {
    id: grantId,
    accountId: code.accountId,
    keyHash: code.keyHash,
    clientId: code.clientId,
    scope: code.scope,
    resource: code.resource,
  };
  const pair = mintPair(base, now);
  const grant: GrantRecord = {
    ...base,
    mode: code.mode,
    keyId: code.keyId,
    clientName: code.clientName,
    redirectUri: code.redirectUri,
    createdAt: now,
    refreshedAt: now,
    expiresAt: pair.refreshRecord.expiresAt,
    refreshHash: pair.refreshHash,
    revokedAt: null,
    revokedReason: null,
  };
  // The account's cap (and the pruning of old ended grants), and the client kept while the
  // grant lives; any conflict, with a concurrent grant or client change, runs this again.
  const op = atomic(kv);
  await makeRoomForGrant(deps, op, code.accountId);
  holdClient(deps, op, await readClientLife(deps, code.clientId), grant, true);
  const res = await op
    .check(entry)
    .set(codeKey, { ...code, redeemedAt: now, grantId }, {
      expireIn: expireInFor(code.expiresAt, now),
    })
    .set(keys.oauthGrant(code.accountId, grantId), grant, {
      expireIn: expireInFor(grant.expiresAt, now, LIFETIME.endedGrantMs),
    })
    .set(keys.oauthAccessToken(pair.accessHash), pair.accessRecord, {
      expireIn: expireInFor(pair.accessRecord.expiresAt, now),
    })
    .set(keys.oauthRefreshToken(pair.refreshHash), pair.refreshRecord, {
      expireIn: expireInFor(pair.refreshRecord.expiresAt, now),
    })
    .commit();
  // A concurrent redemption won: this one is the reuse.
  if (!res.ok) return redeemCode(deps, x, onEnd);
  return pair.response;
}

/** The parameters of `grant_type=refresh_token`. */
export interface RefreshExchange {
  refreshToken?: string;
  clientId?: string;
  resource?: string;
}

/**
 * Rotates a refresh token (`grant_type=refresh_token`): a new pair, the old refresh token kept
 * as rotated (its reuse ends the grant), in one commit checked against the grant.
 */
export async function refresh(
  deps: Deps,
  x: RefreshExchange,
  onEnd: GrantEnded = () => {},
): Promise<TokenResponse> {
  if (!x.refreshToken) throw new OAuthError("invalid_request", "refresh_token: required");
  if (!x.clientId) throw new OAuthError("invalid_request", "client_id: required (public client)");
  checkResource(deps, x.resource);
  const { kv, clock } = deps;
  const oldHash = digest(x.refreshToken);
  let reuse: { accountId: string; grantId: string } | null = null;
  const out = await atomically(kv, async () => {
    reuse = null;
    const tokenEntry = await read(kv, keys.oauthRefreshToken(oldHash), "strong");
    const token = tokenEntry.value;
    if (!token || !x.refreshToken!.startsWith(PREFIX.refresh)) {
      throw invalidGrant("Unknown or revoked refresh token");
    }
    if (!secureEqual(x.clientId!, token.clientId)) {
      throw invalidGrant("The refresh token was issued to another client");
    }
    const now = clock.now();
    if (token.rotatedAt !== null) {
      reuse = { accountId: token.accountId, grantId: token.grantId };
      return { op: atomic(kv).check(tokenEntry), result: null };
    }
    if (token.expiresAt <= now) throw invalidGrant("The refresh token expired");
    const [grantEntry] = await readMany(kv, [keys.oauthGrant(token.accountId, token.grantId)]);
    const grant = grantEntry.value;
    if (!grant || grant.revokedAt !== null || grant.refreshHash !== oldHash) {
      throw invalidGrant("This app's access was revoked; sign in again");
    }
    if (!(await keyUsable(deps, grant.keyHash))) {
      throw invalidGrant("The API key that approved this app is no longer usable");
    }
    const pair = mintPair(grant, now);
    const next: GrantRecord = {
      ...grant,
      refreshedAt: now,
      expiresAt: pair.refreshRecord.expiresAt,
      refreshHash: pair.refreshHash,
    };
    const life = await readClientLife(deps, grant.clientId);
    const op = holdClient(deps, atomic(kv), life, next, false)
      .check(tokenEntry, grantEntry)
      .set(tokenEntry.key, { ...token, rotatedAt: now }, {
        expireIn: expireInFor(token.expiresAt, now),
      })
      .set(grantEntry.key, next, {
        expireIn: expireInFor(next.expiresAt, now, LIFETIME.endedGrantMs),
      })
      .set(keys.oauthAccessToken(pair.accessHash), pair.accessRecord, {
        expireIn: expireInFor(pair.accessRecord.expiresAt, now),
      })
      .set(keys.oauthRefreshToken(pair.refreshHash), pair.refreshRecord, {
        expireIn: expireInFor(pair.refreshRecord.expiresAt, now),
      });
    return { op, result: pair.response };
  });
  if (out === null) {
    const r = reuse as { accountId: string; grantId: string } | null;
    if (r) {
      await endGrant(deps, r.accountId, r.grantId, "refresh_reuse");
      onEnd(r.accountId);
    }
    throw invalidGrant(
      "The refresh token was already used; every token of this app is revoked, sign in again",
    );
  }
  return out;
}

/**
 * RFC 7009: revokes the grant a token belongs to (either kind: the app is disconnected). Unknown
 * tokens, and tokens of another client when `clientId` is given, change nothing; the endpoint
 * answers 200 either way.
 */
export async function revokeToken(
  deps: Deps,
  token: string,
  clientId: string | undefined,
  onEnd: GrantEnded = () => {},
): Promise<void> {
  const hash = digest(token);
  let owner: { accountId: string; grantId: string; clientId: string } | null = null;
  if (token.startsWith(PREFIX.access)) {
    owner = (await read(deps.kv, keys.oauthAccessToken(hash), "strong")).value;
  } else if (token.startsWith(PREFIX.refresh)) {
    owner = (await read(deps.kv, keys.oauthRefreshToken(hash), "strong")).value;
  }
  if (!owner) return;
  if (clientId !== undefined && !secureEqual(clientId, owner.clientId)) return;
  await endGrant(deps, owner.accountId, owner.grantId, "client");
  onEnd(owner.accountId);
}
