/**
 * Document-level parts of the OpenAPI document that no `/v1` route carries: the outbound event
 * deliveries (OpenAPI 3.1 `webhooks`), built from the same event names and header constants the
 * delivery code uses, and the tag descriptions.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { EVENT_NAMES } from "../domain/platform/mod.ts";
import {
  ATTEMPT_HEADER,
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  SIGNATURE_SCHEME,
  SIGNATURE_TOLERANCE_S,
  SIGNATURE_V2_HEADER,
  SIGNATURE_V2_SCHEME,
  TIMESTAMP_HEADER,
} from "../domain/webhooks/types.ts";
import type { AppEnv } from "./env.ts";

const RESERVED = new Set<string>(["article.generated", "usage.threshold_reached"]);

const WHEN: Record<string, string> = {
  "audit.completed": "A project's audit run completed.",
  "article.published": "An article on a project was published.",
  "subscription.updated": "A payment activated or renewed a project subscription; also a failed " +
    "renewal payment (`payment_failed: true`) or a cancellation (`canceled: true`), which keep " +
    "the subscription active to `paid_until`.",
  "credits.updated": "A paid credit pack checkout completed and credits were added; also a " +
    "refund or dispute of a pack taking credits back (negative `credits_added`, with " +
    "`written_off` for credits already spent) or a won dispute giving them back.",
  "audit.regressed":
    "A completed audit scored lower than the project's previous one, or found new critical issues.",
  "schedule.paused":
    "A project's audit schedule paused: the balance cannot pay a run, or the plan no longer includes the cadence.",
  "account.upgraded": "A human paid for an upgrade the agent started (POST /v1/upgrades): the " +
    "account is live, its sandbox projects are live projects (`project_ids`), the plan and pack " +
    "applied; `claim` is the GET that hands out the live key once. Sent to sandbox endpoints too.",
  "recheck.completed": "A re-check of one check of a completed audit finished: each URL fixed, " +
    "still failing or not checked (POST /v1/audits/{auditId}/issues/{check}/recheck).",
};

const EventEnvelope = z.object({
  id: z.string().openapi({
    description: `The delivery id; the same as the ${DELIVERY_HEADER} header`,
    example: "dlv_3f9a0c1b2d4e5f60718293a4b5",
  }),
  event: z.enum(EVENT_NAMES),
  created_at: z.string().openapi({ example: "2026-11-23T12:00:00.000Z" }),
  data: z.record(z.string(), z.unknown()).openapi({
    description: "The event's payload; its fields per event are listed on /docs/agents",
  }),
}).openapi("EventEnvelope");

const DeliveryHeaders = z.object({
  [SIGNATURE_HEADER]: z.string().regex(/^[0-9a-f]{64}$/).openapi({
    description: `Lowercase ${SIGNATURE_SCHEME}, keyed with the endpoint secret. Verify it on ` +
      "the raw body, with a constant-time compare, before trusting the payload.",
  }),
  [TIMESTAMP_HEADER]: z.string().regex(/^\d+$/).openapi({
    description: "Unix seconds at which this attempt was signed; refuse it when more than " +
      `${SIGNATURE_TOLERANCE_S} s from your clock`,
  }),
  [SIGNATURE_V2_HEADER]: z.string().regex(/^v2=[0-9a-f]{64}$/).openapi({
    description: `${SIGNATURE_V2_SCHEME}: covers the delivery id and the timestamp too, so a ` +
      "captured request cannot be replayed later; deduplicate on the signed delivery id",
  }),
  [EVENT_HEADER]: z.enum(EVENT_NAMES).openapi({ description: "The event name" }),
  [DELIVERY_HEADER]: z.string().openapi({
    description: "The delivery id, stable across retries: deduplicate on it",
  }),
  [ATTEMPT_HEADER]: z.string().openapi({ description: "1 for the first attempt, then 2, 3, …" }),
});

export const TAGS = [
  { name: "Accounts", description: "Signup (public) and the calling key's account" },
  { name: "API keys", description: "Mint, list and revoke keys; rotate by creating first" },
  { name: "Projects", description: "One project per site" },
  { name: "Audits", description: "Technical audits: 202, then poll after poll_after_seconds" },
  {
    name: "Schedules",
    description: "Scheduled audits of a project, with regression alerts (audit.regressed)",
  },
  { name: "Articles", description: "Draft SEO articles: 202, then poll after poll_after_seconds" },
  {
    name: "Share links",
    description: "Every link of the account that opens a report or preview without a key",
  },
  {
    name: "Billing",
    description: "Plans, credits, checkouts a human pays, upgrades and the billing portal",
  },
  { name: "Webhooks", description: "Signed outbound event deliveries" },
];

/** Registers one OpenAPI `webhooks` entry per event the service delivers. */
export function registerEventWebhooks(app: OpenAPIHono<AppEnv>): void {
  for (const name of EVENT_NAMES) {
    if (RESERVED.has(name)) continue;
    app.openAPIRegistry.registerWebhook({
      method: "post",
      path: name,
      tags: ["Webhooks"],
      summary: WHEN[name] ?? name,
      description: "Sent as an HTTPS POST to each registered endpoint whose `events` filter " +
        "includes it (or is empty). Answer any 2xx within 10 s; failures are retried with " +
        "exponential backoff, at most 8 attempts.",
      request: {
        headers: DeliveryHeaders,
        body: { content: { "application/json": { schema: EventEnvelope } }, required: true },
      },
      responses: { 200: { description: "Any 2xx acknowledges the delivery" } },
    });
  }
}
