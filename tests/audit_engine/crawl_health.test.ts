/**
 * The error-rate stop's judgement (crawl/health.ts): a full window past the threshold pauses the
 * crawl, each pause longer (a longer Retry-After wins, within the cap), a short probe judges the
 * site after a pause, a healthy full window forgets the pauses, and the pauses spent end it.
 */
import assert from "node:assert/strict";
import { Health, type HealthState } from "../../domain/audit_engine/crawl/health.ts";

const SETTINGS = { maxRate: 0.5, window: 10, pauseMs: 1_000, maxPauseMs: 5_000, pauses: 2 };
const fresh = (): HealthState => ({ recent: [], pauses: 0, pausedUntil: 0 });

Deno.test("health: a window is judged only once full, at the threshold", () => {
  const st = fresh();
  const h = new Health(st, SETTINGS);
  for (let i = 0; i < 5; i++) h.note(true);
  assert.equal(h.tripped, false, "5 errors in 5 responses: the window of 10 is not full");
  for (let i = 0; i < 4; i++) h.note(false);
  assert.equal(h.tripped, false);
  h.note(false);
  assert.equal(h.tripped, true, "5 of 10 is the 50% threshold");
  // Later good responses in the same step do not undo what the step saw.
  h.note(false);
  assert.equal(h.tripped, true);
});

Deno.test("health: pauses double, Retry-After wins within the cap, then the stop", () => {
  const st = fresh();
  let h = new Health(st, SETTINGS);
  for (let i = 0; i < 10; i++) h.note(true);
  assert.equal(h.judge(100_000), "paused");
  assert.equal(st.pausedUntil, 101_000);
  assert.equal(h.waitMs(100_500), 500);
  assert.deepEqual(st.recent, []);
  // The probe after a pause: 5 responses judge it; a Retry-After of 4 s beats the 2 s backoff.
  h = new Health(st, SETTINGS);
  for (let i = 0; i < 4; i++) h.note(true, 4_000);
  assert.equal(h.tripped, false, "4 of the probe's 5");
  h.note(true, 60_000);
  assert.equal(h.judge(200_000), "paused");
  assert.equal(st.pausedUntil, 205_000, "60 s asked, 5 s at most");
  h = new Health(st, SETTINGS);
  for (let i = 0; i < 5; i++) h.note(true);
  assert.equal(h.judge(300_000), "stop", "two pauses spent");
  assert.equal(st.total, 2);
});

Deno.test("health: a healthy full window after a pause forgets it", () => {
  const st = fresh();
  let h = new Health(st, SETTINGS);
  for (let i = 0; i < 10; i++) h.note(true);
  assert.equal(h.judge(0), "paused");
  h = new Health(st, SETTINGS);
  for (let i = 0; i < 5; i++) h.note(false);
  assert.equal(h.judge(10_000), "ok");
  assert.equal(st.pauses, 1, "the probe passed; the pauses stand until a full window");
  for (let i = 0; i < 5; i++) h.note(false);
  assert.equal(h.judge(20_000), "ok");
  assert.equal(st.pauses, 0);
  assert.equal(st.total, 1);
});
