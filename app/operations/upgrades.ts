/**
 * Upgrades (additive): an agent with a sandbox key starts one and polls it; a human finishes it
 * at `verification_uri` (the pages in routes/upgrades.ts) and pays at Stripe Checkout; the
 * payment webhook moves the account to the live side; the agent's next poll claims the live key,
 * once. The shape of an OAuth device authorization (RFC 8628). Both operations admit an expired
 * sandbox key (the trial's end is where an upgrade starts) and refuse connected apps' tokens
 * (they lead to a live key).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { ApiError, iso } from "../../domain/platform/mod.ts";
import { findPack, PACK_IDS, PLAN_IDS } from "../../domain/billing/mod.ts";
// Past billing/mod.ts on purpose: it loads stripe, kept off a worker's load (layers.test.ts).
import { expireSession } from "../../domain/billing/checkout.ts";
import {
  assertUpgradable,
  type Claim,
  pollUpgrade,
  startUpgrade,
  UPGRADE_POLL_INTERVAL_S,
  upgradeByMachinePayment,
  type UpgradeRecord,
  upgradeStatus,
} from "../../domain/upgrades/mod.ts";
import type { AccountActor } from "../actor.ts";
import {
  MachinePaymentRequired,
  type PaymentExchange,
  type PaymentOffer,
  RECEIPT_HEADER,
  requestPayment,
} from "../machine_payments.ts";
import { defineOperation } from "../operation.ts";
import type { Services } from "../services.ts";
import { stripeOf } from "./billing.ts";

export const UpgradeStarted = z.object({
  upgrade_id: z.string().openapi({ example: "upg_0m3x9k2a7c1f4z8q2w6e5r" }),
  status: z.literal("pending"),
  verification_uri: z.string().openapi({
    description: "The page where a human types user_code",
    example: "https://serpwright.example/upgrade",
  }),
  user_code: z.string().openapi({
    description: "8 characters shown as XXXX-XXXX; valid until expires_at",
    example: "KMTQ-7XWD",
  }),
  verification_uri_complete: z.string().openapi({
    description: "verification_uri with the code filled in: the link to hand a human",
    example: "https://serpwright.example/upgrade?code=KMTQ-7XWD",
  }),
  expires_at: z.string(),
  interval: z.number().int().openapi({ description: "Seconds between polls of `poll`" }),
  poll: z.string().openapi({ example: "/v1/upgrades/upg_0m3x9k2a7c1f4z8q2w6e5r" }),
  note: z.string(),
}).openapi("UpgradeStarted");

export const Upgrade = z.object({
  upgrade_id: z.string(),
  status: z.enum(["pending", "paid", "expired", "claimed"]).openapi({
    description: "pending: waiting for the human; expired: nobody paid in time (start again); " +
      "claimed: the live key was handed out (in `api_key` of exactly one answer)",
  }),
  created_at: z.string(),
  expires_at: z.string(),
  verification_uri: z.string(),
  interval: z.number().int(),
  poll: z.string(),
  paid_at: z.string().nullable(),
  project_ids: z.array(z.string()).openapi({
    description: "The sandbox projects the payment moved to the live side (history kept)",
  }),
  plan: z.enum(PLAN_IDS).nullable(),
  plan_project_id: z.string().nullable(),
  pack_id: z.enum(PACK_IDS).nullable(),
  credits_added: z.number().int(),
  api_key: z.string().optional().openapi({
    description: "The raw live key (sk_live_…), in the one answer that claimed it; never again",
  }),
  key_id: z.string().nullable(),
  claimed_at: z.string().nullable(),
  claimed_by: z.enum(["agent", "human"]).nullable().openapi({
    description: "agent: a GET of this upgrade; human: the success page's reveal button",
  }),
  note: z.string(),
}).openapi("Upgrade");

export const UpgradeParams = z.object({
  upgradeId: z.string().min(1).max(100).openapi({ example: "upg_0m3x9k2a7c1f4z8q2w6e5r" }),
});

const NO_STORE = "no-store";

export const createUpgradeOp = defineOperation({
  id: "upgrades.create",
  method: "post",
  path: "/v1/upgrades",
  tags: ["Billing"],
  summary: "Start an upgrade a human finishes: returns a user_code and a link to hand them",
  description:
    "The trial's way out (RFC 8628's shape): hand a human `verification_uri_complete`. " +
    "They see the account (email masked) and its sandbox projects, choose a plan per project " +
    "and/or a credit pack, and pay at Stripe Checkout; the payment moves the account to the live " +
    "side (sandbox projects become live, history kept). Poll `poll` every `interval` seconds: " +
    "once paid, exactly one answer carries the live key. One pending upgrade per account: asking " +
    "again answers 200 with the same upgrade and a new user_code (the old code stops working). " +
    "An expired sandbox key may call it. Where the operator enables machine payments, an agent " +
    "with its own wallet pays instead of a human: send `pack_id`; the 402 `payment_required` " +
    "carries a `WWW-Authenticate: Payment` challenge for exactly the pack's price; repeat the " +
    "request (same Idempotency-Key) with `Payment-Authorization`: the account is upgraded at " +
    "once (the pack's credits granted) and the answer is the Upgrade, `paid`, with " +
    "`Payment-Receipt`; one GET of `poll` then hands out the live key, once.",
  access: "key",
  tokens: "refuse",
  sandbox: {
    limit: "starts the upgrade (an expired sandbox key too); with `pack_id`, pays it itself " +
      "(machine payments)",
  },
  live: { refuse: "already_live" },
  expiredSandboxKey: "admit",
  leaves: "a pending upgrade (30 minutes); once a human (or, for a pack, the agent's machine " +
    "payment) pays, a live account and a live key",
  status: 201,
  otherStatuses: {
    200: "The account's pending upgrade: with a new user_code, or paid by the agent's pack",
  },
  output: z.union([UpgradeStarted, Upgrade]).openapi({
    description: "UpgradeStarted; with `pack_id` and a settled payment, the Upgrade (`paid`)",
  }),
  outputDescription: "Upgrade started (or, paid by the agent, the paid upgrade)",
  errors: [
    "already_live",
    "billing_not_configured",
    "payment_required",
    "idempotency_conflict",
    "payload_too_large",
  ],
  idempotent: true,
  machineSale: true,
  sensitive: true,
  optionalBody: true,
  bodyDescription: "Empty (or none): a human pays. `pack_id`: the agent pays that credit pack " +
    "itself (machine payments; 400 where the operator has not enabled them)",
  body: z.object({
    pack_id: z.enum(PACK_IDS).optional().openapi({
      description: "Machine payments only: the credit pack the agent buys to upgrade the " +
        "account itself (pack_500: 500 USD, 500 credits)",
    }),
  }).strict(),
  async run({ body }, { services, actor, baseUrl, status, header, payment }) {
    header("Cache-Control", NO_STORE);
    if (body.pack_id) {
      const paid = await payUpgrade(services, actor, body.pack_id, payment);
      if (!paid.created) status(200);
      return upgradeView(
        { upgrade: paid.upgrade, apiKey: null, key: null },
        services.deps.clock.now(),
        baseUrl,
      );
    }
    const { upgrade, code, reused } = await startUpgrade(services.deps, actor);
    if (reused) status(200);
    return {
      upgrade_id: upgrade.id,
      status: "pending" as const,
      verification_uri: `${baseUrl}/upgrade`,
      user_code: code,
      verification_uri_complete: `${baseUrl}/upgrade?code=${code}`,
      expires_at: iso(upgrade.expiresAt)!,
      interval: UPGRADE_POLL_INTERVAL_S,
      poll: `/v1/upgrades/${upgrade.id}`,
      note: "Hand a human verification_uri_complete (or verification_uri and user_code). They " +
        "choose a plan and/or credits and pay; then poll every interval seconds: the first " +
        "answer after payment carries the live key (api_key), once.",
    };
  },
});

export const getUpgradeOp = defineOperation({
  id: "upgrades.get",
  method: "get",
  path: "/v1/upgrades/{upgradeId}",
  tags: ["Billing"],
  summary: "An upgrade's status; once paid, the one answer that claims it carries the live key",
  description: "pending, expired, paid or claimed. The first read after the payment settles " +
    "claims the upgrade: it mints the account's live key and answers it in `api_key`, exactly " +
    "once (of parallel reads, one gets it); later reads answer `claimed` with `claimed_at` and " +
    "`claimed_by`. Any key of the account may read it; another account's id is not_found.",
  access: "key",
  tokens: "refuse",
  expiredSandboxKey: "admit",
  leaves: "once paid, the account's live key (until revoked)",
  params: UpgradeParams,
  status: 200,
  output: Upgrade,
  outputDescription: "The upgrade",
  errors: ["not_found", "key_limit_reached"],
  sensitive: true,
  async run({ params }, { services, actor, baseUrl, header }) {
    header("Cache-Control", NO_STORE);
    const claim = await pollUpgrade(services.deps, actor, params.upgradeId);
    // Only the claim that minted a key changes what the account's cached keys show.
    if (claim.apiKey) services.resolver.invalidateAccount(actor.accountId);
    return upgradeView(claim, services.deps.clock.now(), baseUrl);
  },
});

/**
 * An upgrade the agent pays itself with a credit pack (machine payments): refusals first, so
 * nothing is charged for an account that cannot be upgraded; then the library's challenge, or
 * the settled payment committed as the upgrade (domain/upgrades/machine.ts).
 */
async function payUpgrade(
  services: Services,
  actor: AccountActor,
  packId: (typeof PACK_IDS)[number],
  exchange: PaymentExchange,
) {
  const { deps } = services;
  if (actor.mode !== "live" && !deps.config.mpp.enabled) {
    throw new ApiError(
      "invalid_request",
      "pack_id: machine payments are not enabled on this server, so an agent cannot pay an " +
        "upgrade itself; leave pack_id out and hand a human verification_uri_complete",
    );
  }
  await assertUpgradable(deps, actor);
  const pack = findPack(packId)!;
  const offer: PaymentOffer = {
    credits: pack.credits,
    usd: pack.usd,
    item: pack.id,
    accountId: actor.accountId,
    operation: "upgrades.create",
    path: "/v1/upgrades",
  };
  const cause = new ApiError(
    "payment_required",
    `Pay ${pack.usd} USD for ${pack.id} (${pack.credits} credits) with the Payment challenge ` +
      "(WWW-Authenticate) and repeat this request with its credential in Payment-Authorization: " +
      "the account is upgraded at once",
    { pack_id: pack.id, price_usd: pack.usd, credits: pack.credits },
  );
  const handled = await requestPayment(services, offer, exchange.credential);
  if (!handled) {
    throw new ApiError("billing_not_configured", "Machine payments need Stripe, not configured");
  }
  if ("challenge" in handled) {
    throw new MachinePaymentRequired(cause, handled.challenge, handled.refused);
  }
  const outcome = await upgradeByMachinePayment(deps, {
    accountId: actor.accountId,
    keyId: actor.keyId,
    pack,
    paymentIntentId: String(handled.paid.receipt.reference),
    challengeId: handled.challengeId,
  });
  if (outcome.kind === "used") {
    // The library settled it, yet this PaymentIntent was granted before: nothing twice.
    const fresh = await requestPayment(services, offer, null);
    if (fresh && "challenge" in fresh) {
      throw new MachinePaymentRequired(cause, fresh.challenge, "this payment was already used");
    }
    throw cause;
  }
  exchange.receipt(handled.paid);
  services.resolver.invalidateAccount(actor.accountId);
  if (outcome.kind === "credited") {
    // Upgraded by another payment meanwhile: what this one paid is on the balance.
    const refusal = await assertUpgradable(deps, actor).then(() => null, (e: ApiError) => e);
    throw new ApiError(
      "already_live",
      `${refusal?.message ?? "This account is already live"}. This payment's ${pack.credits} ` +
        `credits were added to its balance (${outcome.balance} credits)`,
      refusal?.extra,
      { [RECEIPT_HEADER]: handled.paid.header },
    );
  }
  if (outcome.openSessionId) await expireSession(stripeOf(services), outcome.openSessionId);
  return outcome;
}

/** The upgrade operations, in the order the API reference lists them. */
export const UPGRADE_OPERATIONS = [createUpgradeOp, getUpgradeOp];

/** The Upgrade resource; `api_key` only in the answer whose claim minted it. */
export function upgradeView(claim: Claim, now: number, baseUrl: string) {
  const u: UpgradeRecord = claim.upgrade;
  const status = upgradeStatus(u, now);
  return {
    upgrade_id: u.id,
    status,
    created_at: iso(u.createdAt)!,
    expires_at: iso(u.expiresAt)!,
    verification_uri: `${baseUrl}/upgrade`,
    interval: UPGRADE_POLL_INTERVAL_S,
    poll: `/v1/upgrades/${u.id}`,
    paid_at: iso(u.paidAt),
    project_ids: u.result?.projectIds ?? [],
    plan: u.result?.planId ?? null,
    plan_project_id: u.result?.planProjectId ?? null,
    pack_id: (u.result?.packId ?? null) as (typeof PACK_IDS)[number] | null,
    credits_added: u.result?.creditsAdded ?? 0,
    ...(claim.apiKey ? { api_key: claim.apiKey } : {}),
    key_id: u.liveKeyId,
    claimed_at: iso(u.claimedAt),
    claimed_by: u.claimedBy,
    note: noteFor(status, claim.apiKey !== null, u),
  };
}

function noteFor(status: string, minted: boolean, u: UpgradeRecord): string {
  if (minted) {
    return "This is the account's live key, shown this once: store it now. The sandbox key " +
      "no longer sees the moved projects; use the live key from here on.";
  }
  switch (status) {
    case "pending":
      return "Waiting for a human at verification_uri; poll again in interval seconds.";
    case "expired":
      return "Nobody paid in time: start a new upgrade (POST /v1/upgrades) for a new code.";
    case "paid":
      return "Paid; read it (GET poll) to claim the live key: that one answer carries api_key.";
    default:
      return `The live key was handed out once, at ${iso(u.claimedAt)}, to the ` +
        `${
          u.claimedBy === "human" ? "human on the upgrade's success page" : "agent that read it"
        }` +
        "; it is never shown again. Without it, a human asks the operator for a new live key.";
  }
}
