import type { OpenAPIHono } from "@hono/zod-openapi";
import { BILLING_OPERATIONS } from "../app/operations/billing.ts";
import { receiveStripeEvent } from "../app/billing/stripe_webhook.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { verifyStripeEvent } from "../domain/billing/stripe_events.ts";
import type { AppEnv, Services } from "./env.ts";
import { readBodyCapped } from "./middleware/json_body.ts";
import { mountOperations } from "./operation_routes.ts";

/** Stripe events are small; anything larger is not from Stripe. */
const MAX_WEBHOOK_BYTES = 512 * 1024;

/**
 * Billing: endpoints 13–17 from the application layer's billing operations, and the inbound
 * Stripe webhook (outside `/v1`, raw body, no bearer key).
 */
export function billingRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;
  mountOperations(app, s, BILLING_OPERATIONS);

  // Stripe's inbound webhook: signed by Stripe, not by a bearer key; verified on the raw bytes,
  // which is why the JSON body middleware does not run outside /v1 and /admin. The route
  // verifies; the application layer applies (a thrown error answers 5xx, so Stripe retries).
  app.post("/webhooks/stripe", async (c) => {
    const raw = new TextDecoder().decode(
      await readBodyCapped(c.req.raw, MAX_WEBHOOK_BYTES, deps.config.bodyTimeoutMs),
    );
    const event = await verifyStripeEvent(deps, raw, c.req.header("stripe-signature") ?? null);
    return c.json(await receiveStripeEvent(s, event), 200);
  });
}
