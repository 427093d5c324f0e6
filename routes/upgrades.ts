/**
 * Upgrades: the two `/v1` operations (app/operations/upgrades.ts) and the human's pages.
 *
 * - `GET /upgrade` (the `verification_uri`; `?code=` pre-fills the code) and `POST /upgrade`
 *   (the code typed): a right code binds its upgrade to this browser and leads to
 *   `/upgrade/{id}`; a wrong, expired or used one is counted, and past
 *   `UPGRADE_CODE_FAILURES` (10 per IP, 30 per address block, in 15 minutes) the code form
 *   answers 429 until the window ends.
 * - `GET /upgrade/{id}`: the account (email masked), its sandbox projects, the choices with
 *   their prices, and the email's confirmation where it is required; `POST …/checkout` opens
 *   the Checkout Session and sends the browser to Stripe; `POST …/verify` sends the link.
 * - `GET /upgrade/{id}/done` (Stripe's success URL): waits up to 10 s for the webhook, then the
 *   result (or "not yet" with a "Check again" link),
 *   the live key's state (`POST …/reveal` shows it once when the agent has not claimed it) and
 *   `POST …/portal` (Stripe's Billing Portal).
 * - `GET /billing/returned`: where the Billing Portal returns.
 *
 * A page session is a random cookie (`HttpOnly`, `SameSite=Lax`, `__Host-` and `Secure` on
 * https) set by the first page; an upgrade answers only the browser whose cookie typed its code.
 * Every form is POST-only and carries a token derived from that cookie, which another site can
 * neither read nor forge; a cross-site `Sec-Fetch-Site` is refused as well.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { stripeOf } from "../app/operations/billing.ts";
import { UPGRADE_OPERATIONS } from "../app/operations/upgrades.ts";
import {
  choicePage,
  codePage,
  donePage,
  type EmailState,
  keyPage,
  leavingPage,
  noticePage,
  planName,
  UPGRADE_HEADERS,
} from "../app/upgrade/pages.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { createPortalSession, PORTAL_RETURN_PATH } from "../domain/billing/portal.ts";
import { ApiError, iso } from "../domain/platform/mod.ts";
import { maskEmail, sendVerificationLink } from "../domain/mail/mod.ts";
import { addressBlock } from "../domain/identity/mod.ts";
import {
  browserDigest,
  choiceFromForm,
  claimUpgrade,
  enterCode,
  normalizeUserCode,
  notPayable,
  openUpgradeCheckout,
  upgradeForPage,
  upgradeStatus,
  type UpgradeView,
} from "../domain/upgrades/mod.ts";
import type { AppEnv, Services } from "./env.ts";
import { MAX_BODY_BYTES, readTextCapped } from "./middleware/json_body.ts";
import { clientIp } from "./middleware/request_id.ts";
import { mountOperations } from "./operation_routes.ts";

type Status = 200 | 400 | 403 | 404 | 409 | 429 | 503;

/** How long the success page waits for Stripe's webhook before it says "not yet". */
const DONE_WAIT_MS = 10_000;
const DONE_POLL_MS = 250;

export function upgradeRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, UPGRADE_OPERATIONS);
  const { deps } = s;
  const secure = new URL(deps.config.publicBaseUrl).protocol === "https:";
  const cookieName = `${secure ? "__Host-" : ""}sw_upgrade`;
  const stripe = () => stripeOf(s);

  const page = (c: Context<AppEnv>, status: Status, body: string) =>
    c.body(body, status, UPGRADE_HEADERS);
  const notOpen = (c: Context<AppEnv>) =>
    page(
      c,
      404,
      noticePage(
        "This upgrade is not open here",
        "This page answers only the browser that entered the upgrade's code, and only while " +
          "the upgrade is open. Confirmed your email in another app? Go back to the browser " +
          "where you typed the code and reload. Otherwise enter the code again, or ask your " +
          "agent for a new one.",
        { href: "/upgrade", text: "Enter a code" },
      ),
    );

  /** The page session's secret: the cookie, set on this answer when the browser has none. */
  const session = (c: Context<AppEnv>): string => {
    const existing = cookies(c.req.header("cookie")).get(cookieName);
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const fresh = randomToken();
    c.header(
      "Set-Cookie",
      [
        `${cookieName}=${fresh}`,
        "Path=/",
        "HttpOnly",
        "SameSite=Lax",
        "Max-Age=86400",
        ...(secure ? ["Secure"] : []),
      ].join("; "),
    );
    return fresh;
  };
  /** The page session of a form post, after the CSRF checks; null when they fail. */
  const posted = async (c: Context<AppEnv>): Promise<
    { secret: string; browser: string; form: Record<string, string> } | null
  > => {
    const site = c.req.header("sec-fetch-site");
    if (site && site !== "same-origin" && site !== "none") return null;
    const secret = cookies(c.req.header("cookie")).get(cookieName);
    if (!secret) return null;
    const form = await formFields(c, s);
    if (!form.csrf || form.csrf !== await csrfOf(secret)) return null;
    return { secret, browser: await browserDigest(secret), form };
  };
  const forged = (c: Context<AppEnv>) =>
    page(
      c,
      403,
      noticePage(
        "This form cannot be used",
        "It was not sent from the page this browser opened (or cookies are off for this site). " +
          "Open the page again and retry.",
        { href: "/upgrade", text: "Start again" },
      ),
    );
  const viewOf = async (c: Context<AppEnv>, browser: string | null) =>
    await upgradeForPage(deps, c.req.param("id") ?? "", browser);

  // Step 1: the code.
  app.get("/upgrade", async (c) => {
    const secret = session(c);
    const typed = c.req.query("code") ?? "";
    const code = normalizeUserCode(typed) ?? typed.slice(0, 20);
    return page(c, 200, codePage({ csrf: await csrfOf(secret), code, error: null }));
  });

  app.post("/upgrade", async (c) => {
    const p = await posted(c);
    if (!p) return forged(c);
    const ip = clientIp(c, deps.config);
    const block = addressBlock(ip);
    const [byIp, byBlock] = await Promise.all([
      s.limits.upgradeCodes.peek(ip),
      s.limits.upgradeCodeBlocks.peek(block),
    ]);
    const refused = [byIp, byBlock].find((d) => !d.allowed);
    if (refused) {
      c.header("Retry-After", String(refused.retryAfter));
      return page(
        c,
        429,
        noticePage(
          "Too many wrong codes",
          `Too many wrong codes were typed from this address. Try again in ${
            Math.ceil(refused.retryAfter / 60)
          } minutes, with the code your agent gave you.`,
        ),
      );
    }
    const upgradeId = await enterCode(deps, p.form.code ?? "", p.browser);
    if (!upgradeId) {
      await Promise.all([s.limits.upgradeCodes.hit(ip), s.limits.upgradeCodeBlocks.hit(block)]);
      return page(
        c,
        400,
        codePage({
          csrf: p.form.csrf,
          code: (p.form.code ?? "").slice(0, 20),
          error: "That code does not open an upgrade: it may be mistyped, expired (codes last " +
            "30 minutes) or already used. Check it, or ask your agent for a new one.",
        }),
      );
    }
    return c.body(null, 303, { ...UPGRADE_HEADERS, Location: `/upgrade/${upgradeId}` });
  });

  // Step 2: the choice.
  app.get("/upgrade/:id", async (c) => {
    const secret = session(c);
    const view = await viewOf(c, await browserDigest(secret));
    if (!view) return notOpen(c);
    const status = upgradeStatus(view.entry.value, deps.clock.now());
    if (status === "paid" || status === "claimed") {
      return c.body(null, 303, {
        ...UPGRADE_HEADERS,
        Location: `/upgrade/${view.entry.value.id}/done`,
      });
    }
    if (status === "expired") return expiredPage(c);
    return page(c, 200, await choiceOf(view, secret, null, {}));
  });

  const choiceOf = async (
    view: UpgradeView,
    secret: string,
    error: string | null,
    selected: Record<string, string>,
    sent = false,
  ) =>
    choicePage({
      csrf: await csrfOf(secret),
      upgradeId: view.entry.value.id,
      maskedEmail: maskEmail(view.account.email),
      projects: view.sandboxProjects,
      email: emailState(view, sent),
      config: deps.config,
      error,
      selected,
    });
  const emailState = (view: UpgradeView, sent: boolean): EmailState => {
    if (view.account.emailVerified) return { kind: "verified" };
    if (!deps.config.upgrades.requireVerifiedEmail) {
      return { kind: "not_required", mail: deps.config.upgrades.mailConfigured };
    }
    return { kind: "required", sent };
  };
  const expiredPage = (c: Context<AppEnv>) =>
    page(
      c,
      409,
      noticePage(
        "This upgrade expired",
        "Nobody paid for it in time. Ask your agent to start a new upgrade: it gets a new code.",
      ),
    );

  app.post("/upgrade/:id/checkout", async (c) => {
    const p = await posted(c);
    if (!p) return forged(c);
    const view = await viewOf(c, p.browser);
    if (!view) return notOpen(c);
    const refusal = notPayable(deps, view);
    if (refusal) {
      const status = upgradeStatus(view.entry.value, deps.clock.now());
      if (status === "expired") return expiredPage(c);
      if (status !== "pending") {
        return c.body(null, 303, {
          ...UPGRADE_HEADERS,
          Location: `/upgrade/${view.entry.value.id}/done`,
        });
      }
      return page(c, 409, await choiceOf(view, p.secret, refusal, p.form));
    }
    let url: string;
    try {
      url = await openUpgradeCheckout(deps, stripe(), view, choiceFromForm(view, p.form));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 && err.status !== 503) throw err;
      const message = err.code === "billing_not_configured"
        ? "Payments for that choice are not available on this server right now. Choose " +
          "another, or try again later."
        : err.message;
      return page(
        c,
        err.status === 503 ? 503 : 400,
        await choiceOf(view, p.secret, message, p.form),
      );
    }
    return page(
      c,
      200,
      leavingPage(
        "Opening Stripe Checkout",
        "You are going to Stripe to pay. Back here afterwards, the upgrade completes by itself.",
        url,
      ),
    );
  });

  // Step 3: back from Stripe.
  app.get("/upgrade/:id/done", async (c) => {
    const secret = session(c);
    const browser = await browserDigest(secret);
    let view = await viewOf(c, browser);
    if (!view) return notOpen(c);
    // Back from Stripe (its redirect carries session_id) or "Check again": the webhook usually
    // lands within a second or two, so the answer waits for it a little instead of making the
    // human reload (no script, and no timed refresh that moves a page someone is reading).
    const waiting = c.req.query("session_id") !== undefined || c.req.query("wait") !== undefined;
    const until = Date.now() + DONE_WAIT_MS;
    while (
      waiting && view.entry.value.status === "pending" && view.entry.value.checkout &&
      Date.now() < until
    ) {
      await new Promise((r) => setTimeout(r, DONE_POLL_MS));
      view = await viewOf(c, browser) ?? view;
    }
    return page(c, 200, await doneOf(view, secret, null));
  });

  const doneOf = async (view: UpgradeView, secret: string, message: string | null) => {
    const u = view.entry.value;
    const status = upgradeStatus(u, deps.clock.now());
    return donePage({
      csrf: await csrfOf(secret),
      upgradeId: u.id,
      maskedEmail: maskEmail(view.account.email),
      status: status === "pending" ? "waiting" : status,
      moved: view.movedProjects,
      planName: planName(u.result?.planId ?? null),
      planProject: u.result?.planProjectId ?? null,
      creditsAdded: u.result?.creditsAdded ?? 0,
      claimedAt: iso(u.claimedAt),
      claimedBy: u.claimedBy,
      message,
    });
  };

  app.post("/upgrade/:id/reveal", async (c) => {
    const p = await posted(c);
    if (!p) return forged(c);
    const view = await viewOf(c, p.browser);
    if (!view) return notOpen(c);
    const u = view.entry.value;
    try {
      const claim = await claimUpgrade(deps, u.accountId, u.id, "human");
      if (claim.apiKey) {
        s.resolver.invalidateAccount(u.accountId);
        return page(c, 200, keyPage({ upgradeId: u.id, key: claim.apiKey }));
      }
      const fresh = await viewOf(c, p.browser);
      return page(c, 409, await doneOf(fresh ?? view, p.secret, null));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      return page(c, 409, await doneOf(view, p.secret, err.message));
    }
  });

  app.post("/upgrade/:id/portal", async (c) => {
    const p = await posted(c);
    if (!p) return forged(c);
    const view = await viewOf(c, p.browser);
    if (!view) return notOpen(c);
    if (view.entry.value.paidAt === null) return notOpen(c);
    try {
      const { url } = await createPortalSession(deps, stripe(), view.account.id);
      return page(
        c,
        200,
        leavingPage("Opening the billing portal", "You are going to Stripe's billing portal.", url),
      );
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 && err.status !== 503) throw err;
      return page(c, 409, await doneOf(view, p.secret, err.message));
    }
  });

  app.post("/upgrade/:id/verify", async (c) => {
    const p = await posted(c);
    if (!p) return forged(c);
    const view = await viewOf(c, p.browser);
    if (!view) return notOpen(c);
    // The mail capability sends a single-use link to the account's address; confirming it
    // brings the browser back here, where the payment then opens.
    try {
      await sendVerificationLink(deps, {
        accountId: view.account.id,
        returnTo: `/upgrade/${view.entry.value.id}`,
      });
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 && err.status !== 503) throw err;
      const message = err.code === "invalid_state"
        ? null
        : err.code === "rate_limited"
        ? `Too many links were sent to this address in the last hour. ${err.message}.`
        : err.code === "mail_not_configured"
        ? "This server cannot send mail right now; ask the operator."
        : err.message;
      const fresh = await viewOf(c, p.browser) ?? view;
      return page(c, message ? 409 : 200, await choiceOf(fresh, p.secret, message, {}));
    }
    return page(c, 200, await choiceOf(view, p.secret, null, {}, true));
  });

  app.get(PORTAL_RETURN_PATH, (c) =>
    page(
      c,
      200,
      noticePage(
        "Back from billing",
        "Changes you made in Stripe's billing portal (a card, a cancelled plan) reach Serpwright " +
          "within seconds. A cancelled plan keeps its project active to the end of the period " +
          "already paid. You can close this tab.",
        { href: "/pricing", text: "Pricing" },
      ),
    ));
}

/** 32 random bytes, base64url (43 characters). */
function randomToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The form token of a page session: derived from its cookie, which another site cannot read. */
async function csrfOf(secret: string): Promise<string> {
  const bytes = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`serpwright upgrade csrf v1\u0000${secret}`),
  );
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}

function cookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}

/** A form-encoded body's fields (the first of each name); anything else reads as none. */
async function formFields(c: Context<AppEnv>, s: Services): Promise<Record<string, string>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) return {};
  const text = await readTextCapped(c.req.raw, MAX_BODY_BYTES, s.deps.config.bodyTimeoutMs);
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) if (!(k in out)) out[k] = v;
  return out;
}
