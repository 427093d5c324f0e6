/**
 * `/oauth/authorize`: the authorization endpoint and the human's page (domain/oauth/
 * authorization.ts holds the rules). `GET` checks the request and shows the sign-in form; every
 * form posts back to `POST /oauth/authorize` with the request id, the per-form CSRF token and
 * an `action`: `key` (sign in with an API key), `signup` (the public signup use case, the same one
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
import { hashKey } from "../../domain/key_hash.ts";
import { ApiError } from "../../domain/errors.ts";
import {
  approve,
  type AuthorizeQuery,
  check,
  countFailure,
  deny,
  redirectWith,
  resume,
  signIn,
  start,
} from "../../domain/oauth/authorization.ts";
import { isLoopbackRedirect } from "../../domain/oauth/clients.ts";
import { OAuthError } from "../../domain/oauth/errors.ts";
import { OAUTH_PATHS } from "../../domain/oauth/metadata.ts";
import type { AuthRequestRecord } from "../../domain/oauth/types.ts";
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

function view(r: AuthRequestRecord): RequestView {
  return {
    requestId: r.id,
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
    r?: AuthRequestRecord,
  ) => c.body(body, status, pageHeaders(r ? new URL(r.redirectUri).origin : null));
  const dead = (c: Context<AppEnv>, err: OAuthError) =>
    page(
      c,
      err.status === 403 ? 403 : err.status === 429 ? 429 : 400,
      errorPage(err.code, err.description),
    );
  const toApp = (c: Context<AppEnv>, url: string, r: AuthRequestRecord) =>
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
      const checked = await check(s.deps, query);
      if ("refusal" in checked) {
        const { redirectUri, state, error } = checked.refusal;
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
      const { record, browserSecret } = await start(s.deps, checked.ok);
      const cookie = [
        `${cookieName(record.id)}=${browserSecret}`,
        "Path=/",
        "HttpOnly",
        "SameSite=Lax",
        `Max-Age=${Math.floor((record.expiresAt - record.createdAt) / 1000)}`,
        ...(secure ? ["Secure"] : []),
      ].join("; ");
      c.header("Set-Cookie", cookie);
      return page(c, 200, signInPage(view(record), null), record);
    } catch (err) {
      if (err instanceof OAuthError) return dead(c, err);
      throw err;
    }
  });

  app.post(OAUTH_PATHS.authorize, async (c) => {
    let form: Record<string, string>;
    let entry: Deno.KvEntry<AuthRequestRecord>;
    try {
      await spendIpBudget(c, s);
      form = await formParams(c, s);
      const cookies = parseCookies(c.req.header("cookie"));
      const secret = form.request ? cookies.get(cookieName(form.request)) : undefined;
      entry = await resume(s.deps, form, secret);
    } catch (err) {
      if (err instanceof OAuthError) return dead(c, err);
      if (err instanceof ApiError && err.status < 500) {
        return dead(c, new OAuthError("invalid_request", err.message));
      }
      throw err;
    }
    const r = entry.value;
    const again = (message: string) => page(c, 400, signInPage(view(r), message), r);
    try {
      switch (form.action) {
        case "deny":
          return toApp(c, await deny(s.deps, entry), r);
        case "key": {
          const raw = (form.api_key ?? "").trim();
          if (!API_KEY.test(raw)) {
            return again("That is not a Serpwright API key (sk_sandbox_… or sk_live_…).");
          }
          let principal;
          try {
            principal = await s.resolver.resolve(raw);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            const alive = await countFailure(s.deps, entry);
            if (!alive) {
              return dead(
                c,
                new OAuthError("access_denied", "Too many wrong keys; start again from your app"),
              );
            }
            return again(`That key cannot sign in: ${err.message}.`);
          }
          const signed = await signIn(s.deps, entry, hashKey(raw));
          return page(c, 200, consentPage(view(signed), signedIn(principal, null)), signed);
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
          const signed = await signIn(s.deps, entry, hashKey(raw));
          return page(c, 200, consentPage(view(signed), signedIn(principal, raw)), signed);
        }
        case "approve": {
          if (r.keyHash === null) return again("Sign in first.");
          let principal;
          try {
            principal = await s.resolver.resolveHash(r.keyHash);
          } catch (err) {
            if (!(err instanceof ApiError)) throw err;
            return again(`That key cannot approve: ${err.message}.`);
          }
          const url = await approve(s.deps, entry, {
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
