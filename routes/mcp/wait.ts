/**
 * The bounded `wait` of the audit and article tools: hold the call while the job runs, woken by
 * `kv.watch` on its KV record (the truth of every job, whichever process works it; see
 * domain/jobs/watch.ts for the re-read on a local KV file) and sending a progress notification at
 * each status change. Never longer than `MAX_WAIT_SECONDS`; the caller then polls.
 *
 * Held calls are capped (`WaitSlots`): per API key (`MCP_WAITS_PER_KEY`, 5) and per process
 * (`MCP_WAITS_PER_PROCESS`, 200). A call past either cap is not refused: it answers at once with
 * the job's current status, as `wait: 0` would, and says in its text why it did not wait.
 */
import { type JobRef, watchJobRecord } from "../../domain/jobs/mod.ts";
import type { ToolContext } from "./kit.ts";

export { WaitSlots } from "../../app/wait_slots.ts";

export const MAX_WAIT_SECONDS = 60;

/**
 * Reads `read()` until `done` or `seconds` pass (or the client cancels), re-reading when the job's
 * record changes and reporting progress as `step()` moves. Returns the last value read.
 */
export async function waitForJob<T>(
  ctx: ToolContext,
  seconds: number,
  job: JobRef,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  step: (value: T) => { at: number; total: number; message: string },
): Promise<T> {
  let value = await read();
  if (seconds <= 0 || done(value)) return value;
  const slot = ctx.services.mcpWaits.take(ctx.caller.principal?.key.id ?? "anonymous");
  if ("refused" in slot) {
    ctx.note(
      `Did not wait: ${slot.refused}. The status above is current; poll with action get.`,
    );
    return value;
  }
  const deadline = Date.now() + Math.min(seconds, MAX_WAIT_SECONDS) * 1000;
  // Progress must grow with every notification; a job's status only moves forward, so the step
  // index does, and a step is reported once.
  let reported = -1;
  const report = async (v: T) => {
    const s = step(v);
    if (s.at <= reported) return;
    reported = s.at;
    await ctx.progress(s.at, s.total, s.message);
  };
  // Opened after the first read; its first wake is the record as it is now, so a change between
  // the two is not missed.
  const watch = watchJobRecord(ctx.services.deps, job);
  try {
    await report(value);
    while (!done(value) && await watch.next(deadline, ctx.signal)) {
      value = await read();
      await report(value);
    }
    return value;
  } finally {
    watch.close();
    slot.release();
  }
}
