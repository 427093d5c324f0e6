/**
 * API keys (endpoints 3–5): mint a key of the calling key's mode, list the keys a caller may see,
 * revoke one. Minting and revoking re-read the calling key strongly first (`sensitive`).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { listKeys, revokeKey, rotateKey } from "../../domain/identity/mod.ts";
import { defineOperation } from "../operation.ts";
import { apiKeyView } from "../views.ts";
import { principalOf } from "./accounts.ts";

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

export const KeyIdParam = z.object({
  id: z.string().min(1).max(100).openapi({
    param: { name: "id", in: "path" },
    example: "key_0abc",
  }),
});

export const createKeyOp = defineOperation({
  id: "api_keys.create",
  method: "post",
  path: "/v1/api-keys",
  tags: ["API keys"],
  summary: "Mint a key of the calling key's mode (body optional)",
  access: "key",
  tokens: "refuse",
  leaves: "an API key (until revoked; a sandbox key until the trial's expiry)",
  sandbox: { limit: "mints a sandbox key that expires with the trial" },
  body: CreateKeyBody,
  optionalBody: true,
  status: 201,
  output: ApiKey,
  outputDescription: "The new key, with the raw `api_key` shown once",
  errors: ["key_limit_reached", "idempotency_conflict", "payload_too_large"],
  idempotent: true,
  sensitive: true,
  changesAccount: true,
  async run({ body }, { services, actor }) {
    // The strongly re-read key: a sandbox rotation inherits its expiry and trial budget.
    const { record, raw } = await rotateKey(
      services.deps,
      principalOf(actor),
      body.name ?? "API key",
    );
    return apiKeyView(record, null, raw);
  },
});

export const listKeysOp = defineOperation({
  id: "api_keys.list",
  method: "get",
  path: "/v1/api-keys",
  tags: ["API keys"],
  summary: "The account's keys, newest first (no raw keys)",
  access: "key",
  tokens: "allow",
  status: 200,
  output: z.object({ keys: z.array(ApiKey) }),
  outputDescription: "Keys",
  errors: [],
  async run(_input, { services, actor }) {
    const records = await listKeys(services.deps, actor.accountId, actor.mode);
    const used = await services.keyUsage.lastUsed(records.map((r) => r.id));
    return { keys: records.map((r) => apiKeyView(r, used.get(r.id) ?? null)) };
  },
});

export const revokeKeyOp = defineOperation({
  id: "api_keys.revoke",
  method: "delete",
  path: "/v1/api-keys/{id}",
  tags: ["API keys"],
  summary: "Revoke a key (create the new key first; the last active key cannot go)",
  access: "key",
  tokens: "refuse",
  params: KeyIdParam,
  status: 200,
  output: z.object({ key: ApiKey }),
  outputDescription: "The revoked key",
  errors: ["cannot_revoke_last_key", "not_found"],
  sensitive: true,
  changesAccount: true,
  async run({ params }, { services, actor }) {
    const record = await revokeKey(
      services.deps,
      { accountId: actor.accountId, mode: actor.mode },
      params.id,
    );
    const used = await services.keyUsage.lastUsed([record.id]);
    return { key: apiKeyView(record, used.get(record.id) ?? null) };
  },
});

/** The API key operations, in the order the API reference lists them. */
export const API_KEY_OPERATIONS = [createKeyOp, listKeysOp, revokeKeyOp];
