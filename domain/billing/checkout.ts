/**
 * Creates Stripe Checkout Sessions for plan subscriptions (one project) and credit packs. The
 * session carries, in its own metadata and in the subscription's or payment intent's (Stripe does
 * not copy session metadata onto them), everything the payment webhook needs to recognise it:
 * account, project, plan or pack. Nothing is granted here; only the webhook grants.
 */
import type Stripe from "stripe";
import { ApiError, atomic, type Deps, keys, readMany, write } from "../platform/mod.ts";
import type { CheckoutRecord, PendingCheckoutRecord, PlanId } from "./types.ts";
import type { KeyMode } from "../identity/types.ts";
import { isActive } from "./subscription_state.ts";
import { findPack, findPlan, type PackId, stripePriceOf } from "./catalog.ts";
import { ensureStripeCustomer } from "./customer.ts";
import { type StripeClient, StripeError } from "./stripe_client.ts";

/** A checkout is reported as `pending_payment` this long; Stripe expires sessions after 24 h too. */
export const PENDING_CHECKOUT_MS = 24 * 3_600_000;
/** Marks metadata as ours, so sessions of other products on the same Stripe account are ignored. */
export const METADATA_SERVICE = "serpwright";

export interface BillingCaller {
  accountId: string;
  mode: KeyMode;
  /** The request's own Idempotency-Key, if any; the Stripe key is derived from it. */
  idempotencyKey?: string;
}

export interface SubscriptionCheckout {
  sessionId: string;
  url: string;
  projectId: string;
  planId: PlanId;
  /** True when an open checkout of the same plan under 24 h old was handed out again. */
  reused: boolean;
}

export interface PackCheckout {
  sessionId: string;
  url: string;
  packId: PackId;
}

/**
 * Starts a subscription checkout for one project. Order of refusals: 403 sandbox key, 404 project,
 * 403 sandbox project, 409 already subscribed, 503 plan not configured. An open checkout of the
 * same plan under 24 h old is returned again instead of opening a second one, so a retrying agent
 * cannot make a human pay twice.
 */
export async function createSubscriptionCheckout(
  deps: Deps,
  stripe: StripeClient | null,
  caller: BillingCaller,
  input: { projectId: string; planId: PlanId },
): Promise<SubscriptionCheckout> {
  const { kv, clock, config } = deps;
  refuseSandboxKey(caller);
  const plan = findPlan(input.planId);
  if (!plan) throw new ApiError("invalid_request", `plan_id: unknown plan '${input.planId}'`);

  const [projectEntry, subEntry, pendingEntry] = await readMany(kv, [
    keys.project(caller.accountId, input.projectId),
    keys.subscription(input.projectId),
    keys.pendingCheckout(input.projectId),
  ]);
  const project = projectEntry.value;
  if (!project) {
    throw new ApiError("not_found", `No project '${input.projectId}' on this account`);
  }
  if (project.sandbox) {
    throw new ApiError(
      "sandbox_not_billable",
      "Sandbox projects are a trial and cannot be subscribed; create the project with a live key",
    );
  }
  const now = clock.now();
  if (isActive(subEntry.value, now)) {
    throw new ApiError(
      "already_subscribed",
      `Project '${project.id}' already has an active subscription`,
    );
  }
  const price = stripePriceOf(config, plan.id);
  if (!stripe || !price) throw notConfigured(`plan '${plan.id}'`);

  const pending = pendingEntry.value;
  if (pending && now - pending.createdAt < PENDING_CHECKOUT_MS) {
    if (pending.planId === plan.id) {
      return {
        sessionId: pending.sessionId,
        url: pending.url,
        projectId: project.id,
        planId: plan.id,
        reused: true,
      };
    }
    // The human switches plans: close the other session so both cannot be paid. Best effort; if
    // it was already paid, the webhook activates the project with that plan.
    await stripe.checkout.sessions.expire(pending.sessionId).catch(() => {});
  }

  const metadata = {
    service: METADATA_SERVICE,
    kind: "subscription",
    account_id: caller.accountId,
    project_id: project.id,
    plan_id: plan.id,
  };
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: "subscription",
    line_items: [{ price, quantity: 1 }],
    client_reference_id: caller.accountId,
    metadata,
    subscription_data: { metadata },
    ...returnUrls(config.publicBaseUrl),
  };
  const session = await createSession(deps, stripe, params, caller, "subscription");

  const checkout: CheckoutRecord = {
    sessionId: session.id,
    kind: "subscription",
    accountId: caller.accountId,
    projectId: project.id,
    planId: plan.id,
    packId: null,
    url: session.url,
    createdAt: now,
    completedAt: null,
  };
  const pendingRecord: PendingCheckoutRecord = {
    sessionId: session.id,
    planId: plan.id,
    url: session.url,
    createdAt: now,
  };
  const res = await atomic(kv)
    .set(keys.checkout(session.id), checkout, { expireIn: RECORD_TTL_MS })
    .set(keys.pendingCheckout(project.id), pendingRecord, { expireIn: PENDING_CHECKOUT_MS * 2 })
    .commit();
  if (!res.ok) throw new Error("Storing the checkout failed");
  return {
    sessionId: session.id,
    url: session.url,
    projectId: project.id,
    planId: plan.id,
    reused: false,
  };
}

/** Starts a one-off payment checkout for a credit pack. Refusals: 403 sandbox key, 503 not configured. */
export async function createPackCheckout(
  deps: Deps,
  stripe: StripeClient | null,
  caller: BillingCaller,
  input: { packId: PackId },
): Promise<PackCheckout> {
  const { kv, clock, config } = deps;
  refuseSandboxKey(caller);
  const pack = findPack(input.packId);
  if (!pack) throw new ApiError("invalid_request", `pack_id: unknown pack '${input.packId}'`);
  const price = stripePriceOf(config, pack.id);
  if (!stripe || !price) throw notConfigured(`pack '${pack.id}'`);

  const metadata = {
    service: METADATA_SERVICE,
    kind: "credit_pack",
    account_id: caller.accountId,
    pack_id: pack.id,
  };
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: "payment",
    line_items: [{ price, quantity: 1 }],
    client_reference_id: caller.accountId,
    metadata,
    payment_intent_data: { metadata },
    ...returnUrls(config.publicBaseUrl),
  };
  const session = await createSession(deps, stripe, params, caller, "credit_pack");
  const now = clock.now();
  const checkout: CheckoutRecord = {
    sessionId: session.id,
    kind: "credit_pack",
    accountId: caller.accountId,
    projectId: null,
    planId: null,
    packId: pack.id,
    url: session.url,
    createdAt: now,
    completedAt: null,
  };
  await write(kv, keys.checkout(session.id), checkout, { expireIn: RECORD_TTL_MS });
  return { sessionId: session.id, url: session.url, packId: pack.id };
}

/** What an upgrade's checkout pays for: a plan of one sandbox project, a pack, or both. */
export interface UpgradeCheckoutInput {
  accountId: string;
  upgradeId: string;
  plan: { projectId: string; planId: PlanId } | null;
  packId: PackId | null;
  /** When the Checkout Session closes (Stripe takes 30 minutes to 24 hours from now). */
  expiresAt: number;
}

/**
 * Opens the Checkout Session of an upgrade (domain/upgrades/): ONE session for everything the
 * human chose. With a plan it is a subscription-mode session whose line items are the plan's
 * monthly price and, when a pack was chosen too, the pack's one-time price (Stripe bills one-time
 * prices on the subscription's first invoice); a pack alone is a payment-mode session. The
 * session's metadata (and the subscription's or payment intent's) carry
 * `{service, kind: "upgrade", account_id, upgrade_id, project_id, plan_id, pack_id}`; the record
 * stored here is what the webhook matches the paid session against. 503
 * `billing_not_configured` for a plan or pack without its price.
 */
export async function createUpgradeCheckout(
  deps: Deps,
  stripe: StripeClient | null,
  input: UpgradeCheckoutInput,
): Promise<{ sessionId: string; url: string }> {
  const { kv, clock, config } = deps;
  if (!input.plan && !input.packId) {
    throw new ApiError("invalid_request", "Choose a plan or a credit pack to pay for");
  }
  const line_items: Stripe.Checkout.SessionCreateParams.LineItem[] = [];
  if (input.plan) {
    const price = stripePriceOf(config, input.plan.planId);
    if (!stripe || !price) throw notConfigured(`plan '${input.plan.planId}'`);
    line_items.push({ price, quantity: 1 });
  }
  if (input.packId) {
    const price = stripePriceOf(config, input.packId);
    if (!stripe || !price) throw notConfigured(`pack '${input.packId}'`);
    line_items.push({ price, quantity: 1 });
  }
  const metadata: Record<string, string> = {
    service: METADATA_SERVICE,
    kind: "upgrade",
    account_id: input.accountId,
    upgrade_id: input.upgradeId,
    ...(input.plan ? { project_id: input.plan.projectId, plan_id: input.plan.planId } : {}),
    ...(input.packId ? { pack_id: input.packId } : {}),
  };
  const base = config.publicBaseUrl;
  const params: Stripe.Checkout.SessionCreateParams = {
    mode: input.plan ? "subscription" : "payment",
    line_items,
    client_reference_id: input.accountId,
    metadata,
    ...(input.plan ? { subscription_data: { metadata } } : {
      payment_intent_data: { metadata },
    }),
    expires_at: Math.floor(input.expiresAt / 1000),
    success_url: `${base}/upgrade/${input.upgradeId}/done?session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${base}/upgrade/${input.upgradeId}`,
  };
  const session = await createSession(
    deps,
    stripe!,
    params,
    { accountId: input.accountId, mode: "live" },
    "upgrade",
  );
  const checkout: CheckoutRecord = {
    sessionId: session.id,
    kind: "upgrade",
    accountId: input.accountId,
    projectId: input.plan?.projectId ?? null,
    planId: input.plan?.planId ?? null,
    packId: input.packId,
    url: session.url,
    createdAt: clock.now(),
    completedAt: null,
    upgradeId: input.upgradeId,
  };
  await write(kv, keys.checkout(session.id), checkout, { expireIn: RECORD_TTL_MS });
  return { sessionId: session.id, url: session.url };
}

/** Expires an open Checkout Session at Stripe, best effort (a replaced choice cannot be paid). */
export async function expireSession(stripe: StripeClient | null, sessionId: string) {
  await stripe?.checkout.sessions.expire(sessionId).catch(() => {});
}

/** Checkout records are kept 90 days for support questions, then KV drops them. */
const RECORD_TTL_MS = 90 * 86_400_000;

function refuseSandboxKey(caller: BillingCaller): void {
  if (caller.mode === "sandbox") {
    throw new ApiError(
      "sandbox_not_billable",
      "Sandbox keys cannot purchase; use a live key (a human upgrades at the pricing page)",
    );
  }
}

function notConfigured(what: string): ApiError {
  return new ApiError(
    "billing_not_configured",
    `Payments for ${what} are not configured on this server`,
  );
}

function returnUrls(baseUrl: string) {
  return {
    success_url: `${baseUrl}/pricing?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
    cancel_url: `${baseUrl}/pricing?checkout=cancelled`,
  };
}

/**
 * Calls Stripe as the account's Stripe customer (created with its first checkout and kept,
 * customer.ts) with an Idempotency-Key: derived from the caller's own key and the parameters (so
 * our retry after a 500 reuses Stripe's session, and a reused key with other parameters does not
 * trip Stripe's idempotency_error), or fresh when the caller sent none.
 */
async function createSession(
  deps: Deps,
  stripe: StripeClient,
  params: Stripe.Checkout.SessionCreateParams,
  caller: BillingCaller,
  kind: string,
): Promise<{ id: string; url: string }> {
  let session: Stripe.Checkout.Session;
  try {
    params.customer = await ensureStripeCustomer(deps, stripe, caller.accountId);
    const idempotencyKey = caller.idempotencyKey
      ? `serpwright-${await sha256Hex(
        JSON.stringify([caller.accountId, kind, caller.idempotencyKey, params]),
      )}`
      : crypto.randomUUID();
    session = await stripe.checkout.sessions.create(params, { idempotencyKey });
  } catch (err) {
    throw stripeFailure(err);
  }
  if (!session.id || !session.url) throw new Error("Stripe returned a session without id or url");
  return { id: session.id, url: session.url };
}

/**
 * A key or price Stripe rejects is the operator's configuration (503 `billing_not_configured`);
 * anything else (network, Stripe 5xx) is 500 `internal_error`, safe to retry with the same key.
 */
export function stripeFailure(err: unknown): Error {
  if (err instanceof StripeError) {
    console.error(JSON.stringify({
      level: "error",
      msg: "stripe call failed",
      type: err.type,
      code: err.code ?? null,
      status: err.statusCode ?? null,
      error: err.message,
    }));
    const misconfigured = err.type === "StripeAuthenticationError" ||
      err.type === "StripePermissionError" ||
      (err.type === "StripeInvalidRequestError" && err.code === "resource_missing");
    if (misconfigured) {
      return new ApiError(
        "billing_not_configured",
        "The payment provider refused this server's configuration for the purchase",
      );
    }
  }
  return err instanceof Error ? err : new Error(String(err));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
