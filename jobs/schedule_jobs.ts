/**
 * Queue handler and maintenance of audit schedules: the maintenance tick (every 5 s in process,
 * and the `Deno.cron` each minute) sends a `schedule` message per due schedule; the handler runs
 * that schedule's due slot once.
 */
import type { Deps } from "../domain/platform/mod.ts";
import { dispatchDueSchedules, runDueSchedule } from "../domain/monitoring/mod.ts";
import type { JobHandlers } from "./dispatcher.ts";

export function scheduleJobs(deps: Deps): JobHandlers {
  return {
    schedule: async (projectId) => {
      await runDueSchedule(deps, projectId);
    },
  };
}

/** Finds due schedules (a page at a time, through their index) and sends their messages. */
export async function scheduleMaintenance(deps: Deps): Promise<void> {
  await dispatchDueSchedules(deps);
}
