/**
 * The authorization endpoint's rules (OAuth 2.1 §4.1.1–4.1.2), from the request to the code:
 *
 * 1. `check`: the client (`findClient`) and its redirect URI first; a problem with either is
 *    shown to the human and never redirected (the URI cannot be trusted). Then, answered to the
 *    client through its redirect: `response_type=code`, PKCE with `S256` only (a missing method
 *    would mean `plain`, refused), `resource` naming this server's `/mcp` (RFC 8707, else
 *    `invalid_target`), `scope` reduced to what exists.
 * 2. `start`: the request is stored for 15 minutes, bound to a random browser cookie (stored as a
 *    digest) and to a per-form CSRF token, so a form posted from another site or another browser
 *    is refused.
 * 3. `signIn`: the human proved an API key (the route resolves it); the request remembers which.
 * 4. `approve`: a one-use code, valid one minute, bound to everything above and to the approving
 *    key, whose account and mode the tokens will carry.
 *
 * @module
 */
import { atomic, keys, read } from "../store.ts";
import type { Deps } from "../deps.ts";
import type { KeyMode } from "../records.ts";
import { secureEqual } from "../secure_compare.ts";
import { findClient, markClientUsed, matchRedirectUri } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { isOurResource, mcpResourceUrl, OAUTH_SCOPE } from "./metadata.ts";
import { digest, expireInFor, LIFETIME, newSecret, randomBase62 } from "./secrets.ts";
import type { AuthRequestRecord, ClientMetadata, CodeRecord } from "./types.ts";

/** Wrong API keys one authorization request may take before it is dropped. */
export const MAX_SIGN_IN_FAILURES = 5;

const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** The query of `GET /oauth/authorize`, as strings (absent: undefined). */
export type AuthorizeQuery = Record<string, string | undefined>;

/** A checked authorization request, ready to be stored. */
export interface CheckedRequest {
  client: ClientMetadata;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string;
}

/** A refusal to send back to the client through its (verified) redirect URI. */
export interface RedirectRefusal {
  redirectUri: string;
  state: string | null;
  error: OAuthError;
}

/**
 * Checks an authorization request. Throws `OAuthError` when the client or the redirect URI is
 * wrong (the page shows it); returns `{refusal}` for errors the client should get.
 */
export async function check(
  deps: Deps,
  q: AuthorizeQuery,
): Promise<{ ok: CheckedRequest } | { refusal: RedirectRefusal }> {
  const clientId = q.client_id;
  if (!clientId) throw new OAuthError("invalid_request", "client_id: required");
  const client = await findClient(deps, clientId);
  let redirectUri: string | null;
  if (q.redirect_uri === undefined) {
    redirectUri = client.redirectUris.length === 1 ? client.redirectUris[0] : null;
    if (redirectUri === null) {
      throw new OAuthError("invalid_request", "redirect_uri: required (the client has several)");
    }
  } else {
    redirectUri = matchRedirectUri(client.redirectUris, q.redirect_uri);
    if (redirectUri === null) {
      throw new OAuthError(
        "invalid_request",
        "redirect_uri: not one of the client's registered redirect URIs",
      );
    }
  }
  const state = q.state ?? null;
  const refuse = (error: OAuthError) => ({ refusal: { redirectUri: redirectUri!, state, error } });
  if (state !== null && state.length > 2_000) {
    return refuse(new OAuthError("invalid_request", "state: longer than 2000 characters"));
  }
  if (q.response_type !== "code") {
    return refuse(
      new OAuthError("unsupported_response_type", "response_type: only 'code' is supported"),
    );
  }
  if (q.code_challenge === undefined) {
    return refuse(new OAuthError("invalid_request", "code_challenge: required (PKCE, S256)"));
  }
  if (q.code_challenge_method !== "S256") {
    return refuse(
      new OAuthError("invalid_request", "code_challenge_method: must be S256 (plain is refused)"),
    );
  }
  if (!PKCE_CHALLENGE.test(q.code_challenge)) {
    return refuse(
      new OAuthError("invalid_request", "code_challenge: expected 43 base64url characters"),
    );
  }
  const base = deps.config.publicBaseUrl;
  if (q.resource === undefined) {
    return refuse(
      new OAuthError("invalid_target", `resource: required, ${mcpResourceUrl(base)} (RFC 8707)`),
    );
  }
  if (!isOurResource(q.resource, base)) {
    return refuse(
      new OAuthError(
        "invalid_target",
        `resource: this server issues tokens for ${mcpResourceUrl(base)} only`,
      ),
    );
  }
  // Unknown scopes are left out rather than refused (RFC 6749 §3.3); the token says what it has.
  return {
    ok: {
      client,
      redirectUri,
      state,
      codeChallenge: q.code_challenge,
      resource: mcpResourceUrl(base),
      scope: OAUTH_SCOPE,
    },
  };
}

/**
 * Stores a checked request; returns it and the raw browser secret the route sets as a cookie.
 */
export async function start(
  deps: Deps,
  req: CheckedRequest,
): Promise<{ record: AuthRequestRecord; browserSecret: string }> {
  const now = deps.clock.now();
  const browserSecret = randomBase62(40);
  const record: AuthRequestRecord = {
    id: newSecret("request", 32),
    clientId: req.client.clientId,
    clientName: req.client.clientName,
    clientKind: req.client.kind,
    redirectUri: req.redirectUri,
    state: req.state,
    codeChallenge: req.codeChallenge,
    resource: req.resource,
    scope: req.scope,
    browserHash: digest(browserSecret),
    csrf: randomBase62(32),
    keyHash: null,
    failures: 0,
    createdAt: now,
    expiresAt: now + LIFETIME.requestMs,
  };
  await atomic(deps.kv)
    .set(keys.oauthRequest(record.id), record, { expireIn: expireInFor(record.expiresAt, now) })
    .commit();
  return { record, browserSecret };
}

/**
 * The stored request a form post continues, after the CSRF checks: the browser cookie must be the
 * one the request was started with, and the form token the request's. Throws `OAuthError`
 * `access_denied` (403) on a mismatch, `invalid_request` when the request expired or is unknown.
 */
export async function resume(
  deps: Deps,
  form: { request?: string; csrf?: string },
  browserSecret: string | undefined,
): Promise<Deno.KvEntry<AuthRequestRecord>> {
  const expired = new OAuthError(
    "invalid_request",
    "This sign-in expired or was already answered; start again from your app",
  );
  if (!form.request || form.request.length > 100) throw expired;
  const entry = await read(deps.kv, keys.oauthRequest(form.request), "strong");
  const record = entry.value;
  if (!record || record.expiresAt <= deps.clock.now()) throw expired;
  const forged = new OAuthError(
    "access_denied",
    "This form was not sent from the page this browser opened; start again from your app",
    403,
  );
  if (!browserSecret || !secureEqual(digest(browserSecret), record.browserHash)) throw forged;
  if (!form.csrf || !secureEqual(form.csrf, record.csrf)) throw forged;
  return entry as Deno.KvEntry<AuthRequestRecord>;
}

/** Remembers the API key the human signed in with (its digest). */
export async function signIn(
  deps: Deps,
  entry: Deno.KvEntry<AuthRequestRecord>,
  keyHash: string,
): Promise<AuthRequestRecord> {
  const record = { ...entry.value, keyHash };
  await save(deps, entry, record);
  return record;
}

/**
 * Counts a wrong key against the request; past `MAX_SIGN_IN_FAILURES` the request is dropped and
 * the human starts again. Returns whether the request is still usable.
 */
export async function countFailure(
  deps: Deps,
  entry: Deno.KvEntry<AuthRequestRecord>,
): Promise<boolean> {
  const failures = entry.value.failures + 1;
  if (failures >= MAX_SIGN_IN_FAILURES) {
    await atomic(deps.kv).check(entry).delete(entry.key).commit();
    return false;
  }
  await save(deps, entry, { ...entry.value, failures });
  return true;
}

async function save(
  deps: Deps,
  entry: Deno.KvEntry<AuthRequestRecord>,
  record: AuthRequestRecord,
): Promise<void> {
  const now = deps.clock.now();
  const res = await atomic(deps.kv).check(entry)
    .set(entry.key, record, { expireIn: expireInFor(record.expiresAt, now) })
    .commit();
  if (!res.ok) {
    throw new OAuthError(
      "invalid_request",
      "This sign-in was answered in another tab; start again",
    );
  }
}

/** Who approves: the signed-in key, as the route resolved it (usable at this moment). */
export interface Approver {
  accountId: string;
  mode: KeyMode;
  keyId: string;
  keyHash: string;
}

/**
 * Issues the authorization code for an approved request and ends the request (one answer per
 * request). Returns the redirect URL: the code, `state` and `iss` (RFC 9207).
 */
export async function approve(
  deps: Deps,
  entry: Deno.KvEntry<AuthRequestRecord>,
  approver: Approver,
): Promise<string> {
  const r = entry.value;
  if (r.keyHash === null || r.keyHash !== approver.keyHash) {
    throw new OAuthError("access_denied", "Sign in before approving", 403);
  }
  const now = deps.clock.now();
  const raw = newSecret("code");
  const code: CodeRecord = {
    clientId: r.clientId,
    clientName: r.clientName,
    redirectUri: r.redirectUri,
    codeChallenge: r.codeChallenge,
    resource: r.resource,
    scope: r.scope,
    accountId: approver.accountId,
    mode: approver.mode,
    keyId: approver.keyId,
    keyHash: approver.keyHash,
    expiresAt: now + LIFETIME.codeMs,
    redeemedAt: null,
    grantId: null,
  };
  const res = await atomic(deps.kv)
    .check(entry)
    .delete(entry.key)
    .set(keys.oauthCode(digest(raw)), code, { expireIn: expireInFor(code.expiresAt, now) })
    .commit();
  if (!res.ok) {
    throw new OAuthError(
      "invalid_request",
      "This sign-in was answered in another tab; start again",
    );
  }
  await markClientUsed(deps, r.clientId);
  return redirectWith(deps, r.redirectUri, { code: raw, state: r.state });
}

/** Ends a request the human denied; returns the `access_denied` redirect. */
export async function deny(
  deps: Deps,
  entry: Deno.KvEntry<AuthRequestRecord>,
): Promise<string> {
  await atomic(deps.kv).check(entry).delete(entry.key).commit();
  const r = entry.value;
  return redirectWith(deps, r.redirectUri, {
    error: "access_denied",
    error_description: "The user denied the request",
    state: r.state,
  });
}

/** The client's redirect URI with the response parameters and `iss` (RFC 9207) added. */
export function redirectWith(
  deps: Deps,
  redirectUri: string,
  params: Record<string, string | null>,
): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) u.searchParams.set(k, v);
  u.searchParams.set("iss", deps.config.publicBaseUrl);
  return u.href;
}
