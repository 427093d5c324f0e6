/**
 * Persisted shapes of share links.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { KeyMode } from "../identity/types.ts";
import type { SealedSecret } from "../webhooks/types.ts";

/** A live link as the two live indexes hold it: enough to count, list and end it. */
export interface LiveShare {
  id: string;
  kind: ShareKind;
  targetId: string;
  sandbox: boolean;
  createdAt: number;
  expiresAt: number;
  last4: string;
  keyId: string | null;
  grantId: string | null;
}

/** Where the share record of a token hash is. */
export interface ShareLocation {
  accountId: string;
  targetId: string;
  shareId: string;
}

export interface ShareRecord {
  id: string;
  kind: ShareKind;
  accountId: string;
  /** The audit or article id. */
  targetId: string;
  /** The mode of the key that made it: the page is served with that key's visibility. */
  mode: KeyMode;
  /** SHA-256 hex of the token (also the key of its index). */
  tokenHash: string;
  /** The token's last 4 characters, to tell links apart in a list. */
  last4: string;
  /** The token sealed with WEBHOOK_ENCRYPTION_KEY (bound to the share id); null without it. */
  sealed: SealedSecret | null;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  /**
   * The key that made it: the caller's key, or the key that approved the connected app whose
   * token made it. The link ends when this key is revoked or expires. Null: made without a key.
   */
  createdBy: string | null;
  /**
   * The connected app (OAuth grant) whose token made it; the link ends with the grant. Null for
   * a key; absent on links made before this field (those end with their key only).
   */
  grantId?: string | null;
  /**
   * Whether the audit or article is on the sandbox side (what a sandbox key sees of the
   * account's links); absent on older links, read as their key's mode.
   */
  sandbox?: boolean;
}

export type ShareKind = "audit" | "article";
