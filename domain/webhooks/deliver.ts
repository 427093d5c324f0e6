/**
 * One delivery attempt: re-read the record (the truth), re-check the target through the address
 * guard, POST the stored envelope signed over its exact bytes, and record the outcome together
 * with the next attempt's queue message in one commit.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { type Atomic, atomic, type Deps, keys, read } from "../platform/mod.ts";
import { FetchFailedError, safeFetch, TargetRefusedError } from "../net/mod.ts";
import { secretBinding } from "./endpoints.ts";
import { deliveryMessage, parseDeliveryMessage } from "./messages.ts";
import { openSecret, signHex } from "./secret_box.ts";
import { refusalText, webhookNet } from "./target.ts";
import {
  ATTEMPT_HEADER,
  DEACTIVATE_AFTER_FAILURES,
  DELIVERY_HEADER,
  type DeliveryRecord,
  EVENT_HEADER,
  FINISHED_DELIVERY_TTL_MS,
  MAX_ATTEMPTS,
  MAX_RETRY_DELAY_MS,
  SIGNATURE_HEADER,
  SIGNATURE_V2_HEADER,
  TIMESTAMP_HEADER,
  webhookGraceMs,
  type WebhookRecord,
} from "./types.ts";
import { recordWebhook } from "../../telemetry/mod.ts";

const encoder = new TextEncoder();

/**
 * Delay after failed attempt `n` (1-based): base·2^(n-1) plus up to 10% jitter, so endpoints that
 * failed together do not all retry in the same instant; never above 6 hours.
 */
export function retryDelayMs(baseMs: number, failedAttempt: number, random = Math.random): number {
  const exp = baseMs * 2 ** (failedAttempt - 1);
  return Math.min(MAX_RETRY_DELAY_MS, Math.round(exp * (1 + 0.1 * random())));
}

/** What one attempt saw. */
export interface AttemptResult {
  ok: boolean;
  status: number | null;
  error: string | null;
}

export type DeliveryOutcome =
  | "stale"
  | "delivered"
  | "retry_scheduled"
  | "failed"
  | "dropped"
  | "deferred";

/** Runs the attempt a queue message names, if it is still the one due. */
export async function runDelivery(deps: Deps, messageId: string): Promise<DeliveryOutcome> {
  const { deliveryId, attempt } = parseDeliveryMessage(messageId);
  const { kv } = deps;
  const entry = await read(kv, keys.delivery(deliveryId));
  const d = entry.value;
  if (!d || d.state !== "pending") return "stale";
  const n = d.attempts + 1;
  if (attempt !== null && attempt !== n) return "stale";
  const hook = (await read(kv, keys.webhook(d.accountId, d.webhookId))).value;
  if (!hook || !hook.active) return await finishWithoutSending(deps, d, hook);

  const encryptionKey = deps.config.webhookEncryptionKey;
  const secret = encryptionKey
    ? await openSecret(encryptionKey, hook.secret, secretBinding(hook)).catch(() => null)
    : null;
  if (secret === null) return await deferForMissingKey(deps, d);

  const result = await send(deps, hook, d, n, secret);
  return await recordAttempt(deps, d.id, n, result);
}

/** The bytes the v2 signature covers: `{delivery id}.{timestamp}.{raw body}`. */
export function signedV2(deliveryId: string, timestamp: number, body: Uint8Array): Uint8Array {
  const head = encoder.encode(`${deliveryId}.${timestamp}.`);
  const out = new Uint8Array(head.byteLength + body.byteLength);
  out.set(head);
  out.set(body, head.byteLength);
  return out;
}

/** POSTs the envelope once; every way it can go wrong becomes a failed result, never a throw. */
async function send(
  deps: Deps,
  hook: WebhookRecord,
  d: DeliveryRecord,
  n: number,
  secret: string,
): Promise<AttemptResult> {
  const body = encoder.encode(d.body);
  const timestamp = Math.floor(deps.clock.now() / 1000);
  const net = webhookNet(deps);
  try {
    const res = await safeFetch(hook.url, {
      allowPrivate: net.allowPrivate,
      requireHttps: net.requireHttps,
      resolver: net.resolver,
      timeoutMs: net.timeoutMs,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Serpwright-Webhooks/1.0",
        [SIGNATURE_HEADER]: await signHex(secret, body),
        [TIMESTAMP_HEADER]: String(timestamp),
        [SIGNATURE_V2_HEADER]: `v2=${await signHex(secret, signedV2(d.id, timestamp, body))}`,
        [EVENT_HEADER]: d.event,
        [DELIVERY_HEADER]: d.id,
        [ATTEMPT_HEADER]: String(n),
      },
      body,
      // The receiver's answer body carries nothing we use.
      maxBytes: 1024,
      shouldReadBody: () => false,
    });
    if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null };
    const why = res.status >= 300 && res.status < 400
      ? `HTTP ${res.status} (redirects are not followed)`
      : `HTTP ${res.status}`;
    return { ok: false, status: res.status, error: why };
  } catch (err) {
    if (err instanceof TargetRefusedError) {
      return { ok: false, status: null, error: `target refused: ${refusalText(err.reason)}` };
    }
    if (err instanceof FetchFailedError) {
      return { ok: false, status: null, error: `${err.kind}: ${err.message}`.slice(0, 300) };
    }
    return { ok: false, status: null, error: `network: ${String(err)}`.slice(0, 300) };
  }
}

/**
 * Records attempt `n` and what follows from it, in one commit that checks the delivery (so two
 * runners of one attempt record it once) and, when it changes it, the endpoint (its consecutive
 * failure count and deactivation).
 */
export async function recordAttempt(
  deps: Deps,
  deliveryId: string,
  n: number,
  result: AttemptResult,
): Promise<DeliveryOutcome> {
  const { kv } = deps;
  // Logged after the commit: the attempt closure may run several times on conflicts.
  const { outcome, d, deactivated } = await atomically(kv, async () => {
    const entry = await read(kv, keys.delivery(deliveryId));
    const d = entry.value;
    if (!d || d.state !== "pending" || d.attempts !== n - 1) {
      return {
        op: kv.atomic(),
        result: { outcome: "stale" as DeliveryOutcome, d, deactivated: false },
      };
    }
    const hookEntry = await read(kv, keys.webhook(d.accountId, d.webhookId));
    const hook = hookEntry.value;
    const now = deps.clock.now();
    const op = atomic(kv).check(entry);

    let deactivated = false;
    if (hook && result.ok) {
      // The common success touches the endpoint record only when there is a failure streak to
      // reset; the time goes through `max`, so a busy endpoint's successes do not conflict.
      op.max(keys.webhookLastSuccess(hook.id), BigInt(Math.max(0, Math.floor(now))));
      if (hook.failureCount !== 0) {
        op.check(hookEntry).set(hookEntry.key, { ...hook, failureCount: 0 });
      }
    } else if (hook) {
      const failures = hook.failureCount + 1;
      deactivated = hook.active && failures >= DEACTIVATE_AFTER_FAILURES;
      op.check(hookEntry).set(
        hookEntry.key,
        {
          ...hook,
          failureCount: failures,
          lastFailureAt: now,
          active: hook.active && !deactivated,
          deactivatedAt: deactivated ? now : hook.deactivatedAt,
        } satisfies WebhookRecord,
      );
    }

    const attempted: DeliveryRecord = {
      ...d,
      attempts: n,
      lastAttemptAt: now,
      lastStatus: result.status,
      lastError: result.error,
    };
    let outcome: DeliveryOutcome;
    if (result.ok) {
      outcome = "delivered";
      finish(op, d, { ...attempted, state: "delivered", deliveredAt: now });
    } else if (!hook || !hook.active || deactivated) {
      outcome = "dropped";
      finish(op, d, { ...attempted, state: "dropped" });
    } else if (n >= MAX_ATTEMPTS) {
      outcome = "failed";
      finish(op, d, { ...attempted, state: "failed" });
    } else {
      outcome = "retry_scheduled";
      const delay = retryDelayMs(deps.config.webhookRetryBaseMs, n);
      reschedule(op, deps, d, { ...attempted, nextAttemptAt: now + delay }, n + 1, delay);
    }
    return { op, result: { outcome, d, deactivated } };
  });
  recordWebhook(outcome);
  if (!result.ok && d && outcome !== "stale") {
    console.warn(JSON.stringify({
      level: "warn",
      msg: "webhook attempt failed",
      delivery_id: d.id,
      webhook_id: d.webhookId,
      attempt: n,
      error: result.error,
      next: outcome,
    }));
  }
  if (deactivated && d) {
    console.warn(JSON.stringify({
      level: "warn",
      msg: "webhook endpoint deactivated after consecutive failures",
      webhook_id: d.webhookId,
    }));
  }
  return outcome;
}

/** The endpoint is gone or deactivated: the delivery ends without a request. */
function finishWithoutSending(
  deps: Deps,
  d: DeliveryRecord,
  hook: WebhookRecord | null,
): Promise<DeliveryOutcome> {
  const { kv } = deps;
  return atomically(kv, async () => {
    const entry = await read(kv, keys.delivery(d.id));
    const cur = entry.value;
    if (!cur || cur.state !== "pending") return { op: kv.atomic(), result: "stale" as const };
    const op = atomic(kv).check(entry);
    if (!hook) {
      // Removed endpoint: its deliveries are removed too, as DELETE promises.
      op.delete(entry.key).delete(keys.deliveriesOfWebhook(cur.webhookId, cur.id));
      if (cur.sweepAt != null) op.delete(keys.deliveryDue(cur.sweepAt, cur.id));
    } else {
      finish(op, cur, { ...cur, state: "dropped", lastError: "endpoint deactivated" });
    }
    return { op, result: "dropped" as const };
  });
}

/**
 * The secret cannot be opened (the operator removed or changed WEBHOOK_ENCRYPTION_KEY). That is
 * not the receiver's fault, so no attempt is spent and the endpoint is not blamed; the same
 * attempt is tried again later.
 */
function deferForMissingKey(deps: Deps, d: DeliveryRecord): Promise<DeliveryOutcome> {
  console.error(JSON.stringify({
    level: "error",
    msg: "webhook secret cannot be opened; check WEBHOOK_ENCRYPTION_KEY",
    delivery_id: d.id,
    webhook_id: d.webhookId,
  }));
  const { kv } = deps;
  return atomically(kv, async () => {
    const entry = await read(kv, keys.delivery(d.id));
    const cur = entry.value;
    if (!cur || cur.state !== "pending" || cur.attempts !== d.attempts) {
      return { op: kv.atomic(), result: "stale" as const };
    }
    const delay = Math.max(
      webhookGraceMs(deps.config).sweepGraceMs,
      deps.config.webhookRetryBaseMs,
    );
    const op = atomic(kv).check(entry);
    reschedule(
      op,
      deps,
      cur,
      {
        ...cur,
        nextAttemptAt: deps.clock.now() + delay,
        lastError: "signing secret unavailable on the server",
      },
      cur.attempts + 1,
      delay,
    );
    return { op, result: "deferred" as const };
  });
}

/** Writes the pending record, moves its sweep index entry, and queues attempt `next`. */
function reschedule(
  op: Atomic,
  deps: Deps,
  before: DeliveryRecord,
  after: DeliveryRecord,
  next: number,
  delayMs: number,
): void {
  const sweepAt = after.nextAttemptAt! + webhookGraceMs(deps.config).sweepGraceMs;
  if (before.sweepAt != null) op.delete(keys.deliveryDue(before.sweepAt, before.id));
  op.set(keys.delivery(before.id), { ...after, sweepAt })
    .set(keys.deliveryDue(sweepAt, before.id), true);
  deps.queue.enqueueIn(op, deliveryMessage(before.id, next), delayMs);
}

/** Writes a finished record (kept a while for inspection) and drops it from both indexes. */
function finish(op: Atomic, before: DeliveryRecord, after: DeliveryRecord): void {
  if (before.sweepAt != null) op.delete(keys.deliveryDue(before.sweepAt, before.id));
  op.delete(keys.deliveriesOfWebhook(before.webhookId, before.id))
    .set(keys.delivery(before.id), { ...after, nextAttemptAt: null, sweepAt: null }, {
      expireIn: FINISHED_DELIVERY_TTL_MS,
    });
}
