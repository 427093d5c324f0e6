/**
 * Upgrades, the agent's side and the human's: start one with a sandbox key (a user code for a
 * human), read its status, and claim the live key exactly once after Stripe settled the payment;
 * the human's page enters the code (binding the upgrade to that browser), reads what is being
 * upgraded, and may reveal the live key once instead of the agent.
 *
 * Rules:
 * - One pending upgrade per account: starting again while one is pending returns that upgrade
 *   with a fresh user code (the earlier code stops working; a page already opened with it goes
 *   on). A live key, or an account a paid upgrade already moved, is refused (409 `already_live`).
 * - The code lives `UPGRADE_CODE_TTL_MS`; only its keyed digest is stored, and it stops opening
 *   anything once the upgrade is paid.
 * - The live key is minted by the claim itself, in one atomic commit with the upgrade's move to
 *   `claimed` (the upgrade and the account are checked): of two parallel claims exactly one
 *   commits and gets the raw key; the raw key is never stored, so nobody can be shown it again.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, list, newId, read, readMany } from "../platform/mod.ts";
import { buildKey, MAX_ACTIVE_KEYS, writeKey } from "../identity/mod.ts";
import type { AccountRecord, ApiKeyRecord, KeyMode } from "../identity/types.ts";
import type { ProjectRecord } from "../projects/types.ts";
import { codeDigest, newUserCode, normalizeUserCode } from "./codes.ts";
import type { UpgradeRecord } from "./types.ts";

/** How long a user code (and a pending upgrade nobody acted on) lives. */
export const UPGRADE_CODE_TTL_MS = 30 * 60_000;
/** The polling interval the start answer suggests (RFC 8628's default). */
export const UPGRADE_POLL_INTERVAL_S = 5;
/** Upgrade records are kept this long (support questions), then KV drops them. */
export const UPGRADE_RECORD_TTL_MS = 90 * 86_400_000;
/** The human's pages of a paid upgrade (success, reveal, billing portal) answer this long. */
export const UPGRADE_PAGE_AFTER_PAYMENT_MS = 24 * 3_600_000;

/** What the agent sees: `expired` is a pending upgrade past its end. */
export type UpgradeStatus = "pending" | "paid" | "claimed" | "expired";

export function upgradeStatus(u: UpgradeRecord, now: number): UpgradeStatus {
  if (u.status === "pending" && now >= u.expiresAt) return "expired";
  return u.status;
}

export interface UpgradeCaller {
  accountId: string;
  mode: KeyMode;
  keyId: string | null;
}

/**
 * Starts an upgrade, or hands out the pending one again with a fresh code. Refusals, in order:
 * 409 `already_live` (a live key, or an account already upgraded), 503 `billing_not_configured`
 * (no Stripe to pay at).
 */
export async function startUpgrade(
  deps: Deps,
  caller: UpgradeCaller,
): Promise<{ upgrade: UpgradeRecord; code: string; reused: boolean }> {
  const { kv, clock, config } = deps;
  refuseLiveKey(caller);
  if (!config.stripe.secretKey || !config.stripe.webhookSecret) {
    throw new ApiError(
      "billing_not_configured",
      "Upgrades are paid at Stripe, which is not configured on this server",
    );
  }
  const code = newUserCode();
  const digest = await codeDigest(code, config.webhookEncryptionKey);
  const started = await atomically(kv, async () => {
    const now = clock.now();
    const [accountEntry, pendingEntry] = await readMany(kv, [
      keys.account(caller.accountId),
      keys.upgradePending(caller.accountId),
    ]);
    const account = accountEntry.value;
    if (!account) throw new ApiError("unauthorized", "Unknown account");
    if (account.upgradedAt) return { op: atomic(kv).check(accountEntry), result: null };
    const expiresAt = now + UPGRADE_CODE_TTL_MS;
    const codeKey = keys.upgradeCode(digest);
    const target = { accountId: account.id };
    if (pendingEntry.value) {
      const entry = await read(kv, keys.upgrade(account.id, pendingEntry.value));
      const pending = entry.value;
      if (pending && upgradeStatus(pending, now) === "pending") {
        const upgrade: UpgradeRecord = {
          ...pending,
          startedBy: caller.keyId ?? pending.startedBy,
          codeDigest: digest,
          expiresAt: Math.max(pending.expiresAt, expiresAt),
        };
        const op = atomic(kv)
          .check(accountEntry, pendingEntry, entry, { key: codeKey, versionstamp: null })
          .delete(keys.upgradeCode(pending.codeDigest))
          .set(codeKey, { ...target, upgradeId: upgrade.id }, { expireIn: UPGRADE_CODE_TTL_MS })
          .set(entry.key, upgrade, { expireIn: UPGRADE_RECORD_TTL_MS })
          .set(pendingEntry.key, upgrade.id, { expireIn: upgrade.expiresAt - now });
        return { op, result: { upgrade, reused: true } };
      }
    }
    const upgrade: UpgradeRecord = {
      id: newId("upg", now),
      accountId: account.id,
      startedBy: caller.keyId ?? "",
      status: "pending",
      codeDigest: digest,
      createdAt: now,
      expiresAt,
      browserDigest: null,
      checkout: null,
      paidAt: null,
      result: null,
      claimedAt: null,
      claimedBy: null,
      liveKeyId: null,
    };
    const recordKey = keys.upgrade(account.id, upgrade.id);
    const op = atomic(kv)
      .check(accountEntry, pendingEntry, { key: codeKey, versionstamp: null })
      .check({ key: recordKey, versionstamp: null })
      .set(recordKey, upgrade, { expireIn: UPGRADE_RECORD_TTL_MS })
      .set(keys.upgradeOwner(upgrade.id), account.id, { expireIn: UPGRADE_RECORD_TTL_MS })
      .set(codeKey, { ...target, upgradeId: upgrade.id }, { expireIn: UPGRADE_CODE_TTL_MS })
      .set(pendingEntry.key, upgrade.id, { expireIn: UPGRADE_CODE_TTL_MS });
    return { op, result: { upgrade, reused: false } };
  });
  if (!started) throw await alreadyUpgraded(deps, caller.accountId);
  return { ...started, code };
}

/** 409 `already_live` for a live key: the account is already on the live side. */
export function refuseLiveKey(caller: UpgradeCaller): void {
  if (caller.mode === "live") {
    throw new ApiError(
      "already_live",
      "This is a live key: the account is already on the live side, nothing to upgrade. Buy " +
        "plans or credits with POST /v1/subscriptions or POST /v1/credits/purchases",
    );
  }
}

/**
 * Refuses an upgrade of an account that cannot be upgraded (before anything is charged): 409
 * `already_live` for a live key or an account a paid upgrade already moved.
 */
export async function assertUpgradable(deps: Deps, caller: UpgradeCaller): Promise<void> {
  refuseLiveKey(caller);
  const account = (await read(deps.kv, keys.account(caller.accountId))).value;
  if (!account) throw new ApiError("unauthorized", "Unknown account");
  if (account.upgradedAt) throw await alreadyUpgraded(deps, caller.accountId);
}

/** 409 for an account a paid upgrade already moved, naming that upgrade (to claim its key). */
export async function alreadyUpgraded(deps: Deps, accountId: string): Promise<ApiError> {
  let paid: UpgradeRecord | null = null;
  for await (const e of list(deps.kv, { prefix: keys.upgradesOfAccount(accountId) })) {
    if (e.value.status !== "pending") paid = e.value;
  }
  if (paid?.status === "paid") {
    return new ApiError(
      "already_live",
      `This account was upgraded by ${paid.id}; its live key waits: GET /v1/upgrades/${paid.id}`,
      { upgrade_id: paid.id },
    );
  }
  return new ApiError(
    "already_live",
    "This account is already on the live side (upgraded" +
      (paid ? ` by ${paid.id}, whose live key was claimed` : "") + "); use its live key",
    paid ? { upgrade_id: paid.id } : undefined,
  );
}

/** An upgrade as read or claimed: the raw live key and its record only in the winning claim. */
export interface Claim {
  upgrade: UpgradeRecord;
  apiKey: string | null;
  key: ApiKeyRecord | null;
}

/**
 * An upgrade of the caller's account (404 for another account's or an unknown id). When it is
 * paid and unclaimed, this read claims it: the answer carries the raw live key, once.
 */
export async function pollUpgrade(
  deps: Deps,
  caller: UpgradeCaller,
  upgradeId: string,
): Promise<Claim> {
  const entry = await read(deps.kv, keys.upgrade(caller.accountId, upgradeId));
  if (!entry.value) throw new ApiError("not_found", `No upgrade '${upgradeId}' on this account`);
  if (entry.value.status !== "paid") return { upgrade: entry.value, apiKey: null, key: null };
  return await claimUpgrade(deps, caller.accountId, upgradeId, "agent");
}

/**
 * Mints the live key of a paid upgrade and marks it claimed, in one commit that checks the
 * upgrade and the account: exactly one claim wins. A claim that finds it already claimed (or
 * not paid) answers the upgrade as it is, with no key. 400 `key_limit_reached` when the account
 * already has its 5 active keys (nothing is consumed: revoke one and claim again).
 */
export function claimUpgrade(
  deps: Deps,
  accountId: string,
  upgradeId: string,
  by: "agent" | "human",
): Promise<Claim> {
  const { kv, clock } = deps;
  return atomically<Claim>(kv, async () => {
    const [entry, accountEntry] = await readMany(kv, [
      keys.upgrade(accountId, upgradeId),
      keys.account(accountId),
    ]);
    const upgrade = entry.value;
    const account = accountEntry.value;
    if (!upgrade || !account) {
      throw new ApiError("not_found", `No upgrade '${upgradeId}' on this account`);
    }
    if (upgrade.status !== "paid") {
      return { op: atomic(kv).check(entry), result: { upgrade, apiKey: null, key: null } };
    }
    if (account.activeKeys >= MAX_ACTIVE_KEYS) {
      throw new ApiError(
        "key_limit_reached",
        `The upgrade is paid, but the account already has ${MAX_ACTIVE_KEYS} active API keys: ` +
          "revoke one (DELETE /v1/api-keys/{id}) and ask again; the live key waits",
      );
    }
    const now = clock.now();
    const { record, raw } = buildKey({
      accountId,
      mode: "live",
      name: "Live key (upgrade)",
      expiresAt: null,
      now,
    });
    const claimed: UpgradeRecord = {
      ...upgrade,
      status: "claimed",
      claimedAt: now,
      claimedBy: by,
      liveKeyId: record.id,
    };
    const op = atomic(kv)
      .check(entry, accountEntry)
      .set(accountEntry.key, { ...account, activeKeys: account.activeKeys + 1 })
      .set(entry.key, claimed, { expireIn: UPGRADE_RECORD_TTL_MS });
    writeKey(op, record);
    return { op, result: { upgrade: claimed, apiKey: raw, key: record } };
  });
}

/** What the human's pages show of an upgrade: its account and the sandbox projects. */
export interface UpgradeView {
  entry: Deno.KvEntry<UpgradeRecord>;
  account: AccountRecord;
  /** The account's sandbox projects, oldest first (before payment: what will move). */
  sandboxProjects: ProjectRecord[];
  /** The projects the payment moved, after payment. */
  movedProjects: ProjectRecord[];
}

/**
 * The upgrade a page session (its browser cookie's digest) opened, or null: unknown, bound to
 * another browser, or no longer served (a pending one past its end; a paid one a day after
 * payment).
 */
export async function upgradeForPage(
  deps: Deps,
  upgradeId: string,
  browser: string | null,
): Promise<UpgradeView | null> {
  if (!browser || !/^upg_[0-9a-z]{10,40}$/.test(upgradeId)) return null;
  const owner = (await read(deps.kv, keys.upgradeOwner(upgradeId))).value;
  if (!owner) return null;
  const [entry, accountEntry] = await readMany(deps.kv, [
    keys.upgrade(owner, upgradeId),
    keys.account(owner),
  ]);
  const upgrade = entry.value;
  const account = accountEntry.value;
  if (!upgrade || !account || upgrade.browserDigest !== browser) return null;
  const now = deps.clock.now();
  if (upgrade.paidAt !== null && now - upgrade.paidAt > UPGRADE_PAGE_AFTER_PAYMENT_MS) return null;
  const sandboxProjects: ProjectRecord[] = [];
  const movedProjects: ProjectRecord[] = [];
  const moved = new Set(upgrade.result?.projectIds ?? []);
  for await (const e of list(deps.kv, { prefix: keys.projectsOfAccount(owner) })) {
    if (e.value.sandbox) sandboxProjects.push(e.value);
    else if (moved.has(e.value.id)) movedProjects.push(e.value);
  }
  const byAge = (a: ProjectRecord, b: ProjectRecord) => a.createdAt - b.createdAt;
  return {
    entry: entry as Deno.KvEntry<UpgradeRecord>,
    account,
    sandboxProjects: sandboxProjects.sort(byAge),
    movedProjects: movedProjects.sort(byAge),
  };
}

/**
 * A human typed a code: when it opens a pending upgrade, that upgrade is bound to this browser
 * (the digest of its page cookie; typing it in another browser moves the binding there) and
 * its id is returned. Null for anything else (malformed, unknown, expired, already paid): the
 * caller counts it as a wrong code, the same answer for each.
 */
export async function enterCode(
  deps: Deps,
  typed: string,
  browser: string,
): Promise<string | null> {
  const code = normalizeUserCode(typed);
  if (!code) return null;
  const digest = await codeDigest(code, deps.config.webhookEncryptionKey);
  const target = (await read(deps.kv, keys.upgradeCode(digest))).value;
  if (!target) return null;
  const { kv, clock } = deps;
  return await atomically(kv, async () => {
    const entry = await read(kv, keys.upgrade(target.accountId, target.upgradeId));
    const upgrade = entry.value;
    const now = clock.now();
    if (
      !upgrade || upgrade.codeDigest !== digest || upgradeStatus(upgrade, now) !== "pending"
    ) {
      return { op: atomic(kv).check(entry), result: null };
    }
    const op = atomic(kv).check(entry).set(entry.key, { ...upgrade, browserDigest: browser }, {
      expireIn: UPGRADE_RECORD_TTL_MS,
    });
    return { op, result: upgrade.id };
  });
}
