/**
 * Queue handlers and maintenance of outbound webhooks. Both handlers re-read their record and are
 * idempotent, so the queue's at-least-once delivery and the sweep's re-sends are harmless.
 */
import type { Deps } from "../domain/platform/mod.ts";
import {
  deliveryMessage,
  fanOutEvent,
  runDelivery,
  sweepWebhooks,
} from "../domain/webhooks/mod.ts";
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
