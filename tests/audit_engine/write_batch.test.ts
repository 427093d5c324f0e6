/**
 * The crawl's batched writer (crawl/store.ts WriteBatch): no commit is left unobserved. A commit
 * that rejects while nobody awaits it is not an unhandled rejection (Deno's test runner fails a
 * test on one), `flush()` rejects with the first failure, a commit that is not `ok` is a failure,
 * and a key or value past KV's limit is refused at `set`.
 */
import assert from "node:assert/strict";
import { OversizeWriteError, WriteBatch } from "../../domain/audit_engine/crawl/store.ts";
import { openTestKv } from "../helpers/kv.ts";

/** A KV whose atomic commits answer with `answer(n)` from the `from`-th commit on (1-based). */
function failingKv(
  kv: Deno.Kv,
  from: number,
  answer: () => Promise<Deno.KvCommitResult | Deno.KvCommitError>,
): { kv: Deno.Kv; commits: () => number } {
  let n = 0;
  const wrapped = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          const op = target.atomic();
          return new Proxy(op, {
            get(o, p) {
              if (p === "commit") return () => (++n >= from ? answer() : o.commit());
              const v = Reflect.get(o, p, o);
              return typeof v === "function" ? v.bind(o) : v;
            },
          });
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { kv: wrapped, commits: () => n };
}

const tick = () => new Promise((r) => setTimeout(r, 20));

Deno.test("write batch: a commit rejected before flush is kept, not unhandled; flush rejects with it", async () => {
  const raw = await openTestKv();
  try {
    const boom = new Error("commit refused");
    const { kv, commits } = failingKv(raw, 1, () => Promise.reject(boom));
    const batch = new WriteBatch(kv);
    // 400 mutations per commit: 1,000 sets start two commits before flush.
    for (let i = 0; i < 1_000; i++) batch.set(["t", i], i);
    assert.equal(commits(), 2);
    await tick(); // both rejected while nobody awaited them
    await assert.rejects(batch.flush(), (e) => e === boom);
    await assert.rejects(batch.flush(), (e) => e === boom, "the batch stays failed");
  } finally {
    raw.close();
  }
});

Deno.test("write batch: a commit that is not ok fails the flush; earlier commits stand", async () => {
  const raw = await openTestKv();
  try {
    const { kv } = failingKv(raw, 2, () => Promise.resolve({ ok: false }));
    const batch = new WriteBatch(kv);
    for (let i = 0; i < 500; i++) batch.set(["t", i], i);
    await assert.rejects(batch.flush(), /not ok/);
    assert.equal((await raw.get(["t", 0])).value, 0, "the first commit went through");
    assert.equal((await raw.get(["t", 450])).value, null);
  } finally {
    raw.close();
  }
});

Deno.test("write batch: a step that throws before flush leaves no unhandled rejection", async () => {
  const raw = await openTestKv();
  try {
    const { kv } = failingKv(raw, 1, () => Promise.reject(new Error("lost")));
    const run = () => {
      const batch = new WriteBatch(kv);
      for (let i = 0; i < 900; i++) batch.set(["t", i], i);
      throw new Error("the step failed before its flush");
    };
    assert.throws(run, /before its flush/);
    await tick(); // an unhandled rejection here would fail the test
  } finally {
    raw.close();
  }
});

Deno.test("write batch: a key or value past KV's limit is refused at set, naming the key", async () => {
  const kv = await openTestKv();
  try {
    const batch = new WriteBatch(kv);
    assert.throws(
      () => batch.set(["audit_links", "aud_x", "u", 0], { a: "東".repeat(40_000) }),
      (e) =>
        e instanceof OversizeWriteError && /value of \["audit_links","aud_x",…\]/.test(e.message),
    );
    assert.throws(
      () => batch.set(["audit_dups", "aud_x", "title", "東".repeat(700)], 1),
      (e) => e instanceof OversizeWriteError && /key of/.test(e.message),
    );
    assert.throws(() => batch.delete(["k", "x".repeat(3_000)]), OversizeWriteError);
    batch.set(["ok"], "x".repeat(30_000));
    await batch.flush();
    assert.equal((await kv.get<string>(["ok"])).value?.length, 30_000);
  } finally {
    kv.close();
  }
});

Deno.test("write batch: large values are spread over commits within 800 KiB each", async () => {
  const kv = await openTestKv(); // the strict guard refuses any commit past KV's limits
  try {
    const batch = new WriteBatch(kv);
    for (let i = 0; i < 40; i++) batch.set(["big", i], "y".repeat(30_000));
    await batch.flush();
    let n = 0;
    for await (const _ of kv.list({ prefix: ["big"] })) n++;
    assert.equal(n, 40);
  } finally {
    kv.close();
  }
});

Deno.test("write batch: paced keeps at most so many commits on their way, and throws once one failed", async () => {
  const raw = await openTestKv();
  try {
    // Every commit takes 20 ms; the fourth is refused.
    let inFlight = 0;
    let most = 0;
    const { kv } = failingKv(raw, 1, async () => {
      const n = ++inFlight;
      most = Math.max(most, n);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return calls++ === 3
        ? Promise.reject(new Error("commit refused"))
        : { ok: true, versionstamp: "0" };
    });
    let calls = 0;
    const batch = new WriteBatch(kv);
    const write = async (pages: number) => {
      for (let p = 0; p < pages; p++) {
        for (let i = 0; i < 400; i++) batch.set(["t", p, i], i);
        await batch.paced(2);
      }
    };
    await write(3);
    assert.ok(most <= 3, `${most} commits on their way at once`);
    await assert.rejects(write(5), /commit refused/);
    assert.ok(most <= 3, `${most} commits on their way at once`);
    // Sent without pacing, they all go at once.
    let freeInFlight = 0;
    let freeMost = 0;
    const free = new WriteBatch(
      failingKv(raw, 1, async () => {
        freeMost = Math.max(freeMost, ++freeInFlight);
        await new Promise((r) => setTimeout(r, 20));
        freeInFlight--;
        return { ok: true, versionstamp: "0" };
      }).kv,
    );
    for (let i = 0; i < 2_000; i++) free.set(["u", i], i);
    await free.flush();
    assert.equal(freeMost, 5);
  } finally {
    raw.close();
  }
});
