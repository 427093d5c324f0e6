/**
 * The public page an email verification link opens, outside `/v1` (domain/mail/verification.ts
 * holds the rules; app/verify_email_page.ts the HTML and its headers):
 *
 * - `GET /verify-email/{token}` shows what the link is for and a confirm button; it changes
 *   nothing, so a mail scanner that fetches links uses none up. It sets an HttpOnly,
 *   SameSite=Strict cookie (`__Host-` on https) holding a random CSRF token, also in the form.
 * - `POST /verify-email/{token}` confirms: the form's token must equal the cookie's, and the
 *   browser's `Sec-Fetch-Site` (or else its `Origin`), when sent, must say this site. Then the
 *   account reads `email_verified: true` and the browser goes to the request's return address
 *   (303), or sees the "verified" page.
 *
 * An unknown link is 404; a used, replaced or expired one 410, each with a page saying so. Every
 * request first spends the client IP's budget of token pages (`SHARED_PAGE_RATE_PER_MINUTE`).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import {
  confirmPage,
  failurePage,
  verifiedPage,
  VERIFY_PAGE_HEADERS,
} from "../app/verify_email_page.ts";
import { ApiError, secureEqual } from "../domain/platform/mod.ts";
import {
  confirmVerificationLink,
  inspectVerificationLink,
  VERIFY_PATH,
} from "../domain/mail/mod.ts";
import type { AppEnv, Services } from "./env.ts";
import { readTextCapped } from "./middleware/json_body.ts";
import { setHeaders } from "./middleware/rate_limit.ts";
import { clientIp } from "./middleware/request_id.ts";

const FORM_MAX_BYTES = 4096;
const CSRF_COOKIE_MAX_AGE_S = 3600;

type Failure = "unknown" | "replaced" | "used" | "expired";

const FAILURES: Record<Failure, { status: 404 | 410; title: string; text: string }> = {
  unknown: {
    status: 404,
    title: "Link not found",
    text: "This link does not open anything. Ask for a new verification email.",
  },
  replaced: {
    status: 410,
    title: "Link replaced",
    text: "A newer email carries a newer link for this request: use the newest one.",
  },
  used: {
    status: 410,
    title: "Link already used",
    text: "This link was already used: it works once. If you confirmed it then, the address " +
      "is verified; otherwise ask for a new verification email.",
  },
  expired: {
    status: 410,
    title: "Link expired",
    text: "This link has expired (a link works for 24 hours). Ask for a new verification email.",
  },
};

export function verifyEmailRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const base = s.deps.config.publicBaseUrl;
  const origin = new URL(base).origin;
  const secure = new URL(base).protocol === "https:";
  const cookieName = secure ? "__Host-sw_verify" : "sw_verify";
  const cookie = (value: string, maxAge: number) =>
    [
      `${cookieName}=${value}`,
      "Path=/",
      "HttpOnly",
      "SameSite=Strict",
      `Max-Age=${maxAge}`,
      ...(secure ? ["Secure"] : []),
    ].join("; ");

  const page = (c: Context<AppEnv>, status: number, body: string) =>
    c.body(body, status as 200, VERIFY_PAGE_HEADERS);
  const failure = (c: Context<AppEnv>, state: Failure) => {
    const f = FAILURES[state];
    return page(c, f.status, failurePage(base, f.title, f.text));
  };
  /** The client IP's budget of token pages; a 429 page when it is spent. */
  const overBudget = async (c: Context<AppEnv>): Promise<Response | null> => {
    const decision = await s.limits.sharedPages.hit(clientIp(c, s.deps.config));
    setHeaders(c, decision);
    if (decision.allowed) return null;
    c.header("Retry-After", String(decision.retryAfter));
    return page(
      c,
      429,
      failurePage(
        base,
        "Too many requests",
        `Too many pages opened from this address; try again in ${decision.retryAfter} s.`,
      ),
    );
  };

  app.get(`${VERIFY_PATH}/:token`, async (c) => {
    const limited = await overBudget(c);
    if (limited) return limited;
    const token = c.req.param("token");
    const link = await inspectVerificationLink(s.deps, token);
    if (link.state !== "valid") return failure(c, link.state);
    const csrf = randomToken();
    c.header("Set-Cookie", cookie(csrf, CSRF_COOKIE_MAX_AGE_S));
    return page(
      c,
      200,
      confirmPage({
        baseUrl: base,
        action: `${VERIFY_PATH}/${token}`,
        csrf,
        maskedEmail: link.maskedEmail,
        expiresAt: link.expiresAt,
      }),
    );
  });

  app.post(`${VERIFY_PATH}/:token`, async (c) => {
    const limited = await overBudget(c);
    if (limited) return limited;
    const refused = (status: 400 | 403, text: string) =>
      page(c, status, failurePage(base, "Not confirmed", text));
    let form: URLSearchParams;
    try {
      const type = c.req.header("content-type") ?? "";
      if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
        return refused(400, "This page takes its own form only.");
      }
      const text = await readTextCapped(c.req.raw, FORM_MAX_BYTES, s.deps.config.bodyTimeoutMs);
      form = new URLSearchParams(text);
    } catch (err) {
      if (err instanceof ApiError) return refused(400, "The form could not be read.");
      throw err;
    }
    // A browser says where a form comes from: it must be this site's own page. `Sec-Fetch-Site`
    // first (no page can forge it); else `Origin`, which under the page's `no-referrer` policy a
    // browser may send as "null" for the page's own form.
    const site = c.req.header("sec-fetch-site");
    const from = c.req.header("origin");
    const elsewhere = site !== undefined
      ? site !== "same-origin"
      : from !== undefined && from !== "null" && from !== origin;
    const given = form.get("csrf") ?? "";
    const expected = cookiesOf(c.req.header("cookie")).get(cookieName) ?? "";
    if (
      elsewhere || given.length < 20 || expected.length < 20 || !secureEqual(given, expected)
    ) {
      return refused(
        403,
        "This form expired or did not come from this page. Open the link from your email " +
          "again and press the button there.",
      );
    }
    const outcome = await confirmVerificationLink(s.deps, c.req.param("token"));
    if (outcome.state !== "confirmed") return failure(c, outcome.state);
    // This process's cached view of the account, at once (others follow the signal).
    s.resolver.invalidateAccount(outcome.accountId);
    c.header("Set-Cookie", cookie("", 0));
    if (outcome.returnTo) {
      return c.body(null, 303, { ...VERIFY_PAGE_HEADERS, Location: outcome.returnTo });
    }
    return page(c, 200, verifiedPage(base));
  });
}

/** 32 random bytes, base64url. */
function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

function cookiesOf(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}
