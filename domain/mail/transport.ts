/**
 * The way out for mail: SMTP through `nodemailer` (MIT-0), configured by `SMTP_URL` and
 * `MAIL_FROM`. A transport is made once per URL and opens a connection per message (no pool: a
 * handful of messages an hour needs none, and nothing stays open at shutdown). Timeouts are short
 * so an attempt ends well within its lease; a failure becomes an error whose text never holds the
 * URL's credentials.
 *
 * @module
 */
import type { Transporter } from "nodemailer";
import type { Config } from "../platform/mod.ts";

/** A message as composed by its kind (domain/mail/messages.ts). */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Sends one message; throws `MailSendError` when the server (or the way to it) fails. */
export interface Mailer {
  send(message: OutgoingMail): Promise<void>;
}

/** A failed send, in words safe to store and log. */
export class MailSendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MailSendError";
  }
}

/** Whether this server sends mail (both `SMTP_URL` and `MAIL_FROM` set). */
export function mailConfigured(config: Pick<Config, "mail">): boolean {
  return config.mail.smtpUrl !== null && config.mail.from !== null;
}

const transports = new Map<string, Mailer>();

/** The SMTP mailer of this configuration, or null when mail is not configured. */
export function mailerFor(config: Pick<Config, "mail">): Mailer | null {
  const { smtpUrl, from } = config.mail;
  if (smtpUrl === null || from === null) return null;
  const id = `${smtpUrl}\u0000${from}`;
  let mailer = transports.get(id);
  if (!mailer) transports.set(id, mailer = smtpMailer(smtpUrl, from));
  return mailer;
}

function smtpMailer(smtpUrl: string, from: string): Mailer {
  // nodemailer loads with the first message, not with the process: most processes send none, and
  // it held ~5 MiB of each one's memory (with openai, ~11 MiB of a worker child's RSS).
  let transport: Transporter | null = null;
  const secrets = credentialsOf(smtpUrl);
  return {
    async send(message) {
      try {
        transport ??= (await import("nodemailer")).default.createTransport({
          url: smtpUrl,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 20_000,
          dnsTimeout: 5_000,
        });
        await transport.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          html: message.html,
          headers: { "Auto-Submitted": "auto-generated" },
        });
      } catch (err) {
        throw new MailSendError(safeText(err, secrets));
      }
    },
  };
}

/** The user and password of the URL, raw and decoded, to strip from any error text. */
function credentialsOf(smtpUrl: string): string[] {
  const u = new URL(smtpUrl);
  const out: string[] = [];
  for (const part of [u.password, u.username]) {
    if (!part) continue;
    out.push(part);
    try {
      out.push(decodeURIComponent(part));
    } catch {
      // A malformed escape: the raw form is stripped already.
    }
  }
  // Longest first, so a password containing the user name is removed whole.
  return [...new Set(out)].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length);
}

/** The error's message (the SMTP server's answer, or the network's), without credentials. */
function safeText(err: unknown, secrets: string[]): string {
  const e = err as { message?: unknown; code?: unknown; responseCode?: unknown };
  let text = typeof e?.message === "string" ? e.message : String(err);
  if (typeof e?.code === "string" && !text.includes(e.code)) text = `${e.code}: ${text}`;
  for (const s of secrets) text = text.split(s).join("***");
  return text.replace(/\s+/g, " ").slice(0, 300);
}
