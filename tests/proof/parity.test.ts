/**
 * REST and MCP are two adapters over one application layer, and this proves it: every operation
 * runs through both from the same KV state, and the two must agree on the outcome (status or
 * error code), the result, and what they changed in the store (a diff of every KV entry, with
 * generated ids, hashes and ciphertexts masked). The registry (app/operations/index.ts), the
 * `/v1` document and the MCP tools must also cover each other: an operation reachable through
 * only one adapter, or one without a case here, fails. Each case whose caller is a key runs a
 * third time as a connected app's OAuth token for that key: refused with no change where the
 * operation declares `tokens: "refuse"`, the key's own outcome and changes elsewhere (but for the
 * creator's `grantId`, which names the app where the key's run writes null).
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import { OPERATIONS } from "../../app/operations/index.ts";
import type { ToolAction } from "../../routes/mcp/kit.ts";
import { TOOL_DEFS } from "../../routes/mcp/server.ts";
import { ERROR_CODES, type ErrorCode } from "../../domain/platform/errors.ts";
import { freshIp, startTestApp, type TestApp } from "../helpers/app.ts";
import { grantCredits } from "../helpers/credits.ts";
import { connectMcp } from "../mcp/helpers.ts";
import { issueAccessToken } from "../helpers/oauth_token.ts";
import { parityCases, type World } from "./parity_cases.ts";

/** Families that move with time or traffic, not with what an operation did. */
const IGNORED_FAMILIES = new Set([
  "rate_limits",
  "api_key_last_used",
  "leases",
  "audit_prune_backfill",
]);
/**
 * A web process (it never works a job) whose periodic work does not tick during a case. Mail is
 * configured (to a port nothing listens on: a web process only queues it), so verify-email runs.
 */
const ENV = {
  SERVICE_ROLE: "web",
  MAINTENANCE_INTERVAL_MS: "600000",
  SMTP_URL: "smtp://127.0.0.1:9",
  MAIL_FROM: "noreply@serpwright.test",
};

type Snapshot = Map<string, { key: Deno.KvKey; value: unknown }>;

async function snapshot(kv: Deno.Kv): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for await (const e of kv.list({ prefix: [] })) {
    if (IGNORED_FAMILIES.has(String(e.key[0]))) continue;
    out.set(serialize(e.key), { key: e.key, value: e.value });
  }
  return out;
}

/** Puts the store back exactly as `snap` holds it. */
async function restore(kv: Deno.Kv, snap: Snapshot): Promise<void> {
  const now = await snapshot(kv);
  for (const [id, e] of now) if (!snap.has(id)) await kv.delete(e.key);
  for (const [id, e] of snap) {
    if (serialize(now.get(id)?.value) !== serialize(e.value)) await kv.set(e.key, e.value);
  }
}

/** What changed between two snapshots, masked and sorted, one line per entry. */
function diff(before: Snapshot, after: Snapshot): string[] {
  const lines: string[] = [];
  for (const [id, e] of after) {
    const old = before.get(id);
    if (!old) lines.push(`+ ${mask(id)} = ${mask(serialize(e.value))}`);
    else if (serialize(old.value) !== serialize(e.value)) {
      lines.push(`~ ${mask(id)} = ${mask(serialize(e.value))}`);
    }
  }
  for (const id of before.keys()) if (!after.has(id)) lines.push(`- ${mask(id)}`);
  return lines.sort();
}

function serialize(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (v instanceof Uint8Array) return `<bytes>`;
    if (typeof v === "bigint") return `${v}n`;
    if (v instanceof Deno.KvU64) return `${v.value}u64`;
    return v;
  });
}

/**
 * Masks what is random per run: prefixed ids, raw keys, hex digests, base64 blobs, share tokens.
 */
function mask(text: string): string {
  return text
    .replace(/\b(sk_(?:sandbox|live))_[A-Za-z0-9_]+/g, "<$1>")
    .replace(/\b(whsec)_[A-Za-z0-9_]+/g, "<$1>")
    .replace(/\b([a-z]{2,5})_[0-9a-z]{16,}\b/g, "<$1>")
    .replace(/\b[0-9a-f]{32,}\b/g, "<hex>")
    .replace(/"(last4|iv)":"[^"]*"/g, '"$1":"<random>"')
    // A share link's token (in its URL) and the hint of it a listing shows.
    .replace(/\/(reports|previews)\/[A-Za-z0-9_-]{43}/g, "/$1/<token>")
    .replace(/"hint":"…[^"]*"/g, '"hint":"<hint>"')
    // An upgrade's user code (XXXX-XXXX), in its answer and its link.
    .replace(/\b[A-HJKMNP-TV-Z2-9]{4}-[A-HJKMNP-TV-Z2-9]{4}\b/g, "<user_code>")
    // The job table orders by wall-clock due time and a random tie-breaker.
    .replace(/\["job_queue",\d+,"[0-9a-z]+"\]/g, '["job_queue",<due>,<id>]')
    .replace(/"[A-Za-z0-9+/_-]{40,}={0,2}"/g, '"<blob>"');
}

interface Result {
  /** The HTTP status, or for MCP the status of the error code (200 family on success). */
  code: string;
  body: unknown;
  changes: string[];
}

// deno-lint-ignore no-explicit-any
type AnyAction = ToolAction<any, any>;

/** Every (tool, action) pair and the operation it runs. */
function toolActions(): { tool: string; action: string; op: string }[] {
  const out: { tool: string; action: string; op: string }[] = [];
  for (const def of TOOL_DEFS) {
    const actions = (def as { actions?: Record<string, AnyAction> }).actions;
    if (!actions) continue;
    for (const [action, binding] of Object.entries(actions)) {
      out.push({ tool: def.name, action, op: binding.op.id });
    }
  }
  return out;
}

Deno.test("parity: every operation has a /v1 route, an MCP action and a parity case", async () => {
  const ids = OPERATIONS.map((op) => op.id);
  assert.equal(new Set(ids).size, ids.length, "operation ids are unique");
  const reached = new Set(toolActions().map((a) => a.op));
  for (const id of ids) assert.ok(reached.has(id), `no MCP tool action runs ${id}`);
  for (const a of toolActions()) {
    assert.ok(ids.includes(a.op), `${a.tool}/${a.action} runs ${a.op}, not in the registry`);
  }
  const cased = new Set(parityCases.map((c) => c.op));
  for (const id of ids) assert.ok(cased.has(id), `no parity case for ${id}`);

  const app = await startTestApp({ env: ENV });
  try {
    const doc = (await app.req("GET", "/v1/openapi.json")).body;
    const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m} ${path}`))
      .filter((route) => route.includes(" /v1/"));
    const declared = OPERATIONS.map((op) => `${op.method} ${op.path}`);
    assert.deepEqual(documented.sort(), [...declared].sort(), "the /v1 document is the registry");
  } finally {
    await app.close();
  }
});

Deno.test("parity: each operation answers and changes the store alike over /v1 and MCP", async () => {
  const app = await startTestApp({ env: ENV });
  const clients = new Map<string, Client>();
  try {
    const world = await buildWorld(app);
    const mcpFor = async (key: string | null, ip: string) => {
      const id = `${key}|${ip}`;
      let client = clients.get(id);
      if (!client) {
        client = await connectMcp(app, { ...(key ? { key } : {}), ip });
        clients.set(id, client);
      }
      return client;
    };
    for (const c of parityCases) {
      const label = `${c.op} (${c.name})`;
      await c.setup?.(app, world);
      const ip = freshIp();
      const base = await snapshot(app.kv);

      const rest = c.rest(world);
      const res = await app.req(rest.method, rest.path, {
        ...(rest.key ? { key: rest.key } : {}),
        ...(rest.body !== undefined ? { body: rest.body } : {}),
        ip,
      });
      // A text result (the Markdown summary) is compared as its text.
      const json = res.headers.get("content-type")?.startsWith("application/json") ?? false;
      const viaRest: Result = {
        code: res.status < 300 ? "ok" : res.body?.error?.code,
        body: res.status < 300 ? (json ? res.body : res.text) : null,
        changes: diff(base, await snapshot(app.kv)),
      };
      await restore(app.kv, base);
      for (const accountId of world.accounts) {
        app.service.services.resolver.invalidateAccount(accountId);
      }

      const call = c.mcp(world);
      const client = await mcpFor(call.key, ip);
      const answer = await client.callTool({ name: call.tool, arguments: call.args });
      // deno-lint-ignore no-explicit-any
      const error = (answer._meta as any)?.["com.serpwright/error"]?.error;
      // deno-lint-ignore no-explicit-any
      const mcpText = ((answer.content ?? []) as any[]).map((c) => c.text ?? "").join("\n");
      const viaMcp: Result = {
        code: answer.isError ? error?.code : "ok",
        body: answer.isError ? null : answer.structuredContent,
        changes: diff(base, await snapshot(app.kv)),
      };
      await restore(app.kv, base);
      for (const accountId of world.accounts) {
        app.service.services.resolver.invalidateAccount(accountId);
      }

      // The same call by a connected app acting as that key: refused, changing nothing, where the
      // operation is closed to tokens; otherwise exactly what the key does.
      const token = call.key ? world.tokens[call.key] : undefined;
      if (token) {
        const viaToken = await (await mcpFor(token, ip)).callTool({
          name: call.tool,
          arguments: call.args,
        });
        // deno-lint-ignore no-explicit-any
        const tokenError = (viaToken._meta as any)?.["com.serpwright/error"]?.error;
        const tokenCode = viaToken.isError ? tokenError?.code : "ok";
        const tokenChanges = diff(base, await snapshot(app.kv));
        await restore(app.kv, base);
        for (const accountId of world.accounts) {
          app.service.services.resolver.invalidateAccount(accountId);
        }
        const op = OPERATIONS.find((o) => o.id === c.op)!;
        if (op.tokens === "refuse") {
          assert.equal(tokenCode, "token_not_allowed", `${label}: a token is refused`);
          assert.deepEqual(tokenChanges, [], `${label}: a refused token changes nothing`);
        } else {
          assert.equal(tokenCode, viaRest.code, `${label}: a token does what its key does`);
          // What a token makes names its connected app as the creator (a share link ends with
          // the grant) where the key's run writes null; otherwise the very same changes.
          const asKey = tokenChanges.map((l) =>
            l.replaceAll('"grantId":"<app>"', '"grantId":null')
          );
          assert.deepEqual(asKey, viaRest.changes, `${label}: KV changes by a token`);
          assert.ok(
            !tokenChanges.some((l) => l.startsWith("+ ") && l.includes('"grantId":null')),
            `${label}: what a token makes names its app`,
          );
        }
      }

      assert.equal(viaMcp.code, viaRest.code, `${label}: outcome (REST ${res.status} ${res.text})`);
      if (viaRest.code !== "ok") {
        assert.equal(res.status, ERROR_CODES[viaRest.code as ErrorCode].status, label);
      } else {
        assert.equal(res.status, c.status, `${label}: REST status`);
        assert.ok(
          answersAlike(viaMcp.body, mcpText, viaRest.body, `${app.url}${rest.path}`),
          `${label}: MCP result ${mask(serialize(viaMcp.body))} is not the REST body ` +
            mask(serialize(viaRest.body)),
        );
      }
      assert.deepEqual(viaMcp.changes, viaRest.changes, `${label}: KV changes`);
      if (c.changes !== undefined) {
        assert.equal(viaRest.changes.length > 0, c.changes, `${label}: changes the store`);
      }
    }
  } finally {
    for (const client of clients.values()) await client.close();
    await app.close();
  }
});

/** Fields an MCP answer adds to the REST body: a replay's flag, signup's host configuration. */
const MCP_ONLY = new Set(["idempotent_replayed", "connect"]);

/**
 * The MCP answer is the REST answer of the same call (issue 33): `structuredContent` EQUALS the
 * REST body (masked), but for the MCP-only fields above. A document the REST call answers is
 * never inlined in `structuredContent`: the Markdown summary is the text content (the structured
 * result names its address), the HTML report is named by its address (`report_url`, the REST
 * path of the same call on the server's public base URL) and not sent at all.
 */
function answersAlike(structured: unknown, text: string, body: unknown, restUrl: string): boolean {
  const same = (a: unknown, b: unknown) => mask(serialize(a)) === mask(serialize(b));
  if (structured === null || typeof structured !== "object") return false;
  const fields = Object.fromEntries(
    Object.entries(structured).filter(([k]) => !MCP_ONLY.has(k)),
  );
  if (typeof body !== "string") return same(fields, body);
  if (serialize(structured).includes(body) || (body.startsWith("<") && text.includes(body))) {
    return false;
  }
  if (body.startsWith("<")) {
    const path = new URL(restUrl).pathname + new URL(restUrl).search;
    return typeof fields.report_url === "string" && fields.report_url.endsWith(path);
  }
  return text.startsWith(body);
}

/** The accounts and resources every case starts from. */
async function buildWorld(app: TestApp): Promise<World> {
  const sandbox = await app.signup();
  const sandboxProject = await app.req("POST", "/v1/projects", {
    key: sandbox.key,
    body: { url: "https://sandbox.example.com" },
  });
  assert.equal(sandboxProject.status, 201, sandboxProject.text);
  const liveAccount = await app.signup();
  const live = await app.liveKey(liveAccount.accountId);
  const liveProject = await app.req("POST", "/v1/projects", {
    key: live,
    body: { url: "https://live.example.com" },
  });
  assert.equal(liveProject.status, 201, liveProject.text);
  await grantCredits(app, liveAccount.accountId, 500);
  const spare = await app.req("POST", "/v1/api-keys", { key: live, body: { name: "spare" } });
  assert.equal(spare.status, 201, spare.text);
  const taken = await app.req("POST", "/v1/accounts", {
    body: { email: "taken@example.com" },
    ip: freshIp(),
  });
  assert.equal(taken.status, 201, taken.text);
  const tokens = {
    [sandbox.key]: (await issueAccessToken(app, sandbox.key)).token,
    [live]: (await issueAccessToken(app, live)).token,
  };
  return {
    tokens,
    sandbox: { key: sandbox.key, accountId: sandbox.accountId },
    live: { key: live, accountId: liveAccount.accountId },
    sandboxProjectId: sandboxProject.body.project_id,
    liveProjectId: liveProject.body.project_id,
    accounts: [sandbox.accountId, liveAccount.accountId],
    extra: { keyId: spare.body.id },
  };
}
