import assert from "node:assert/strict";
import {
  addDebit,
  debitCredits,
  getBalance,
  grantCredits,
  listLedger,
  readBalance,
  refundCredits,
} from "../../domain/billing/credits.ts";
import { ApiError } from "../../domain/platform/errors.ts";
import { atomically, atomicStats } from "../../kv/atomic.ts";
import { harness } from "./helpers.ts";

/** The ledger explains the balance: grants and refunds minus debits, entry by entry. */
async function assertLedgerMatches(kv: Deno.Kv, accountId: string) {
  const entries = await listLedger(kv, accountId);
  let running = 0;
  for (const e of entries) {
    running += e.kind === "debit" ? -e.amount : e.amount;
  }
  assert.equal(running, await getBalance(kv, accountId));
  return entries;
}

Deno.test("30 concurrent debits against a balance covering 20: exactly 20 succeed, balance exact", async () => {
  const h = await harness();
  try {
    const accountId = "acct_race";
    await grantCredits(h.deps, { accountId, amount: 20 * 25, reason: "credit_pack", ref: "cs_1" });
    const results = await Promise.allSettled(
      Array.from(
        { length: 30 },
        (_, i) =>
          debitCredits(h.deps, {
            accountId,
            amount: 25,
            reason: "technical_audit",
            ref: `aud_${i}`,
          }),
      ),
    );
    const ok = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
    assert.equal(ok.length, 20);
    assert.equal(refused.length, 10);
    for (const r of refused) {
      assert.ok(r.reason instanceof ApiError);
      assert.equal(r.reason.code, "insufficient_credits");
      assert.equal(r.reason.status, 402);
    }
    assert.equal(await getBalance(h.deps.kv, accountId), 0);
    const entries = await assertLedgerMatches(h.deps.kv, accountId);
    assert.equal(entries.filter((e) => e.kind === "debit").length, 20);
    // Each success saw a distinct balance: no two debits were applied to the same read.
    const after = ok.map((r) => (r as PromiseFulfilledResult<{ balance: number }>).value.balance);
    assert.deepEqual(
      [...after].sort((a, b) => a - b),
      Array.from({ length: 20 }, (_, i) => i * 25),
    );
  } finally {
    h.close();
  }
});

Deno.test("a debit larger than the balance is refused with the 402 fields and changes nothing", async () => {
  const h = await harness();
  try {
    const accountId = "acct_short";
    await grantCredits(h.deps, { accountId, amount: 10, reason: "credit_pack", ref: "cs_1" });
    await assert.rejects(
      debitCredits(h.deps, { accountId, amount: 15, reason: "article_generated", ref: "art_1" }),
      (err: ApiError) => {
        assert.equal(err.code, "insufficient_credits");
        assert.equal(err.extra?.required_credits, 15);
        assert.equal(err.extra?.balance_credits, 10);
        assert.match(String(err.extra?.purchase), /\/v1\/credits\/purchases/);
        assert.match(String(err.extra?.subscription_alternative), /\/v1\/subscriptions/);
        return true;
      },
    );
    assert.equal(await getBalance(h.deps.kv, accountId), 10);
    assert.equal((await listLedger(h.deps.kv, accountId)).length, 1);
    // An account that never had credits reads 0 and is refused too.
    await assert.rejects(
      debitCredits(h.deps, { accountId: "acct_empty", amount: 1, reason: "x", ref: "y" }),
      /needs 1 credits/,
    );
  } finally {
    h.close();
  }
});

Deno.test("grants and refunds apply once per reference, even concurrently", async () => {
  const h = await harness();
  try {
    const accountId = "acct_refs";
    const grants = await Promise.all(
      Array.from(
        { length: 8 },
        () => grantCredits(h.deps, { accountId, amount: 500, reason: "credit_pack", ref: "cs_a" }),
      ),
    );
    assert.equal(grants.filter((g) => g.applied).length, 1);
    assert.equal(await getBalance(h.deps.kv, accountId), 500);

    await debitCredits(h.deps, { accountId, amount: 25, reason: "technical_audit", ref: "aud_1" });
    const refunds = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          refundCredits(h.deps, { accountId, amount: 25, reason: "audit_failed", ref: "aud_1" }),
      ),
    );
    assert.equal(refunds.filter((r) => r.applied).length, 1);
    assert.equal(await getBalance(h.deps.kv, accountId), 500);
    // A refund and a grant with the same ref are different movements.
    const g = await grantCredits(h.deps, {
      accountId,
      amount: 1,
      reason: "goodwill",
      ref: "aud_1",
    });
    assert.equal(g.applied, true);
    const entries = await assertLedgerMatches(h.deps.kv, accountId);
    assert.deepEqual(entries.map((e) => [e.kind, e.amount, e.reason, e.ref, e.balanceAfter]), [
      ["grant", 500, "credit_pack", "cs_a", 500],
      ["debit", 25, "technical_audit", "aud_1", 475],
      ["refund", 25, "audit_failed", "aud_1", 500],
      ["grant", 1, "goodwill", "aud_1", 501],
    ]);
    await assert.rejects(
      grantCredits(h.deps, { accountId, amount: 0, reason: "x", ref: "z" }),
      /positive whole/,
    );
    await assert.rejects(
      debitCredits(h.deps, { accountId, amount: 1.5, reason: "x", ref: "z" }),
      /positive whole/,
    );
  } finally {
    h.close();
  }
});

Deno.test("addDebit charges in the same commit as the caller's own record, or not at all", async () => {
  const h = await harness();
  const { kv } = h.deps;
  try {
    const accountId = "acct_combo";
    await grantCredits(h.deps, { accountId, amount: 40, reason: "credit_pack", ref: "cs_1" });
    const create = (id: string) =>
      atomically(kv, async () => {
        const balance = await readBalance(kv, accountId);
        const key = ["test_records", id];
        const op = kv.atomic().check({ key, versionstamp: null }).set(key, { id });
        addDebit(op, balance, {
          accountId,
          amount: 25,
          reason: "technical_audit",
          ref: id,
          now: h.clock.now(),
        });
        return { op, result: id };
      });
    const results = await Promise.allSettled([create("aud_a"), create("aud_b")]);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    const records = [];
    for await (const e of kv.list({ prefix: ["test_records"] })) records.push(e.key);
    assert.equal(records.length, 1, "the refused one created no record");
    assert.equal(await getBalance(kv, accountId), 15);
  } finally {
    h.close();
  }
});

Deno.test("30 concurrent lock-free addDebit commits (as inside other code's operations): exactly 20 succeed", async () => {
  const h = await harness();
  const { kv } = h.deps;
  try {
    const accountId = "acct_lock_free";
    await grantCredits(h.deps, { accountId, amount: 20 * 15, reason: "credit_pack", ref: "cs_1" });
    const retriesBefore = atomicStats.retries;
    // No in-process queue on this path: only the versionstamp check keeps the balance exact.
    const debit = (i: number) =>
      atomically(kv, async () => {
        const op = kv.atomic();
        addDebit(op, await readBalance(kv, accountId), {
          accountId,
          amount: 15,
          reason: "article_generated",
          ref: `art_${i}`,
          now: h.clock.now(),
        });
        return { op, result: i };
      });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => debit(i)));
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 20);
    for (const r of results) {
      if (r.status === "rejected") {
        assert.equal((r.reason as ApiError).code, "insufficient_credits");
      }
    }
    assert.ok(atomicStats.retries > retriesBefore, "the writers really did conflict");
    assert.equal(await getBalance(kv, accountId), 0);
    const entries = await assertLedgerMatches(kv, accountId);
    // Entry ids are the gapless per-account sequence, in commit order.
    assert.deepEqual(
      entries.map((e) => e.id),
      Array.from({ length: 21 }, (_, i) => `led_${String(i + 1).padStart(12, "0")}`),
    );
  } finally {
    h.close();
  }
});
