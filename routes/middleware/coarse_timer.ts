/**
 * Deadlines for work in flight on the request path (a body that must arrive in time, a call held
 * before its answer becomes a stream), checked by one shared ticker instead of a timer each: a
 * `setTimeout` and its `clearTimeout` cost Deno more than a whole small request. A deadline fires
 * up to TICK_MS late. The ticker runs while deadlines are pending and stops itself once none are.
 */

/** The ticker's period: how late a deadline may fire. */
export const TICK_MS = 50;

interface Deadline {
  at: number;
  fire: () => void;
}

const pending = new Set<Deadline>();
let ticker: ReturnType<typeof setInterval> | undefined;

function sweep(): void {
  const now = Date.now();
  for (const d of pending) {
    if (d.at > now) continue;
    pending.delete(d);
    try {
      d.fire();
    } catch (err) {
      console.error(JSON.stringify({ level: "error", msg: "deadline failed", error: String(err) }));
    }
  }
  if (pending.size === 0) {
    clearInterval(ticker);
    ticker = undefined;
  }
}

/** Calls `fire` once `ms` have passed (up to TICK_MS later); the returned function cancels it. */
export function after(ms: number, fire: () => void): () => void {
  const d: Deadline = { at: Date.now() + ms, fire };
  pending.add(d);
  if (ticker === undefined) {
    ticker = setInterval(sweep, TICK_MS);
    // Pending deadlines belong to requests, which keep the process alive by themselves.
    Deno.unrefTimer(ticker as unknown as number);
  }
  return () => void pending.delete(d);
}
