/**
 * Endpoints 18–20: the account's outbound webhook endpoints. `POST /v1/webhooks` takes no
 * Idempotency-Key (the interface does not list one there).
 */
import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { iso } from "../domain/clock.ts";
import { EVENT_NAMES } from "../domain/events.ts";
import { createWebhook, deleteWebhook, listWebhooks } from "../domain/webhooks/endpoints.ts";
import { maskSecret } from "../domain/webhooks/secret_box.ts";
import {
  SIGNATURE_HEADER,
  SIGNATURE_SCHEME,
  SIGNATURE_TOLERANCE_S,
  SIGNATURE_V2_HEADER,
  SIGNATURE_V2_SCHEME,
  TIMESTAMP_HEADER,
  type WebhookRecord,
} from "../domain/webhooks/types.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { AUTH_ERRORS, bearerSecurity, responses } from "./openapi_helpers.ts";

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

/** The create response (route and MCP tool): the endpoint, its secret once, how it signs. */
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

const WebhookIdParam = z.object({
  id: z.string().min(1).max(100).openapi({
    param: { name: "id", in: "path" },
    example: "wh_0abc",
  }),
});

export function baseView(w: WebhookRecord) {
  return {
    webhook_id: w.id,
    url: w.url,
    events: [...w.events],
    active: w.active,
    created_at: iso(w.createdAt)!,
  };
}

export function webhookRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/webhooks",
      tags: ["Webhooks"],
      summary: "The account's webhook endpoints, oldest first (secrets masked)",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      responses: responses(
        {
          200: {
            description: "Webhook endpoints",
            schema: z.object({ webhooks: z.array(ListedWebhook) }),
          },
        },
        AUTH_ERRORS,
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const rows = await listWebhooks(deps, {
        accountId: caller.account.id,
        mode: caller.key.mode,
      });
      return c.json({
        webhooks: rows.map(({ record, secret, lastSuccessAt }) => ({
          ...baseView(record),
          secret: maskSecret(secret),
          failure_count: record.failureCount,
          last_success_at: iso(lastSuccessAt),
          last_failure_at: iso(record.lastFailureAt),
        })),
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/webhooks",
      tags: ["Webhooks"],
      summary: "Register a public HTTPS endpoint for signed event deliveries",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: {
        body: {
          content: { "application/json": { schema: CreateWebhookBody } },
          required: true,
        },
      },
      responses: responses(
        {
          201: {
            description: "The endpoint with its raw signing `secret`, shown once",
            schema: CreatedWebhook,
          },
        },
        [...AUTH_ERRORS, "limit_reached", "payload_too_large", "webhooks_not_configured"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const { record, secret } = await createWebhook(
        deps,
        { accountId: caller.account.id, mode: caller.key.mode },
        c.req.valid("json"),
      );
      return c.json(createdWebhookView(record, secret), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/webhooks/{id}",
      tags: ["Webhooks"],
      summary: "Remove an endpoint and its queued deliveries",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: { params: WebhookIdParam },
      responses: responses(
        {
          200: {
            description: "Removed",
            schema: z.object({ deleted: z.literal(true), webhook_id: z.string() }),
          },
        },
        [...AUTH_ERRORS, "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const id = c.req.valid("param").id;
      await deleteWebhook(deps, { accountId: caller.account.id, mode: caller.key.mode }, id);
      return c.json({ deleted: true as const, webhook_id: id }, 200);
    },
  );
}
