/**
 * The credit ledger. Every grant, debit and refund is a ledger entry written in the same atomic
 * commit as the new balance, and every commit checks the balance entry it read, so concurrent
 * writers cannot lose or double an update and a debit can never take the balance below zero.
 * The balance is a plain number in a checked read-modify-write, never `KvU64`/`sum` (on the
 * SQLite backend `sum` drops the key's expiry and `KvU64` wraps).
 *
 * Building blocks (`readBalance`, `addDebit`, `addCredit`) let other domain code charge credits in
 * the SAME atomic operation as creating its own record; the wrappers (`debitCredits`,
 * `grantCredits`, `refundCredits`) run a standalone operation through `atomically`.
 */
import { atomically } from "../../kv/atomic.ts";
import {
  ApiError,
  type Atomic,
  atomic,
  type Deps,
  keys,
  list,
  read,
  readMany,
} from "../platform/mod.ts";
import type { BalanceRecord, LedgerEntry } from "./types.ts";
import { PURCHASE_HINT, SUBSCRIPTION_HINT } from "./catalog.ts";

export interface LedgerInput {
  accountId: string;
  /** Positive whole credits. */
  amount: number;
  /** Why: a unit id such as `technical_audit`, or `credit_pack`, `refund`, … */
  reason: string;
  /** What it belongs to: an audit, article or checkout session id. */
  ref: string;
  /** Free text kept with the entry (an operator grant's reason). */
  note?: string;
  now: number;
}

/** The balance entry to check in an atomic operation (value null until the first grant). */
export async function readBalance(
  kv: Deno.Kv,
  accountId: string,
): Promise<Deno.KvEntryMaybe<BalanceRecord>> {
  return await read(kv, keys.balance(accountId));
}

/** The current balance in credits. */
export async function getBalance(kv: Deno.Kv, accountId: string): Promise<number> {
  return (await readBalance(kv, accountId)).value?.credits ?? 0;
}

/** The 402 `insufficient_credits` error with the fields the interface lists. */
export function insufficientCredits(required: number, balance: number): ApiError {
  return new ApiError(
    "insufficient_credits",
    `This needs ${required} credits and the balance is ${balance}`,
    {
      required_credits: required,
      balance_credits: balance,
      purchase: PURCHASE_HINT,
      subscription_alternative: SUBSCRIPTION_HINT,
    },
  );
}

/**
 * Adds a debit to the caller's atomic operation: checks `balanceEntry` (so a concurrent change
 * makes the commit fail and the caller's `atomically` retry with a fresh read), sets the reduced
 * balance and writes the ledger entry. Throws 402 `insufficient_credits` when the balance read is
 * short; nothing has been added to `op` then.
 *
 * @example
 * ```ts
 * import { atomically } from "../../kv/atomic.ts";
 * declare const kv: Deno.Kv, accountId: string, now: number;
 * declare const auditKey: Deno.KvKey, audit: { id: string };
 * await atomically(kv, async () => {
 *   const balance = await readBalance(kv, accountId);
 *   const op = kv.atomic().check({ key: auditKey, versionstamp: null }).set(auditKey, audit);
 *   addDebit(op, balance, { accountId, amount: 25, reason: "technical_audit", ref: audit.id, now });
 *   return { op, result: audit };
 * });
 * ```
 */
export function addDebit(
  op: Atomic,
  balanceEntry: Deno.KvEntryMaybe<BalanceRecord>,
  input: LedgerInput,
): LedgerEntry {
  assertAmount(input.amount);
  const balance = balanceEntry.value?.credits ?? 0;
  if (balance < input.amount) throw insufficientCredits(input.amount, balance);
  return writeMovement(op, balanceEntry, "debit", balance - input.amount, input);
}

/**
 * Adds a grant or refund to the caller's atomic operation, applied once per `(kind, ref)`: the
 * reference marker is checked absent and set in the same commit. Callers read the marker first
 * (`readRefMarker`) and skip when it exists, or the commit would fail on every retry.
 */
export function addCredit(
  op: Atomic,
  balanceEntry: Deno.KvEntryMaybe<BalanceRecord>,
  kind: "grant" | "refund",
  input: LedgerInput,
): LedgerEntry {
  assertAmount(input.amount);
  const refKey = keys.ledgerRef(input.accountId, kind, input.ref);
  const balance = balanceEntry.value?.credits ?? 0;
  const entry = writeMovement(op, balanceEntry, kind, balance + input.amount, input);
  op.check({ key: refKey, versionstamp: null }).set(refKey, entry.id);
  return entry;
}

/** The marker of an applied grant or refund reference (value null when not yet applied). */
export async function readRefMarker(
  kv: Deno.Kv,
  accountId: string,
  kind: "grant" | "refund",
  ref: string,
): Promise<Deno.KvEntryMaybe<string>> {
  return await read(kv, keys.ledgerRef(accountId, kind, ref));
}

/**
 * Debits credits in an operation of its own; 402 `insufficient_credits` when short. Under any
 * concurrency exactly the debits the balance covers succeed.
 */
export function debitCredits(
  deps: Deps,
  input: Omit<LedgerInput, "now">,
): Promise<{ balance: number; entry: LedgerEntry }> {
  const { kv, clock } = deps;
  return inTurn(kv, input.accountId, () =>
    atomically(kv, async () => {
      const balanceEntry = await readBalance(kv, input.accountId);
      const op = atomic(kv);
      const entry = addDebit(op, balanceEntry, { ...input, now: clock.now() });
      return { op, result: { balance: entry.balanceAfter, entry } };
    }));
}

/**
 * Grants credits once per `ref` (a second call with the same ref changes nothing and reports
 * `applied: false`).
 */
export function grantCredits(
  deps: Deps,
  input: Omit<LedgerInput, "now">,
): Promise<{ applied: boolean; balance: number }> {
  return creditOnce(deps, "grant", input);
}

/**
 * Gives back credits of a debit that did not deliver (a failed audit, say), once per `ref`: calling
 * it again for the same ref, from a retried job for instance, changes nothing.
 */
export function refundCredits(
  deps: Deps,
  input: Omit<LedgerInput, "now">,
): Promise<{ applied: boolean; balance: number }> {
  return creditOnce(deps, "refund", input);
}

/** The ledger reason of credits an operator grants (`POST /admin/accounts/{id}/credits`). */
export const OPERATOR_GRANT = "operator_grant";
/** The most credits one operator grant may give (the largest pack gives 12,500). */
export const MAX_OPERATOR_GRANT = 100_000;

/**
 * An operator's grant of credits (support, goodwill, development): a `grant` ledger entry with
 * reason `operator_grant` and the operator's words as its `note`, applied once per `ref` (a retry
 * with the same ref changes nothing and answers the balance). 404 `not_found` for an unknown
 * account.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, accountId: string;
 * const { balance } = await grantOperatorCredits(deps, {
 *   accountId, credits: 500, reason: "goodwill after the outage", ref: "grant_1",
 * });
 * ```
 */
export async function grantOperatorCredits(
  deps: Deps,
  input: { accountId: string; credits: number; reason: string; ref: string },
): Promise<{ applied: boolean; balance: number }> {
  if (!Number.isSafeInteger(input.credits) || input.credits <= 0) {
    throw new ApiError("invalid_request", "credits: must be a positive whole number");
  }
  if (input.credits > MAX_OPERATOR_GRANT) {
    throw new ApiError("invalid_request", `credits: at most ${MAX_OPERATOR_GRANT} at once`);
  }
  // Accounts are never deleted: one read is enough to tell an unknown id.
  if (!(await read(deps.kv, keys.account(input.accountId))).value) {
    throw new ApiError("not_found", `No account '${input.accountId}'`);
  }
  return await grantCredits(deps, {
    accountId: input.accountId,
    amount: input.credits,
    reason: OPERATOR_GRANT,
    note: input.reason,
    ref: input.ref,
  });
}

/** The account's ledger entries, oldest first. */
export async function listLedger(kv: Deno.Kv, accountId: string): Promise<LedgerEntry[]> {
  const out: LedgerEntry[] = [];
  for await (const e of list(kv, { prefix: keys.ledgerOfAccount(accountId) })) {
    out.push(e.value);
  }
  return out;
}

async function creditOnce(
  deps: Deps,
  kind: "grant" | "refund",
  input: Omit<LedgerInput, "now">,
): Promise<{ applied: boolean; balance: number }> {
  assertAmount(input.amount);
  return await inTurn(deps.kv, input.accountId, () => creditAttempts(deps, kind, input));
}

function creditAttempts(
  deps: Deps,
  kind: "grant" | "refund",
  input: Omit<LedgerInput, "now">,
): Promise<{ applied: boolean; balance: number }> {
  const { kv, clock } = deps;
  return atomically<{ applied: boolean; balance: number }>(kv, async () => {
    const [balanceEntry, marker] = await readMany(kv, [
      keys.balance(input.accountId),
      keys.ledgerRef(input.accountId, kind, input.ref),
    ]);
    if (marker.value !== null) {
      // Already applied: commit a check only, so the answer reflects one consistent snapshot.
      return {
        op: kv.atomic().check(marker),
        result: { applied: false, balance: balanceEntry.value?.credits ?? 0 },
      };
    }
    const op = atomic(kv);
    const entry = addCredit(op, balanceEntry, kind, { ...input, now: clock.now() });
    return { op, result: { applied: true, balance: entry.balanceAfter } };
  });
}

function writeMovement(
  op: Atomic,
  balanceEntry: Deno.KvEntryMaybe<BalanceRecord>,
  kind: LedgerEntry["kind"],
  balanceAfter: number,
  input: LedgerInput,
): LedgerEntry {
  // The balance entry is checked in this commit, so `seq` is strictly serial per account: entry
  // ids list in commit order and a gap would reveal a lost entry.
  const seq = (balanceEntry.value?.seq ?? 0) + 1;
  const entry: LedgerEntry = {
    id: `led_${String(seq).padStart(12, "0")}`,
    accountId: input.accountId,
    kind,
    amount: input.amount,
    balanceAfter,
    reason: input.reason,
    ref: input.ref,
    ...(input.note !== undefined ? { note: input.note } : {}),
    createdAt: input.now,
  };
  const balance: BalanceRecord = { credits: balanceAfter, seq, updatedAt: input.now };
  op.check(balanceEntry)
    .set(keys.balance(input.accountId), balance)
    .set(keys.ledgerEntry(input.accountId, entry.id), entry);
  return entry;
}

function assertAmount(amount: number): void {
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new Error(`Credit amounts are positive whole numbers, got ${amount}`);
  }
}

/**
 * Runs balance writes of one account one at a time within this process. Purely a throughput
 * measure: same-account writers would otherwise all read one version and all but one conflict and
 * retry. Correctness never rests on it (other processes, and `addDebit` inside other code's
 * operations, are serialised by the versionstamp check alone). Keyed per KV handle and account.
 */
const turns = new WeakMap<Deno.Kv, Map<string, Promise<unknown>>>();

function inTurn<T>(kv: Deno.Kv, accountId: string, fn: () => Promise<T>): Promise<T> {
  let queues = turns.get(kv);
  if (!queues) turns.set(kv, queues = new Map());
  const previous = queues.get(accountId) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const settled = run.then(() => {}, () => {});
  queues.set(accountId, settled);
  // Drop the entry once the last queued write finishes, so the map does not grow.
  settled.then(() => {
    if (queues.get(accountId) === settled) queues.delete(accountId);
  });
  return run;
}
