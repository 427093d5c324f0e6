/**
 * Tools over endpoints 1–5: sign up, the calling key's account, and API keys, as actions of the
 * account and API key operations (app/operations/accounts.ts, app/operations/api_keys.ts).
 */
import { z } from "zod";
import {
  Account,
  getAccountOp,
  signupOp,
  SignupResponse,
  verifyEmailOp,
  VerifyEmailResponse,
} from "../../../app/operations/accounts.ts";
import { ApiKey, createKeyOp, listKeysOp, revokeKeyOp } from "../../../app/operations/api_keys.ts";
import {
  ConnectedApp,
  listConnectedAppsOp,
  revokeConnectedAppOp,
} from "../../../app/operations/connected_apps.ts";
import { action, actionTool, IdempotencyKeyArg, operationTool, required } from "../kit.ts";
import { ACCOUNT_SHARE_ACTIONS, AccountShareOutputs } from "./shares.ts";

const Replayed = z.boolean().optional().describe(
  "True when this answer is the stored result of an earlier call with the same idempotency_key",
);

const SignupInput = z.object({
  email: z.string().describe("The account's email (max 320 characters); lowercased"),
  company_name: z.string().optional().describe("Optional company name, 1 to 200 characters"),
  origin: z.enum(["agent", "human"]).optional().describe("Who is signing up; default agent"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

type SignupArgs = z.output<typeof SignupInput>;
type SignupOut = z.output<typeof SignupResponse>;

const signup = action(signupOp, (a: SignupArgs) => ({
  body: { email: a.email, company_name: a.company_name, origin: a.origin },
}), (out: SignupOut, _args, ctx) => ({
  structured: {
    ...out,
    connect: { url: `${ctx.baseUrl}/mcp`, headers: { Authorization: `Bearer ${out.api_key}` } },
  },
  summary: `Account ${out.account_id} created with a sandbox key (shown once, store it): ` +
    `${out.api_key}. Reconnect this MCP server with the header ` +
    `"Authorization: Bearer ${out.api_key}" to use the other tools.`,
}));

export const signupTool = operationTool({
  name: "signup",
  title: "Sign up",
  description: "Create an account and get a sandbox API key at once (no card). The api_key " +
    "is shown once: store it, then configure this MCP server with `Authorization: Bearer " +
    "<api_key>` to unlock the other tools. Sandbox: 1 project, 1 audit, 2 articles, 14 days.",
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
}, signup);

const AccountInput = z.object({
  action: z.enum(["get", "verify_email"]).default("get").describe(
    "get (default): the account. verify_email: mail a one-time link (24 h; 3 an hour) a " +
      "human opens to prove the email.",
  ),
  idempotency_key: IdempotencyKeyArg,
}).strict();

type AccountArgs = z.output<typeof AccountInput>;
type AccountOut = z.output<typeof Account>;
type VerifyOut = z.output<typeof VerifyEmailResponse>;

function accountAnswer(view: AccountOut) {
  const usage = view.sandbox_usage;
  const limits = view.sandbox_limits;
  const trial = usage && limits
    ? ` Trial used: ${usage.audits}/${limits.audits} audits, ` +
      `${usage.articles}/${limits.articles} articles.`
    : "";
  return {
    structured: view,
    summary: `Account ${view.account_id} (${view.email}), ${view.mode} key, ` +
      `${view.projects_count} project(s).${trial}`,
  };
}

export const accountTool = actionTool({
  name: "account",
  title: "Account",
  description: "This key's account: mode (sandbox or live), projects, and what is left of " +
    "the trial. Call it first.",
  input: AccountInput,
  // get answers the account, verify_email the link sent: each the /v1 body of the same call.
  output: z.union([Account, VerifyEmailResponse.extend({ idempotent_replayed: Replayed })]),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  actions: {
    get: action(getAccountOp, () => ({}), (view: AccountOut) => accountAnswer(view)),
    verify_email: action(
      verifyEmailOp,
      () => ({ body: {} }),
      (sent: VerifyOut) => {
        return {
          structured: sent,
          summary: `A verification link was sent to ${sent.email}; it works once, until ` +
            `${sent.expires_at}. A human opens it and confirms; then action get shows ` +
            "email_verified: true.",
        };
      },
    ),
  },
});

const ApiKeysInput = z.object({
  action: z.enum([
    "list",
    "create",
    "revoke",
    "list_apps",
    "revoke_app",
    "list_shares",
    "end_shares",
  ]).describe(
    "list: the keys. create: a key of this mode (api_key shown once). revoke: key_id (not " +
      "the last; its share links end). list_apps: OAuth-connected apps. revoke_app: app_id. " +
      "list_shares: the live share links. end_shares: end them all.",
  ),
  name: z.string().optional().describe("create: a label, 1 to 100 characters"),
  key_id: z.string().min(1).max(100).optional().describe("revoke: the key's id (key_…)"),
  app_id: z.string().min(1).max(100).optional().describe("revoke_app: the app's id (app_…)"),
  limit: z.number().optional().describe("list_shares: 1 to 100"),
  cursor: z.string().optional().describe("list_shares: the previous next_cursor"),
  idempotency_key: IdempotencyKeyArg,
}).strict();

type KeyArgs = z.output<typeof ApiKeysInput>;
type KeyOut = z.output<typeof ApiKey>;
type AppOut = z.output<typeof ConnectedApp>;

export const apiKeysTool = actionTool({
  name: "api_keys",
  title: "API keys",
  description: "The account's API keys (at most 5 active), connected apps and share links. " +
    "Rotate: create, switch the MCP host's Authorization header, then revoke the old key.",
  input: ApiKeysInput,
  output: z.object({
    keys: z.array(ApiKey).optional(),
    key: ApiKey.optional(),
    apps: z.array(ConnectedApp).optional(),
    app: ConnectedApp.optional(),
    ...AccountShareOutputs,
    idempotent_replayed: Replayed,
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  actions: {
    list: action(listKeysOp, () => ({}), ({ keys }: { keys: KeyOut[] }) => {
      const active = keys.filter((k) => k.revoked_at === null).length;
      return {
        structured: { keys },
        summary: `${keys.length} key(s), ${active} active: ` +
          keys.map((k) => `${k.id} "${k.name}" …${k.last4}${k.revoked_at ? " (revoked)" : ""}`)
            .join(", "),
      };
    }),
    create: action(createKeyOp, (a: KeyArgs) => ({ body: { name: a.name } }), (key: KeyOut) => ({
      structured: key,
      summary: `Key ${key.id} created; raw key (shown once, store it): ${key.api_key}.`,
    })),
    revoke: action(revokeKeyOp, (a: KeyArgs) => ({
      params: { id: required(a.key_id, "key_id", "revoke") },
    }), ({ key }: { key: KeyOut }, _args, ctx) => ({
      structured: { key },
      summary: `Key ${key.id} is revoked.` +
        (ctx.actor.kind === "account" && key.id === ctx.actor.keyId
          ? " It was this connection's key: switch to another."
          : ""),
    })),
    list_apps: action(listConnectedAppsOp, () => ({}), ({ apps }: { apps: AppOut[] }) => ({
      structured: { apps },
      summary: `${apps.length} connected app(s): ` +
        apps.map((a) =>
          `${a.id} "${a.client_name}" via ${a.redirect_host}${a.revoked_at ? " (revoked)" : ""}`
        ).join(", "),
    })),
    revoke_app: action(revokeConnectedAppOp, (a: KeyArgs) => ({
      params: { id: required(a.app_id, "app_id", "revoke_app") },
    }), ({ app }: { app: AppOut }) => ({
      structured: { app },
      summary: `App ${app.id} "${app.client_name}" is disconnected; its tokens no longer work.`,
    })),
    ...ACCOUNT_SHARE_ACTIONS,
  },
});
