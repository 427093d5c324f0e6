/**
 * Email verification: a single-use link, valid 24 hours, that proves the account's email address
 * and sets `email_verified: true` when a human opens it and presses the button on its page (a GET
 * never confirms, so mail scanners that fetch links do not use them up).
 *
 * - The link's token is 32 random bytes (base64url), made by the mail's attempt that sends it, and
 *   stored only as its SHA-256 (the key of its index): no raw token is at rest, a retry sends a
 *   new link, and an older link of the same request answers "replaced".
 * - At most 3 verification mails per account, and per address, within any hour (429
 *   `rate_limited` with `Retry-After`), counted in the commit that creates the request.
 * - Confirming commits the used mark, the account's `emailVerified` and the revocation signal
 *   together, so every process drops its cached view of the account within ~100 ms.
 *
 * @module
 */
import { atomically } from "../../kv/atomic.ts";
import { revocationShard, signalAuthChange } from "../identity/mod.ts";
import {
  ApiError,
  type Atomic,
  atomic,
  type Deps,
  keys,
  newId,
  read,
  readMany,
  sha256Hex,
} from "../platform/mod.ts";
import { verificationMail } from "./messages.ts";
import { type Prepared, queueMail } from "./outbox.ts";
import { mailConfigured } from "./transport.ts";
import {
  type EmailVerificationRecord,
  type MailRecord,
  VERIFICATION_KEEP_MS,
  VERIFICATION_TTL_MS,
  VERIFICATION_WINDOW_MS,
  VERIFICATIONS_PER_HOUR,
} from "./types.ts";

/** The page a link opens: `GET` shows the confirm button, `POST` confirms. */
export const VERIFY_PATH = "/verify-email";
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** What `sendVerificationLink` needs. */
export interface VerificationLinkRequest {
  accountId: string;
  /**
   * Where the human lands after confirming (303 See Other): a path on this service
   * (`/upgrade/acct_…`) or an absolute URL on `PUBLIC_BASE_URL`'s origin; anything else is 400
   * `invalid_request`, so a link can never redirect off the site. Omitted or null: the
   * confirmation page says the address is verified.
   */
  returnTo?: string | null;
}

/** A verification link on its way. */
export interface VerificationLinkSent {
  verificationId: string;
  mailId: string;
  /** The address the link goes to: the account's email. */
  email: string;
  /** The same address for display, `a***@example.com`. */
  maskedEmail: string;
  /** When the link stops working (epoch ms). */
  expiresAt: number;
}

/**
 * Sends the account a link that proves its email address: records the request and queues the
 * message through the job runtime (retried with backoff when the SMTP server fails), never on the
 * caller's path. Once a human opens the link and confirms, the account reads
 * `email_verified: true` and the browser goes to `returnTo`.
 *
 * Refusals, in order: 503 `mail_not_configured` (no `SMTP_URL`/`MAIL_FROM`), 400
 * `invalid_request` (a `returnTo` off this service), 404 `not_found` (no such account), 409
 * `invalid_state` (already verified), 429 `rate_limited` with `Retry-After` (3 an hour per account
 * and per address). Nothing is stored or sent when it refuses.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/deps.ts";
 * declare const deps: Deps, page: { say(text: string): void };
 * // The upgrade page: prove the address, then come back to finish paying.
 * const accountId = "acct_0m3x9k2a7c1f4z8q2w6e5r";
 * const sent = await sendVerificationLink(deps, {
 *   accountId,
 *   returnTo: `/upgrade/${accountId}`,
 * });
 * page.say(`We sent a link to ${sent.maskedEmail}; it works until ${new Date(sent.expiresAt)}.`);
 * ```
 */
export async function sendVerificationLink(
  deps: Deps,
  request: VerificationLinkRequest,
): Promise<VerificationLinkSent> {
  if (!mailConfigured(deps.config)) {
    throw new ApiError(
      "mail_not_configured",
      "This server sends no mail (the operator has not set SMTP_URL and MAIL_FROM)",
    );
  }
  const returnTo = returnUrl(deps.config.publicBaseUrl, request.returnTo ?? null);
  const { kv, clock } = deps;
  return await atomically(kv, async () => {
    const accountEntry = await read(kv, keys.account(request.accountId));
    const account = accountEntry.value;
    if (!account) throw new ApiError("not_found", `No account '${request.accountId}'`);
    if (account.emailVerified) {
      throw new ApiError("invalid_state", "The account's email address is already verified");
    }
    const now = clock.now();
    const byAccount = keys.verificationSends(`acct:${account.id}`);
    const byAddress = keys.verificationSends(`addr:${await sha256Hex(account.email)}`);
    const [accountSends, addressSends] = await readMany(kv, [byAccount, byAddress]);
    const recent = (times: number[] | null) =>
      (times ?? []).filter((t) => t > now - VERIFICATION_WINDOW_MS).sort((a, b) => a - b);
    const forAccount = recent(accountSends.value);
    const forAddress = recent(addressSends.value);
    const full = [forAccount, forAddress].filter((t) => t.length >= VERIFICATIONS_PER_HOUR);
    if (full.length > 0) {
      // The hour frees a slot when its oldest send leaves the window.
      const freeAt = Math.max(
        ...full.map((t) => t[t.length - VERIFICATIONS_PER_HOUR] + VERIFICATION_WINDOW_MS),
      );
      const retryAfter = Math.max(1, Math.ceil((freeAt - now) / 1000));
      throw new ApiError(
        "rate_limited",
        `At most ${VERIFICATIONS_PER_HOUR} verification mails an hour per account and per ` +
          `address; try again in ${retryAfter} s`,
        undefined,
        { "Retry-After": String(retryAfter) },
      );
    }

    const verification: EmailVerificationRecord = {
      id: newId("evf", now),
      accountId: account.id,
      email: account.email,
      tokenHash: null,
      returnTo,
      mailId: newId("mail", now),
      createdAt: now,
      expiresAt: now + VERIFICATION_TTL_MS,
      usedAt: null,
    };
    const keep = { expireIn: VERIFICATION_TTL_MS + VERIFICATION_KEEP_MS };
    const window = { expireIn: VERIFICATION_WINDOW_MS };
    const vKey = keys.emailVerification(verification.id);
    const op = atomic(kv)
      .check(accountEntry, accountSends, addressSends)
      .check({ key: vKey, versionstamp: null })
      .set(vKey, verification, keep)
      .set(byAccount, [...forAccount, now], window)
      .set(byAddress, [...forAddress, now], window);
    queueMail(op, deps, {
      id: verification.mailId,
      accountId: account.id,
      kind: "verify_email",
      ref: verification.id,
      to: account.email,
      now,
    });
    return {
      op,
      result: {
        verificationId: verification.id,
        mailId: verification.mailId,
        email: account.email,
        maskedEmail: maskEmail(account.email),
        expiresAt: verification.expiresAt,
      },
    };
  });
}

/** `agent@example.com` → `a***@example.com`: enough to recognise, not to harvest. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  if (at <= 0) return "***";
  return `${email.slice(0, 1)}***${email.slice(at)}`;
}

/** The link of a token. */
export function verificationUrl(baseUrl: string, token: string): string {
  return `${baseUrl}${VERIFY_PATH}/${token}`;
}

/** A return address on this service, absolute; 400 for anything that leaves it. */
function returnUrl(baseUrl: string, returnTo: string | null): string | null {
  if (returnTo === null) return null;
  const base = new URL(baseUrl);
  let url: URL | null = null;
  if (returnTo.startsWith("/") && !returnTo.startsWith("//") && !returnTo.startsWith("/\\")) {
    url = new URL(returnTo, base);
  } else {
    try {
      url = new URL(returnTo);
    } catch {
      url = null;
    }
  }
  if (!url || url.origin !== base.origin || returnTo.length > 2000) {
    throw new ApiError(
      "invalid_request",
      "returnTo: must be a path on this service or a URL on its own origin",
    );
  }
  return url.href;
}

/** 32 random bytes as base64url without padding (43 characters). */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * The composer of a verification mail's attempt (domain/mail/outbox.ts): a new token whose hash
 * replaces the previous one (its index entry stays, so that link answers "replaced"), written in
 * the attempt's own commit before anything is sent; or `drop` when the request was used, expired
 * or the address is verified meanwhile.
 */
export async function composeVerificationMail(
  deps: Deps,
  mail: MailRecord,
  op: Atomic,
): Promise<Prepared> {
  const { kv, clock } = deps;
  const [vEntry, accountEntry] = await readMany(kv, [
    keys.emailVerification(mail.ref),
    keys.account(mail.accountId),
  ]);
  const v = vEntry.value;
  const account = accountEntry.value;
  const now = clock.now();
  if (!v) return { drop: "verification request gone" };
  if (v.usedAt !== null) return { drop: "link already used" };
  if (v.expiresAt <= now) return { drop: "link expired before it could be sent" };
  if (!account || account.email !== v.email) return { drop: "the account's address changed" };
  if (account.emailVerified) return { drop: "address already verified" };
  const token = newToken();
  const hash = await sha256Hex(token);
  op.check(vEntry)
    .set(vEntry.key, { ...v, tokenHash: hash })
    .set(keys.emailVerificationByToken(hash), v.id, {
      expireIn: Math.max(1, v.expiresAt + VERIFICATION_KEEP_MS - now),
    });
  return {
    mail: verificationMail({
      to: v.email,
      link: verificationUrl(deps.config.publicBaseUrl, token),
      expiresAt: v.expiresAt,
      baseUrl: deps.config.publicBaseUrl,
    }),
  };
}

/** What a link's token opens, as its page shows it. */
export type LinkState =
  | { state: "valid"; maskedEmail: string; expiresAt: number }
  | { state: "unknown" | "replaced" | "used" | "expired" };

async function lookUp(
  deps: Deps,
  token: string,
): Promise<Deno.KvEntryMaybe<EmailVerificationRecord> | null> {
  if (!TOKEN.test(token)) return null;
  const hash = await sha256Hex(token);
  const id = (await read(deps.kv, keys.emailVerificationByToken(hash))).value;
  if (!id) return null;
  const entry = await read(deps.kv, keys.emailVerification(id));
  return entry.value ? entry : null;
}

function stateOf(v: EmailVerificationRecord, hash: string, now: number): LinkState["state"] {
  if (v.usedAt !== null) return "used";
  if (v.tokenHash !== hash) return "replaced";
  if (v.expiresAt <= now) return "expired";
  return "valid";
}

/** What the link of `token` would do now, without changing anything (the page's GET). */
export async function inspectVerificationLink(deps: Deps, token: string): Promise<LinkState> {
  const entry = await lookUp(deps, token);
  if (!entry?.value) return { state: "unknown" };
  const v = entry.value;
  const state = stateOf(v, await sha256Hex(token), deps.clock.now());
  if (state !== "valid") return { state };
  return { state, maskedEmail: maskEmail(v.email), expiresAt: v.expiresAt };
}

/** The outcome of confirming a link (the page's POST). */
export type ConfirmOutcome =
  | { state: "confirmed"; accountId: string; returnTo: string | null }
  | { state: "unknown" | "replaced" | "used" | "expired" };

/**
 * Uses the link of `token`: marks the request used and the account's email verified, in one
 * commit with the revocation signal (cached views of the account elsewhere drop it). A second use
 * answers `used`; an old link of the request `replaced`; a late one `expired`.
 */
export async function confirmVerificationLink(
  deps: Deps,
  token: string,
): Promise<ConfirmOutcome> {
  const { kv, clock } = deps;
  const first = await lookUp(deps, token);
  if (!first?.value) return { state: "unknown" };
  const hash = await sha256Hex(token);
  const id = first.value.id;
  return await atomically<ConfirmOutcome>(kv, async () => {
    const [vEntry, signal] = await readMany(kv, [
      keys.emailVerification(id),
      keys.authRevocations(revocationShard(first.value.accountId)),
    ]);
    const v = vEntry.value;
    if (!v) return { op: kv.atomic(), result: { state: "unknown" } };
    const now = clock.now();
    const state = stateOf(v, hash, now);
    if (state !== "valid") return { op: kv.atomic().check(vEntry), result: { state } };
    const accountEntry = await read(kv, keys.account(v.accountId));
    const account = accountEntry.value;
    // The address changed since the link was sent (or the account is gone): it proves nothing.
    if (!account || account.email !== v.email) {
      return { op: kv.atomic().check(vEntry, accountEntry), result: { state: "unknown" } };
    }
    const op = atomic(kv)
      .check(vEntry, accountEntry)
      .set(vEntry.key, { ...v, usedAt: now }, {
        expireIn: Math.max(1, v.expiresAt + VERIFICATION_KEEP_MS - now),
      })
      .set(accountEntry.key, { ...account, emailVerified: true });
    signalAuthChange(op, signal, { accountId: account.id, keyId: null, at: now });
    return {
      op,
      result: { state: "confirmed", accountId: account.id, returnTo: v.returnTo },
    };
  });
}
