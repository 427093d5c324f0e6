/**
 * An OAuth access token for an API key, stored as the token endpoint stores one (a grant and
 * the token's record), for tests that need a connected app's credential without walking the
 * consent page (tests/oauth/ walks it).
 */
import { hashKey } from "../../domain/identity/key_hash.ts";
import { newId } from "../../domain/platform/ids.ts";
import { digest, newSecret } from "../../domain/identity/oauth/secrets.ts";
import type { AccessTokenRecord, GrantRecord } from "../../domain/identity/oauth/types.ts";
import { keys } from "../../kv/keys.ts";
import type { TestApp } from "./app.ts";

/** Connects an app with `key` and answers its raw access token and grant id. */
export async function issueAccessToken(
  app: TestApp,
  key: string,
): Promise<{ token: string; grantId: string }> {
  const now = app.clock.now();
  const hash = hashKey(key);
  const record = (await app.kv.get<{ id: string; accountId: string; mode: "live" | "sandbox" }>(
    keys.apiKey(hash),
  )).value;
  if (!record) throw new Error("issueAccessToken: unknown key");
  const resource = app.service.services.tokens.audience;
  const grant: GrantRecord = {
    id: newId("app"),
    accountId: record.accountId,
    mode: record.mode,
    keyId: record.id,
    keyHash: hash,
    clientId: "https://host.example/client.json",
    clientName: "Test Host",
    redirectUri: "https://host.example/callback",
    scope: "mcp",
    resource,
    createdAt: now,
    refreshedAt: now,
    expiresAt: now + 30 * 86_400_000,
    refreshHash: "0".repeat(64),
    revokedAt: null,
    revokedReason: null,
  };
  const token = newSecret("access");
  const access: AccessTokenRecord = {
    grantId: grant.id,
    accountId: record.accountId,
    keyHash: hash,
    clientId: grant.clientId,
    resource,
    scope: "mcp",
    expiresAt: now + 3_600_000,
  };
  await app.kv.atomic()
    .set(keys.oauthGrant(record.accountId, grant.id), grant)
    .set(keys.oauthAccessToken(digest(token)), access)
    .commit();
  return { token, grantId: grant.id };
}
