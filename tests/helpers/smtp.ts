/**
 * A real SMTP server on loopback for the mail tests: `smtp-server` (the nodemailer author's) on
 * 127.0.0.1, checking the credentials of the `SMTP_URL` it hands out, and `mailparser` reading each
 * message it receives. `stop()` takes it down (connections are then refused) and `start()` brings
 * it back on the same port, for the retry tests.
 */
import { simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";
import { pollUntil } from "./jobs.ts";
import { freePort } from "./ports.ts";

export const SMTP_USER = "serpwright";
export const SMTP_PASSWORD = "s3cret-smtp-pa55word";

/** One message as received. */
export interface ReceivedMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Map<string, unknown>;
  /** The envelope's recipients, as the client sent them in RCPT TO. */
  rcptTo: string[];
  /** The user the client authenticated as. */
  user: string | undefined;
}

export interface TestSmtp {
  port: number;
  /** `smtp://user:password@127.0.0.1:port` for `SMTP_URL`. */
  url: string;
  received: ReceivedMail[];
  /** Resolves once `count` messages have arrived (default within 15 s). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Takes the server down: connections to its port are refused until `start()`. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the server, on `port` or a free one; `down: true` only reserves the port. */
export async function startSmtp(opts: { port?: number; down?: boolean } = {}): Promise<TestSmtp> {
  const received: ReceivedMail[] = [];
  let server: SMTPServer | null = null;
  const port = opts.port ?? freePort();
  const make = () =>
    new SMTPServer({
      logger: false,
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authMethods: ["PLAIN", "LOGIN"],
      onAuth(auth, _session, callback) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) {
          callback(null, { user: auth.username });
        } else callback(new Error("Invalid username or password"));
      },
      onData(stream, session, callback) {
        simpleParser(stream).then((mail) => {
          const addressText = (a: unknown) =>
            Array.isArray(a)
              ? a.map((x) => (x as { text: string }).text).join(", ")
              : (a as { text?: string } | undefined)?.text ?? "";
          received.push({
            from: addressText(mail.from),
            to: addressText(mail.to),
            subject: mail.subject ?? "",
            text: mail.text ?? "",
            html: typeof mail.html === "string" ? mail.html : "",
            headers: mail.headers as Map<string, unknown>,
            rcptTo: session.envelope.rcptTo.map((r) => r.address),
            user: typeof session.user === "string" ? session.user : undefined,
          });
          callback();
        }, (err) => callback(err as Error));
      },
    });
  const start = () =>
    new Promise<void>((resolve, reject) => {
      const s = make();
      s.on("error", reject);
      s.listen(port, "127.0.0.1", () => {
        server = s;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
    });
  if (!opts.down) await start();
  return {
    port,
    url: `smtp://${SMTP_USER}:${SMTP_PASSWORD}@127.0.0.1:${port}`,
    received,
    waitFor: (count, timeoutMs = 15_000) =>
      pollUntil(() => Promise.resolve(received), (r) => r.length >= count, {
        timeoutMs,
        what: `${count} mail(s) at the test SMTP server`,
      }),
    stop,
    start,
    close: stop,
  };
}

/** The verification link in a received message's text. */
export function linkIn(mail: ReceivedMail): string {
  const m = /https?:\/\/\S+\/verify-email\/[A-Za-z0-9_-]{43}/.exec(mail.text);
  if (!m) throw new Error(`no verification link in: ${mail.text}`);
  return m[0];
}
