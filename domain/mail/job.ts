/**
 * The mail job: one attempt of a message (domain/mail/outbox.ts) with the composer of each kind.
 *
 * @module
 */
import type { Deps } from "../platform/mod.ts";
import { type Composer, type MailOutcome, runMailAttempt, sweepMail } from "./outbox.ts";
import type { MailKind } from "./types.ts";
import { composeVerificationMail } from "./verification.ts";

const COMPOSERS: Record<MailKind, Composer> = { verify_email: composeVerificationMail };

/** Runs the attempt a `mail` queue message names (idempotent: a stale message does nothing). */
export function runMailJob(deps: Deps, messageId: string): Promise<MailOutcome> {
  return runMailAttempt(deps, messageId, COMPOSERS);
}

/** Re-sends the queue messages of pending mail whose message was lost. */
export function mailMaintenance(deps: Deps): Promise<number> {
  return sweepMail(deps);
}
