import type { BalanceRecord, Funding, SubscriptionRecord } from "./types.ts";
import { ApiError, type Atomic, keys, read } from "../platform/mod.ts";
import { UNIT_PRICES, type UnitId } from "./catalog.ts";
import { addCredit, addDebit, readBalance, readRefMarker } from "./credits.ts";
import { canSee, SANDBOX_LIMITS } from "../identity/mod.ts";
import type { KeyMode } from "../identity/types.ts";
import type { ProjectRecord, SandboxUsage } from "../projects/types.ts";
import { isActive } from "./subscription_state.ts";

export type { Funding };

export type Unit = "audits" | "articles";

/**
 * Who work runs for and pays with: the account and the side it acts on (a key's mode; `live` for
 * the account's scheduled work). The application layer's `AccountActor` is one.
 */
export interface WorkActor {
  accountId: string;
  mode: KeyMode;
}

/** The catalogue's unit each job is charged as. */
const UNIT_OF = { audits: "technical_audit", articles: "article_generated" } as const;

/**
 * Decides how a new audit or article is paid for and adds the charge to the caller's atomic
 * operation, so the charge and the job record commit together or not at all. Visibility comes
 * before any funding rule: a project the actor cannot see (`canSee`: a live project to a sandbox
 * actor) is 404 `not_found`, whatever pays for it. Then:
 * - a project with an active subscription: included;
 * - a sandbox actor on its sandbox project: the trial budget (1 audit, 2 articles), else 403;
 * - a live actor without subscription: the unit price in credits, else 402 `insufficient_credits`.
 */
export async function chargeFor(
  kv: Deno.Kv,
  op: Atomic,
  input: {
    actor: WorkActor;
    project: ProjectRecord;
    subscription: Deno.KvEntryMaybe<SubscriptionRecord>;
    unit: Unit;
    /** The catalogue unit to charge when it is not the default of `unit` (an article outline). */
    unitId?: UnitId;
    ref: string;
    now: number;
    /**
     * What the charge would read, read already (`readPayer`, beside the caller's own reads).
     * The charge checks it in `op`, as it checks its own reads.
     */
    payer?: Promise<Payer>;
  },
): Promise<Funding> {
  const { actor, project, unit, now } = input;
  if (!canSee(actor.mode, project.sandbox)) {
    throw new ApiError("not_found", `No project '${project.id}' on this account`);
  }
  op.check(input.subscription);
  if (isActive(input.subscription.value, now)) return { kind: "subscription" };
  const payer = () => input.payer ?? readPayer(kv, actor);
  if (actor.mode === "sandbox") {
    const { usage: usageEntry } = await payer();
    const usage = usageEntry!.value ?? { audits: 0, articles: 0 };
    if (usage[unit] >= SANDBOX_LIMITS[unit]) {
      throw new ApiError(
        "sandbox_limit_reached",
        `The sandbox allows ${SANDBOX_LIMITS[unit]} ${unit === "audits" ? "audit" : "articles"}; ` +
          "hand a human the upgrade_url to continue",
      );
    }
    op.check(usageEntry!).set(keys.sandboxUsage(actor.accountId), {
      ...usage,
      [unit]: usage[unit] + 1,
    });
    return { kind: "sandbox" };
  }
  const unitId = input.unitId ?? UNIT_OF[unit];
  const amount = UNIT_PRICES[unitId];
  // A free unit writes no ledger line and needs no balance.
  if (amount === 0) return { kind: "credits", amount: 0, unit: unitId };
  const balance = (await payer()).balance!;
  addDebit(op, balance, {
    accountId: actor.accountId,
    amount,
    reason: unitId,
    ref: input.ref,
    now,
  });
  return { kind: "credits", amount, unit: unitId };
}

/** The entry a charge of `actor` checks: a sandbox's trial usage, a live account's balance. */
export interface Payer {
  usage?: Deno.KvEntryMaybe<SandboxUsage>;
  balance?: Deno.KvEntryMaybe<BalanceRecord>;
}

/**
 * Reads what a charge of `actor` checks (`chargeFor`), so a caller can read it beside its own
 * reads (one round trip fewer on a remote KV): wasted when a subscription pays.
 */
export async function readPayer(kv: Deno.Kv, actor: WorkActor): Promise<Payer> {
  return actor.mode === "sandbox"
    ? { usage: await read(kv, keys.sandboxUsage(actor.accountId)) }
    : { balance: await readBalance(kv, actor.accountId) };
}

/**
 * Adds the refund of a failed job's charge to an atomic operation: credits come back once per job
 * (a ledger refund marker), sandbox usage goes back down. Subscription work costs nothing.
 */
export async function addRefund(
  kv: Deno.Kv,
  op: Atomic,
  input: { accountId: string; funding: Funding; unit: Unit; ref: string; now: number },
): Promise<void> {
  const { funding } = input;
  if (funding.kind === "credits") {
    if (funding.amount <= 0) return;
    const marker = await readRefMarker(kv, input.accountId, "refund", input.ref);
    if (marker.value !== null) return;
    const balance = await readBalance(kv, input.accountId);
    addCredit(op, balance, "refund", {
      accountId: input.accountId,
      amount: funding.amount,
      reason: `refund_${funding.unit}`,
      ref: input.ref,
      now: input.now,
    });
  } else if (funding.kind === "sandbox") {
    const usageEntry = await read(kv, keys.sandboxUsage(input.accountId));
    const usage = usageEntry.value ?? { audits: 0, articles: 0 };
    op.check(usageEntry).set(keys.sandboxUsage(input.accountId), {
      ...usage,
      [input.unit]: Math.max(0, usage[input.unit] - 1),
    });
  }
}
