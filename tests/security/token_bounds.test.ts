/**
 * Finding 1 of the security review (issue 28): an OAuth access token (scope `mcp`, a connected
 * app) resolved to its approving key's whole principal, so the `api_keys` tool minted a permanent
 * key and revoking the owner's keys locked the owner out; webhook endpoints and schedules made
 * through a token outlived the grant. A token now acts as its key only where an operation admits
 * tokens (app/operation.ts `tokens`).
 */
import assert from "node:assert/strict";
import { OPERATIONS } from "../../app/operations/index.ts";
import { withApp } from "../helpers/app.ts";
import { grantCredits } from "../helpers/credits.ts";
import { issueAccessToken } from "../helpers/oauth_token.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";

Deno.test("a connected app's token cannot mint, revoke, or leave what outlives its grant", async () => {
  await withApp(async (app) => {
    const owner = await app.signup();
    const live = await app.liveKey(owner.accountId);
    await grantCredits(app, owner.accountId, 100);
    const { token } = await issueAccessToken(app, live);
    const client = await connectMcp(app, { key: token });
    try {
      const keysBefore = (await app.req("GET", "/v1/api-keys", { key: live })).body.keys;

      const mint = await callError(client, "api_keys", { action: "create", name: "forever" });
      assert.equal(mint.code, "token_not_allowed");
      assert.match(mint.body.error.message, /connected app/);
      assert.match(mint.body.error.message, /API key/);

      for (const k of keysBefore) {
        const revoke = await callError(client, "api_keys", { action: "revoke", key_id: k.id });
        assert.equal(revoke.code, "token_not_allowed");
      }
      const keysAfter = (await app.req("GET", "/v1/api-keys", { key: live })).body.keys;
      assert.deepEqual(
        keysAfter.map((k: { id: string }) => k.id),
        keysBefore.map((k: { id: string }) => k.id),
      );
      assert.ok(keysAfter.every((k: { revoked_at: string | null }) => k.revoked_at === null));

      const project = await call(client, "projects", {
        action: "create",
        url: "https://shop.example.com",
      });
      const projectId = project.project_id ?? project.project?.project_id;
      assert.ok(projectId, "a token may still create the account's data");

      const hook = await callError(client, "webhooks", {
        action: "create",
        url: "https://hooks.example.com/in",
        events: ["audit.completed"],
      });
      assert.equal(hook.code, "token_not_allowed");
      assert.equal((await app.req("GET", "/v1/webhooks", { key: live })).body.webhooks.length, 0);

      const schedule = await callError(client, "schedule", {
        action: "set",
        project_id: projectId,
        cadence: "weekly",
        hour_utc: 6,
      });
      assert.equal(schedule.code, "token_not_allowed");
      const stored = await app.req("GET", `/v1/projects/${projectId}/schedule`, { key: live });
      assert.equal(stored.status, 404, stored.text);

      // The same calls with the key itself still work: the refusal is the token's.
      const keyClient = await connectMcp(app, { key: live });
      try {
        const minted = await call(keyClient, "api_keys", { action: "create", name: "by key" });
        assert.match(JSON.stringify(minted), /sk_live_/);
      } finally {
        await keyClient.close();
      }
    } finally {
      await client.close();
    }
  });
});

Deno.test("every operation that leaves something behind chose deliberately whether tokens may", () => {
  // Work that is the account's data, share links (they end with the grant), checkout links a
  // human must pay and verification links a human must open. Anything else that outlives its caller is closed to tokens: adding an
  // operation here is a security decision, reviewed as one.
  const tokenMayLeave = new Set([
    "projects.create",
    "audits.start",
    "rechecks.start",
    "articles.start",
    "audit_shares.create",
    "article_shares.create",
    "billing.subscribe",
    "billing.purchase_credits",
    // A single-use link mailed to the account's own address: only a human at that inbox can use
    // it, and all it does is prove the address (24 h at most).
    "accounts.verify_email",
  ]);
  for (const op of OPERATIONS) {
    if (op.leaves && op.tokens === "allow") {
      assert.ok(tokenMayLeave.has(op.id), `${op.id} leaves "${op.leaves}" and admits tokens`);
    }
    if (/^(api_keys|connected_apps)\./.test(op.id) && op.method !== "get") {
      assert.equal(op.tokens, "refuse", `${op.id}: credentials are never a token's to change`);
    }
  }
});
