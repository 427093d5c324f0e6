/**
 * Scheduled audits with two server processes on one KV file: both run the maintenance tick (the
 * cron's work) every 5 s and both would dispatch a due schedule, and with `JOB_LEASE_MS=1500` a
 * dispatched run not started within 1.5 s is dispatched again, so both processes' handlers meet
 * the same slots; the test process itself races them as a third contender. Every project must still get exactly one audit and one charge per due slot.
 */
import { guardTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { retryBusy } from "../../kv/busy_retry.ts";
import { openKv } from "../../main.ts";
import { systemClock } from "../../domain/platform/clock.ts";
import { loadConfig } from "../../config.ts";
import { runDueSchedule } from "../../domain/monitoring/dispatch.ts";
import { kvQueue } from "../../jobs/queue.ts";
import type { ScheduleRecord } from "../../domain/monitoring/schedules.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import {
  killAll,
  liveAccount,
  newProject,
  packPaidEvent,
  postStripe,
  type ServerProcess,
  startServer,
  tempKvPath,
  until,
} from "./process.ts";
import { quiet } from "../helpers/jobs.ts";

const PROJECTS = 12;

Deno.test("two processes: a due schedule (missed for days) runs exactly once per project, charged once", async () => {
  const site = serveSite({ "/": html(page({ title: "Two process schedule site" })) });
  const kvFile = await tempKvPath();
  let a: ServerProcess | null = null;
  let b: ServerProcess | null = null;
  let kv: Deno.Kv | null = null;
  try {
    const pa = a = await startServer(kvFile.path);
    const pb = b = await startServer(kvFile.path);
    const { accountId, key } = await liveAccount(pa);
    const paid = await postStripe(pb, await packPaidEvent(pb, accountId));
    assert.equal(paid.body.outcome, "credits_granted", paid.text);
    const projects: string[] = [];
    for (let i = 0; i < PROJECTS; i++) {
      const id = await newProject(i % 2 ? pa : pb, key, site.origin);
      const put = await (i % 2 ? pb : pa).req("PUT", `/v1/projects/${id}/schedule`, {
        key,
        body: { cadence: "daily", hour_utc: 6 },
      });
      assert.equal(put.status, 201, put.text);
      projects.push(id);
    }

    // The due time came while no process ran: each schedule's slot lies three days back.
    kv = guardTestKv(await openKv(kvFile.path));
    const now = Date.now();
    const dueAt = Math.floor(now / 3_600_000) * 3_600_000 - 3 * 86_400_000;
    for (const id of projects) {
      await retryBusy(async () => {
        const entry = await kv!.get<ScheduleRecord>(keys.schedule(id));
        const s = entry.value!;
        const op = kv!.atomic().check(entry)
          .delete(keys.scheduleDue(s.indexAt!, id))
          .set(keys.scheduleDue(now - 1_000, id), id)
          .set(entry.key, { ...s, nextDueAt: dueAt, nextRunAt: now - 1_000, indexAt: now - 1_000 });
        assert.ok((await op.commit()).ok);
      });
    }

    // A third contender, this test process, runs every due slot twice at once while both servers'
    // ticks dispatch the same slots (its audit messages are resumed by the servers' sweeps).
    const deps = {
      kv,
      clock: systemClock,
      config: loadConfig({ KV_PATH: kvFile.path, JOB_LEASE_MS: "1500" }),
      queue: kvQueue(kv),
    };
    const here = await Promise.all(
      [...projects, ...projects].map((id) => runDueSchedule(deps, id)),
    );
    const startedHere = here.filter((o) => o === "started").length;
    assert.ok(startedHere <= PROJECTS);

    const runs = async (id: string) =>
      (await pa.req("GET", `/v1/projects/${id}/schedule`, { key })).body.runs as number;
    await until(
      async () => (await Promise.all(projects.map(runs))).every((n) => n >= 1),
      30_000,
      "every schedule's run",
    );
    // Long enough for both processes to tick again and for re-dispatches to arrive.
    await quiet(7_000);

    for (const id of projects) {
      const s = (await pb.req("GET", `/v1/projects/${id}/schedule`, { key })).body;
      assert.equal(s.runs, 1, `${id}: ${JSON.stringify(s)}`);
      assert.equal(s.last_run.outcome, "started");
      assert.equal(Date.parse(s.last_run.due_at), dueAt);
      assert.ok(Date.parse(s.next_run_at) > now, "the next slot after now, not the missed ones");
      const p = (await pa.req("GET", `/v1/projects/${id}`, { key })).body;
      assert.equal(p.counts.audits, 1, `${id} audits`);
    }
    const credits = (await pa.req("GET", "/v1/credits", { key })).body;
    assert.equal(credits.balance_credits, 500 - PROJECTS * 25, "each run charged once");
    let claims = 0;
    for await (const _ of kv.list({ prefix: ["schedule_slots"] })) claims++;
    assert.equal(claims, PROJECTS);
    console.log(`  ${startedHere} of ${PROJECTS} runs started by the third contender`);
    const failed = (pa.logs() + pb.logs()).split("job failed").length - 1;
    assert.equal(failed, 0, "no handler failed");
  } catch (err) {
    console.error(`process A:\n${a?.logs()}\nprocess B:\n${b?.logs()}`);
    throw err;
  } finally {
    kv?.close();
    await killAll(a, b);
    await kvFile.remove();
    await site.close();
  }
});
