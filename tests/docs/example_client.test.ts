/**
 * examples/agent.ts against the real app: a fake site to audit and a webhook receiver, both real
 * servers on loopback (the test app allows private targets), with tiny poll intervals.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import {
  call,
  type Delivery,
  runAgentFlow,
  ServiceError,
  verifyDelivery,
  verifySignature,
} from "../../examples/agent.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { withApp } from "../helpers/app.ts";
import { startReceiver } from "../webhooks/helpers.ts";

Deno.test("examples/agent.ts walks signup → project → audit → article → verified webhook", () =>
  withApp(async (app) => {
    const site = serveSite({
      "/": html(page({ title: "Home of the example site", links: ["/a"] })),
      "/a": html(page({ title: "Page A of the example site", key: "a" })),
    });
    const receiver = startReceiver();
    try {
      const lines: string[] = [];
      let taken = 0;
      const receiveDelivery = async (timeoutMs: number): Promise<Delivery> => {
        while (true) {
          const all = await receiver.waitFor(taken + 1, timeoutMs);
          const r = all[taken++];
          if (r.headers.get("x-serpwright-event") === "audit.completed") {
            return { headers: r.headers, rawBody: r.raw };
          }
        }
      };
      const result = await runAgentFlow({
        baseUrl: app.url,
        email: "example-agent@example.com",
        siteUrl: site.origin,
        webhookUrl: receiver.url,
        receiveDelivery,
        // The service signs with the test's clock; the receiver checks against the same one.
        now: () => app.clock.now(),
        auditPollSeconds: 0.02,
        articlePollSeconds: 0.02,
        maxWaitSeconds: 30,
        log: (l) => lines.push(l),
      });
      assert.equal(result.audit.status, "completed", lines.join("\n"));
      assert.ok(result.audit.score !== null && result.audit.score >= 0);
      // The top issue comes with its fix and every affected URL (read through the item pages).
      assert.ok(result.topIssue, "the audit's worst issue is reported");
      assert.ok(result.topIssue.fix.length > 10);
      assert.match(result.topIssue.docUrl, /\/docs\/checks#[a-z0-9_]+$/);
      assert.equal(result.topIssue.urls.length, result.topIssue.affectedCount);
      for (const u of result.topIssue.urls) assert.ok(u.startsWith(site.origin), u);
      assert.equal(result.article.status, "ready", lines.join("\n"));
      assert.ok(result.article.title && result.article.wordCount! > 0);
      assert.ok(result.webhook, "a webhook was registered");
      assert.equal(result.webhook.verified, true, "the delivery's signature verified");
      assert.equal(result.webhook.event, "audit.completed");
      assert.match(result.webhook.deliveryId ?? "", /^dlv_/);
      assert.equal(new URL(result.upgradeUrl).pathname, "/pricing");
      const out = lines.join("\n");
      assert.match(out, /Summary/);
      assert.match(out, /signature verified/);
      assert.match(out, /top issue: [a-z0-9_]+ \(new\)/);
      assert.match(out, /fix: /);
      // The delivery the client verified is really the one the service signed, and tampering fails.
      const d = receiver.received.find((r) =>
        r.headers.get("x-serpwright-event") === "audit.completed"
      )!;
      const sig = d.headers.get("x-serpwright-signature");
      assert.equal(await verifySignature("0".repeat(64), d.raw, sig), false, "wrong secret");
      assert.equal(await verifySignature("x", d.raw + " ", sig), false);
      // The flow verified the v2 signature (bound to the delivery id and time); it is there.
      assert.match(d.headers.get("x-serpwright-signature-v2") ?? "", /^v2=[0-9a-f]{64}$/);
    } finally {
      await receiver.close();
      await site.close();
    }
  }));

/** An independent HMAC (node:crypto) to check the example's Web Crypto one against. */
const hmacHex = (secret: string, data: string) =>
  createHmac("sha256", secret).update(data).digest("hex");

Deno.test("verifySignature: hex HMAC-SHA256 of the raw body keyed with the secret's text", async () => {
  const secret = "a".repeat(64);
  const body = '{"id":"dlv_1","event":"audit.completed","created_at":"x","data":{}}';
  const hex = hmacHex(secret, body);
  assert.equal(await verifySignature(secret, body, hex), true);
  assert.equal(await verifySignature(secret, body, hex.toUpperCase()), true);
  const flipped = hex.slice(0, -1) + (hex.endsWith("0") ? "1" : "0");
  assert.equal(await verifySignature(secret, body, flipped), false);
  assert.equal(await verifySignature("b".repeat(64), body, hex), false);
  assert.equal(await verifySignature(secret, body, null), false);
  assert.equal(await verifySignature(secret, body, "zz"), false);
});

Deno.test("the client honours Retry-After on 429 and branches on error.code", async () => {
  let n = 0;
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      n++;
      if (new URL(req.url).pathname === "/v1/missing") {
        return Response.json({
          error: { code: "not_found", message: "nope", doc_url: "http://x/docs/errors#not_found" },
        }, { status: 404 });
      }
      if (n === 1) {
        return Response.json(
          { error: { code: "rate_limited", message: "slow down", doc_url: "" } },
          { status: 429, headers: { "Retry-After": "1" } },
        );
      }
      return Response.json({ ok: true, idem: req.headers.get("idempotency-key") });
    },
  );
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const logs: string[] = [];
    const t0 = Date.now();
    const body = await call(base, "POST", "/v1/projects", {
      body: {},
      idempotencyKey: "k-1",
      log: (l) => logs.push(l),
    });
    assert.ok(Date.now() - t0 >= 900, "waited Retry-After");
    assert.deepEqual(body, { ok: true, idem: "k-1" });
    assert.equal(n, 2);
    assert.match(logs.join("\n"), /Retry-After/);
    const err = await call(base, "GET", "/v1/missing").catch((e) => e);
    assert.ok(err instanceof ServiceError);
    assert.equal(err.code, "not_found");
    assert.equal(err.status, 404);
  } finally {
    ac.abort();
    await server.finished;
  }
});

Deno.test("the CLI runs as documented: deno run -A examples/agent.ts --base … --webhook-port 0", () =>
  withApp(async (app) => {
    const site = serveSite({ "/": html(page({ title: "Home of the CLI test site" })) });
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("../../examples/agent.ts", import.meta.url).pathname,
          "--base",
          app.url,
          "--site",
          site.origin,
          "--webhook-port",
          "0",
          "--audit-poll",
          "0.05",
          "--article-poll",
          "0.05",
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stdout + stderr);
      assert.match(stdout, /audit +aud_\S+ completed score \d+/);
      assert.match(stdout, /article +art_\S+ ready/);
      assert.match(stdout, /audit\.completed delivery dlv_\S+: signature verified/);
    } finally {
      await site.close();
    }
    // The CLI checks the v2 timestamp against the real clock: the service's starts at it.
  }, { start: Date.now() }));

Deno.test("verifyDelivery: v2 over id, timestamp and body; stale, re-labelled or v1-only deliveries fail", async () => {
  const secret = "c".repeat(64);
  const body = '{"id":"dlv_7","event":"audit.completed","created_at":"x","data":{}}';
  const ts = 1_790_000_000;
  const hex = hmacHex(secret, `dlv_7.${ts}.${body}`);
  const headers = new Headers({
    "x-serpwright-signature-v2": `v2=${hex}`,
    "x-serpwright-delivery": "dlv_7",
    "x-serpwright-timestamp": String(ts),
  });
  const now = ts * 1000 + 10_000;
  assert.equal(await verifyDelivery(secret, body, headers, now), true);
  assert.equal(await verifyDelivery(secret, body, headers, ts * 1000 + 301_000), false, "stale");
  assert.equal(await verifyDelivery(secret, body, headers, ts * 1000 - 301_000), false, "future");
  assert.equal(await verifyDelivery(secret, body + " ", headers, now), false, "tampered body");
  assert.equal(await verifyDelivery("d".repeat(64), body, headers, now), false, "wrong secret");
  const relabelled = new Headers(headers);
  relabelled.set("x-serpwright-delivery", "dlv_8");
  assert.equal(await verifyDelivery(secret, body, relabelled, now), false, "another id");
  const retimed = new Headers(headers);
  retimed.set("x-serpwright-timestamp", String(ts + 5));
  assert.equal(await verifyDelivery(secret, body, retimed, now), false, "another time");
  const v1Only = new Headers(headers);
  v1Only.delete("x-serpwright-signature-v2");
  v1Only.set("x-serpwright-signature", hex);
  assert.equal(await verifyDelivery(secret, body, v1Only, now), false, "v1 is not v2");
});
