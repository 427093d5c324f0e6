/**
 * Upgrades (an agent starts one, a human finishes it): the capability's public face. The
 * persisted shapes are in `types.ts`; the payment side is applied by the Stripe webhook
 * (domain/billing/stripe_events.ts → `payment.ts`).
 *
 * @example
 * ```ts
 * import type { UpgradeRecord } from "./mod.ts";
 * import { upgradeStatus } from "./mod.ts";
 * declare const upgrade: UpgradeRecord;
 * const status = upgradeStatus(upgrade, Date.now());
 * ```
 *
 * @module
 */
export {
  assertUpgradable,
  type Claim,
  claimUpgrade,
  enterCode,
  pollUpgrade,
  startUpgrade,
  UPGRADE_CODE_TTL_MS,
  UPGRADE_PAGE_AFTER_PAYMENT_MS,
  UPGRADE_POLL_INTERVAL_S,
  type UpgradeCaller,
  upgradeForPage,
  type UpgradeStatus,
  upgradeStatus,
  type UpgradeView,
} from "./upgrades.ts";
export { choiceFromForm, notPayable, openUpgradeCheckout } from "./checkout.ts";
export { browserDigest, normalizeUserCode } from "./codes.ts";
export { type MachineUpgradeOutcome, upgradeByMachinePayment } from "./machine.ts";
export type { UpgradeChoice, UpgradeRecord } from "./types.ts";
export { applyUpgradePayment } from "./payment.ts";
