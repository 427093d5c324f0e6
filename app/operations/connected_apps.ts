/**
 * Connected apps: the OAuth grants (domain/identity/oauth/grants.ts) an account's keys approved for MCP
 * hosts, listed beside its API keys and revocable the same way. A sibling of the API key
 * operations rather than a section of `GET /v1/api-keys`, so that resource keeps its shape.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { listGrants, revokeGrant } from "../../domain/identity/mod.ts";
import { defineOperation } from "../operation.ts";
import { connectedAppView } from "../views.ts";

export const ConnectedApp = z.object({
  id: z.string().openapi({ example: "app_0abc" }),
  client_id: z.string().openapi({
    description: "The OAuth client: its metadata document URL, or the id issued at registration",
  }),
  client_name: z.string(),
  redirect_host: z.string().openapi({ description: "Where the approval was sent" }),
  mode: z.enum(["sandbox", "live"]).openapi({ description: "The approving key's mode" }),
  key_id: z.string().openapi({ description: "The API key that approved it; its tokens act as it" }),
  scope: z.string(),
  created_at: z.string(),
  last_refreshed_at: z.string(),
  expires_at: z.string().openapi({ description: "Ends then unless the app refreshes its tokens" }),
  revoked_at: z.string().nullable(),
  revoked_reason: z.enum(["user", "client", "key_revoked", "code_reuse", "refresh_reuse"])
    .nullable(),
}).openapi("ConnectedApp");

export const AppIdParam = z.object({
  id: z.string().min(1).max(100).openapi({
    param: { name: "id", in: "path" },
    example: "app_0abc",
  }),
});

export const listConnectedAppsOp = defineOperation({
  id: "connected_apps.list",
  method: "get",
  path: "/v1/connected-apps",
  tags: ["API keys"],
  summary: "Apps (MCP hosts) the account's keys approved over OAuth, newest first",
  description:
    "Each approval on the sign-in page of `/oauth/authorize` is one connected app; its " +
    "access tokens work on `/mcp` only and act as the approving key. A sandbox key sees the " +
    "apps sandbox keys approved.",
  access: "key",
  tokens: "allow",
  status: 200,
  output: z.object({ apps: z.array(ConnectedApp) }),
  outputDescription: "Connected apps (at most 100)",
  errors: [],
  async run(_input, { services, actor }) {
    const grants = await listGrants(services.deps, actor.accountId, actor.mode);
    return { apps: grants.map(connectedAppView) };
  },
});

export const revokeConnectedAppOp = defineOperation({
  id: "connected_apps.revoke",
  method: "delete",
  path: "/v1/connected-apps/{id}",
  tags: ["API keys"],
  summary: "Disconnect an app: its access and refresh tokens stop working at once",
  access: "key",
  tokens: "refuse",
  params: AppIdParam,
  status: 200,
  output: z.object({ app: ConnectedApp }),
  outputDescription: "The revoked app",
  errors: ["not_found"],
  sensitive: true,
  // Drops this process's cached tokens of the account at once (others follow the signal).
  changesAccount: true,
  async run({ params }, { services, actor }) {
    const grant = await revokeGrant(
      services.deps,
      { accountId: actor.accountId, mode: actor.mode },
      params.id,
    );
    return { app: connectedAppView(grant) };
  },
});

export const CONNECTED_APP_OPERATIONS = [listConnectedAppsOp, revokeConnectedAppOp];
