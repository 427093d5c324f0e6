import { atomically } from "../../kv/atomic.ts";
import { ApiError, atomic, type Deps, keys, newId, read, readMany } from "../platform/mod.ts";
import { buildKey, SANDBOX_KEY_LIFETIME_MS, writeKey } from "./api_keys.ts";
import { blockExhausted, DAY_MS, disposableRefused, isDisposableEmail } from "./signup_limits.ts";
import type { AccountRecord, ApiKeyRecord } from "./types.ts";
import type { SandboxUsage } from "../projects/types.ts";

/** The trial's hard caps. */
export const SANDBOX_LIMITS = { audits: 1, articles: 2, projects: 1, expires_days: 14 } as const;

export interface SignupInput {
  email: string;
  companyName: string | null;
  origin: "agent" | "human";
  /**
   * The client's address block (`addressBlock`), counted against
   * `SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY` in the signup's own commit; null skips the count
   * (operator and test tooling).
   */
  addressBlock?: string | null;
}

/**
 * Creates an account with its first sandbox key in one commit; the email index is checked empty
 * in the same commit, so two signups racing for one email cannot both win. The operator's abuse
 * limits apply first: a disposable address is refused when configured so, and the address
 * block's count of sandbox accounts today is checked and bumped in the same commit (exact under
 * concurrency and across processes).
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps;
 * const { account, key, raw } = await signup(deps, { email: "a@b.co", companyName: null, origin: "agent" });
 * ```
 */
export function signup(
  deps: Deps,
  input: SignupInput,
): Promise<{ account: AccountRecord; key: ApiKeyRecord; raw: string }> {
  const { kv, clock } = deps;
  const email = input.email.trim().toLowerCase();
  const limits = deps.config.signup;
  if (
    limits.disposableEmails === "refuse" && isDisposableEmail(email, limits.disposableDomains)
  ) {
    throw disposableRefused();
  }
  return atomically(kv, async () => {
    const now = clock.now();
    const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const blockKey = input.addressBlock ? keys.signupBlock(input.addressBlock, dayStart) : null;
    const [existing, blockEntry] = await readMany(kv, [
      keys.accountByEmail(email),
      blockKey ?? keys.signupBlock("-", 0),
    ]);
    if (existing.value) {
      throw new ApiError("account_exists", "An account with this email already exists");
    }
    const opened = blockEntry.value ?? 0;
    if (blockKey && opened >= limits.perBlockPerDay) {
      throw blockExhausted(limits.perBlockPerDay, Math.ceil((dayStart + DAY_MS - now) / 1000));
    }
    const account: AccountRecord = {
      id: newId("acct", now),
      email,
      emailVerified: false,
      companyName: input.companyName,
      origin: input.origin,
      createdAt: now,
      projectsCount: 0,
      sandboxProjects: 0,
      activeKeys: 1,
    };
    const { record, raw } = buildKey({
      accountId: account.id,
      mode: "sandbox",
      name: "Sandbox key",
      expiresAt: now + SANDBOX_KEY_LIFETIME_MS,
      now,
    });
    const usage: SandboxUsage = { audits: 0, articles: 0 };
    const op = atomic(kv)
      .check(existing)
      .check({ key: keys.account(account.id), versionstamp: null })
      .set(keys.account(account.id), account)
      .set(keys.accountByEmail(email), account.id)
      .set(keys.sandboxUsage(account.id), usage);
    if (blockKey) {
      op.check(blockEntry).set(blockKey, opened + 1, { expireIn: 2 * DAY_MS });
    }
    writeKey(op, record);
    return { op, result: { account, key: record, raw } };
  });
}

/** The account record, or null. */
export async function getAccount(deps: Deps, accountId: string): Promise<AccountRecord | null> {
  return (await read(deps.kv, keys.account(accountId))).value;
}
