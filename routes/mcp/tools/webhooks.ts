/**
 * The webhooks tool: the webhook operations (app/operations/webhooks.ts) as actions. Like
 * `POST /v1/webhooks`, create takes no idempotency key (the interface lists none there).
 */
import { z } from "zod";
import {
  CreatedWebhook,
  createWebhookOp,
  deleteWebhookOp,
  EVENT_NAMES,
  ListedWebhook,
  listWebhooksOp,
  SIGNATURE_V2_HEADER,
} from "../../../app/operations/webhooks.ts";
import { action, actionTool, required } from "../kit.ts";

const WebhooksInput = z.object({
  action: z.enum(["create", "list", "delete"]).describe(
    "create: an HTTPS url for signed deliveries (secret shown once). list: the endpoints. " +
      "delete: webhook_id.",
  ),
  url: z.string().optional().describe("create: a public HTTPS URL"),
  events: z.array(z.enum(EVENT_NAMES)).max(50).optional()
    .describe("create: event names to deliver; omitted or [] means all"),
  webhook_id: z.string().min(1).max(100).optional().describe("delete: the endpoint (wh_…)"),
}).strict();

type Args = z.output<typeof WebhooksInput>;
type CreatedOut = z.output<typeof CreatedWebhook>;
type ListedOut = z.output<typeof ListedWebhook>;

export const webhooksTool = actionTool({
  name: "webhooks",
  title: "Webhook endpoints",
  description: "Instead of polling, receive signed HTTPS POSTs on events (audit completed, " +
    "article published, credits…). Verify X-Serpwright-Signature-V2: v2= hex HMAC-SHA256 of " +
    '"{delivery id}.{timestamp}.{raw body}" with the endpoint secret. At most 20 endpoints.',
  input: WebhooksInput,
  output: z.object({
    webhook: CreatedWebhook.optional(),
    webhooks: z.array(ListedWebhook).optional(),
    deleted: z.object({ deleted: z.literal(true), webhook_id: z.string() }).optional(),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  actions: {
    create: action(createWebhookOp, (a: Args) => ({
      body: { url: required(a.url, "url", "create"), events: a.events },
    }), (webhook: CreatedOut) => ({
      structured: webhook,
      summary: `Webhook ${webhook.webhook_id} for ${webhook.url}; signing secret (shown ` +
        `once, store it): ${webhook.secret}. Verify ${SIGNATURE_V2_HEADER} (see ` +
        "signature_v2_scheme).",
    })),
    list: action(listWebhooksOp, () => ({}), ({ webhooks }: { webhooks: ListedOut[] }) => ({
      structured: { webhooks },
      summary: webhooks.length === 0
        ? "No webhook endpoints."
        : `${webhooks.length} endpoint(s): ` +
          webhooks.map((w) => `${w.webhook_id} ${w.url}${w.active ? "" : " (inactive)"}`)
            .join(", "),
    })),
    delete: action(deleteWebhookOp, (a: Args) => ({
      params: { id: required(a.webhook_id, "webhook_id", "delete") },
    }), (deleted: { deleted: true; webhook_id: string }) => ({
      structured: deleted,
      summary: `Webhook ${deleted.webhook_id} deleted.`,
    })),
  },
});
