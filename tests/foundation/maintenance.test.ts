/**
 * The periodic work of several processes on one KV: the shared tasks run in the leader only, a
 * tick is single-flight, every process flushes its own counters, and a leader that stops hands
 * the lease over at the next tick of another.
 */
import assert from "node:assert/strict";
import { manualClock } from "../../domain/platform/clock.ts";
import { createMaintenance } from "../../jobs/maintenance.ts";
import { openTestKv } from "../helpers/kv.ts";

function process(kv: Deno.Kv, clock: ReturnType<typeof manualClock>) {
  const counts = { flushes: 0, shared: 0 };
  let release: () => void = () => {};
  let gate: Promise<void> | null = null;
  const m = createMaintenance({
    kv,
    clock,
    leaderLeaseMs: 30_000,
    flushes: [{ name: "flush", run: () => Promise.resolve(counts.flushes++) }],
    shared: [{
      name: "sweep",
      run: async () => {
        counts.shared++;
        if (gate) await gate;
      },
    }],
  });
  return {
    m,
    counts,
    /** Makes the next shared task wait until `open()`. */
    hold() {
      gate = new Promise((r) => (release = r));
    },
    open() {
      gate = null;
      release();
    },
  };
}

Deno.test("three processes: shared work runs in the leader only; every one flushes", async () => {
  const kv = await openTestKv();
  const clock = manualClock(Date.parse("2026-11-25T00:00:00Z"));
  try {
    const ps = [process(kv, clock), process(kv, clock), process(kv, clock)];
    for (let round = 0; round < 5; round++) {
      await Promise.all(ps.map((p) => p.m.tick()));
      clock.advance(5_000);
    }
    assert.deepEqual(ps.map((p) => p.counts.flushes), [5, 5, 5]);
    assert.equal(ps.reduce((n, p) => n + p.counts.shared, 0), 5, "once per round");
    assert.equal(ps.filter((p) => p.m.leading()).length, 1);

    // The leader stops: another process takes over at its next tick.
    const leader = ps.find((p) => p.m.leading())!;
    await leader.m.stop();
    const others = ps.filter((p) => p !== leader);
    await Promise.all(others.map((p) => p.m.tick()));
    assert.equal(others.filter((p) => p.m.leading()).length, 1);
    assert.equal(others.reduce((n, p) => n + p.counts.shared, 0) > 0, true);
  } finally {
    kv.close();
  }
});

Deno.test("a tick is single-flight: calls while one runs wait for it and run nothing more", async () => {
  const kv = await openTestKv();
  const clock = manualClock(Date.parse("2026-11-25T00:00:00Z"));
  try {
    const p = process(kv, clock);
    p.hold();
    const first = p.m.tick();
    await new Promise((r) => setTimeout(r, 20));
    const second = p.m.tick();
    const third = p.m.tick();
    p.open();
    await Promise.all([first, second, third]);
    assert.equal(p.counts.shared, 1);
    assert.equal(p.counts.flushes, 1);
    // Once it has finished, the next call is a new tick.
    await p.m.tick();
    assert.equal(p.counts.shared, 2);
  } finally {
    kv.close();
  }
});

Deno.test("a leader that dies without giving up the lease is replaced once it runs out", async () => {
  const kv = await openTestKv();
  const clock = manualClock(Date.parse("2026-11-25T00:00:00Z"));
  try {
    const a = process(kv, clock);
    const b = process(kv, clock);
    await a.m.tick();
    await b.m.tick();
    assert.equal(a.m.leading(), true);
    assert.equal(b.m.leading(), false);
    // a dies (no stop, no tick); within its lease b still does not lead.
    clock.advance(29_000);
    await b.m.tick();
    assert.equal(b.m.leading(), false);
    clock.advance(2_000);
    await b.m.tick();
    assert.equal(b.m.leading(), true);
    assert.equal(b.counts.shared, 1);
  } finally {
    kv.close();
  }
});
