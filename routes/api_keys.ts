import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { listKeys, revokeKey, rotateKey } from "../domain/api_keys.ts";
import type { AppEnv, Services } from "./env.ts";
import { requireKey } from "./middleware/auth.ts";
import { idempotency } from "./middleware/idempotency.ts";
import { AUTH_ERRORS, bearerSecurity, IdempotencyHeader, responses } from "./openapi_helpers.ts";
import { apiKeyView } from "../app/views.ts";

export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  key_prefix: z.string().openapi({ example: "sk_sandbox_" }),
  last4: z.string(),
  mode: z.enum(["sandbox", "live"]),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  api_key: z.string().optional().openapi({ description: "Only in the create response" }),
}).openapi("ApiKey");

export const CreateKeyBody = z.object({
  name: z.string().min(1).max(100).optional().openapi({ example: "ci-runner" }),
}).strict().openapi("CreateApiKeyRequest");

const KeyIdParam = z.object({
  id: z.string().min(1).max(100).openapi({
    param: { name: "id", in: "path" },
    example: "key_0abc",
  }),
});

export function apiKeyRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  const { deps } = s;

  app.openapi(
    createRoute({
      method: "post",
      path: "/v1/api-keys",
      tags: ["API keys"],
      summary: "Mint a key of the calling key's mode (body optional)",
      security: bearerSecurity,
      middleware: [requireKey(), idempotency(s)] as const,
      request: {
        headers: IdempotencyHeader,
        body: { content: { "application/json": { schema: CreateKeyBody } }, required: false },
      },
      responses: responses(
        { 201: { description: "The new key, with the raw `api_key` shown once", schema: ApiKey } },
        [...AUTH_ERRORS, "key_limit_reached", "idempotency_conflict", "payload_too_large"],
      ),
    }),
    async (c) => {
      const body = c.req.valid("json") ?? {};
      const caller = c.get("principal")!;
      const { record, raw } = await rotateKey(deps, caller, body.name ?? "API key");
      s.resolver.invalidateAccount(caller.account.id);
      return c.json(apiKeyView(record, null, raw), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/v1/api-keys",
      tags: ["API keys"],
      summary: "The account's keys, newest first (no raw keys)",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      responses: responses(
        { 200: { description: "Keys", schema: z.object({ keys: z.array(ApiKey) }) } },
        AUTH_ERRORS,
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const records = await listKeys(deps, caller.account.id, caller.key.mode);
      const used = await s.keyUsage.lastUsed(records.map((r) => r.id));
      return c.json({ keys: records.map((r) => apiKeyView(r, used.get(r.id) ?? null)) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/v1/api-keys/{id}",
      tags: ["API keys"],
      summary: "Revoke a key (create the new key first; the last active key cannot go)",
      security: bearerSecurity,
      middleware: [requireKey()] as const,
      request: { params: KeyIdParam },
      responses: responses(
        { 200: { description: "The revoked key", schema: z.object({ key: ApiKey }) } },
        [...AUTH_ERRORS, "cannot_revoke_last_key", "not_found"],
      ),
    }),
    async (c) => {
      const caller = c.get("principal")!;
      const record = await revokeKey(
        deps,
        { accountId: caller.account.id, mode: caller.key.mode },
        c.req.valid("param").id,
      );
      s.resolver.invalidateAccount(caller.account.id);
      const used = await s.keyUsage.lastUsed([record.id]);
      return c.json({ key: apiKeyView(record, used.get(record.id) ?? null) }, 200);
    },
  );
}
