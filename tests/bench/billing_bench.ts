/**
 * Billing benchmark: debits per second on ONE account's balance (the worst case: every debit
 * conflicts with every other), with the atomic retries each debit needed. The baseline is the same
 * debits run one after another in the same process, so the ratio is comparable across machines.
 *
 * Run: `deno run -A tests/bench/billing_bench.ts` (part of `deno task bench`).
 */
import {
  addDebit,
  debitCredits,
  getBalance,
  grantCredits,
  readBalance,
} from "../../domain/billing/credits.ts";
import { manualClock } from "../../domain/platform/clock.ts";
import { loadConfig } from "../../config.ts";
import type { Deps } from "../../domain/platform/deps.ts";
import { atomically, atomicStats } from "../../kv/atomic.ts";

const DEBITS = 200;

/**
 * `wrapper`: `debitCredits`, which queues same-account writes in-process. `raw`: `addDebit` in a
 * bare `atomically` operation, as audits and articles use it inside their own commits, where only
 * the versionstamp check serialises writers (the cross-process case).
 */
async function run(
  label: string,
  concurrency: number,
  path: "wrapper" | "raw" = "wrapper",
): Promise<number> {
  const kv = await Deno.openKv(":memory:");
  const deps: Deps = {
    kv,
    clock: manualClock(),
    config: loadConfig({ KV_PATH: ":memory:" }),
    queue: { enqueue: () => Promise.resolve(), enqueueIn: () => {} },
  };
  const accountId = "acct_bench";
  try {
    await grantCredits(deps, { accountId, amount: DEBITS, reason: "bench", ref: "seed" });
    const retriesBefore = atomicStats.retries;
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < DEBITS) {
        const i = next++;
        const input = { accountId, amount: 1, reason: "bench", ref: `d${i}` };
        if (path === "wrapper") {
          await debitCredits(deps, input);
        } else {
          await atomically(kv, async () => {
            const op = kv.atomic();
            addDebit(op, await readBalance(kv, accountId), { ...input, now: Date.now() });
            return { op, result: null };
          });
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    const retries = (atomicStats.retries - retriesBefore) / DEBITS;
    const balance = await getBalance(kv, accountId);
    if (balance !== 0) throw new Error(`balance should be 0, is ${balance}`);
    const rate = DEBITS / seconds;
    console.log(
      `billing: ${DEBITS} ${label} debits in ${seconds.toFixed(2)} s = ${rate.toFixed(0)} ` +
        `debits/s, ${retries.toFixed(1)} atomic retries per debit`,
    );
    return rate;
  } finally {
    kv.close();
  }
}

if (import.meta.main) {
  await run("warm-up", 1);
  const sequential = await run("sequential", 1);
  const concurrent = await run(`concurrent (${DEBITS} in flight)`, DEBITS);
  const raw = await run(`concurrent lock-free (${DEBITS} in flight, addDebit)`, DEBITS, "raw");
  console.log(
    `billing: concurrent/sequential = ${(concurrent / sequential).toFixed(2)}, ` +
      `lock-free/sequential = ${(raw / sequential).toFixed(2)}; every balance exact`,
  );
}
