import assert from "node:assert/strict";
import { errorCode, withApp } from "../helpers/app.ts";

Deno.test("POST /v1/api-keys mints a key of the caller's mode, body optional", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const empty = await app.req("POST", "/v1/api-keys", { key });
    assert.equal(empty.status, 201);
    assert.equal(empty.body.name, "API key");
    const named = await app.req("POST", "/v1/api-keys", { key, body: { name: "ci" } });
    assert.equal(named.status, 201);
    assert.equal(named.body.name, "ci");
    assert.equal(named.body.mode, "sandbox");
    assert.equal(named.body.key_prefix, "sk_sandbox_");
    assert.equal(named.body.api_key.slice(-4), named.body.last4);
    assert.equal(named.body.revoked_at, null);
    assert.equal(named.body.last_used_at, null);
    // The new key works at once and sees the same account.
    const me = await app.req("GET", "/v1/account", { key: named.body.api_key });
    assert.equal(me.status, 200);

    for (const body of [{ name: "" }, { name: "x".repeat(101) }, { name: 5 }, { other: 1 }]) {
      const bad = await app.req("POST", "/v1/api-keys", { key, body });
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(errorCode(bad), "invalid_request");
    }
    const list = await app.req("GET", "/v1/api-keys", { key });
    assert.equal(list.body.keys.length, 3, "bad requests created nothing");
  }));

Deno.test("sandbox rotations inherit the calling key's expiry", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    app.clock.advance(5 * 86_400_000);
    const list0 = await app.req("GET", "/v1/api-keys", { key });
    const minted = await app.req("POST", "/v1/api-keys", { key });
    assert.equal(minted.body.expires_at, list0.body.keys[0].expires_at);
    assert.equal(
      Date.parse(minted.body.expires_at) - Date.parse(list0.body.keys[0].created_at),
      14 * 86_400_000,
    );
  }));

Deno.test("GET /v1/api-keys lists newest first without secrets; last_used_at is tracked", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    app.clock.advance(1000);
    const second = await app.req("POST", "/v1/api-keys", { key, body: { name: "second" } });
    await app.req("GET", "/v1/account", { key });
    await app.service.tick();
    const list = await app.req("GET", "/v1/api-keys", { key: second.body.api_key });
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.keys.map((k: { name: string }) => k.name), [
      "second",
      "Sandbox key",
    ]);
    for (const k of list.body.keys) {
      assert.equal("api_key" in k, false);
      assert.equal(list.text.includes(key), false);
    }
    assert.ok(list.body.keys[1].last_used_at, "the used key shows last_used_at");
  }));

Deno.test("at most 5 active keys, also under parallel creation", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => app.req("POST", "/v1/api-keys", { key })),
    );
    const created = results.filter((r) => r.status === 201).length;
    const refused = results.filter((r) => r.status === 400);
    assert.equal(created, 4, "the signup key plus 4 more");
    assert.equal(refused.length, 6);
    for (const r of refused) assert.equal(errorCode(r), "key_limit_reached");
    const list = await app.req("GET", "/v1/api-keys", { key });
    assert.equal(list.body.keys.length, 5);
  }));

Deno.test("DELETE /v1/api-keys/{id}: revoke, repeat is 200, last key stays, foreign id 404", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const other = await app.signup();
    const list = await app.req("GET", "/v1/api-keys", { key });
    const firstId = list.body.keys[0].id;

    const last = await app.req("DELETE", `/v1/api-keys/${firstId}`, { key });
    assert.equal(last.status, 400);
    assert.equal(errorCode(last), "cannot_revoke_last_key");

    const second = await app.req("POST", "/v1/api-keys", { key });
    const revoked = await app.req("DELETE", `/v1/api-keys/${firstId}`, { key });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.key.id, firstId);
    assert.equal(revoked.body.key.revoked_at, "2026-11-23T12:00:00.000Z");

    // The revoked key is refused at once; the repeat (with the new key) is 200, same state.
    const me = await app.req("GET", "/v1/account", { key });
    assert.equal(me.status, 401);
    assert.equal(errorCode(me), "key_revoked");
    const again = await app.req("DELETE", `/v1/api-keys/${firstId}`, { key: second.body.api_key });
    assert.equal(again.status, 200);
    assert.equal(again.body.key.revoked_at, revoked.body.key.revoked_at);

    const foreign = await app.req("DELETE", `/v1/api-keys/${firstId}`, { key: other.key });
    assert.equal(foreign.status, 404);
    assert.equal(errorCode(foreign), "not_found");
    const missing = await app.req("DELETE", "/v1/api-keys/key_nope", { key: other.key });
    assert.equal(missing.status, 404);
  }));

Deno.test("a key may revoke itself while another is active", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const second = await app.req("POST", "/v1/api-keys", { key });
    const self = await app.req("DELETE", `/v1/api-keys/${second.body.id}`, {
      key: second.body.api_key,
    });
    assert.equal(self.status, 200);
    assert.equal(
      errorCode(await app.req("GET", "/v1/account", { key: second.body.api_key })),
      "key_revoked",
    );
    assert.equal((await app.req("GET", "/v1/account", { key })).status, 200);
  }));

Deno.test("parallel revocations never revoke the last active key", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const keysById = new Map<string, string>();
    const first = (await app.req("GET", "/v1/api-keys", { key })).body.keys[0];
    keysById.set(first.id, key);
    for (let i = 0; i < 4; i++) {
      const minted = await app.req("POST", "/v1/api-keys", { key });
      keysById.set(minted.body.id, minted.body.api_key);
    }
    // Each request revokes the key it authenticates with, so no request loses its credentials to
    // another: the only thing that can refuse one is the last-key rule.
    const results = await Promise.all(
      [...keysById].map(([id, raw]) => app.req("DELETE", `/v1/api-keys/${id}`, { key: raw })),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 4);
    const refused = results.filter((r) => r.status !== 200);
    assert.equal(refused.length, 1);
    assert.equal(errorCode(refused[0]), "cannot_revoke_last_key");
    const survivor = [...keysById.values()][results.findIndex((r) => r.status !== 200)];
    assert.equal((await app.req("GET", "/v1/account", { key: survivor })).status, 200);
  }));

Deno.test("live keys come from the operator endpoint; the account then reads live for them", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const noToken = await app.req("POST", `/admin/accounts/${accountId}/live-keys`);
    assert.equal(noToken.status, 401);
    const badToken = await app.req("POST", `/admin/accounts/${accountId}/live-keys`, {
      headers: { authorization: "Bearer wrong-token-wrong-token" },
    });
    assert.equal(badToken.status, 401);
    const live = await app.liveKey(accountId);
    assert.match(live, /^sk_live_[A-Za-z0-9]{40}$/);
    const me = await app.req("GET", "/v1/account", { key: live });
    assert.equal(me.body.mode, "live");
    assert.equal("sandbox_usage" in me.body, false);
    assert.equal((await app.req("GET", "/v1/account", { key })).body.mode, "sandbox");
    // A live key mints live keys with no expiry.
    const minted = await app.req("POST", "/v1/api-keys", { key: live });
    assert.equal(minted.body.mode, "live");
    assert.equal(minted.body.expires_at, null);
    const missing = await app.req("POST", "/admin/accounts/acct_missing/live-keys", {
      headers: { authorization: "Bearer test-admin-token-0123456789" },
    });
    assert.equal(missing.status, 404);
  }));

Deno.test("without ADMIN_TOKEN every /admin path is 404", () =>
  withApp(async (app) => {
    const { accountId } = await app.signup();
    const res = await app.req("POST", `/admin/accounts/${accountId}/live-keys`, {
      headers: { authorization: "Bearer anything-at-all-here" },
    });
    assert.equal(res.status, 404);
    assert.equal((await app.req("GET", "/admin/health")).status, 404);
  }, { env: { ADMIN_TOKEN: "" } }));
