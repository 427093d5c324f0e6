/**
 * Webhooks (endpoints 18–20): the account's outbound webhook endpoints. Registering one re-reads
 * the calling key strongly first (`sensitive`); it takes no idempotency key (the interface lists
 * none on `POST /v1/webhooks`).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { EVENT_NAMES, iso } from "../../domain/platform/mod.ts";
import {
  createWebhook,
  deleteWebhook,
  type ListedWebhook as ListedRow,
  listWebhooks,
  maskSecret,
} from "../../domain/webhooks/mod.ts";
import {
  SIGNATURE_HEADER,
  SIGNATURE_SCHEME,
  SIGNATURE_TOLERANCE_S,
  SIGNATURE_V2_HEADER,
  SIGNATURE_V2_SCHEME,
  TIMESTAMP_HEADER,
  type WebhookRecord,
} from "../../domain/webhooks/types.ts";
import { defineOperation } from "../operation.ts";

/** The event names an endpoint may filter on, and the header its deliveries are verified by. */
export { EVENT_NAMES, SIGNATURE_V2_HEADER };

const base = {
  webhook_id: z.string().openapi({ example: "wh_0m3x9k2a7c1f4z8q2w6e5r" }),
  url: z.string().openapi({ example: "https://agent.example.com/hooks/serpwright" }),
  events: z.array(z.string()).openapi({
    description: "Event-name filter; empty means all events",
    example: ["audit.completed"],
  }),
  active: z.boolean(),
  created_at: z.string(),
};

export const CreatedWebhook = z.object({
  ...base,
  secret: z.string().openapi({
    description: "Raw signing secret (64 hex characters), shown only here",
    example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  }),
  signature_header: z.string().openapi({ example: SIGNATURE_HEADER }),
  signature_scheme: z.string().openapi({ example: SIGNATURE_SCHEME }),
  signature_v2_header: z.string().openapi({
    description: "The signature to verify (additive): binds the body to the delivery id and " +
      "the time it was signed, so a captured delivery cannot be replayed",
    example: SIGNATURE_V2_HEADER,
  }),
  signature_v2_scheme: z.string().openapi({ example: SIGNATURE_V2_SCHEME }),
  timestamp_header: z.string().openapi({
    description: `Unix seconds of the signing; refuse one more than ${SIGNATURE_TOLERANCE_S} s ` +
      "from your clock",
    example: TIMESTAMP_HEADER,
  }),
}).openapi("WebhookCreated");

/** The create response: the endpoint, its secret once, how it signs. */
export function createdWebhookView(record: WebhookRecord, secret: string) {
  return {
    ...baseView(record),
    secret,
    signature_header: SIGNATURE_HEADER,
    signature_scheme: SIGNATURE_SCHEME,
    signature_v2_header: SIGNATURE_V2_HEADER,
    signature_v2_scheme: SIGNATURE_V2_SCHEME,
    timestamp_header: TIMESTAMP_HEADER,
  };
}

export const ListedWebhook = z.object({
  ...base,
  secret: z.string().openapi({ description: "Masked: at most the last 4 characters" }),
  failure_count: z.number().int(),
  last_success_at: z.string().nullable(),
  last_failure_at: z.string().nullable(),
}).openapi("Webhook");

export const CreateWebhookBody = z.object({
  url: z.string().min(1).openapi({ example: "https://agent.example.com/hooks/serpwright" }),
  events: z.array(z.enum(EVENT_NAMES)).max(50).optional().openapi({
    description: "Event names to deliver; omitted or [] means all events",
    example: ["audit.completed", "article.published"],
  }),
}).strict().openapi("CreateWebhookRequest");

export const WebhookIdParam = z.object({
  id: z.string().min(1).max(100).openapi({
    param: { name: "id", in: "path" },
    example: "wh_0abc",
  }),
});

function baseView(w: WebhookRecord) {
  return {
    webhook_id: w.id,
    url: w.url,
    events: [...w.events],
    active: w.active,
    created_at: iso(w.createdAt)!,
  };
}

/** A listed endpoint: its secret masked, its delivery record. */
function listedWebhookView({ record, secret, lastSuccessAt }: ListedRow) {
  return {
    ...baseView(record),
    secret: maskSecret(secret),
    failure_count: record.failureCount,
    last_success_at: iso(lastSuccessAt),
    last_failure_at: iso(record.lastFailureAt),
  };
}

export const listWebhooksOp = defineOperation({
  id: "webhooks.list",
  method: "get",
  path: "/v1/webhooks",
  tags: ["Webhooks"],
  summary: "The account's webhook endpoints, oldest first (secrets masked)",
  access: "key",
  tokens: "allow",
  status: 200,
  output: z.object({ webhooks: z.array(ListedWebhook) }),
  outputDescription: "Webhook endpoints",
  errors: [],
  async run(_input, { services, actor }) {
    const rows = await listWebhooks(services.deps, {
      accountId: actor.accountId,
      mode: actor.mode,
    });
    return { webhooks: rows.map(listedWebhookView) };
  },
});

export const createWebhookOp = defineOperation({
  id: "webhooks.create",
  method: "post",
  path: "/v1/webhooks",
  tags: ["Webhooks"],
  summary: "Register a public HTTPS endpoint for signed event deliveries",
  access: "key",
  tokens: "refuse",
  leaves: "a webhook endpoint receiving the account's events",
  body: CreateWebhookBody,
  status: 201,
  output: CreatedWebhook,
  outputDescription: "The endpoint with its raw signing `secret`, shown once",
  errors: ["limit_reached", "payload_too_large", "webhooks_not_configured"],
  sensitive: true,
  async run({ body }, { services, actor }) {
    const { record, secret } = await createWebhook(
      services.deps,
      { accountId: actor.accountId, mode: actor.mode },
      body,
    );
    return createdWebhookView(record, secret);
  },
});

export const deleteWebhookOp = defineOperation({
  id: "webhooks.delete",
  method: "delete",
  path: "/v1/webhooks/{id}",
  tags: ["Webhooks"],
  summary: "Remove an endpoint and its queued deliveries",
  access: "key",
  tokens: "refuse",
  params: WebhookIdParam,
  status: 200,
  output: z.object({ deleted: z.literal(true), webhook_id: z.string() }),
  outputDescription: "Removed",
  errors: ["not_found"],
  async run({ params }, { services, actor }) {
    await deleteWebhook(
      services.deps,
      { accountId: actor.accountId, mode: actor.mode },
      params.id,
    );
    return { deleted: true as const, webhook_id: params.id };
  },
});

/** The webhook operations, in the order the API reference lists them. */
export const WEBHOOK_OPERATIONS = [listWebhooksOp, createWebhookOp, deleteWebhookOp];
