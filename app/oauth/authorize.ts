/**
 * The use cases behind `/oauth/authorize` (the rules are domain/identity/oauth/authorization.ts's):
 * starting a request (`startAuthorization`), and the human's four answers on the page: sign in
 * with an API key (`signInWithKey`), sign up (`signUpAndSignIn`: the public signup operation, the
 * same one `POST /v1/accounts` runs, with its limits), approve (`approveRequest`) or deny
 * (`denyRequest`). Each answers what the page shows next, as data; the route
 * (routes/oauth/authorize.ts) reads the query or form and the cookie, calls one, and renders the
 * page, the error page or the 303 to the app.
 *
 * @example
 * ```ts
 * import type { Services } from "../services.ts";
 * import { signInWithKey } from "./authorize.ts";
 * declare const services: Services;
 * declare const pending: Parameters<typeof signInWithKey>[1];
 * declare const form: { api_key?: string };
 * const next = await signInWithKey(services, pending, form.api_key ?? "");
 * if (next.kind === "consent") console.log(next.principal.account.email);
 * ```
 *
 * @module
 */
import {
  activeGrantCount,
  approve,
  type AuthorizeQuery,
  begin,
  check,
  deny,
  grantCapMessage,
  hashKey,
  KEY_PREFIX,
  OAuthError,
  type Pending,
  type Principal,
  redirectWith,
  signIn,
  wrongKey,
} from "../../domain/identity/mod.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import { anonymousActor } from "../actor.ts";
import { execute, parseInput } from "../operation.ts";
import { signupOp } from "../operations/accounts.ts";
import type { Services } from "../services.ts";

const API_KEY = /^sk_(sandbox|live)_[A-Za-z0-9]{40}$/;

/** What a checked authorization request leads to. */
export type Started =
  /** The sign-in page, with the sealed request and the browser secret for its cookie. */
  | { kind: "sign_in"; started: Awaited<ReturnType<typeof begin>> }
  /** An error the client gets at its redirect URI (a 303 there). */
  | { kind: "redirect"; location: string; redirectUri: string }
  /** An error shown on the page: the client is not approved yet, so it is not redirected to. */
  | { kind: "error_page"; code: string; description: string; note: string };

/**
 * Checks an authorization request (its query, each parameter once) and starts the human's part,
 * storing nothing. Throws `OAuthError` when the client or its redirect URI is wrong.
 */
export async function startAuthorization(s: Services, query: AuthorizeQuery): Promise<Started> {
  const checked = await check(s.deps, query, s.limits.clientDocHost);
  if ("refusal" in checked) {
    const { redirectUri, state, error, redirect, clientName } = checked.refusal;
    if (!redirect) {
      const note = `${clientName} has not been approved on this server yet, so this error is ` +
        `shown here instead of being sent to ${new URL(redirectUri).host}.`;
      return { kind: "error_page", code: error.code, description: error.description, note };
    }
    const location = redirectWith(s.deps, redirectUri, {
      error: error.code,
      error_description: error.description,
      state,
    });
    return { kind: "redirect", location, redirectUri };
  }
  // Nothing is stored until an API key signs in: the request travels sealed in the page.
  return { kind: "sign_in", started: await begin(s.deps, checked.ok) };
}

/** What the page shows after a sign-in or a signup. */
export type SignedInNext =
  /** The sign-in form again with a message, for the request as it now is. */
  | { kind: "again"; message: string; at: Pending }
  /** The request ends on the error page (too many wrong keys). */
  | { kind: "dead"; error: OAuthError }
  /**
   * The consent page for the signed-in key (`newKey`: a key signup just made, shown once), with
   * the account's connected-app cap message when it is full.
   */
  | {
    kind: "consent";
    at: Pending;
    principal: Principal;
    newKey: string | null;
    full: string | null;
  };

/** Signs in with a pasted API key: checks its shape, resolves it, and stores the request. */
export async function signInWithKey(
  s: Services,
  p: Pending,
  pasted: string,
): Promise<SignedInNext> {
  const raw = pasted.trim();
  const malformed = keyShapeProblem(raw);
  if (malformed) return { kind: "again", message: malformed, at: p };
  let principal;
  try {
    principal = await s.resolver.resolve(raw);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const next = await wrongKey(s.deps, p);
    if (!next) {
      return {
        kind: "dead",
        error: new OAuthError("access_denied", "Too many wrong keys; start again from your app"),
      };
    }
    return { kind: "again", message: refusedKey(raw, err), at: next };
  }
  return await consent(s, p, raw, principal, null);
}

/**
 * Signs up with an email (the public signup operation, as an anonymous actor at `ip`) and signs
 * in with the new sandbox key, which the consent page shows once.
 */
export async function signUpAndSignIn(
  s: Services,
  p: Pending,
  email: string,
  ip: string,
): Promise<SignedInNext> {
  let raw: string;
  try {
    const input = parseInput(signupOp, { body: { email, origin: "human" } });
    const outcome = await execute(s, signupOp, anonymousActor(ip), input);
    raw = outcome.body.api_key;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    return {
      kind: "again",
      message: err.code === "account_exists"
        ? "That email already has an account: sign in with one of its API keys instead."
        : err.message,
      at: p,
    };
  }
  const principal = await s.resolver.resolve(raw);
  return await consent(s, p, raw, principal, raw);
}

async function consent(
  s: Services,
  p: Pending,
  raw: string,
  principal: Principal,
  newKey: string | null,
): Promise<SignedInNext> {
  const signed = await signIn(s.deps, p, hashKey(raw));
  const full = grantCapMessage(await activeGrantCount(s.deps, principal.account.id));
  return { kind: "consent", at: signed, principal, newKey, full };
}

/** What approving leads to. */
export type Approved =
  | { kind: "again"; message: string }
  /** The consent page again (400): the account has as many connected apps as it may. */
  | { kind: "full"; principal: Principal; full: string }
  /** The 303 to the app with its code. */
  | { kind: "redirect"; location: string };

/** Approves the request for the key that signed in (the token endpoint holds the cap exactly). */
export async function approveRequest(s: Services, p: Pending): Promise<Approved> {
  const keyHash = p.entry.value?.keyHash;
  if (!keyHash) return { kind: "again", message: "Sign in first." };
  let principal;
  try {
    principal = await s.resolver.resolveHash(keyHash);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { kind: "again", message: `That key cannot approve: ${err.message}.` };
  }
  const full = grantCapMessage(await activeGrantCount(s.deps, principal.account.id));
  if (full) return { kind: "full", principal, full };
  const location = await approve(s.deps, p, {
    accountId: principal.account.id,
    mode: principal.key.mode,
    keyId: principal.key.id,
    keyHash: principal.key.hash,
  });
  return { kind: "redirect", location };
}

/** Denies the request: the location of the 303 to the app with `access_denied`. */
export function denyRequest(s: Services, p: Pending): Promise<string> {
  return deny(s.deps, p);
}

/**
 * What is wrong with the shape of a pasted key, naming the prefixes as they are (no ellipsis to
 * copy) and the one the paste actually has; null for a well-formed key.
 */
function keyShapeProblem(raw: string): string | null {
  if (API_KEY.test(raw)) return null;
  const mode = raw.startsWith(KEY_PREFIX.sandbox)
    ? "sandbox"
    : raw.startsWith(KEY_PREFIX.live)
    ? "live"
    : null;
  if (mode) {
    return `That ${mode} key is incomplete or has extra characters: a key is ` +
      `${KEY_PREFIX[mode]} followed by 40 letters and digits.`;
  }
  if (raw.startsWith("mcp_")) {
    return "That is an OAuth token, not an API key: paste a key that starts with " +
      `${KEY_PREFIX.sandbox} or ${KEY_PREFIX.live}.`;
  }
  return `That is not a Serpwright API key: keys start with ${KEY_PREFIX.sandbox} or ` +
    `${KEY_PREFIX.live}.`;
}

/** Why a well-formed key cannot sign in, naming its mode (by its prefix) and last 4. */
function refusedKey(raw: string, err: ApiError): string {
  const mode = raw.startsWith(KEY_PREFIX.live) ? "live" : "sandbox";
  const why = err.code === "key_revoked"
    ? "it was revoked"
    : err.code === "key_expired"
    ? "it has expired"
    : "no such key exists on this server";
  return `That ${mode} key (ending in ${raw.slice(-4)}) cannot sign in: ${why}.`;
}
