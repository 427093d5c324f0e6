/**
 * Builds the server-side Stripe SDK client from the configuration. The API version is pinned to
 * the one the installed SDK was generated for, so webhook payloads (configure the endpoint with the
 * same version) have the shapes the handlers read.
 */
import Stripe from "stripe";
import type { Config } from "../platform/mod.ts";

export type StripeClient = Stripe;

/** The API version requests and webhook payloads use. */
export const STRIPE_API_VERSION = Stripe.API_VERSION;

/**
 * The client, or null when `STRIPE_SECRET_KEY` is unset (purchases then answer 503
 * `billing_not_configured`). `STRIPE_API_BASE` (e.g. a fake on loopback) is split into the SDK's
 * host, port and protocol; against such a base the SDK does not retry, so a test's failure is
 * seen at once, while against Stripe it retries twice with its own Idempotency-Key.
 */
export function createStripeClient(config: Config): StripeClient | null {
  const { secretKey, apiBase } = config.stripe;
  if (!secretKey) return null;
  const options: Stripe.StripeConfig = {
    apiVersion: STRIPE_API_VERSION,
    httpClient: Stripe.createFetchHttpClient(),
    maxNetworkRetries: apiBase ? 0 : 2,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: "Serpwright" },
  };
  if (apiBase) {
    const url = new URL(apiBase);
    const protocol = url.protocol === "http:" ? "http" : "https";
    options.host = url.hostname;
    options.port = url.port ? Number(url.port) : protocol === "http" ? 80 : 443;
    options.protocol = protocol;
  }
  return new Stripe(secretKey, options);
}

/** Verifies webhook signatures with Web Crypto (the SDK's sync variant cannot under Deno). */
export const subtleCrypto = Stripe.createSubtleCryptoProvider();

/** Static SDK helpers that need no secret key (webhook verification and test signing). */
export const stripeWebhooks = Stripe.webhooks;

/** The SDK's error base class, to tell Stripe's answers from our own failures. */
export const StripeError = Stripe.errors.StripeError;
