/**
 * `/oauth/authorize`: the authorization endpoint and the human's page (domain/identity/oauth/
 * authorization.ts holds the rules). `GET` checks the request and shows the sign-in form, storing
 * nothing; every form posts back to `POST /oauth/authorize` with the sealed request (`request`),
 * the per-form CSRF token and an `action`: `key` (sign in with an API key), `signup` (the public signup use case, the same one
 * `POST /v1/accounts` runs, with its limits), `approve` or `deny`. The answer to the app is a 303
 * to its redirect URI with `code` (or `error`), `state` and `iss`. What each step does is
 * app/oauth/authorize.ts's use cases; this reads the query, form and cookie and renders.
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
import {
  approveRequest,
  denyRequest,
  signInWithKey,
  signUpAndSignIn,
  startAuthorization,
} from "../../app/oauth/authorize.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import {
  type AuthorizeQuery,
  isLoopbackRedirect,
  OAUTH_PATHS,
  OAuthError,
  type Pending,
  resume,
} from "../../domain/identity/mod.ts";
import type { AuthTicket } from "../../domain/identity/oauth/types.ts";
import type { AppEnv, Services } from "../env.ts";
import { clientIp } from "../middleware/request_id.ts";
import { formParams, spendIpBudget } from "./endpoints.ts";
import { consentPage, errorPage, type RequestView, type SignedIn, signInPage } from "./page.ts";

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
      const next = await startAuthorization(s, query);
      if (next.kind === "error_page") {
        return c.body(errorPage(next.code, next.description, next.note), 400, pageHeaders(null));
      }
      if (next.kind === "redirect") {
        return c.body(null, 303, {
          ...pageHeaders(new URL(next.redirectUri).origin),
          Location: next.location,
        });
      }
      const { started } = next;
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
          return toApp(c, await denyRequest(s, p), r);
        case "key":
        case "signup": {
          const next = form.action === "key"
            ? await signInWithKey(s, p, form.api_key ?? "")
            : await signUpAndSignIn(s, p, form.email ?? "", clientIp(c, s.deps.config));
          if (next.kind === "dead") return dead(c, next.error);
          if (next.kind === "again") return again(next.message, next.at);
          const who = signedIn(next.principal, next.newKey);
          return page(c, 200, consentPage(view(next.at), who, next.full), r);
        }
        case "approve": {
          const next = await approveRequest(s, p);
          if (next.kind === "again") return again(next.message);
          if (next.kind === "full") {
            return page(c, 400, consentPage(view(p), signedIn(next.principal, null), next.full), r);
          }
          return toApp(c, next.location, r);
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
