/**
 * Accounts (endpoints 1–2): the public signup and the calling key's account.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ApiError } from "../../domain/platform/mod.ts";
import { sendVerificationLink } from "../../domain/mail/mod.ts";
import { publicSignup } from "../../domain/identity/mod.ts";
import type { AccountActor } from "../actor.ts";
import { defineOperation } from "../operation.ts";
import { accountView, sandboxLimits } from "../views.ts";

const SandboxLimits = z.object({
  audits: z.number().int(),
  articles: z.number().int(),
  expires_days: z.number().int(),
}).openapi("SandboxLimits");

export const SignupBody = z.object({
  email: z.string().trim().max(320).pipe(z.email()).openapi({ example: "agent@example.com" }),
  company_name: z.string().min(1).max(200).optional().openapi({ example: "Acme" }),
  origin: z.enum(["agent", "human"]).optional().openapi({ example: "agent" }),
}).strict().openapi("SignupRequest");

export const SignupResponse = z.object({
  account_id: z.string(),
  api_key: z.string().openapi({ description: "Raw sandbox key, shown once" }),
  mode: z.literal("sandbox"),
  sandbox_limits: SandboxLimits,
  upgrade_url: z.string(),
  docs: z.string(),
}).openapi("SignupResponse");

export const Account = z.object({
  account_id: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
  mode: z.enum(["sandbox", "live"]),
  plan: z.null(),
  sandbox_usage: z.object({ audits: z.number().int(), articles: z.number().int() }).optional(),
  sandbox_limits: SandboxLimits.optional(),
  created_at: z.string(),
  projects_count: z.number().int(),
}).openapi("Account");

/**
 * The key's principal. An account actor without one is the account's scheduled work, which
 * reaches no operation that needs its key.
 */
export function principalOf(actor: AccountActor) {
  if (!actor.principal) throw new ApiError("unauthorized", "This operation needs an API key");
  return actor.principal;
}

export const signupOp = defineOperation({
  id: "accounts.create",
  method: "post",
  path: "/v1/accounts",
  tags: ["Accounts"],
  summary: "Sign up (public, no CAPTCHA); returns a sandbox key at once",
  access: "public",
  tokens: "refuse",
  leaves: "an account and its sandbox key",
  body: SignupBody,
  status: 201,
  output: SignupResponse,
  outputDescription: "Account created; the raw key is shown once",
  errors: ["account_exists", "rate_limited", "idempotency_conflict", "payload_too_large"],
  idempotent: true,
  async run({ body }, { services, actor, baseUrl, header }) {
    const { limits } = services;
    // Every signup limit, in its one order (domain/identity/public_signup.ts); a replay never gets here.
    // The signup budget's decision replaces the request budget's X-RateLimit-* headers.
    const { account, raw } = await publicSignup(
      services.deps,
      { perIp: limits.signup, global: limits.signupGlobal },
      {
        ip: actor.ip ?? "",
        email: body.email,
        companyName: body.company_name ?? null,
        origin: body.origin ?? "agent",
      },
      (decision) => {
        header("X-RateLimit-Limit", String(decision.limit));
        header("X-RateLimit-Remaining", String(decision.remaining));
        header("X-RateLimit-Reset", String(decision.reset));
      },
    );
    return {
      account_id: account.id,
      api_key: raw,
      mode: "sandbox" as const,
      sandbox_limits: sandboxLimits(),
      upgrade_url: `${baseUrl}/pricing`,
      docs: `${baseUrl}/docs/agents`,
    };
  },
});

export const getAccountOp = defineOperation({
  id: "accounts.get",
  method: "get",
  path: "/v1/account",
  tags: ["Accounts"],
  summary: "The calling key's account",
  access: "key",
  tokens: "allow",
  status: 200,
  output: Account,
  outputDescription: "The account",
  errors: [],
  // The hot path: the view is memoised per cached principal, so this reads nothing.
  run(_input, { actor }) {
    return Promise.resolve(accountView(principalOf(actor)));
  },
});

export const VerifyEmailBody = z.object({}).strict().openapi("VerifyEmailRequest");

export const VerifyEmailResponse = z.object({
  status: z.literal("sent").openapi({
    description: "The link is on its way (queued; retried while the mail server fails)",
  }),
  email: z.string().openapi({
    description: "The account's address, masked",
    example: "a***@example.com",
  }),
  expires_at: z.string().openapi({ description: "When the link stops working (24 hours)" }),
}).openapi("VerifyEmailResponse");

export const verifyEmailOp = defineOperation({
  id: "accounts.verify_email",
  method: "post",
  path: "/v1/account/verify-email",
  tags: ["Accounts"],
  summary: "Mail the account's address a link that proves it (body optional)",
  description: "Sends a single-use link, valid 24 hours, to the account's email. A human opens " +
    "it and presses the confirm button on its page; the account then reads `email_verified: " +
    "true`. At most 3 an hour per account and per address (429 with Retry-After); 503 " +
    "`mail_not_configured` when the server sends no mail; 409 `invalid_state` when the address " +
    "is verified already.",
  access: "key",
  // Mailing the account's own address a link only a human at that inbox can use: a connected
  // app may ask, as it may read the account.
  tokens: "allow",
  leaves: "a link mailed to the account's address (single use, 24 h)",
  body: VerifyEmailBody,
  optionalBody: true,
  bodyDescription: "Nothing to send; an empty body or `{}`",
  status: 202,
  output: VerifyEmailResponse,
  outputDescription: "The link is on its way",
  errors: [
    "mail_not_configured",
    "invalid_state",
    "rate_limited",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  async run(_input, { services, actor }) {
    const sent = await sendVerificationLink(services.deps, { accountId: actor.accountId });
    return {
      status: "sent" as const,
      email: sent.maskedEmail,
      expires_at: new Date(sent.expiresAt).toISOString(),
    };
  },
});

/** The account operations, in the order the API reference lists them. */
export const ACCOUNT_OPERATIONS = [signupOp, getAccountOp, verifyEmailOp];
