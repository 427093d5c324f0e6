/**
 * An agent's wallet for tests: `mppx`'s own client with its Stripe method, paying from the
 * agent's own (test) Stripe account on the fake Stripe.
 */
import { Mppx as ClientMppx } from "mppx/client";
import { charge as stripeCharge } from "mppx/stripe/client";
import type { FakeStripe } from "./fake_stripe.ts";

/**
 * An agent's wallet: the library's client with its Stripe method, whose `createToken` grants a
 * shared payment token with the test helper, as an agent's own Stripe account would.
 */
export function agentWallet(fake: FakeStripe, paymentMethod = "pm_card_visa") {
  return ClientMppx.create({ polyfill: false, methods: [walletMethod(fake, paymentMethod)] });
}

/** The library's Stripe client method, paying from the agent's own (test) Stripe account. */
export function walletMethod(fake: FakeStripe, paymentMethod: string) {
  return stripeCharge({
    paymentMethod,
    createToken: async (p) => {
      const form = new URLSearchParams({
        payment_method: p.paymentMethod ?? paymentMethod,
        "usage_limits[currency]": p.currency,
        "usage_limits[max_amount]": p.amount,
        "usage_limits[expires_at]": String(p.expiresAt),
        "seller_details[network_id]": p.networkId ?? "",
      });
      for (const [k, v] of Object.entries(p.metadata ?? {})) form.set(`metadata[${k}]`, v);
      const res = await fetch(`${fake.url}/v1/test_helpers/shared_payment/granted_tokens`, {
        method: "POST",
        headers: {
          authorization: `Basic ${btoa("sk_test_agent_wallet:")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: form,
      });
      const token = await res.json();
      if (!res.ok) throw new Error(`token refused: ${JSON.stringify(token)}`);
      return token.id as string;
    },
  });
}
