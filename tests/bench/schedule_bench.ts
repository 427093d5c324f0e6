/**
 * Schedule dispatch benchmark: 10,000 projects (pro, daily at 06:00 UTC) all due in the same
 * hour. A hand-moved clock walks the hour in 5 s ticks (the maintenance tick's period); each tick
 * runs the cron's work (`dispatchDueSchedules`) and drains the KV job table through the one
 * dispatcher, whose `schedule` handler starts audits via `createAudit` (audit jobs themselves are
 * not run: this measures dispatch, not crawling).
 *
 * Prints: the dispatch cost per schedule (tick + handler, wall time) against the baseline of
 * starting the same audits straight through `createAudit` as the API does, measured in the same
 * run; the largest number started in any one minute and the spread; and memory (heap and RSS)
 * before and at peak during dispatch, which must not grow with the number of schedules.
 *
 * Run: `deno run -A --unstable-kv tests/bench/schedule_bench.ts` (part of `deno task bench`).
 * `SCHEDULES=2000` for a quick run.
 */
import type { Principal } from "../../domain/identity/auth.ts";
import { createAudit } from "../../domain/audits/create.ts";
import { manualClock } from "../../domain/platform/clock.ts";
import { loadConfig } from "../../config.ts";
import type { Deps } from "../../domain/platform/deps.ts";
import { dispatchDueSchedules, runDueSchedule } from "../../domain/monitoring/dispatch.ts";
import { putSchedule } from "../../domain/monitoring/schedules.ts";
import type { AccountRecord, ApiKeyRecord } from "../../domain/identity/types.ts";
import type { ProjectRecord } from "../../domain/projects/types.ts";
import type { SubscriptionRecord } from "../../domain/billing/types.ts";
import { createDispatcher } from "../../jobs/dispatcher.ts";
import { tableQueue } from "../../jobs/table_queue.ts";
import { keys } from "../../kv/keys.ts";
import { openKv } from "../../main.ts";

// Retained heap is read after a full GC: re-run this script with `gc()` exposed if it is not.
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      "--v8-flags=--expose-gc",
      new URL(import.meta.url).pathname,
    ],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  Deno.exit(out.code);
}

const N = Number(Deno.env.get("SCHEDULES") ?? 10_000);
const BASELINE = Math.min(1_000, N);
const HOUR = 3_600_000;
const START = Date.parse("2026-11-23T12:00:00Z");
const TICK_MS = 5_000;

const dir = await Deno.makeTempDir({ prefix: "serpwright-schedule-bench-" });
const kv = await openKv(`${dir}/kv.sqlite`);
const clock = manualClock(START);
const queue = tableQueue(kv);
const deps: Deps = { kv, clock, config: loadConfig({ KV_PATH: ":memory:" }), queue };

function principal(i: number): Principal {
  const account: AccountRecord = {
    id: `acct_b${i}`,
    email: `b${i}@example.com`,
    emailVerified: false,
    companyName: null,
    origin: "agent",
    createdAt: START,
    projectsCount: 1,
    sandboxProjects: 0,
    activeKeys: 1,
  };
  const key: ApiKeyRecord = {
    id: `key_b${i}`,
    accountId: account.id,
    hash: `h${i}`,
    name: "bench",
    prefix: "sk_live_",
    last4: "0000",
    mode: "live",
    createdAt: START,
    expiresAt: null,
    revokedAt: null,
  };
  return { key, account, usage: null };
}

/** Writes account, project and a pro subscription for project `i` (what signup + payment leave). */
async function seed(i: number, subscribed: boolean): Promise<Principal> {
  const p = principal(i);
  const projectId = `proj_b${i.toString(36).padStart(5, "0")}`;
  const project: ProjectRecord = {
    id: projectId,
    accountId: p.account.id,
    url: `https://site${i}.example`,
    name: `site${i}`,
    status: "setup",
    language: "en",
    country: "US",
    sandbox: false,
    createdAt: START,
    counts: { keywords: 0, articles: 0, audits: 0 },
    latestAudit: null,
  };
  const op = kv.atomic()
    .set(keys.account(p.account.id), p.account)
    .set(keys.project(p.account.id, projectId), project);
  if (subscribed) {
    const sub: SubscriptionRecord = {
      projectId,
      accountId: p.account.id,
      plan: "pro",
      paidUntil: START + 30 * 86_400_000,
      stripeSubscriptionId: null,
      stripeCustomerId: null,
      activatedAt: START,
      updatedAt: START,
    };
    op.set(keys.subscription(projectId), sub);
  }
  await op.commit();
  return p;
}

const mib = (b: number) => (b / 1048576).toFixed(1);

// Setup: N scheduled projects, plus BASELINE projects audited straight through createAudit.
const t0 = performance.now();
for (let i = 0; i < N; i += 50) {
  await Promise.all(Array.from({ length: Math.min(50, N - i) }, async (_, j) => {
    const p = await seed(i + j, true);
    await putSchedule(
      deps,
      { accountId: p.account.id, mode: p.key.mode },
      `proj_b${(i + j).toString(36).padStart(5, "0")}`,
      {
        cadence: "daily",
        hourUtc: 6,
      },
    );
  }));
}
console.log(
  `setup: ${N} projects with schedules in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

// Baseline: the API path, createAudit per project, one after another.
const baseline: Principal[] = [];
for (let i = 0; i < BASELINE; i++) baseline.push(await seed(N + i, true));
const b0 = performance.now();
for (let i = 0; i < BASELINE; i++) {
  await createAudit(
    deps,
    { accountId: baseline[i].account.id, mode: baseline[i].key.mode },
    `proj_b${(N + i).toString(36).padStart(5, "0")}`,
    undefined,
    {
      trigger: "api",
    },
  );
}
const baselineMs = (performance.now() - b0) / BASELINE;
for await (const row of kv.list({ prefix: ["job_queue"] })) await kv.delete(row.key);

// The hour: 06:00 to 07:00 on the 24th, ticking every 5 s.
// Minute 60 holds runs whose 5 s tick fell on 07:00:00 exactly.
const perMinute = new Array(61).fill(0);
let started = 0;
let dispatchMs = 0;
const dispatch = createDispatcher({
  schedule: async (id) => {
    const outcome = await runDueSchedule(deps, id);
    if (outcome === "started") {
      started++;
      perMinute[Math.floor((clock.now() - hourStart) / 60_000)]++;
    }
  },
  audit: () => Promise.resolve(),
});
const hourStart = Date.parse("2026-11-24T06:00:00Z");
gc!();
const heapBefore = Deno.memoryUsage().heapUsed;
/** Heap retained (after a full GC) at the end of each 10th minute of the hour. */
const retained: number[] = [];
const rssBefore = Deno.memoryUsage().rss;
let heapPeak = heapBefore;
let rssPeak = rssBefore;
let ticks = 0;
for (let t = hourStart - TICK_MS; t < hourStart + HOUR + TICK_MS; t += TICK_MS) {
  clock.set(t);
  const s = performance.now();
  await dispatchDueSchedules(deps);
  while ((await queue.drain(dispatch)) > 0) { /* until the table is empty */ }
  dispatchMs += performance.now() - s;
  ticks++;
  if (t > hourStart && (t - hourStart) % 600_000 === 0) {
    gc!();
    retained.push(Deno.memoryUsage().heapUsed);
  }
  const m = Deno.memoryUsage();
  heapPeak = Math.max(heapPeak, m.heapUsed);
  rssPeak = Math.max(rssPeak, m.rss);
}

const perSchedule = dispatchMs / N;
const busiest = Math.max(...perMinute);
const quietest = Math.min(...perMinute.slice(0, 60));
console.log(
  `dispatch: ${started} of ${N} schedules started over the hour in ${ticks} ticks; ` +
    `cost per schedule ${perSchedule.toFixed(2)} ms (tick + handler) vs createAudit alone ` +
    `${baselineMs.toFixed(2)} ms: ${(perSchedule / baselineMs).toFixed(2)}x the API path`,
);
console.log(
  `spread: largest number started in any one minute ${busiest} (even spread ${
    (N / 60).toFixed(0)
  }, quietest minute ${quietest}); ${
    perMinute.slice(0, 60).filter((n) => n > 0).length
  } of 60 minutes used, ${perMinute[60]} at 07:00:00`,
);
console.log(
  `memory: heap ${mib(heapBefore)} MiB before, ${mib(heapPeak)} MiB peak (+${
    mib(heapPeak - heapBefore)
  }); retained after GC at minutes 10..60: ${retained.map(mib).join(", ")} MiB; RSS ${
    mib(rssBefore)
  } → ${mib(rssPeak)} MiB peak (index read in batches of 100, at most 1,000 messages per tick)`,
);
if (started !== N) {
  console.log(`FAILED: ${N - started} schedules did not start`);
  Deno.exitCode = 1;
}
kv.close();
await Deno.remove(dir, { recursive: true });
