/**
 * The authorization endpoint's rules (OAuth 2.1 §4.1.1–4.1.2), from the request to the code:
 *
 * 1. `check`: the client (`findClient`) and its redirect URI first; a problem with either is
 *    shown to the human and never redirected (the URI cannot be trusted). Then, answered to the
 *    client through its redirect once an approval has used the client (shown on the page until
 *    then: an unverified client's redirect URI is anyone's): `response_type=code`, PKCE with `S256` only (a missing method
 *    would mean `plain`, refused), `resource` naming this server's `/mcp` (RFC 8707, else
 *    `invalid_target`), `scope` reduced to what exists.
 * 2. `begin`: nothing is stored. The checked request is sealed into a ticket the page carries
 *    (ticket.ts), valid 15 minutes, bound to a random browser cookie (the ticket holds its
 *    digest) and to a per-form CSRF token, so a form posted from another site or another
 *    browser is refused.
 * 3. `signIn`: the human proved an API key (the route resolves it); only now is the request
 *    stored, with the key's digest. Wrong keys are counted in the ticket (`wrongKey`).
 * 4. `approve`: a one-use code, valid one minute, bound to everything above and to the approving
 *    key, whose account and mode the tokens will carry; the request is kept as answered until
 *    its ticket expires, so one ticket gets one answer.
 *
 * @module
 */
import { atomic, type Deps, keys, read, secureEqual } from "../../platform/mod.ts";
import type { KeyMode } from "../types.ts";
import { clientVerified, markClientUsed } from "./client_life.ts";
import { type FetchBudget, findClient, matchRedirectUri } from "./clients.ts";
import { OAuthError } from "./errors.ts";
import { isOurResource, mcpResourceUrl, OAUTH_SCOPE } from "./metadata.ts";
import { digest, expireInFor, LIFETIME, newSecret, randomBase62 } from "./secrets.ts";
import { openTicket, sealTicket } from "./ticket.ts";
import type { AuthRequestRecord, AuthTicket, ClientMetadata, CodeRecord } from "./types.ts";

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
  /**
   * Whether the error may go to the redirect URI: only once an approval used the client
   * (client_life.ts). Anyone can register a client, or publish a metadata document, naming any
   * redirect URI, so an unverified client's errors are shown on the page instead (RFC 9700
   * §4.11.2: no open redirector).
   */
  redirect: boolean;
  /** The client's name, for the page that shows an unverified client's error. */
  clientName: string;
}

/**
 * Checks an authorization request. Throws `OAuthError` when the client or the redirect URI is
 * wrong (the page shows it); returns `{refusal}` for errors the client should get (through its
 * redirect URI when `refusal.redirect`, else on the page).
 */
export async function check(
  deps: Deps,
  q: AuthorizeQuery,
  docBudget?: FetchBudget,
): Promise<{ ok: CheckedRequest } | { refusal: RedirectRefusal }> {
  const clientId = q.client_id;
  if (!clientId) throw new OAuthError("invalid_request", "client_id: required");
  const client = await findClient(deps, clientId, docBudget);
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
  const refuse = async (error: OAuthError) => ({
    refusal: {
      redirectUri: redirectUri!,
      state,
      error,
      redirect: await clientVerified(deps, client),
      clientName: client.clientName,
    },
  });
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

/** An authorization request on its way through the page: its ticket, and its stored record. */
export interface Pending {
  ticket: AuthTicket;
  /** The ticket as the page carries it. */
  sealed: string;
  /** The stored request: none until an API key signs in. */
  entry: Deno.KvEntryMaybe<AuthRequestRecord>;
}

/**
 * Starts the human's part of a checked request without storing anything: a sealed ticket for the
 * page's forms and the raw browser secret the route sets as a cookie (the ticket holds its hash).
 */
export async function begin(
  deps: Deps,
  req: CheckedRequest,
): Promise<{ ticket: AuthTicket; sealed: string; browserSecret: string }> {
  const now = deps.clock.now();
  const browserSecret = randomBase62(40);
  const ticket: AuthTicket = {
    v: 1,
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
    failures: 0,
    createdAt: now,
    expiresAt: now + LIFETIME.requestMs,
  };
  return { ticket, sealed: await sealTicket(deps, ticket), browserSecret };
}

/**
 * The request a form post continues, after the CSRF checks: the ticket must be one this service
 * sealed and still fresh, the browser cookie the one the request was started with (`cookieOf`
 * finds it by the ticket's id), and the form token the ticket's. Throws `OAuthError`
 * `access_denied` (403) on a mismatch, `invalid_request` when the request expired, is unknown or
 * was already answered.
 */
export async function resume(
  deps: Deps,
  form: { request?: string; csrf?: string },
  cookieOf: (ticketId: string) => string | undefined,
): Promise<Pending> {
  const expired = new OAuthError(
    "invalid_request",
    "This sign-in expired or was already answered; start again from your app",
  );
  if (!form.request) throw expired;
  const ticket = await openTicket(deps, form.request);
  if (!ticket || ticket.expiresAt <= deps.clock.now()) throw expired;
  const forged = new OAuthError(
    "access_denied",
    "This form was not sent from the page this browser opened; start again from your app",
    403,
  );
  const browserSecret = cookieOf(ticket.id);
  if (!browserSecret || !secureEqual(digest(browserSecret), ticket.browserHash)) throw forged;
  if (!form.csrf || !secureEqual(form.csrf, ticket.csrf)) throw forged;
  const entry = await read(deps.kv, keys.oauthRequest(ticket.id), "strong");
  if (entry.value && entry.value.answeredAt !== null) throw expired;
  if (entry.value && entry.value.browserHash !== ticket.browserHash) throw forged;
  return { ticket, sealed: form.request, entry };
}

const answeredElsewhere = () =>
  new OAuthError("invalid_request", "This sign-in was answered in another tab; start again");

/**
 * Stores the request now that an API key signed in (its digest): the first thing stored for it.
 * Signing in again on the same page replaces the key.
 */
export async function signIn(deps: Deps, p: Pending, keyHash: string): Promise<Pending> {
  const now = deps.clock.now();
  const record: AuthRequestRecord = {
    id: p.ticket.id,
    browserHash: p.ticket.browserHash,
    keyHash,
    answeredAt: null,
    createdAt: p.entry.value?.createdAt ?? now,
    expiresAt: p.ticket.expiresAt,
  };
  const res = await atomic(deps.kv).check(p.entry)
    .set(p.entry.key, record, { expireIn: expireInFor(record.expiresAt, now) })
    .commit();
  if (!res.ok) throw answeredElsewhere();
  return { ...p, entry: { key: p.entry.key, value: record, versionstamp: res.versionstamp } };
}

/**
 * Counts a wrong key: the page goes on with a new ticket that says so, until
 * `MAX_SIGN_IN_FAILURES`, when the request ends (null). Nothing is stored: an older ticket
 * replayed counts from fewer, which gains no more than opening a new page would, and both are
 * bounded by the per-address request budget.
 */
export async function wrongKey(deps: Deps, p: Pending): Promise<Pending | null> {
  const failures = p.ticket.failures + 1;
  if (failures >= MAX_SIGN_IN_FAILURES) {
    if (p.entry.value) {
      await atomic(deps.kv).check(p.entry).delete(p.entry.key).commit();
    }
    return null;
  }
  const ticket = { ...p.ticket, failures };
  return { ...p, ticket, sealed: await sealTicket(deps, ticket) };
}

/** The request as answered, kept until its ticket expires so the ticket answers once. */
function answered(deps: Deps, p: Pending, record: AuthRequestRecord, op: Deno.AtomicOperation) {
  const now = deps.clock.now();
  return op.check(p.entry).set(p.entry.key, { ...record, answeredAt: now }, {
    expireIn: expireInFor(record.expiresAt, now),
  });
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
  p: Pending,
  approver: Approver,
): Promise<string> {
  const r = p.ticket;
  const record = p.entry.value;
  if (record === null || record.keyHash !== approver.keyHash) {
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
  const res = await answered(deps, p, record, atomic(deps.kv))
    .set(keys.oauthCode(digest(raw)), code, { expireIn: expireInFor(code.expiresAt, now) })
    .commit();
  if (!res.ok) throw answeredElsewhere();
  await markClientUsed(deps, r.clientId);
  return redirectWith(deps, r.redirectUri, { code: raw, state: r.state });
}

/**
 * Ends a request the human denied; returns the `access_denied` redirect. A request no key signed
 * in to was never stored, and nothing is stored for its denial either.
 */
export async function deny(deps: Deps, p: Pending): Promise<string> {
  if (p.entry.value) {
    const res = await answered(deps, p, p.entry.value, atomic(deps.kv)).commit();
    if (!res.ok) throw answeredElsewhere();
  }
  const r = p.ticket;
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
