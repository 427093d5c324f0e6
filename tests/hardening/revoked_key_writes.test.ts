/**
 * Issue 21, "revocation lag": a key revoked through one process still answered from another
 * process's auth cache, and minted a fresh live key there. The sensitive writes — minting and
 * revoking keys, creating webhooks, buying credits, subscribing — re-read the calling key
 * strongly first, over `/v1` and MCP alike, however fresh the other process's cache is.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import { withBusyRetry } from "../../kv/busy_retry.ts";
import { ADMIN_TOKEN, errorCode, startTestApp, type TestApp } from "../helpers/app.ts";
import { openTestKv } from "../helpers/kv.ts";
import { connectMcp } from "../mcp/helpers.ts";

/** A live key minted by the operator endpoint: its id and raw value. */
async function liveKey(app: TestApp, accountId: string) {
  const res = await app.req("POST", `/admin/accounts/${accountId}/live-keys`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.id as string, raw: res.body.api_key as string };
}

/** The active keys of an account and whether each is revoked, as `other` lists them on `a`. */
async function keyStates(a: TestApp, other: string): Promise<string[]> {
  const res = await a.req("GET", "/v1/api-keys", { key: other });
  return res.body.keys.map((k: { id: string; revoked_at: string | null }) =>
    `${k.id} ${k.revoked_at ?? "active"}`
  );
}

/**
 * Runs `write` on `b` with a live key that `b` has just resolved (its cache holds it; the
 * hand-moved clock never expires the entry) and that `a` then revoked. Each write gets a key of
 * its own: the first refusal refreshes `b`'s entry for that key.
 */
async function withKeyRevokedElsewhere(
  a: TestApp,
  b: TestApp,
  write: (doomed: string, other: { id: string; raw: string }) => Promise<void>,
) {
  const { accountId } = await a.signup();
  const doomed = await liveKey(a, accountId);
  const other = await liveKey(a, accountId);
  assert.equal((await b.req("GET", "/v1/account", { key: doomed.raw })).status, 200);
  const revoked = await a.req("DELETE", `/v1/api-keys/${doomed.id}`, { key: other.raw });
  assert.equal(revoked.status, 200, revoked.text);
  const before = await keyStates(a, other.raw);
  await write(doomed.raw, other);
  assert.deepEqual(await keyStates(a, other.raw), before, "the revoked key changed no key");
  const hooks = await a.req("GET", "/v1/webhooks", { key: other.raw });
  assert.deepEqual(hooks.body.webhooks, [], "the revoked key registered a webhook");
}

async function twoProcesses(fn: (a: TestApp, b: TestApp) => Promise<void>) {
  const path = await Deno.makeTempFile({ suffix: ".sqlite" });
  // Two handles on one file, as two processes have (wrapped as the service's openKv wraps them).
  const a = await startTestApp({ kv: withBusyRetry(await openTestKv(path)) });
  const b = await startTestApp({ kv: withBusyRetry(await openTestKv(path)) });
  // b stops following the revocation signal, which would otherwise drop the key from its cache
  // within milliseconds (two handles in one process share the watch): its cache then holds the
  // revoked key as a process the signal has not reached yet does, and only the re-read refuses.
  await b.service.services.resolver.close();
  try {
    await fn(a, b);
  } finally {
    await a.close();
    await b.close();
    await Deno.remove(path).catch(() => {});
  }
}

const WRITES: { rest: [string, (other: string) => string, unknown]; tool: [string, object] }[] = [
  {
    rest: ["POST", () => "/v1/api-keys", { name: "minted in the window" }],
    tool: ["api_keys", { action: "create", name: "minted in the window" }],
  },
  {
    rest: ["DELETE", (other) => `/v1/api-keys/${other}`, undefined],
    tool: ["api_keys", { action: "revoke" }],
  },
  {
    rest: ["POST", () => "/v1/webhooks", { url: "https://hooks.example.com/in" }],
    tool: ["webhooks", { action: "create", url: "https://hooks.example.com/in" }],
  },
  {
    rest: ["POST", () => "/v1/credits/purchases", { pack_id: "pack_500" }],
    tool: ["billing", { action: "buy_credits", pack_id: "pack_500" }],
  },
  {
    rest: ["POST", () => "/v1/subscriptions", { project_id: "proj_any", plan_id: "basic" }],
    tool: ["billing", { action: "subscribe", project_id: "proj_any", plan_id: "basic" }],
  },
];

Deno.test("a key revoked on one process cannot mint or revoke keys, create webhooks or open checkouts over /v1 on another whose cache still holds it", () =>
  twoProcesses(async (a, b) => {
    for (const { rest: [method, route, body] } of WRITES) {
      await withKeyRevokedElsewhere(a, b, async (doomed, other) => {
        const res = await b.req(method, route(other.id), { key: doomed, body });
        assert.equal(res.status, 401, `${method} ${route(":id")}: ${res.status} ${res.text}`);
        assert.equal(errorCode(res), "key_revoked", `${method} ${route(":id")}`);
      });
    }
  }));

Deno.test("… nor over MCP", () =>
  twoProcesses(async (a, b) => {
    for (const { tool: [name, args] } of WRITES) {
      await withKeyRevokedElsewhere(a, b, async (doomed, other) => {
        const label = `${name} ${(args as { action: string }).action}`;
        let client: Client | null = null;
        try {
          client = await connectMcp(b, { key: doomed });
          const res = await client.callTool({
            name,
            arguments: { ...args, ...(name === "api_keys" ? { key_id: other.id } : {}) },
          });
          assert.equal(res.isError, true, `${label} answered ${JSON.stringify(res)}`);
          // deno-lint-ignore no-explicit-any
          const code = (res._meta as any)?.["com.serpwright/error"]?.error?.code;
          assert.equal(code, "key_revoked", label);
        } catch (err) {
          // Had the revocation reached b's cache already, the HTTP layer refuses the key itself.
          if (err instanceof assert.AssertionError) throw err;
          assert.match(String(err), /key_revoked/, label);
        } finally {
          await client?.close();
        }
      });
    }
  }));
