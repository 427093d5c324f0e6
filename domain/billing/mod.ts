/**
 * Billing: the catalog of plans, packs and unit prices, credits and the funding of work,
 * subscriptions, and machine payments. The public face of the capability; the Stripe side
 * (checkout, portal, client, webhook events) is imported directly by the few callers that need it,
 * so a worker never loads the Stripe SDK. The persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { findPlan, getBalance } from "./mod.ts";
 * const credits = await getBalance(deps.kv, accountId);
 * const plan = findPlan("pro");
 * ```
 *
 * @module
 */
export {
  articleUnit,
  type Cadence,
  CADENCES,
  cadenceWithin,
  type CrawlAllowance,
  crawlLimitsFor,
  CREDIT_NOTES,
  CREDIT_PACKS,
  CREDIT_SCHEDULE,
  CREDIT_USD_VALUE,
  type CreditPack,
  CURRENCY,
  findPack,
  findPlan,
  isPurchasable,
  PACK_IDS,
  type PackId,
  packsWithAvailability,
  PLAN_IDS,
  PLANS,
  plansDocument,
  PURCHASE_HINT,
  RECHECK_MAX_URLS,
  RECHECK_PRICING_RULE,
  RECHECK_URLS_PER_UNIT,
  recheckCredits,
  RENDERED_AUDIT_RULE,
  renderedAuditCharge,
  SANDBOX_BALANCE_NOTE,
  UNIT_PRICES,
} from "./catalog.ts";
export {
  addCredit,
  addDebit,
  getBalance,
  grantOperatorCredits,
  MAX_OPERATOR_GRANT,
  readBalance,
} from "./credits.ts";
export {
  addRefund,
  chargeFor,
  type Funding,
  type Payer,
  readPayer,
  type WorkActor,
} from "./funding.ts";
export { grantMachinePayment, MACHINE_PAYMENT } from "./machine_payments.ts";
export { type PackPayment, recordPackPayment } from "./pack_payment.ts";
export {
  addMonthsUtc,
  emitSubscriptionUpdated,
  type EventOutcome,
  logAnomaly,
  markEvent,
  type StripeEventLike,
} from "./stripe_common.ts";
export { accessOf, isActive } from "./subscription_state.ts";
