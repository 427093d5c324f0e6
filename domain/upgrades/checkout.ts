/**
 * The human's choice and its Checkout Session. Every sandbox project of the account moves to the
 * live side with the upgrade (a live key can neither subscribe nor fund a project left in the
 * sandbox, so leaving one behind would strand it); the human picks how each is paid for: a
 * monthly plan (`basic`, `pro`) or credits per unit, and optionally a credit pack. At least one
 * plan or pack must be paid: only a settled payment upgrades.
 *
 * @module
 */
import { ApiError, atomic, type Deps, keys, read } from "../platform/mod.ts";
import { PACK_IDS, type PackId, PLAN_IDS } from "../billing/mod.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { createUpgradeCheckout, expireSession } from "../billing/checkout.ts";
import type { StripeClient } from "../billing/stripe_client.ts";
import type { PlanId } from "../billing/types.ts";
import type { ProjectFunding, UpgradeChoice, UpgradeRecord } from "./types.ts";
import { UPGRADE_RECORD_TTL_MS, upgradeStatus, type UpgradeView } from "./upgrades.ts";

/** How long the Checkout Session stays open (Stripe's minimum is 30 minutes). */
export const UPGRADE_CHECKOUT_TTL_MS = 60 * 60_000;
/** A pending upgrade stays open this long past its session's end (a late redirect back). */
const AFTER_SESSION_MS = 10 * 60_000;

/**
 * Reads the choice from the page's form fields: `fund_<project_id>` = `credits`, `basic` or
 * `pro` for each sandbox project (credits when absent), `pack` = a pack id or `none`. 400
 * `invalid_request` for anything else, or for more than one plan (one session holds one
 * subscription; the trial has one project anyway).
 */
export function choiceFromForm(
  view: UpgradeView,
  form: Record<string, string>,
): UpgradeChoice {
  const projects = view.sandboxProjects.map((p) => {
    const value = form[`fund_${p.id}`] ?? "credits";
    if (value !== "credits" && !(PLAN_IDS as readonly string[]).includes(value)) {
      throw new ApiError("invalid_request", `Unknown choice for ${p.name}`);
    }
    return { projectId: p.id, funding: value as ProjectFunding };
  });
  const pack = form.pack ?? "none";
  if (pack !== "none" && !(PACK_IDS as readonly string[]).includes(pack)) {
    throw new ApiError("invalid_request", "Unknown credit pack");
  }
  if (projects.filter((p) => p.funding !== "credits").length > 1) {
    throw new ApiError("invalid_request", "Choose a plan for one project per payment");
  }
  const choice = { projects, packId: pack === "none" ? null : pack };
  if (!choice.packId && !projects.some((p) => p.funding !== "credits")) {
    throw new ApiError(
      "invalid_request",
      "Choose a monthly plan for a project or a credit pack: the upgrade needs a payment",
    );
  }
  return choice;
}

/** Why this upgrade cannot be paid now, or null. */
export function notPayable(deps: Deps, view: UpgradeView): string | null {
  const now = deps.clock.now();
  const status = upgradeStatus(view.entry.value, now);
  if (status === "expired") return "This upgrade expired; ask your agent to start a new one.";
  if (status !== "pending") return "This upgrade is already paid.";
  if (view.account.upgradedAt) return "This account is already upgraded.";
  if (deps.config.upgrades.requireVerifiedEmail && !view.account.emailVerified) {
    return "Confirm the account's email first.";
  }
  return null;
}

/**
 * Opens (or hands out again, for the same choice while it stays open) the upgrade's Checkout
 * Session and returns its URL. A changed choice expires the earlier session at Stripe (best
 * effort) so both cannot be paid. The pending upgrade is kept open past the session's end.
 */
export async function openUpgradeCheckout(
  deps: Deps,
  stripe: StripeClient | null,
  view: UpgradeView,
  choice: UpgradeChoice,
): Promise<string> {
  const refusal = notPayable(deps, view);
  if (refusal) throw new ApiError("invalid_state", refusal);
  const now = deps.clock.now();
  const upgrade = view.entry.value;
  const open = upgrade.checkout;
  if (open && sameChoice(open.choice, choice) && open.expiresAt - now > 5 * 60_000) {
    return open.url;
  }
  const planned = choice.projects.find((p) => p.funding !== "credits");
  const expiresAt = now + UPGRADE_CHECKOUT_TTL_MS;
  const session = await createUpgradeCheckout(deps, stripe, {
    accountId: upgrade.accountId,
    upgradeId: upgrade.id,
    plan: planned ? { projectId: planned.projectId, planId: planned.funding as PlanId } : null,
    packId: choice.packId as PackId | null,
    expiresAt,
  });
  const next: UpgradeRecord = {
    ...upgrade,
    checkout: { sessionId: session.sessionId, url: session.url, choice, createdAt: now, expiresAt },
    expiresAt: Math.max(upgrade.expiresAt, expiresAt + AFTER_SESSION_MS),
  };
  const stays = next.expiresAt - now;
  const res = await atomic(deps.kv)
    .check(view.entry)
    .set(view.entry.key, next, { expireIn: UPGRADE_RECORD_TTL_MS })
    .set(keys.upgradePending(upgrade.accountId), upgrade.id, { expireIn: stays })
    .commit();
  if (!res.ok) {
    // Another tab changed the upgrade meanwhile: keep what it stored, close ours.
    await expireSession(stripe, session.sessionId);
    const stored = (await read(deps.kv, keys.upgrade(upgrade.accountId, upgrade.id))).value;
    if (stored?.checkout && stored.status === "pending") return stored.checkout.url;
    throw new ApiError("invalid_state", "This upgrade changed meanwhile; reload the page");
  }
  if (open) await expireSession(stripe, open.sessionId);
  return session.url;
}

function sameChoice(a: UpgradeChoice, b: UpgradeChoice): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
