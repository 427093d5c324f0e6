/**
 * The KV limits guard (kv/limits_guard.ts): each limit trips in strict mode with the limit and the
 * key prefix in the message, nothing is written when it does, writes within the limits pass, and
 * the size estimates never under-count what Deno KV itself measures.
 */
import assert from "node:assert/strict";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import {
  keyBytes,
  KV_LIMITS,
  KvLimitError,
  type KvLimitViolation,
  valueBytes,
  withKvLimits,
} from "../../kv/limits_guard.ts";

async function guarded(): Promise<{ kv: Deno.Kv; seen: KvLimitViolation[] }> {
  const seen: KvLimitViolation[] = [];
  const kv = withKvLimits(await Deno.openKv(":memory:"), {
    strict: true,
    onViolation: (v) => seen.push(v),
  });
  return { kv, seen };
}

async function trips(p: Promise<unknown> | (() => unknown), limit: string, prefix: string) {
  const err = await (typeof p === "function" ? Promise.resolve().then(p) : p).then(
    () => null,
    (e) => e,
  );
  assert.ok(err instanceof KvLimitError, `expected a KvLimitError for ${limit}, got ${err}`);
  assert.equal(err.violation.limit, limit);
  assert.match(err.message, new RegExp(limit));
  assert.ok(err.message.includes(prefix), `${err.message} names ${prefix}`);
}

Deno.test("kv limits: more than 10 checks in one atomic operation is refused at commit", async () => {
  const { kv, seen } = await guarded();
  try {
    const ten = kv.atomic();
    for (let i = 0; i < 10; i++) ten.check({ key: ["c", i], versionstamp: null });
    assert.equal((await ten.set(["ok"], 1).commit()).ok, true);
    const op = kv.atomic();
    for (let i = 0; i < 11; i++) op.check({ key: ["checked", "x", i], versionstamp: null });
    op.set(["written"], 1);
    await trips(op.commit(), "checks", '["checked","x",…]');
    assert.equal((await kv.get(["written"])).value, null, "nothing committed");
    assert.equal(seen.length, 1);
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: more than 1,000 mutations is refused", async () => {
  const { kv } = await guarded();
  try {
    const op = kv.atomic();
    for (let i = 0; i < 1_001; i++) op.set(["m", i], 1);
    await trips(op.commit(), "mutations", '["m",0]');
    const mixed = kv.atomic();
    for (let i = 0; i < 500; i++) mixed.mutate({ type: "delete", key: ["d", i] });
    for (let i = 0; i < 501; i++) mixed.sum(["s", i], 1n);
    await trips(mixed.commit(), "mutations", '["d",0]');
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: a commit over 800 KiB, or over 80 KiB of keys, is refused", async () => {
  const { kv } = await guarded();
  try {
    const op = kv.atomic();
    for (let i = 0; i < 14; i++) op.set(["blob", i], new Uint8Array(60_000));
    await trips(op.commit(), "totalBytes", '["blob",0]');
    const keysOp = kv.atomic();
    for (let i = 0; i < 42; i++) keysOp.delete(["k".repeat(2_000), i]);
    await trips(keysOp.commit(), "totalKeyBytes", "kkkk");
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: a key over 2 KiB is refused in commits, set, get, getMany, list", async () => {
  const { kv } = await guarded();
  try {
    // 700 three-byte characters: 700 UTF-16 units, 2,100 bytes encoded.
    const key = ["audit_dups", "aud_1", "東".repeat(700)];
    assert.ok(keyBytes(key) > KV_LIMITS.keyBytes);
    await trips(kv.atomic().set(key, 1).commit(), "keyBytes", '["audit_dups","aud_1",…]');
    await trips(kv.atomic().check({ key, versionstamp: null }).commit(), "keyBytes", "audit_dups");
    await trips(kv.set(key, 1), "keyBytes", "audit_dups");
    await trips(kv.get(key), "keyBytes", "audit_dups");
    await trips(kv.getMany([["a"], key]), "keyBytes", "audit_dups");
    await trips(() => kv.list({ prefix: key }), "keyBytes", "audit_dups");
    await trips(kv.delete(key), "keyBytes", "audit_dups");
    // The same text as ASCII is 702 bytes: fine.
    await kv.set(["audit_dups", "aud_1", "x".repeat(700)], 1);
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: a value over 64 KiB is refused in commits, mutate, set and enqueue", async () => {
  const { kv } = await guarded();
  try {
    const anchors = Array.from({ length: 500 }, () => "anchor text ".repeat(12));
    const big = { t: anchors.map((_, i) => i), a: anchors };
    assert.ok(valueBytes(big) > KV_LIMITS.valueBytes);
    await trips(
      kv.atomic().set(["audit_links", "aud_1", 0], big).commit(),
      "valueBytes",
      "audit_links",
    );
    await trips(
      kv.atomic().mutate({ type: "set", key: ["v"], value: big }).commit(),
      "valueBytes",
      '["v"]',
    );
    await trips(kv.set(["audit_links", "aud_1"], big), "valueBytes", "audit_links");
    await trips(kv.set(["bytes"], new Uint8Array(65_537)), "valueBytes", "bytes");
    await trips(kv.enqueue(big), "valueBytes", "[]");
    await kv.set(["bytes"], new Uint8Array(65_536)); // exactly the limit
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: getMany and watch of more than 10 keys are refused", async () => {
  const { kv } = await guarded();
  try {
    const eleven = Array.from({ length: 11 }, (_, i) => ["r", i]);
    await trips(kv.getMany(eleven), "readKeys", '["r",0]');
    await trips(() => kv.watch(eleven), "readKeys", '["r",0]');
    assert.equal((await kv.getMany(eleven.slice(0, 10))).length, 10);
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: not strict, a violation is reported and the store decides", async () => {
  const seen: KvLimitViolation[] = [];
  const kv = withKvLimits(await Deno.openKv(":memory:"), { onViolation: (v) => seen.push(v) });
  try {
    const op = kv.atomic();
    for (let i = 0; i < 11; i++) op.check({ key: ["c", i], versionstamp: null });
    assert.equal((await op.commit()).ok, true, "the SQLite backend allows 100 checks");
    assert.equal(seen.length, 1);
    assert.equal(seen[0].limit, "checks");
    await assert.rejects(kv.set(["big"], new Uint8Array(70_000)), /too large/i);
    assert.equal(seen[1].limit, "valueBytes");
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: composes with withBusyRetry and keeps the builder chain", async () => {
  const seen: KvLimitViolation[] = [];
  const raw = await Deno.openKv(":memory:");
  const kv = withBusyRetry(withKvLimits(raw, { strict: true, onViolation: (v) => seen.push(v) }));
  try {
    const entry = await kv.get(["n"]);
    const res = await kv.atomic().check(entry).set(["n"], 1).sum(["c"], 1n).commit();
    assert.equal(res.ok, true);
    const op = kv.atomic();
    for (let i = 0; i < 11; i++) op.check({ key: ["c", i], versionstamp: null });
    await trips(op.commit(), "checks", "[");
    assert.equal(seen.length, 1, "refused once, not retried");
    assert.ok(kv instanceof Deno.Kv);
  } finally {
    kv.close();
  }
});

Deno.test("kv limits: the estimates never under-count what Deno KV accepts", async () => {
  const raw = await Deno.openKv(":memory:");
  try {
    // Values KV refuses are over the estimate's limit too (an ASCII slice of a two-byte string
    // is stored two bytes per character).
    const twoByte = ("東" + "a".repeat(33_000)).slice(1);
    const refused: unknown[] = [
      twoByte,
      "東".repeat(33_000),
      Array.from({ length: 30_000 }, (_, i) => i),
      { a: "x".repeat(65_600) },
      new Uint16Array(33_000),
      new Uint16Array(40_000).subarray(0, 4), // a view carries its whole buffer
    ];
    for (const v of refused) {
      await assert.rejects(raw.set(["v"], v), /too large/i);
      assert.ok(valueBytes(v) > KV_LIMITS.valueBytes, "estimate over the limit");
    }
    // Keys KV refuses are over the estimate's limit too; an accepted key's estimate is exact.
    for (const key of [["x".repeat(2_047)], ["é".repeat(1_024)], ["a", "\0".repeat(1_100)]]) {
      await assert.rejects(raw.set(key, 1), /too large/i);
      assert.ok(keyBytes(key) > KV_LIMITS.keyBytes);
    }
    assert.equal(keyBytes(["x".repeat(2_046)]), 2_048);
    await raw.set(["x".repeat(2_046)], 1);
  } finally {
    raw.close();
  }
});

Deno.test("kv limits: a cycle is a back-reference, a shared object counts each time", () => {
  const a: unknown[] = [];
  a.push(a, a);
  assert.equal(valueBytes(a), 4 + 12 + 6 + 6);
  const shared = { s: "ab" };
  const twice = valueBytes([shared, shared]);
  assert.equal(twice, 4 + 12 + 2 * (12 + 7 + 2 + 7 + 4));
  // A walk a getter broke off leaves nothing behind: the same value is measured in full after.
  const page: Record<string, unknown> = { s: "ab" };
  Object.defineProperty(page, "x", {
    get: () => {
      throw new Error("getter");
    },
    enumerable: true,
    configurable: true,
  });
  const outer = [page];
  assert.throws(() => valueBytes(outer), /getter/);
  delete page.x;
  assert.equal(valueBytes(outer), 4 + 12 + (12 + 7 + 2 + 7 + 4));
});
