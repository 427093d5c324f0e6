/**
 * Stored shapes and fixed limits of outbound mail (domain/mail/). A leaf module: the store's key
 * table imports it, and it imports nothing. Times are epoch milliseconds from `deps.clock`.
 *
 * @module
 */

/** Attempts per message, the first included (as outbound webhooks). */
export const MAIL_MAX_ATTEMPTS = 8;
/** No two attempts lie further apart than this. */
export const MAIL_MAX_RETRY_DELAY_MS = 6 * 3_600_000;
/**
 * How long an attempt that started may run before another runner of the same attempt takes over
 * (the SMTP client's own timeouts end a send well before).
 */
export const MAIL_SEND_LEASE_MS = 60_000;
/** How long past its due time a pending message waits before the sweep re-sends its queue message. */
export const MAIL_SWEEP_GRACE_MS = 60_000;
/** Sent, failed or dropped messages are kept this long for inspection, then KV expires them. */
export const FINISHED_MAIL_TTL_MS = 7 * 86_400_000;

/** How long a verification link works. */
export const VERIFICATION_TTL_MS = 24 * 3_600_000;
/** Verification records (and their links' answers: used, expired) are kept this long after expiry. */
export const VERIFICATION_KEEP_MS = 7 * 86_400_000;
/** Verification mails per account, and per address, within any hour. */
export const VERIFICATIONS_PER_HOUR = 3;
export const VERIFICATION_WINDOW_MS = 3_600_000;

/** What a message is; its text is composed at each attempt from the record it names (`ref`). */
export type MailKind = "verify_email";

export type MailState = "pending" | "sent" | "failed" | "dropped";

/**
 * One message on its way: the truth of its job. The queue message only names it and the attempt
 * (`mail_…:3`). It holds no secret: a verification mail's link is made at each attempt and only
 * its SHA-256 is stored.
 */
export interface MailRecord {
  id: string;
  accountId: string;
  kind: MailKind;
  /** The record the message is about: an email verification id. */
  ref: string;
  to: string;
  state: MailState;
  /** Attempts finished so far. */
  attempts: number;
  createdAt: number;
  nextAttemptAt: number | null;
  /** Key time of its `mail_due` index entry while pending, else null. */
  sweepAt: number | null;
  /** The attempt under way and when it started; another runner of it stands back meanwhile. */
  sending: { attempt: number; at: number } | null;
  lastAttemptAt: number | null;
  /** Why the last attempt failed (the SMTP server's answer), never a credential. */
  lastError: string | null;
  sentAt: number | null;
}

/** A request to prove the account's email: the link's token is stored only as its SHA-256. */
export interface EmailVerificationRecord {
  id: string;
  accountId: string;
  /** The address the link was sent to (the account's email when asked). */
  email: string;
  /**
   * SHA-256 hex of the token of the newest link sent; null until the mail's first attempt makes
   * one. An attempt makes a new token (a retry never resends a stored secret), so an older link
   * of the same request answers "replaced".
   */
  tokenHash: string | null;
  /** Where the confirmation leads (an absolute URL on this service), or null for its own page. */
  returnTo: string | null;
  mailId: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}
