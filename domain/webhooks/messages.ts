/**
 * Queue messages of deliveries. A message names the delivery record and the attempt number it
 * is for ("dlv_…:3"), so a duplicate or late message for an attempt already made is recognisably
 * stale and does nothing. Without the number, a message the sweep re-sent while the original was
 * only late would start a second retry chain.
 *
 * @module
 */
import type { JobMessage } from "../platform/mod.ts";

export function deliveryMessage(deliveryId: string, attempt: number): JobMessage {
  return { type: "delivery", id: `${deliveryId}:${attempt}` };
}

/** Splits a delivery message id; a bare id means "whatever attempt is due". */
export function parseDeliveryMessage(id: string): { deliveryId: string; attempt: number | null } {
  const at = id.lastIndexOf(":");
  if (at < 0) return { deliveryId: id, attempt: null };
  const attempt = Number(id.slice(at + 1));
  return {
    deliveryId: id.slice(0, at),
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : null,
  };
}
