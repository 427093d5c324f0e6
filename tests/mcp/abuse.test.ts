/**
 * Abuse findings on `/mcp`, each over real HTTP against the running app: JSON-RPC batches (one
 * request ran up to 100 tools for one rate-limit unit), keyless and listen streams holding slots,
 * the request-body timeout, the signup limits shared with `POST /v1/accounts`, and the caps on
 * concurrent `wait` calls.
 */
import assert from "node:assert/strict";
import type { Client } from "@modelcontextprotocol/client";
import type { Deps } from "../../domain/platform/deps.ts";
import {
  jobRecordKey,
  watchJobRecord,
  watchMissesOtherProcesses,
} from "../../domain/jobs/watch.ts";
import { GOOD_HEADERS, page, serveSite } from "../helpers/sites.ts";
import { errorCode, freshIp, startTestApp, type TestApp, withApp } from "../helpers/app.ts";
import { pollUntil } from "../helpers/jobs.ts";
import { openTestKv } from "../helpers/kv.ts";
import { connectMcp, postMcp } from "./helpers.ts";

const MODERN = "2026-07-28";
const ENVELOPE = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "abuse-tests", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

/** One POST to /mcp with a raw body; the answer's JSON (the SSE `data:` lines joined). */
function post(app: TestApp, body: unknown, headers: Record<string, string> = {}) {
  return postMcp(app, body, { "x-forwarded-for": freshIp(), ...headers });
}

const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

Deno.test("a JSON-RPC batch is refused with 400 Invalid Request before anything in it runs", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const auth = { authorization: `Bearer ${key}` };
    const creates = [1, 2, 3].map((i) =>
      toolCall(i, "projects", { action: "create", url: `https://batch${i}.example` })
    );
    for (const version of ["2025-11-25", "2025-06-18"]) {
      for (const batch of [creates, creates.slice(0, 1)]) {
        const res = await post(app, batch, { ...auth, "mcp-protocol-version": version });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.jsonrpc, "2.0");
        assert.equal(res.body.error.code, -32600);
        assert.match(res.body.error.message, /^Invalid Request: JSON-RPC batches/);
        assert.equal(res.body.id, null);
        // The request spent its one unit of the key's budget, as any request does.
        assert.ok(res.headers.get("x-ratelimit-remaining"));
      }
    }
    // A 2026-07-28 batch (envelope in its elements) and a batch of notifications alike.
    const modern = await post(app, [{
      ...toolCall(9, "account", {}),
      params: { name: "account", arguments: {}, _meta: ENVELOPE },
    }], { ...auth, "mcp-protocol-version": MODERN });
    assert.equal(modern.status, 400);
    assert.equal(modern.body.error.code, -32600);
    const notes = await post(app, [{ jsonrpc: "2.0", method: "notifications/initialized" }], auth);
    assert.equal(notes.status, 400);

    // An anonymous batch of signups opens no account.
    const signups = [1, 2].map((i) => toolCall(i, "signup", { email: `batched${i}@example.com` }));
    const anon = await post(app, signups, { "mcp-protocol-version": "2025-11-25" });
    assert.equal(anon.status, 400);
    assert.equal(anon.body.error.code, -32600);

    // Nothing in any batch ran.
    const projects = await app.req("GET", "/v1/projects", { key });
    assert.deepEqual(projects.body.projects, []);
    for (const i of [1, 2]) {
      const rest = await app.req("POST", "/v1/accounts", {
        body: { email: `batched${i}@example.com` },
        ip: freshIp(),
      });
      assert.equal(rest.status, 201, "the batched signup created no account");
    }
    // A single message is still served.
    const one = await post(app, creates[0], { ...auth, "mcp-protocol-version": "2025-11-25" });
    assert.equal(one.status, 200);
    assert.equal(one.body.result.structuredContent.url, "https://batch1.example");
  }));

Deno.test("streams: a keyless subscriptions/listen is 401, a keyed one 404 Method not found, GET is 405; nothing stays open", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const listen = (headers: Record<string, string>) =>
      fetch(`${app.url}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "subscriptions/listen",
          ...headers,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 7,
          method: "subscriptions/listen",
          params: {
            _meta: ENVELOPE,
            notifications: { toolsListChanged: true, resourcesListChanged: true },
          },
        }),
      });
    const responses: Response[] = [];
    try {
      const anon = await listen({});
      responses.push(anon);
      assert.equal(anon.status, 401);
      assert.equal(anon.headers.get("content-type"), "application/json");
      assert.match(anon.headers.get("www-authenticate") ?? "", /^Bearer /);
      assert.equal((await anon.json()).error.code, "unauthorized");

      // GET, the 2025 standalone stream, is the SDK's 405 with or without a key: no stream.
      const withKey: Record<string, string> = { authorization: `Bearer ${key}` };
      for (const headers of [{}, withKey]) {
        const get = await fetch(`${app.url}/mcp`, {
          headers: { accept: "text/event-stream", ...headers },
        });
        responses.push(get);
        assert.equal(get.status, 405);
        assert.equal(get.headers.get("content-type"), "application/json");
        assert.equal((await get.json()).error.code, -32000);
      }

      const keyed = await listen({ authorization: `Bearer ${key}` });
      responses.push(keyed);
      assert.equal(keyed.status, 404);
      assert.equal(keyed.headers.get("content-type"), "application/json");
      const body = await keyed.json();
      assert.equal(body.error.code, -32601);
      assert.match(body.error.message, /^Method not found/);
      assert.equal(body.id, 7);
    } finally {
      for (const r of responses) await r.body?.cancel().catch(() => {});
    }

    // And the server promises no change notifications to listen for.
    const discover = await post(app, {
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: { _meta: ENVELOPE },
    }, { "mcp-protocol-version": MODERN, "mcp-method": "server/discover" });
    assert.equal(discover.status, 200, discover.text);
    const caps = discover.body.result.capabilities;
    assert.ok(caps.tools);
    for (const kind of ["tools", "resources", "prompts"]) {
      assert.notEqual(caps[kind]?.listChanged, true, `${kind}.listChanged`);
    }
  }));

Deno.test("slow clients: a body trickling into /mcp is cut off with 408 after REQUEST_BODY_TIMEOUT_MS", () =>
  withApp(async (app) => {
    const port = Number(new URL(app.url).port);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const started = performance.now();
    await conn.write(
      new TextEncoder().encode(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
          "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n" +
          'Content-Length: 1000\r\n\r\n{"jsonrpc":"2.0",',
      ),
    );
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    const elapsed = performance.now() - started;
    conn.close();
    const text = new TextDecoder().decode(buf.subarray(0, n ?? 0));
    assert.match(text, /^HTTP\/1\.1 408/, text);
    assert.match(text, /request_timeout/);
    assert.ok(elapsed < 5_000, `answered after ${Math.round(elapsed)} ms`);
  }, { env: { REQUEST_BODY_TIMEOUT_MS: "300" } }));

let emails = 0;
const email = () => `limits${++emails}-${crypto.randomUUID().slice(0, 8)}@example.com`;
const restSignup = (app: TestApp, ip: string) =>
  app.req("POST", "/v1/accounts", { body: { email: email() }, ip });
/** One MCP `signup` call from `ip`: ok, or the tool error's code and `/v1` error body. */
async function mcpSignup(app: TestApp, ip: string) {
  const client = await connectMcp(app, { ip });
  try {
    const res = await client.callTool({ name: "signup", arguments: { email: email() } });
    if (!res.isError) return { ok: true as const };
    // deno-lint-ignore no-explicit-any
    const body = (res._meta as any)?.["com.serpwright/error"];
    return { ok: false as const, code: String(body?.error?.code), body };
  } finally {
    await client.close();
  }
}
/** An error message without its "retry in N s" count, which moves with the clock. */
const withoutRetry = (message: string) => message.replace(/retry in \d+ s$/, "retry in N s");

Deno.test("signup over MCP: after REST opened a /24's 20 sandboxes today, MCP from that /24 is refused alike", () =>
  withApp(async (app) => {
    for (let i = 1; i <= 20; i++) {
      const res = await restSignup(app, `192.0.2.${i}`);
      assert.equal(res.status, 201, res.text);
    }
    const rest = await restSignup(app, "192.0.2.21");
    assert.equal(rest.status, 429);
    assert.equal(errorCode(rest), "rate_limited");
    assert.match(rest.body.error.message, /this network today/);

    const mcp = await mcpSignup(app, "192.0.2.99");
    assert.equal(mcp.ok, false, "MCP issued a key past the block's daily cap");
    if (mcp.ok) return;
    assert.equal(mcp.code, rest.body.error.code);
    assert.match(mcp.body.error.message, /this network today/);
    assert.equal(mcp.body.retry_after_seconds, Number(rest.headers.get("retry-after")));
    // Another block is unaffected, over either door.
    assert.equal((await mcpSignup(app, "192.0.3.1")).ok, true);
  }));

Deno.test("signup over MCP spends and obeys the global hourly cap shared with REST", () =>
  withApp(async (app) => {
    assert.equal((await restSignup(app, freshIp())).status, 201);
    assert.equal((await mcpSignup(app, freshIp())).ok, true);
    assert.equal((await restSignup(app, freshIp())).status, 201);
    // Three signups this hour, one of them over MCP: the cap is reached for both doors.
    const rest = await restSignup(app, freshIp());
    assert.equal(rest.status, 429, "the MCP signup did not count against the global cap");
    assert.equal(errorCode(rest), "rate_limited");
    const mcp = await mcpSignup(app, freshIp());
    assert.equal(mcp.ok, false, "MCP signed up past the global hourly cap");
    if (mcp.ok) return;
    assert.equal(mcp.code, "rate_limited");
    assert.equal(withoutRetry(mcp.body.error.message), withoutRetry(rest.body.error.message));
    app.clock.advance(3_600_000);
    assert.equal((await mcpSignup(app, freshIp())).ok, true);
  }, { env: { SIGNUP_RATE_GLOBAL_PER_HOUR: "3" } }));

Deno.test("signup over MCP obeys the per-IP hourly rate REST spent, with the same code", () =>
  withApp(async (app) => {
    const ip = freshIp();
    for (let i = 0; i < 5; i++) assert.equal((await restSignup(app, ip)).status, 201);
    const rest = await restSignup(app, ip);
    assert.equal(rest.status, 429);
    const mcp = await mcpSignup(app, ip);
    assert.equal(mcp.ok, false);
    if (mcp.ok) return;
    assert.equal(mcp.code, errorCode(rest));
    assert.equal(withoutRetry(mcp.body.error.message), withoutRetry(rest.body.error.message));
  }));

Deno.test("no route or tool opens an account except through the signup use case", async () => {
  const direct = /import\s*{[^}]*\bsignup\b[^}]*}\s*from\s*"[^"]*domain\/accounts\.ts"/;
  const offenders: string[] = [];
  async function scan(dir: URL) {
    for await (const entry of Deno.readDir(dir)) {
      const url = new URL(entry.name + (entry.isDirectory ? "/" : ""), dir);
      if (entry.isDirectory) await scan(url);
      else if (entry.name.endsWith(".ts") && direct.test(await Deno.readTextFile(url))) {
        offenders.push(url.pathname);
      }
    }
  }
  await scan(new URL("../../routes/", import.meta.url));
  assert.deepEqual(offenders, [], "call publicSignup (domain/identity/public_signup.ts) instead");
});

/** Polls `check` every 10 ms (at most 10 s), for states the test cannot await directly. */
async function until(check: () => boolean, what: string) {
  await pollUntil(() => Promise.resolve(check()), Boolean, {
    intervalMs: 10,
    timeoutMs: 10_000,
    what,
  });
}

Deno.test("wait: held calls are capped per key and per process, past a cap the call answers at once, and a held call sleeps on kv.watch until its job moves", async () => {
  // Every page of the site hangs until released, so the audits stay running meanwhile.
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  const site = serveSite(() => ({
    handler: async () => {
      await released;
      return new Response(page({ title: "Held page" }), { headers: GOOD_HEADERS });
    },
  }));
  // Counts reads of audit records, to tell a watch from a poll.
  const base = await openTestKv();
  let auditReads = 0;
  const kv = new Proxy(base, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get") {
        return (key: Deno.KvKey, ...rest: unknown[]) => {
          if (key[0] === "audits") auditReads++;
          return (value as (...a: unknown[]) => unknown).apply(target, [key, ...rest]);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const app = await startTestApp({
    kv,
    env: { MCP_WAITS_PER_KEY: "2", MCP_WAITS_PER_PROCESS: "3" },
  });
  // Read loosely so the test also runs (and fails on behaviour) against code without the caps.
  const slots = () =>
    (app.service.services as unknown as { mcpWaits?: { running(): number } }).mcpWaits
      ?.running();
  const clients: Client[] = [];
  try {
    const audits: { client: Client; id: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const { key } = await app.signup();
      const project = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      const audit = await app.req("POST", `/v1/projects/${project.body.project_id}/audits`, {
        key,
      });
      assert.equal(audit.status, 202, audit.text);
      const client = await connectMcp(app, { key });
      clients.push(client);
      audits.push({ client, id: audit.body.audit_id });
    }
    const [a, b] = audits;
    let holding = 0;
    const get = async (x: { client: Client; id: string }, wait: number) => {
      let first = true;
      const res = await x.client.callTool({
        name: "audits",
        arguments: { action: "get", audit_id: x.id, wait },
      }, {
        // A held call reports the job's step as it starts waiting.
        onprogress: () => {
          if (first) holding++;
          first = false;
        },
      });
      if (!first) holding--;
      assert.ok(!res.isError, JSON.stringify(res.content));
      return {
        // deno-lint-ignore no-explicit-any
        status: (res.structuredContent as any).status as string,
        // deno-lint-ignore no-explicit-any
        text: (res.content as any[])[0].text as string,
      };
    };

    // The deadline holds: a short wait on a stuck job returns its current status.
    const started = performance.now();
    const short = await get(a, 1);
    assert.ok(performance.now() - started >= 900, "waited about a second");
    assert.notEqual(short.status, "completed");
    assert.doesNotMatch(short.text, /Did not wait/);
    assert.equal(holding, 0);

    // Two held calls for key A: its cap.
    const heldA = [get(a, 30), get(a, 30)];
    // (Should an assertion below fail, the clients close under these: no unhandled rejection.)
    for (const held of heldA) held.catch(() => {});
    await until(() => holding === 2, "two held calls");
    // Held calls read the record once each when they start, then sleep on the watch.
    const readsBefore = auditReads;
    await new Promise((r) => setTimeout(r, 1_500));
    const reads = auditReads - readsBefore;
    console.log(`audit record reads by two held calls in 1.5 s: ${reads}`);
    assert.ok(reads <= 2, `${reads} audit reads in 1.5 s by two held calls (a poll reads ~12)`);

    const third = await get(a, 30);
    assert.notEqual(third.status, "completed");
    assert.match(third.text, /Did not wait: this API key already holds 2 waiting calls/);
    assert.equal(holding, 2);

    // Key B holds the process's third slot; its second call meets the process cap.
    const heldB = get(b, 30);
    heldB.catch(() => {});
    await until(() => holding === 3, "a third held call");
    const fourth = await get(b, 30);
    assert.notEqual(fourth.status, "completed");
    assert.match(fourth.text, /Did not wait: the server holds its maximum of 3 waiting calls/);

    // The site answers, the audits complete, and the held calls return at once with that.
    const releasedAt = performance.now();
    release();
    const results = await Promise.all([...heldA, heldB]);
    assert.deepEqual(results.map((r) => r.status), ["completed", "completed", "completed"]);
    assert.ok(performance.now() - releasedAt < 20_000, "woken by the change, not the deadline");
    assert.equal(slots(), 0, "every slot is given back");
  } finally {
    release();
    for (const c of clients) await c.close();
    await app.close();
    await site.close();
  }
});

Deno.test("job watch: a commit wakes a waiter at once; on a local KV file it also re-reads every second, since other processes' commits are not watched", async () => {
  assert.equal(watchMissesOtherProcesses("./data/kv.sqlite"), true);
  assert.equal(watchMissesOtherProcesses(":memory:"), false);
  assert.equal(watchMissesOtherProcesses(""), false, "Deno Deploy's own KV");
  assert.equal(watchMissesOtherProcesses("https://kv.example/db"), false, "KV Connect");
  const kv = await openTestKv();
  const job = { kind: "audit", accountId: "acct_w", id: "aud_w" } as const;
  const signal = new AbortController().signal;
  try {
    for (const kvPath of ["./data/kv.sqlite", ":memory:"]) {
      const watch = watchJobRecord({ kv, config: { kvPath } } as unknown as Deps, job);
      try {
        assert.equal(await watch.next(Date.now() + 5_000, signal), true, "first: the record now");
        const t0 = performance.now();
        if (kvPath === ":memory:") {
          assert.equal(await watch.next(Date.now() + 1_200, signal), false, "the deadline");
          assert.ok(performance.now() - t0 >= 1_100);
        } else {
          assert.equal(await watch.next(Date.now() + 5_000, signal), true, "a recheck");
          const ms = performance.now() - t0;
          assert.ok(ms >= 900 && ms < 4_000, `rechecked after ${Math.round(ms)} ms`);
        }
        const woken = watch.next(Date.now() + 5_000, signal);
        const t1 = performance.now();
        await kv.set(jobRecordKey(job), { status: "running", at: t1 });
        assert.equal(await woken, true);
        assert.ok(performance.now() - t1 < 900, "woken by the commit");
        const aborted = new AbortController();
        const ending = watch.next(Date.now() + 5_000, aborted.signal);
        aborted.abort();
        assert.equal(await ending, false);
      } finally {
        watch.close();
      }
    }
  } finally {
    kv.close();
  }
});
