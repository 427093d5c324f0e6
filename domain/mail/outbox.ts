/**
 * Mail through the job runtime, as outbound webhook deliveries: a KV record per message is the
 * truth (`MailRecord`), the queue message only names it and the attempt (`mail_…:3`), so a lost
 * or repeated message is harmless. Each attempt re-reads the record, composes the message from
 * what it names (a verification mail makes its link then), sends it once over SMTP, and records
 * the outcome with the next attempt's queue message in one commit: exponential backoff from
 * `MAIL_RETRY_BASE_MS`, doubling, at most 6 hours apart, 8 attempts in all. The maintenance sweep
 * re-sends the queue message of a pending message overdue by its grace period.
 *
 * Nothing here runs on a request's path: a request only writes the record and its first queue
 * message (`queueMail`, in the caller's own commit).
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import {
  type Atomic,
  atomic,
  type Config,
  type Deps,
  type JobMessage,
  keys,
  list,
  read,
} from "../platform/mod.ts";
import { mailerFor, MailSendError, type OutgoingMail } from "./transport.ts";
import {
  FINISHED_MAIL_TTL_MS,
  MAIL_MAX_ATTEMPTS,
  MAIL_MAX_RETRY_DELAY_MS,
  MAIL_SEND_LEASE_MS,
  MAIL_SWEEP_GRACE_MS,
  type MailKind,
  type MailRecord,
} from "./types.ts";

/** Items looked at per sweep; the next sweep continues. */
const SWEEP_BATCH = 500;

/** The queue message of attempt `attempt` of a message. */
export function mailMessage(mailId: string, attempt: number): JobMessage {
  return { type: "mail", id: `${mailId}:${attempt}` };
}

/** Splits a mail message id; a bare id means "whatever attempt is due". */
export function parseMailMessage(id: string): { mailId: string; attempt: number | null } {
  const at = id.lastIndexOf(":");
  if (at < 0) return { mailId: id, attempt: null };
  const attempt = Number(id.slice(at + 1));
  return {
    mailId: id.slice(0, at),
    attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : null,
  };
}

/**
 * The sweep grace and the lease of a running attempt: the operator's `JOB_LEASE_MS` when set
 * (as for webhook attempts), else one minute.
 */
export function mailLeaseMs(config: Pick<Config, "jobLeaseMs">): number {
  return config.jobLeaseMs ?? Math.max(MAIL_SWEEP_GRACE_MS, MAIL_SEND_LEASE_MS);
}

/**
 * Delay after failed attempt `n` (1-based): base·2^(n-1) plus up to 10% jitter, never above 6
 * hours.
 */
export function mailRetryDelayMs(baseMs: number, failedAttempt: number, random = Math.random) {
  const exp = baseMs * 2 ** (failedAttempt - 1);
  return Math.min(MAIL_MAX_RETRY_DELAY_MS, Math.round(exp * (1 + 0.1 * random())));
}

/**
 * Adds a new message to the caller's atomic operation: its record, its sweep index entry and the
 * first attempt's queue message, so the message exists exactly when the caller's change commits.
 */
export function queueMail(
  op: Atomic,
  deps: Pick<Deps, "queue" | "config">,
  input: { id: string; accountId: string; kind: MailKind; ref: string; to: string; now: number },
): MailRecord {
  const sweepAt = input.now + mailLeaseMs(deps.config);
  const mail: MailRecord = {
    id: input.id,
    accountId: input.accountId,
    kind: input.kind,
    ref: input.ref,
    to: input.to,
    state: "pending",
    attempts: 0,
    createdAt: input.now,
    nextAttemptAt: input.now,
    sweepAt,
    sending: null,
    lastAttemptAt: null,
    lastError: null,
    sentAt: null,
  };
  op.check({ key: keys.mail(mail.id), versionstamp: null })
    .set(keys.mail(mail.id), mail)
    .set(keys.mailDue(sweepAt, mail.id), true);
  deps.queue.enqueueIn(op, mailMessage(mail.id, 1));
  return mail;
}

/** What a kind's composer decided for one attempt. */
export type Prepared = { mail: OutgoingMail } | { drop: string };

/**
 * Composes a message of one kind for attempt `n`: adds what the attempt must store (a new link's
 * token hash) to `op`, which also marks the attempt as started and commits before the send; or
 * answers `drop` when the message has no reason to go any more.
 */
export type Composer = (deps: Deps, mail: MailRecord, op: Atomic) => Promise<Prepared>;

export type MailOutcome = "stale" | "sent" | "retry_scheduled" | "failed" | "dropped" | "deferred";

/** Runs the attempt a queue message names, if it is still the one due. */
export async function runMailAttempt(
  deps: Deps,
  messageId: string,
  composers: Record<MailKind, Composer>,
): Promise<MailOutcome> {
  const { kv, clock } = deps;
  const { mailId, attempt } = parseMailMessage(messageId);
  const entry = await read(kv, keys.mail(mailId));
  const m = entry.value;
  if (!m || m.state !== "pending") return "stale";
  const n = m.attempts + 1;
  if (attempt !== null && attempt !== n) return "stale";
  const now = clock.now();
  // Another runner of this attempt (a duplicate message) is on it within its lease.
  if (m.sending?.attempt === n && now < m.sending.at + mailLeaseMs(deps.config)) return "stale";
  const mailer = mailerFor(deps.config);
  if (!mailer) return await deferUnconfigured(deps, mailId, n);

  const op = atomic(kv).check(entry).set(entry.key, { ...m, sending: { attempt: n, at: now } });
  const prepared = await composers[m.kind](deps, m, op);
  if ("drop" in prepared) return await finishWithoutSending(deps, mailId, n, prepared.drop);
  if (!(await op.commit()).ok) return "stale";

  let result: { ok: boolean; error: string | null };
  try {
    await mailer.send(prepared.mail);
    result = { ok: true, error: null };
  } catch (err) {
    result = {
      ok: false,
      error: err instanceof MailSendError ? err.message : "send failed (unexpected error)",
    };
  }
  return await recordMailAttempt(deps, mailId, n, result);
}

/**
 * Records attempt `n` and what follows from it (sent; the next attempt's message; failed after
 * the last), in one commit that checks the record, so two runners of one attempt record it once.
 */
export async function recordMailAttempt(
  deps: Deps,
  mailId: string,
  n: number,
  result: { ok: boolean; error: string | null },
): Promise<MailOutcome> {
  const { kv, clock } = deps;
  const { outcome, m } = await atomically(kv, async () => {
    const entry = await read(kv, keys.mail(mailId));
    const m = entry.value;
    if (!m || m.state !== "pending" || m.attempts !== n - 1) {
      return { op: kv.atomic(), result: { outcome: "stale" as MailOutcome, m } };
    }
    const now = clock.now();
    const op = atomic(kv).check(entry);
    const attempted: MailRecord = {
      ...m,
      attempts: n,
      sending: null,
      lastAttemptAt: now,
      lastError: result.error,
    };
    let outcome: MailOutcome;
    if (result.ok) {
      outcome = "sent";
      finish(op, m, { ...attempted, state: "sent", sentAt: now });
    } else if (n >= MAIL_MAX_ATTEMPTS) {
      outcome = "failed";
      finish(op, m, { ...attempted, state: "failed" });
    } else {
      outcome = "retry_scheduled";
      const delay = mailRetryDelayMs(deps.config.mail.retryBaseMs, n);
      reschedule(op, deps, m, { ...attempted, nextAttemptAt: now + delay }, n + 1, delay);
    }
    return { op, result: { outcome, m } };
  });
  if (!result.ok && m && outcome !== "stale") {
    // No address and no credential: the mail id leads to the record for whoever may read it.
    const line = {
      level: outcome === "failed" ? "error" : "warn",
      msg: outcome === "failed" ? "mail failed after its last attempt" : "mail attempt failed",
      mail_id: m.id,
      kind: m.kind,
      attempt: n,
      error: result.error,
      next: outcome,
    };
    (outcome === "failed" ? console.error : console.warn)(JSON.stringify(line));
  }
  return outcome;
}

/** The message has no reason to go any more (its link was used or expired): it ends, unsent. */
function finishWithoutSending(
  deps: Deps,
  mailId: string,
  n: number,
  why: string,
): Promise<MailOutcome> {
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const entry = await read(kv, keys.mail(mailId));
    const m = entry.value;
    if (!m || m.state !== "pending" || m.attempts !== n - 1) {
      return { op: kv.atomic(), result: "stale" as const };
    }
    const op = atomic(kv).check(entry);
    finish(op, m, {
      ...m,
      state: "dropped",
      sending: null,
      lastAttemptAt: clock.now(),
      lastError: why,
    });
    return { op, result: "dropped" as const };
  });
}

/**
 * This process has no SMTP configuration (a worker started without it): not the message's fault,
 * so no attempt is spent; the same attempt is tried again later, by whichever process takes it.
 */
function deferUnconfigured(deps: Deps, mailId: string, n: number): Promise<MailOutcome> {
  console.error(JSON.stringify({
    level: "error",
    msg: "mail cannot be sent by this process: SMTP_URL and MAIL_FROM are not both set",
    mail_id: mailId,
  }));
  const { kv, clock } = deps;
  return atomically(kv, async () => {
    const entry = await read(kv, keys.mail(mailId));
    const m = entry.value;
    if (!m || m.state !== "pending" || m.attempts !== n - 1) {
      return { op: kv.atomic(), result: "stale" as const };
    }
    const delay = Math.max(mailLeaseMs(deps.config), deps.config.mail.retryBaseMs);
    const op = atomic(kv).check(entry);
    reschedule(
      op,
      deps,
      m,
      {
        ...m,
        nextAttemptAt: clock.now() + delay,
        lastError: "mail not configured on the process that took the attempt",
      },
      n,
      delay,
    );
    return { op, result: "deferred" as const };
  });
}

/** Writes the pending record, moves its sweep index entry, and queues attempt `next`. */
function reschedule(
  op: Atomic,
  deps: Pick<Deps, "queue" | "config">,
  before: MailRecord,
  after: MailRecord,
  next: number,
  delayMs: number,
): void {
  const sweepAt = after.nextAttemptAt! + mailLeaseMs(deps.config);
  if (before.sweepAt != null) op.delete(keys.mailDue(before.sweepAt, before.id));
  op.set(keys.mail(before.id), { ...after, sweepAt })
    .set(keys.mailDue(sweepAt, before.id), true);
  deps.queue.enqueueIn(op, mailMessage(before.id, next), delayMs);
}

/** Writes a finished record (kept a while for inspection) and drops its sweep index entry. */
function finish(op: Atomic, before: MailRecord, after: MailRecord): void {
  if (before.sweepAt != null) op.delete(keys.mailDue(before.sweepAt, before.id));
  op.set(keys.mail(before.id), { ...after, nextAttemptAt: null, sweepAt: null }, {
    expireIn: FINISHED_MAIL_TTL_MS,
  });
}

/**
 * Re-sends the queue message of pending messages overdue by the grace period (a message lost in
 * transit, a process that died mid-attempt). Each re-send commits with a check on what it found,
 * so of several sweeping processes one re-sends each message; a re-sent message that duplicates
 * a late original names the same attempt and is stale once that attempt is recorded.
 */
export async function sweepMail(deps: Deps): Promise<number> {
  const { kv, clock } = deps;
  const now = clock.now();
  let resent = 0;
  const overdue = list(kv, { prefix: keys.mailsDue(), end: keys.mailDue(now, "") }, {
    limit: SWEEP_BATCH,
  });
  for await (const due of overdue) {
    const sweepAt = due.key[1];
    const id = due.key[2];
    const entry = await read(kv, keys.mail(id));
    const m = entry.value;
    if (!m || m.state !== "pending" || m.sweepAt !== sweepAt) {
      await kv.atomic().check(due).check(entry).delete(due.key).commit();
      continue;
    }
    const next = now + mailLeaseMs(deps.config);
    const op = atomic(kv)
      .check(entry)
      .check(due)
      .delete(due.key)
      .set(entry.key, { ...m, sweepAt: next } satisfies MailRecord)
      .set(keys.mailDue(next, id), true);
    deps.queue.enqueueIn(op, mailMessage(id, m.attempts + 1));
    if ((await op.commit()).ok) resent++;
  }
  return resent;
}
