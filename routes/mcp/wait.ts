/**
 * The bounded `wait` of the audit and article tools: hold the call while the job runs, reading its
 * KV record (the truth of every job, whichever process works it) and sending a progress
 * notification at each status change. Never longer than `MAX_WAIT_SECONDS`; the caller then polls.
 */
import type { ToolContext } from "./kit.ts";

export const MAX_WAIT_SECONDS = 60;
/** How often the record is read while waiting; one strong KV read each. */
const POLL_MS = 250;

/**
 * Reads `read()` until `done` or `seconds` pass (or the client cancels), reporting progress as
 * `step()` moves. Returns the last value read.
 */
export async function waitForJob<T>(
  ctx: ToolContext,
  seconds: number,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  step: (value: T) => { at: number; total: number; message: string },
): Promise<T> {
  let value = await read();
  if (seconds <= 0 || done(value)) return value;
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
  await report(value);
  while (!done(value) && Date.now() < deadline && !ctx.signal.aborted) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    value = await read();
    await report(value);
  }
  return value;
}
