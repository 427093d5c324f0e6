/**
 * Stored shapes and fixed limits of outbound webhooks. Times are epoch milliseconds from
 * `deps.clock`; the routes turn them into ISO strings.
 *
 * @module
 */
import type { KeyMode } from "../identity/types.ts";

/** Endpoints per account (interface: Limits). */
export const MAX_ENDPOINTS = 20;
/** Attempts per delivery, the first included. */
export const MAX_ATTEMPTS = 8;
/** No two attempts lie further apart than this. */
export const MAX_RETRY_DELAY_MS = 6 * 3_600_000;
/** A receiver must answer 2xx within this. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Consecutive failed attempts that deactivate an endpoint. */
export const DEACTIVATE_AFTER_FAILURES = 50;
/**
 * How long past its due time a pending job may sit before the sweep assumes its queue message
 * was lost and sends a new one. Well above the 10 s attempt timeout, so a running attempt is
 * never doubled by the sweep.
 */
export const SWEEP_GRACE_MS = 60_000;
/**
 * Delay of the queued first attempt that backs up the immediate one made by the fan-out handler:
 * past the attempt timeout, so it only acts when that handler died mid-way.
 */
export const FIRST_ATTEMPT_FALLBACK_MS = 30_000;

/**
 * The sweep grace and first-attempt fallback in force: the operator's `JOB_LEASE_MS` replaces both
 * when set (the fallback never later than the grace), so a dead process's attempts resume sooner.
 */
export function webhookGraceMs(config: { jobLeaseMs: number | null }): {
  sweepGraceMs: number;
  firstAttemptFallbackMs: number;
} {
  const lease = config.jobLeaseMs;
  if (lease === null) {
    return { sweepGraceMs: SWEEP_GRACE_MS, firstAttemptFallbackMs: FIRST_ATTEMPT_FALLBACK_MS };
  }
  return {
    sweepGraceMs: lease,
    firstAttemptFallbackMs: Math.min(FIRST_ATTEMPT_FALLBACK_MS, lease),
  };
}
/** Finished delivery records are kept this long for inspection, then KV expires them. */
export const FINISHED_DELIVERY_TTL_MS = 7 * 86_400_000;

export const SIGNATURE_HEADER = "X-Serpwright-Signature";
export const EVENT_HEADER = "X-Serpwright-Event";
export const DELIVERY_HEADER = "X-Serpwright-Delivery";
export const ATTEMPT_HEADER = "X-Serpwright-Attempt";
export const SIGNATURE_SCHEME = "hex(hmac_sha256(secret, raw_body))";
/** Unix seconds at which this attempt was signed (Standard Webhooks style). */
export const TIMESTAMP_HEADER = "X-Serpwright-Timestamp";
/**
 * `v2=` and the hex HMAC-SHA256 of `{delivery id}.{timestamp}.{raw body}`: binds the body to the
 * id receivers dedupe on and to the time it was sent, so a captured delivery cannot be replayed
 * later or under another id. The body-only `X-Serpwright-Signature` stays for existing receivers.
 */
export const SIGNATURE_V2_HEADER = "X-Serpwright-Signature-V2";
export const SIGNATURE_V2_SCHEME =
  "v2=hex(hmac_sha256(secret, delivery_id + '.' + timestamp + '.' + raw_body))";
/** How far a receiver should accept a v2 timestamp from its own clock (documented, seconds). */
export const SIGNATURE_TOLERANCE_S = 300;

/** The signing secret as AES-GCM ciphertext; the raw secret is never stored. */
export interface SealedSecret {
  v: 1;
  /** base64 of the 12-byte nonce. */
  iv: string;
  /** base64 of ciphertext + tag. */
  ct: string;
}

export interface WebhookRecord {
  id: string;
  accountId: string;
  url: string;
  /** Event-name filter; empty means every event. */
  events: string[];
  active: boolean;
  createdAt: number;
  secret: SealedSecret;
  /** Failed attempts since the last success. */
  failureCount: number;
  /** The last success time lives under `keys.webhookLastSuccess` (conflict-free `max`). */
  lastFailureAt: number | null;
  deactivatedAt: number | null;
  /**
   * The mode of the key that registered it (absent on older records: live). A sandbox endpoint
   * is the trial's: only sandbox keys' and live keys' lists show it, and it receives only events
   * about the account's sandbox projects, never the live side's (credits, live projects).
   */
  mode?: KeyMode;
}

export type DeliveryState = "pending" | "delivered" | "failed" | "dropped";

/** One event on its way to one endpoint; the truth of the delivery job. */
export interface DeliveryRecord {
  id: string;
  accountId: string;
  webhookId: string;
  eventId: string;
  event: string;
  /** The exact envelope bytes (as text) every attempt sends and signs. */
  body: string;
  /** When the change that caused the event committed. */
  eventAt: number;
  createdAt: number;
  state: DeliveryState;
  /** Attempts finished so far. */
  attempts: number;
  nextAttemptAt: number | null;
  /** Key time of its `deliveries_due` index entry while pending, else null. */
  sweepAt: number | null;
  lastAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
}

/** An event waiting in the outbox for fan-out to the account's webhook endpoints. */
export interface OutboxEvent {
  id: string;
  accountId: string;
  event: string;
  createdAt: number;
  data: Record<string, unknown>;
}
