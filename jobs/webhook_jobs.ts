/**
 * Queue handlers and maintenance of outbound webhooks. Both handlers re-read their record and are
 * idempotent, so the queue's at-least-once delivery and the sweep's re-sends are harmless.
 */
import type { Deps } from "../domain/platform/deps.ts";
import { runDelivery } from "../domain/webhooks/deliver.ts";
import { fanOutEvent } from "../domain/webhooks/fan_out.ts";
import { deliveryMessage } from "../domain/webhooks/messages.ts";
import { sweepWebhooks } from "../domain/webhooks/sweep.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** "outbox" fans an event out into deliveries; "delivery" makes the attempt its message names. */
export function webhookJobs(deps: Deps): JobHandlers {
  return {
    outbox: async (id) => {
      const created = await fanOutEvent(deps, id);
      // First attempts right away; each delivery's queued fallback covers a crash from here on.
      await Promise.all(created.map((d) => runDelivery(deps, deliveryMessage(d, 1).id)));
    },
    delivery: async (id) => {
      await runDelivery(deps, id);
    },
  };
}

/** Re-sends outbox and delivery work whose queue message was lost. */
export async function webhookMaintenance(deps: Deps): Promise<void> {
  await sweepWebhooks(deps);
}
