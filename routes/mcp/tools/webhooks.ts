/**
 * The webhooks tool over endpoints 18–20. Like `POST /v1/webhooks`, create takes no idempotency
 * key (the interface lists none there).
 */
import { z } from "zod";
import { iso } from "../../../domain/clock.ts";
import { EVENT_NAMES } from "../../../domain/events.ts";
import { createWebhook, deleteWebhook, listWebhooks } from "../../../domain/webhooks/endpoints.ts";
import { maskSecret } from "../../../domain/webhooks/secret_box.ts";
import { SIGNATURE_V2_HEADER } from "../../../domain/webhooks/types.ts";
import {
  baseView,
  CreatedWebhook,
  createdWebhookView,
  CreateWebhookBody,
  ListedWebhook,
} from "../../webhooks.ts";
import { asBody, required, type ToolDef } from "../kit.ts";

const WebhooksInput = z.object({
  action: z.enum(["create", "list", "delete"]).describe(
    "create: register a public HTTPS url for signed event deliveries (the signing secret is " +
      "shown once). list: the endpoints, oldest first, secrets masked. delete: remove webhook_id " +
      "and its queued deliveries.",
  ),
  url: z.string().optional().describe("create: a public HTTPS URL"),
  events: z.array(z.enum(EVENT_NAMES)).max(50).optional()
    .describe("create: event names to deliver; omitted or [] means all"),
  webhook_id: z.string().min(1).max(100).optional().describe("delete: the endpoint (wh_…)"),
}).strict();

export const webhooksTool: ToolDef<typeof WebhooksInput> = {
  name: "webhooks",
  title: "Webhook endpoints",
  description: "Instead of polling, receive signed HTTPS POSTs when an audit completes, an " +
    "article is published, a subscription or the credit balance changes. Each delivery carries " +
    `${SIGNATURE_V2_HEADER} = v2= and the hex HMAC-SHA256 of "{delivery id}.{timestamp}.{raw ` +
    "body}\" keyed with the endpoint's secret (verify it; the body-only v1 header stays for old " +
    "receivers). At most 20 endpoints (limit_reached).",
  input: WebhooksInput,
  output: z.object({
    webhook: CreatedWebhook.optional(),
    webhooks: z.array(ListedWebhook).optional(),
    deleted: z.object({ deleted: z.literal(true), webhook_id: z.string() }).optional(),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(args, ctx) {
    const { deps } = ctx.services;
    const p = ctx.caller.principal!;
    const owner = { accountId: p.account.id, mode: p.key.mode };
    switch (args.action) {
      case "create": {
        required(args.url, "url", "create");
        const body = asBody(CreateWebhookBody, { url: args.url, events: args.events });
        const { record, secret } = await createWebhook(deps, owner, body);
        const webhook = createdWebhookView(record, secret);
        return {
          structured: { webhook },
          summary: `Webhook ${webhook.webhook_id} for ${webhook.url}; signing secret (shown ` +
            `once, store it): ${secret}. Verify ${SIGNATURE_V2_HEADER} (see signature_v2_scheme).`,
        };
      }
      case "list": {
        const rows = await listWebhooks(deps, owner);
        const webhooks = rows.map(({ record, secret, lastSuccessAt }) => ({
          ...baseView(record),
          secret: maskSecret(secret),
          failure_count: record.failureCount,
          last_success_at: iso(lastSuccessAt),
          last_failure_at: iso(record.lastFailureAt),
        }));
        return {
          structured: { webhooks },
          summary: webhooks.length === 0
            ? "No webhook endpoints."
            : `${webhooks.length} endpoint(s): ` +
              webhooks.map((w) => `${w.webhook_id} ${w.url}${w.active ? "" : " (inactive)"}`)
                .join(", "),
        };
      }
      case "delete": {
        const id = required(args.webhook_id, "webhook_id", "delete");
        await deleteWebhook(deps, owner, id);
        return {
          structured: { deleted: { deleted: true as const, webhook_id: id } },
          summary: `Webhook ${id} deleted.`,
        };
      }
    }
  },
};
