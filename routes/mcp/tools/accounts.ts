/**
 * Tools over endpoints 1–5: sign up, the calling key's account, and API keys. Each calls the
 * domain functions its `/v1` route calls and answers the same body.
 */
import { z } from "zod";
import { listKeys, revokeKey, rotateKey } from "../../../domain/api_keys.ts";
import { publicSignup } from "../../../domain/public_signup.ts";
import { Account, SignupBody, SignupResponse } from "../../accounts.ts";
import { ApiKey, CreateKeyBody } from "../../api_keys.ts";
import { signupRates } from "../../middleware/rate_limit.ts";
import { accountView, apiKeyView, sandboxLimits } from "../../../app/views.ts";
import { idempotent } from "../idempotency.ts";
import { asBody, IdempotencyKeyArg, required, type ToolDef } from "../kit.ts";

const Replayed = z.boolean().optional().describe(
  "True when this answer is the stored result of an earlier call with the same idempotency_key",
);

const SignupInput = z.object({
  email: z.string().describe("The account's email (max 320 characters); lowercased"),
  company_name: z.string().optional().describe("Optional company name, 1 to 200 characters"),
  origin: z.enum(["agent", "human"]).optional().describe("Who is signing up; default agent"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

export const signupTool: ToolDef<typeof SignupInput> = {
  name: "signup",
  title: "Sign up",
  description: "Create a Serpwright account and get a sandbox API key at once (no CAPTCHA, no " +
    "card). The raw api_key is returned exactly once: store it, then configure this MCP server " +
    "with the header `Authorization: Bearer <api_key>` to unlock the account, projects, audits, " +
    "articles, billing and webhooks tools. Sandbox: 1 project, 1 audit, 2 draft articles, 14 " +
    "days. The limits of POST /v1/accounts apply (5 signups per hour per IP, a daily cap per " +
    "network); an existing email answers account_exists.",
  input: SignupInput,
  output: SignupResponse.extend({
    idempotent_replayed: Replayed,
    connect: z.object({
      url: z.string(),
      headers: z.object({ Authorization: z.string() }),
    }).describe("How to configure an MCP host with the new key"),
  }),
  access: "public",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller, baseUrl } = ctx;
    const body = asBody(SignupBody, {
      email: args.email,
      company_name: args.company_name,
      origin: args.origin,
    });
    const answer = await idempotent(
      services,
      caller,
      { key: args.idempotency_key, endpoint: "POST /v1/accounts", body },
      async () => {
        // Every signup limit of POST /v1/accounts, in the same order (one use case).
        const { account, raw } = await publicSignup(services.deps, signupRates(services), {
          ip: caller.ip,
          email: body.email,
          companyName: body.company_name ?? null,
          origin: body.origin ?? "agent",
        });
        return {
          status: 201,
          body: {
            account_id: account.id,
            api_key: raw,
            mode: "sandbox" as const,
            sandbox_limits: sandboxLimits(),
            upgrade_url: `${baseUrl}/pricing`,
            docs: `${baseUrl}/docs/agents`,
          },
        };
      },
    );
    const out = answer.body;
    return {
      structured: {
        ...out,
        ...(answer.replayed ? { idempotent_replayed: true } : {}),
        connect: { url: `${baseUrl}/mcp`, headers: { Authorization: `Bearer ${out.api_key}` } },
      },
      summary: `Account ${out.account_id} created with a sandbox key (shown once, store it): ` +
        `${out.api_key}. Reconnect this MCP server with the header ` +
        `"Authorization: Bearer ${out.api_key}" to use the other tools.`,
    };
  },
};

const NoInput = z.object({}).strict();

export const accountTool: ToolDef<typeof NoInput> = {
  name: "account",
  title: "Account",
  description: "The account of the API key this MCP connection uses: id, email, mode (sandbox or " +
    "live), project count and, for sandbox keys, the trial usage and limits. Call it first to " +
    "see what is left of the trial.",
  input: NoInput,
  output: Account,
  access: "key",
  annotations: { readOnlyHint: true, idempotentHint: true },
  run(_args, ctx) {
    const view = accountView(ctx.caller.principal!);
    const trial = "sandbox_usage" in view
      ? ` Trial used: ${view.sandbox_usage.audits}/${view.sandbox_limits.audits} audits, ` +
        `${view.sandbox_usage.articles}/${view.sandbox_limits.articles} articles.`
      : "";
    return Promise.resolve({
      structured: view,
      summary: `Account ${view.account_id} (${view.email}), ${view.mode} key, ` +
        `${view.projects_count} project(s).${trial}`,
    });
  },
};

const ApiKeysInput = z.object({
  action: z.enum(["list", "create", "revoke"]).describe(
    "list: the account's keys, newest first (no raw keys). create: mint a key of this key's " +
      "mode (the raw api_key is shown once). revoke: revoke key_id (create the new key first; " +
      "the last active key cannot be revoked).",
  ),
  name: z.string().optional().describe("create: a label, 1 to 100 characters"),
  key_id: z.string().min(1).max(100).optional().describe("revoke: the key's id (key_…)"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

export const apiKeysTool: ToolDef<typeof ApiKeysInput> = {
  name: "api_keys",
  title: "API keys",
  description: "List, create or revoke the account's API keys (at most 5 active). Rotation: " +
    "create the new key, switch the MCP host's Authorization header to it, then revoke the old " +
    "one. Keys minted by a sandbox key keep its expiry and trial budget.",
  input: ApiKeysInput,
  output: z.object({
    keys: z.array(ApiKey).optional(),
    key: ApiKey.optional(),
    idempotent_replayed: Replayed,
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller } = ctx;
    const { deps } = services;
    const p = caller.principal!;
    switch (args.action) {
      case "list": {
        const records = await listKeys(deps, p.account.id, p.key.mode);
        const used = await services.keyUsage.lastUsed(records.map((r) => r.id));
        const keys = records.map((r) => apiKeyView(r, used.get(r.id) ?? null));
        const active = keys.filter((k) => k.revoked_at === null).length;
        return {
          structured: { keys },
          summary: `${keys.length} key(s), ${active} active: ` +
            keys.map((k) => `${k.id} "${k.name}" …${k.last4}${k.revoked_at ? " (revoked)" : ""}`)
              .join(", "),
        };
      }
      case "create": {
        const body = asBody(CreateKeyBody, { name: args.name });
        const answer = await idempotent(
          services,
          caller,
          { key: args.idempotency_key, endpoint: "POST /v1/api-keys", body },
          async () => {
            const { record, raw } = await rotateKey(deps, p, body.name ?? "API key");
            services.resolver.invalidateAccount(p.account.id);
            return { status: 201, body: apiKeyView(record, null, raw) };
          },
        );
        const key = answer.body;
        return {
          structured: { key, ...(answer.replayed ? { idempotent_replayed: true } : {}) },
          summary: `Key ${key.id} created; raw key (shown once, store it): ${key.api_key}.`,
        };
      }
      case "revoke": {
        const keyId = required(args.key_id, "key_id", "revoke");
        const record = await revokeKey(deps, { accountId: p.account.id, mode: p.key.mode }, keyId);
        services.resolver.invalidateAccount(p.account.id);
        const used = await services.keyUsage.lastUsed([record.id]);
        return {
          structured: { key: apiKeyView(record, used.get(record.id) ?? null) },
          summary: `Key ${record.id} is revoked.` +
            (record.id === p.key.id ? " It was this connection's key: switch to another." : ""),
        };
      }
    }
  },
};
