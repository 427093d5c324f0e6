/**
 * Persisted shapes of identity: accounts, API keys and the revocation signal. Times are epoch milliseconds inside; the routes turn them into ISO strings.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */

export type KeyMode = "sandbox" | "live";

export interface AccountRecord {
  id: string;
  email: string;
  emailVerified: boolean;
  companyName: string | null;
  origin: "agent" | "human";
  createdAt: number;
  projectsCount: number;
  sandboxProjects: number;
  /** Keys not revoked; capped at 5. */
  activeKeys: number;
  /**
   * When a paid upgrade moved the account to the live side (domain/upgrades/); absent or null
   * before. A sandbox key then opens no new sandbox project.
   */
  upgradedAt?: number | null;
  /**
   * The account's Stripe customer, created with its first checkout and kept, so every payment
   * and the Billing Portal (`POST /v1/billing-portal`) meet one customer.
   */
  stripeCustomerId?: string | null;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  hash: string;
  name: string;
  prefix: string;
  last4: string;
  mode: KeyMode;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

/** The value of one shard, `keys.authRevocations(shard)`: its last sequence number and changes. */
export interface RevocationSignal {
  seq: number;
  /** The shard's last `REVOCATION_RING` changes, oldest first, with consecutive `seq`s. */
  recent: AuthChange[];
}

/** One change that made cached principals of an account stale (a key revoked). */
export interface AuthChange {
  seq: number;
  accountId: string;
  /** The key concerned, for the record; the whole account is dropped from caches. */
  keyId: string | null;
  at: number;
}
