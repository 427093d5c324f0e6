import { type RecheckRunner, runRecheckJob } from "../domain/rechecks/mod.ts";
import { resendExpiredJobs } from "../domain/jobs/mod.ts";
import type { Deps } from "../domain/platform/mod.ts";
import type { JobHandlers, JobRuntime } from "./dispatcher.ts";

/** Items a re-check judges per step, at most (fewer when `CRAWL_STEP_PAGES` is smaller). */
export const RECHECK_STEP_URLS = 10;

/**
 * How re-checks run: the crawl's operator settings (step time, concurrency, the address guard's
 * private-target switch, the caps), so a re-check fetches under the same rules as an audit.
 */
export function recheckRunner(deps: Deps): RecheckRunner {
  const c = deps.config;
  return {
    stepUrls: Math.min(RECHECK_STEP_URLS, c.crawlStepPages),
    stepMs: c.crawlStepSeconds * 1000,
    concurrency: c.crawlConcurrency,
    allowPrivate: c.allowPrivateTargets,
    caps: c.crawlCaps,
  };
}

/**
 * The queue handler: runs one step, and while another is due takes it at once in this process
 * (inside the handler on the job table, detached on KV's native queue), as audits do. The next
 * step's message is already enqueued, so a process that stops leaves it to another.
 */
export function recheckJobs(deps: Deps, rt: JobRuntime): JobHandlers {
  const runner = recheckRunner(deps);
  const chain = async (id: string) => {
    try {
      while (!rt.stopping.aborted && (await runRecheckJob(deps, id, runner)) === "next") {
        // next step
      }
    } catch (err) {
      console.error(
        JSON.stringify({ level: "error", msg: "recheck chain stopped", id, error: String(err) }),
      );
    }
  };
  return {
    recheck: async (id) => {
      if ((await runRecheckJob(deps, id, runner)) !== "next") return;
      if (rt.inline) await chain(id);
      else rt.track(new Promise((r) => setTimeout(r, 0)).then(() => chain(id)));
    },
  };
}

/** Resends the message of re-checks whose lease ran out (a lost message, a dead worker). */
export async function recheckMaintenance(deps: Deps): Promise<void> {
  await resendExpiredJobs(deps, "recheck");
}
