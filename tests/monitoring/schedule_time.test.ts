import assert from "node:assert/strict";
import {
  jitterMs,
  nextRun,
  type ScheduleSpec,
  slotAtOrAfter,
} from "../../domain/monitoring/schedule_time.ts";

const t = (s: string) => Date.parse(s);
const daily = (hourUtc: number): ScheduleSpec => ({
  cadence: "daily",
  hourUtc,
  dayOfWeek: null,
  dayOfMonth: null,
});

Deno.test("slots: daily, weekly on a weekday, monthly on a day, each at the hour in UTC", () => {
  // 2026-11-23 is a Monday.
  assert.equal(new Date(t("2026-11-23T00:00:00Z")).getUTCDay(), 1);
  assert.equal(slotAtOrAfter(daily(6), t("2026-11-23T05:59:59Z")), t("2026-11-23T06:00:00Z"));
  assert.equal(slotAtOrAfter(daily(6), t("2026-11-23T06:00:00Z")), t("2026-11-23T06:00:00Z"));
  assert.equal(slotAtOrAfter(daily(6), t("2026-11-23T06:00:01Z")), t("2026-11-24T06:00:00Z"));
  const friday: ScheduleSpec = {
    cadence: "weekly",
    hourUtc: 9,
    dayOfWeek: "friday",
    dayOfMonth: null,
  };
  assert.equal(slotAtOrAfter(friday, t("2026-11-23T12:00:00Z")), t("2026-11-27T09:00:00Z"));
  assert.equal(slotAtOrAfter(friday, t("2026-11-27T09:30:00Z")), t("2026-12-04T09:00:00Z"));
  const monday: ScheduleSpec = {
    cadence: "weekly",
    hourUtc: 9,
    dayOfWeek: "monday",
    dayOfMonth: null,
  };
  assert.equal(slotAtOrAfter(monday, t("2026-11-23T08:00:00Z")), t("2026-11-23T09:00:00Z"));
  assert.equal(slotAtOrAfter(monday, t("2026-11-23T10:00:00Z")), t("2026-11-30T09:00:00Z"));
  const monthly: ScheduleSpec = { cadence: "monthly", hourUtc: 0, dayOfWeek: null, dayOfMonth: 28 };
  assert.equal(slotAtOrAfter(monthly, t("2026-11-23T12:00:00Z")), t("2026-11-28T00:00:00Z"));
  assert.equal(slotAtOrAfter(monthly, t("2026-12-29T00:00:00Z")), t("2027-01-28T00:00:00Z"));
  assert.equal(slotAtOrAfter(monthly, t("2027-02-01T00:00:00Z")), t("2027-02-28T00:00:00Z"));
});

Deno.test("jitter: whole seconds within the hour, stable per project, spread across projects", () => {
  const ids = Array.from({ length: 6000 }, (_, i) => `proj_${i.toString(36)}x${i * 7919}`);
  const minutes = new Array(60).fill(0);
  for (const id of ids) {
    const j = jitterMs(id);
    assert.equal(j, jitterMs(id));
    assert.ok(j >= 0 && j < 3_600_000 && j % 1000 === 0);
    minutes[Math.floor(j / 60_000)]++;
  }
  // 100 per minute on average; no minute gets more than twice its share.
  assert.ok(Math.max(...minutes) < 200, `busiest minute ${Math.max(...minutes)}`);
  assert.ok(Math.min(...minutes) > 40, `quietest minute ${Math.min(...minutes)}`);
});

Deno.test("next run: today if its run time is still ahead, else the next slot; missed slots are skipped", () => {
  const id = "proj_fixed";
  const j = jitterMs(id);
  const slot = t("2026-11-23T06:00:00Z");
  // Before the run time: this slot.
  assert.deepEqual(nextRun(daily(6), id, null, slot + j - 1), { dueAt: slot, runAt: slot + j });
  // At or after it: tomorrow's.
  assert.equal(nextRun(daily(6), id, null, slot + j).dueAt, slot + 86_400_000);
  // After running a slot: the next one, never the same.
  assert.equal(nextRun(daily(6), id, slot, slot + j).dueAt, slot + 86_400_000);
  // Three days down: one slot after now, not three.
  const late = slot + 3 * 86_400_000 + j + 5_000;
  assert.equal(nextRun(daily(6), id, slot, late).dueAt, slot + 4 * 86_400_000);
});
