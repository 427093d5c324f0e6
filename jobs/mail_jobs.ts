/**
 * Queue handler and maintenance of outbound mail (domain/mail/). The handler re-reads the record
 * the message names and is idempotent, so the queue's at-least-once delivery and the sweep's
 * re-sends are harmless.
 */
import type { Deps } from "../domain/platform/mod.ts";
import { mailMaintenance, runMailJob } from "../domain/mail/mod.ts";
import type { JobHandlers } from "./dispatcher.ts";

/** "mail" makes the attempt its message names. */
export function mailJobs(deps: Deps): JobHandlers {
  return {
    mail: async (id) => {
      await runMailJob(deps, id);
    },
  };
}

/** Re-sends the queue message of pending mail whose message was lost. */
export async function mailSweep(deps: Deps): Promise<void> {
  await mailMaintenance(deps);
}
