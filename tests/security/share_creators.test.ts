/**
 * Finding 3 of the security review (issue 28): share links outlived the key that made them,
 * though the README says a sandbox key's links end with it. A link now ends when the API key that
 * made it is revoked or expires, and a link made through a connected app's OAuth token ends when
 * that grant is revoked or lapses, or its approving key is revoked: the public page reads the
 * creator on every open, so no sweep is needed (domain/shares/links.ts `CreatorCheck`).
 */
import assert from "node:assert/strict";
import { newId } from "../../domain/platform/ids.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { issueAccessToken } from "../helpers/oauth_token.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { call, callError, connectMcp } from "../mcp/helpers.ts";

const BASE = "http://localhost:8000";
const DAY_MS = 86_400_000;

/** Opens a share URL on the test app; answers the status. */
async function open(app: TestApp, url: string): Promise<number> {
  const res = await fetch(app.url + url.slice(BASE.length), {
    headers: { "x-forwarded-for": "203.0.113.50" },
  });
  await res.body?.cancel();
  return res.status;
}

/** A project of `key` with a completed audit written straight into the store. */
async function completedAudit(app: TestApp, key: string, accountId: string): Promise<string> {
  const project = await app.req("POST", "/v1/projects", {
    key,
    body: { url: `https://${crypto.randomUUID().slice(0, 8)}.example.com` },
  });
  assert.equal(project.status, 201, project.text);
  const auditId = newId("aud", app.clock.now());
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId: project.body.project_id,
    auditId,
    pages: 3,
    completedAt: app.clock.now(),
  });
  return auditId;
}

Deno.test("a share link made by a key ends when that key is revoked", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const auditId = await completedAudit(app, key, accountId);
    const minted = await app.req("POST", "/v1/api-keys", { key, body: { name: "ci" } });
    assert.equal(minted.status, 201, minted.text);
    const second = minted.body.api_key;

    const byFirst = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
    app.clock.advance(1);
    const bySecond = await app.req("POST", `/v1/audits/${auditId}/shares`, {
      key: second,
      body: {},
    });
    assert.equal(bySecond.status, 201, bySecond.text);
    assert.equal(await open(app, bySecond.body.url), 200);

    const revoked = await app.req("DELETE", `/v1/api-keys/${minted.body.id}`, { key });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(await open(app, bySecond.body.url), 404, "the revoked key's link is gone");
    assert.equal(await open(app, byFirst.body.url), 200, "the other key's link stays");
    assert.deepEqual(bySecond.body.created_by, { key_id: minted.body.id, connected_app_id: null });

    // Listed as revoked with the reason; gone from the account's live links.
    const listed = await app.req("GET", `/v1/audits/${auditId}/shares`, { key });
    const ended = listed.body.data.find((s: { share_id: string }) =>
      s.share_id === bySecond.body.share_id
    );
    assert.equal(ended.status, "revoked");
    assert.equal(ended.revoked_reason, "key_ended");
    assert.equal(ended.revoked_at, revoked.body.key.revoked_at);
    const live = await app.req("GET", "/v1/shares", { key });
    assert.deepEqual(live.body.data.map((s: { share_id: string }) => s.share_id), [
      byFirst.body.share_id,
    ]);
  }));

Deno.test("a sandbox key's share link ends when the sandbox key expires", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const auditId = await completedAudit(app, key, accountId);
    const share = await app.req("POST", `/v1/audits/${auditId}/shares`, {
      key,
      body: { expires_in_days: 90 },
    });
    assert.equal(share.status, 201, share.text);
    assert.equal(await open(app, share.body.url), 200);
    app.clock.advance(14 * DAY_MS - 60_000);
    assert.equal(await open(app, share.body.url), 200, "a minute before the key expires");
    app.clock.advance(61_000);
    assert.equal(await open(app, share.body.url), 404, "the key has expired");
  }));

Deno.test("a share link made through a connected app ends with its grant, or its approving key", () =>
  withApp(async (app) => {
    const { key: sandbox, accountId } = await app.signup();
    const live = await app.liveKey(accountId);
    const auditId = await completedAudit(app, live, accountId);
    const other = await app.req("POST", "/v1/api-keys", { key: live, body: { name: "other" } });
    assert.equal(other.status, 201, other.text);
    const first = await issueAccessToken(app, live);
    const second = await issueAccessToken(app, other.body.api_key);
    const third = await issueAccessToken(app, live);

    const shareThrough = async (token: string, days: number) => {
      const client = await connectMcp(app, { key: token });
      try {
        const out = await call(client, "audits", {
          action: "share",
          audit_id: auditId,
          expires_in_days: days,
        });
        return out;
      } finally {
        await client.close();
      }
    };
    // A millisecond apart, so "newest first" is one order.
    const viaFirst = await shareThrough(first.token, 60);
    app.clock.advance(1);
    const viaSecond = await shareThrough(second.token, 60);
    app.clock.advance(1);
    const viaThird = await shareThrough(third.token, 90);
    for (const s of [viaFirst, viaSecond, viaThird]) assert.equal(await open(app, s.url), 200);
    const listed = await app.req("GET", "/v1/shares", { key: live });
    const sandboxListed = await app.req("GET", "/v1/shares", { key: sandbox });

    // The human disconnects the first app: its link is gone, the others stay.
    const disconnected = await app.req("DELETE", `/v1/connected-apps/${first.grantId}`, {
      key: live,
    });
    assert.equal(disconnected.status, 200, disconnected.text);
    assert.equal(await open(app, viaFirst.url), 404, "the disconnected app's link");
    assert.equal(await open(app, viaSecond.url), 200);

    // Revoking the key that approved the second app ends that app's link too.
    const revoked = await app.req("DELETE", `/v1/api-keys/${other.body.id}`, { key: live });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(await open(app, viaSecond.url), 404, "its approving key was revoked");

    // The third app stops refreshing: its grant lapses after 30 days, and its 90-day link with it.
    assert.equal(await open(app, viaThird.url), 200);
    app.clock.advance(30 * DAY_MS + 1);
    assert.equal(await open(app, viaThird.url), 404, "the grant lapsed");
    const reasons = (await app.req("GET", `/v1/audits/${auditId}/shares`, { key: live })).body.data
      .map((s: { revoked_reason: string | null }) => s.revoked_reason);
    assert.deepEqual(reasons, ["app_ended", "key_ended", "app_ended"]);
    assert.deepEqual((await app.req("GET", "/v1/shares", { key: live })).body.data, []);

    // While they were live, the account's listing named each link's app, newest first; a sandbox
    // key saw none of the live side's.
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(
      listed.body.data.map((s: { created_by: { connected_app_id: string } }) =>
        s.created_by.connected_app_id
      ),
      [third.grantId, second.grantId, first.grantId],
    );
    const liveKeyId = (await app.req("GET", "/v1/api-keys", { key: live })).body.keys
      .find((k: { mode: string; name: string }) => k.mode === "live" && k.name !== "other").id;
    assert.deepEqual(viaFirst.created_by, { key_id: liveKeyId, connected_app_id: first.grantId });
    assert.deepEqual(sandboxListed.body.data, []);

    // A connected app cannot end every link of the account: that is more than its own.
    const client = await connectMcp(app, { key: (await issueAccessToken(app, live)).token });
    try {
      const refused = await callError(client, "api_keys", { action: "end_shares" });
      assert.equal(refused.code, "token_not_allowed");
      const listing = await call(client, "api_keys", { action: "list_shares" });
      assert.deepEqual(listing, { data: [], next_cursor: null }, "it may list them");
    } finally {
      await client.close();
    }
  }));
