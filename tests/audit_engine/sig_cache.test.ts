/**
 * The near-duplicate pass's cache of signatures (crawl/finalize/near_duplicates.ts `SigCache`):
 * what it answers is what was read (a page without a signature included), the oldest goes first
 * once it is full, and an answer stays as it was when its slot is written again.
 */
import assert from "node:assert/strict";
import { SigCache } from "../../domain/audit_engine/crawl/finalize/near_duplicates.ts";
import { SIG_BINS } from "../../domain/audit_engine/text_fingerprint.ts";
import type { NearSig } from "../../domain/audit_engine/types.ts";

const sigOf = (i: number): NearSig => ({
  u: `https://s.test/p/${i}`,
  h: 1_000_000 + i,
  s: Uint16Array.from({ length: SIG_BINS }, (_, k) => (i * 31 + k) & 0xffff),
});

Deno.test("SigCache answers what was read, oldest out, copies that outlive their slot", () => {
  const cache = new SigCache(3);
  cache.set(1, sigOf(1));
  cache.set(2, null);
  cache.set(3, sigOf(3));
  assert.deepEqual(cache.get(1), sigOf(1));
  assert.equal(cache.get(2), null);
  assert.equal(cache.get(4), undefined);
  const held = cache.get(3)!;
  // Full: the oldest (1) goes, then 2; 3's answer is unchanged though its neighbours are new.
  cache.set(4, sigOf(4));
  assert.equal(cache.get(1), undefined);
  assert.deepEqual(cache.get(4), sigOf(4));
  cache.set(5, sigOf(5));
  cache.set(6, sigOf(6));
  assert.equal(cache.get(2), undefined);
  assert.equal(cache.get(3), undefined);
  assert.deepEqual(held, sigOf(3));
  assert.deepEqual(cache.get(5), sigOf(5));
  // A signature of another length is not kept (it is read again), nor is anything at capacity 0.
  cache.set(7, { ...sigOf(7), s: new Uint16Array(3) });
  assert.equal(cache.get(7), undefined);
  const none = new SigCache(0);
  none.set(1, sigOf(1));
  assert.equal(none.get(1), undefined);
});

Deno.test("SigCache grows with what it keeps, answers across its growth, and evicts at capacity", () => {
  const cache = new SigCache(3_000);
  cache.set(0, null);
  const first = cache.get(0);
  // Past the first allocation (1,024) and its doubling (2,048): every answer is what was read.
  for (let i = 1; i < 3_000; i++) cache.set(i, sigOf(i));
  assert.equal(first, null);
  assert.equal(cache.get(0), null);
  for (const i of [1, 1_023, 1_024, 1_025, 2_047, 2_048, 2_999]) {
    assert.deepEqual(cache.get(i), sigOf(i), `page ${i}`);
  }
  // Full at its capacity: the next one takes the oldest's slot (page 0), then page 1's.
  cache.set(3_000, sigOf(3_000));
  assert.equal(cache.get(0), undefined);
  assert.deepEqual(cache.get(1), sigOf(1));
  assert.deepEqual(cache.get(3_000), sigOf(3_000));
  cache.set(3_001, sigOf(3_001));
  assert.equal(cache.get(1), undefined);
  assert.deepEqual(cache.get(2), sigOf(2));
  assert.deepEqual(cache.get(3_001), sigOf(3_001));
});

Deno.test("SigCache emptied by release keeps nothing, then keeps again", () => {
  const cache = new SigCache(2_000);
  for (let i = 0; i < 1_500; i++) cache.set(i, sigOf(i));
  cache.release();
  assert.equal(cache.get(0), undefined);
  assert.equal(cache.get(1_499), undefined);
  cache.set(7, sigOf(7));
  assert.deepEqual(cache.get(7), sigOf(7));
});
