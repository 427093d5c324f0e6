/**
 * `/oauth/authorize`: the authorization endpoint and the human's page (domain/identity/oauth/
 * authorization.ts holds the rules). `GET` checks the request and shows the sign-in form, storing
 * nothing; every form posts back to `POST /oauth/authorize` with the sealed request (`request`),
 * the per-form CSRF token and an `action`: `key` (sign in with an API key), `signup` (the public signup use case, the same one
 * `POST /v1/accounts` runs, with its limits), `approve` or `deny`. The answer to the app is a 303
 * to its redirect URI with `code` (or `error`), `state` and `iss`.
 *
 * The page is strict: `Content-Security-Policy` allows no script, no frame (`frame-ancestors
 * 'none'`, plus `X-Frame-Options: DENY` for old browsers), forms only to this server and to the
 * app's redirect origin (browsers apply `form-action` to the redirect after a post); the request
 * is bound to a cookie set by the `GET` (HttpOnly, SameSite=Lax, Secure and `__Host-` on https),
 * so a form posted from another site or another browser is refused.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { anonymousActor } from "../../app/actor.ts";
import { execute, parseInput } from "../../app/operation.ts";
import { signupOp } from "../../app/operations/accounts.ts";
import { KEY_PREFIX } from "../../domain/identity/api_keys.ts";
import { hashKey } from "../../domain/identity/key_hash.ts";
import { ApiError } from "../../domain/platform/errors.ts";
import {
  approve,
  type AuthorizeQuery,
  begin,
  check,
  deny,
  type Pending,
  redirectWith,
  resume,
  signIn,
  wrongKey,
} from "../../domain/identity/oauth/authorization.ts";
import { isLoopbackRedirect } from "../../domain/identity/oauth/clients.ts";
import { activeGrantCount, grantCapMessage } from "../../domain/identity/oauth/grants.ts";
import { OAuthError } from "../../domain/identity/oauth/errors.ts";
import { OAUTH_PATHS } from "../../domain/identity/oauth/metadata.ts";
import type { AuthTicket } from "../../domain/identity/oauth/types.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "../middleware/request_id.ts";
import { formParams, spendIpBudget } from "./endpoints.ts";
import { consentPage, errorPage, type RequestView, type SignedIn, signInPage } from "./page.ts";

const API_KEY = /^sk_(sandbox|live)_[A-Za-z0-9]{40}$/;

/** The page's headers; `formTarget` is the app's redirect origin, where a form may end up. */
function pageHeaders(formTarget: string | null): Record<string, string> {
  return {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; img-src data:; " +
      `base-uri 'none'; form-action 'self'${formTarget ? ` ${formTarget}` : ""}; ` +
      "frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
  };
}

function view(p: { ticket: AuthTicket; sealed: string }): RequestView {
  const r = p.ticket;
  return {
    request: p.sealed,
    csrf: r.csrf,
    clientName: r.clientName,
    clientDocHost: r.clientKind === "cimd" ? new URL(r.clientId).host : null,
    redirectHost: new URL(r.redirectUri).host,
    loopback: isLoopbackRedirect(r.redirectUri),
  };
}

export function authorizeRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const secure = new URL(s.deps.config.publicBaseUrl).protocol === "https:";
  /** One cookie per request (several sign-ins may be open in tabs at once). */
  const cookieName = (requestId: string) =>
    `${secure ? "__Host-" : ""}sw_oauth_${requestId.slice(-12)}`;

  const page = (
    c: Context<AppEnv>,
    status: 200 | 400 | 403 | 429,
    body: string,
    r?: AuthTicket,
  ) => c.body(body, status, pageHeaders(r ? new URL(r.redirectUri).origin : null));
  const dead = (c: Context<AppEnv>, err: OAuthError) =>
    c.body(
      errorPage(err.code, err.description),
      err.status === 403 ? 403 : err.status === 429 ? 429 : 400,
      { ...pageHeaders(null), ...err.headers },
    );
  const toApp = (c: Context<AppEnv>, url: string, r: AuthTicket) =>
    c.body(null, 303, { ...pageHeaders(new URL(r.redirectUri).origin), Location: url });

  app.get(OAUTH_PATHS.authorize, async (c) => {
    try {
      await spendIpBudget(c, s);
      const query: AuthorizeQuery = {};
      const url = new URL(c.req.url);
      for (const [k, v] of url.searchParams) {
        if (k in query) throw new OAuthError("invalid_request", `${k}: sent more than once`);
        query[k] = v;
      }
      const checked = await check(s.deps, query, s.limits.clientDocHost);
      if ("refusal" in checked) {
        const { redirectUri, state, error, redirect, clientName } = checked.refusal;
        if (!redirect) {
          const note = `${clientName} has not been approved on this server yet, so this error is ` +
            `shown here instead of being sent to ${new URL(redirectUri).host}.`;
          return c.body(errorPage(error.code, error.description, note), 400, pageHeaders(null));
        }
        const location = redirectWith(s.deps, redirectUri, {
          error: error.code,
          error_description: error.description,
          state,
        });
        return c.body(null, 303, {
          ...pageHeaders(new URL(redirectUri).origin),
          Location: location,
        });
      }
      // Nothing is stored until an API key signs in: the request travels sealed in the page.
      const started = await begin(s.deps, checked.ok);
      const { ticket, browserSecret } = started;
      const cookie = [
        `${cookieName(ticket.id)}=${browserSecret}`,
        "Path=/",
        "HttpOnly",
        "SameSite=Lax",
        `Max-Age=${Math.floor((ticket.expiresAt - ticket.createdAt) / 1000)}`,
        ...(secure ? ["Secure"] : []),
      ].join("; ");
      c.header("Set-Cookie", cookie);
      return page(c, 200, signInPage(view(started), null), ticket);
    } catch (err) {
      if (err instanceof OAuthError) return dead(c, err);
      throw err;
    }
  });

  app.post(OAUTH_PATHS.authorize, async (c) => {
    let form: Record<string, string>;
    let p: Pending;
    try {
      await spendIpBudget(c, s);
      form = await formParams(c, s);
      const cookies = parseCookies(c.req.header("cookie"));
      p = await resume(s.deps, form, (id) => cookies.get(cookieName(id)));
    } catch (err) {
      if (err instanceof OAuthError) return dead(c, err);
      if (err instanceof ApiError && err.status < 500) {
        return dead(c, new OAuthError("invalid_request", err.message));
      }
      throw err;
    }
    const r = p.ticket;
    const again = (message: string, at: Pending = p) =>
      page(c, 400, signInPage(view(at), message), r);
    try {
      switch (form.action) {
        case "deny":
          return toApp(c, await deny(s.deps, p), r);
        case "key": {
          const raw = (form.api_key ?? "").trim();
          const malformed = keyShapeProblem(raw);
          if (malformed) return again(malformed);
          let principal;
          try {
            principal = await s.resolver.resolve(raw);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            const next = await wrongKey(s.deps, p);
            if (!next) {
              return dead(
                c,
                new OAuthError("access_denied", "Too many wrong keys; start again from your app"),
              );
            }
            return again(refusedKey(raw, err), next);
          }
          const signed = await signIn(s.deps, p, hashKey(raw));
          const full = grantCapMessage(await activeGrantCount(s.deps, principal.account.id));
          return page(c, 200, consentPage(view(signed), signedIn(principal, null), full), r);
        }
        case "signup": {
          let raw: string;
          try {
            const input = parseInput(signupOp, {
              body: { email: form.email ?? "", origin: "human" },
            });
            const outcome = await execute(
              s,
              signupOp,
              anonymousActor(clientIp(c, s.deps.config)),
              input,
            );
            raw = outcome.body.api_key;
          } catch (err) {
            if (!(err instanceof ApiError) || err.status >= 500) throw err;
            return again(
              err.code === "account_exists"
                ? "That email already has an account: sign in with one of its API keys instead."
                : err.message,
            );
          }
          const principal = await s.resolver.resolve(raw);
          const signed = await signIn(s.deps, p, hashKey(raw));
          const full = grantCapMessage(await activeGrantCount(s.deps, principal.account.id));
          return page(c, 200, consentPage(view(signed), signedIn(principal, raw), full), r);
        }
        case "approve": {
          const keyHash = p.entry.value?.keyHash;
          if (!keyHash) return again("Sign in first.");
          let principal;
          try {
            principal = await s.resolver.resolveHash(keyHash);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            return again(`That key cannot approve: ${err.message}.`);
          }
          // The account's cap of connected apps (the token endpoint holds it exactly).
          const full = grantCapMessage(await activeGrantCount(s.deps, principal.account.id));
          if (full) return page(c, 400, consentPage(view(p), signedIn(principal, null), full), r);
          const url = await approve(s.deps, p, {
            accountId: principal.account.id,
            mode: principal.key.mode,
            keyId: principal.key.id,
            keyHash: principal.key.hash,
          });
          return toApp(c, url, r);
        }
        default:
          return again("Choose one of the buttons.");
      }
    } catch (err) {
      if (err instanceof OAuthError) return dead(c, err);
      throw err;
    }
  });
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

function signedIn(
  p: { account: { email: string }; key: { mode: "sandbox" | "live"; last4: string } },
  newKey: string | null,
): SignedIn {
  return { email: p.account.email, mode: p.key.mode, keyLast4: p.key.last4, newKey };
}

function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}
