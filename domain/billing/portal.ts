/**
 * Stripe's Billing Portal: where a human manages what the account pays for (payment method,
 * invoices, cancelling a plan). A portal session is a short-lived link Stripe makes for the
 * account's customer (customer.ts); it returns to our `/billing/returned` page. Cancellations
 * and failed payments come back through the webhook as today.
 *
 * @module
 */
import { ApiError, type Deps } from "../platform/mod.ts";
import { stripeFailure } from "./checkout.ts";
import { knownStripeCustomer } from "./customer.ts";
import type { StripeClient } from "./stripe_client.ts";

/** Where the portal's "return" link leads. */
export const PORTAL_RETURN_PATH = "/billing/returned";

/**
 * A Billing Portal session's URL for the account. 503 `billing_not_configured` without Stripe;
 * 409 `no_billing_customer` when the account never paid (no customer yet).
 */
export async function createPortalSession(
  deps: Deps,
  stripe: StripeClient | null,
  accountId: string,
): Promise<{ url: string; customerId: string }> {
  if (!stripe) {
    throw new ApiError(
      "billing_not_configured",
      "The billing portal is Stripe's, which is not configured on this server",
    );
  }
  const customerId = await knownStripeCustomer(deps, accountId);
  if (!customerId) {
    throw new ApiError(
      "no_billing_customer",
      "This account has never paid, so it has no billing to manage yet; the first checkout " +
        "creates its Stripe customer",
    );
  }
  try {
    const session = await stripe.billingPortal.sessions.create({
      customer: customerId,
      return_url: `${deps.config.publicBaseUrl}${PORTAL_RETURN_PATH}`,
    });
    return { url: session.url, customerId };
  } catch (err) {
    throw stripeFailure(err);
  }
}
