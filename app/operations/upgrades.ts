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
import { iso } from "../../domain/platform/clock.ts";
import { PACK_IDS, PLAN_IDS } from "../../domain/billing/catalog.ts";
import {
  type Claim,
  pollUpgrade,
  startUpgrade,
  UPGRADE_POLL_INTERVAL_S,
  type UpgradeRecord,
  upgradeStatus,
} from "../../domain/upgrades/mod.ts";
import { defineOperation } from "../operation.ts";

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
    "An expired sandbox key may call it.",
  access: "key",
  tokens: "refuse",
  sandbox: { limit: "starts the upgrade (an expired sandbox key too)" },
  live: { refuse: "already_live" },
  expiredSandboxKey: "admit",
  leaves: "a pending upgrade (30 minutes); once a human pays, a live account and a live key",
  status: 201,
  otherStatuses: { 200: "The account's pending upgrade, with a new user_code" },
  output: UpgradeStarted,
  outputDescription: "Upgrade started",
  errors: ["already_live", "billing_not_configured", "idempotency_conflict", "payload_too_large"],
  idempotent: true,
  sensitive: true,
  optionalBody: true,
  bodyDescription: "No fields; an empty body (or none) is valid",
  body: z.object({}).strict(),
  async run(_input, { services, actor, baseUrl, status, header }) {
    header("Cache-Control", NO_STORE);
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
      return "Paid; read again to claim the live key.";
    default:
      return `The live key was handed out once, at ${iso(u.claimedAt)}, to the ` +
        `${
          u.claimedBy === "human" ? "human on the upgrade's success page" : "agent that read it"
        }` +
        "; it is never shown again. Without it, a human asks the operator for a new live key.";
  }
}
