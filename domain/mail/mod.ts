/**
 * Outbound mail: messages sent over SMTP (`SMTP_URL`, `MAIL_FROM`) through the job runtime, and
 * email verification links. The public face of the capability; details in docs/mail.md.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, accountId: string;
 * import { sendVerificationLink } from "./mod.ts";
 * const sent = await sendVerificationLink(deps, { accountId, returnTo: "/upgrade" });
 * ```
 *
 * @module
 */
export { mailMaintenance, runMailJob } from "./job.ts";
export { mailConfigured } from "./transport.ts";
export {
  type ConfirmOutcome,
  confirmVerificationLink,
  inspectVerificationLink,
  type LinkState,
  maskEmail,
  sendVerificationLink,
  type VerificationLinkRequest,
  type VerificationLinkSent,
  VERIFY_PATH,
} from "./verification.ts";
export type { EmailVerificationRecord, MailRecord } from "./types.ts";
