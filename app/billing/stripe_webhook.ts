/**
 * The Stripe webhook's use case: apply one verified event (domain/billing/stripe_events.ts
 * `verifyStripeEvent` checks the signature on the raw body first, at the route) exactly once, and
 * answer the acknowledgement Stripe receives. An event the service does not handle is
 * acknowledged too (`ignored`); a thrown error marks nothing, so the route answers 5xx and Stripe
 * delivers it again.
 *
 * @example
 * ```ts
 * import { verifyStripeEvent } from "../../domain/billing/stripe_events.ts";
 * import type { Services } from "../services.ts";
 * import { receiveStripeEvent } from "./stripe_webhook.ts";
 * declare const services: Services;
 * declare const raw: string, signature: string;
 * const event = await verifyStripeEvent(services.deps, raw, signature);
 * const ack = await receiveStripeEvent(services, event); // { received: true, event_id, outcome }
 * ```
 *
 * @module
 */
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import {
  applyStripeEvent,
  type EventOutcome,
  type StripeEventLike,
} from "../../domain/billing/stripe_events.ts";
import type { Services } from "../services.ts";

/** What the webhook answers Stripe (200). */
export interface StripeAck {
  received: true;
  event_id: string;
  outcome: EventOutcome;
}

/** Applies a verified Stripe event and answers its acknowledgement. */
export async function receiveStripeEvent(
  s: Services,
  event: StripeEventLike,
): Promise<StripeAck> {
  const outcome = await applyStripeEvent(s.deps, event);
  return { received: true, event_id: event.id, outcome };
}
