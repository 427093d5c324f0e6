import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import { recordEvent } from "../../domain/platform/events.ts";
import { retryDelayMs } from "../../domain/webhooks/deliver.ts";
import { setWebhookNetOverrides } from "../../domain/webhooks/target.ts";
import type { DeliveryRecord } from "../../domain/webhooks/types.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { pollUntil, quiet, truthy } from "../helpers/jobs.ts";
import { emit, type Receiver, startReceiver, verifySignature } from "./helpers.ts";

async function register(
  app: TestApp,
  key: string,
  url: string,
  events?: string[],
): Promise<{ id: string; secret: string }> {
  const res = await app.req("POST", "/v1/webhooks", { key, body: { url, events } });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.webhook_id, secret: res.body.secret };
}

async function listed(app: TestApp, key: string) {
  return (await app.req("GET", "/v1/webhooks", { key })).body.webhooks;
}

async function delivery(app: TestApp, id: string): Promise<DeliveryRecord | null> {
  return (await app.kv.get<DeliveryRecord>(keys.delivery(id))).value;
}

async function withReceiver(
  answer: Parameters<typeof startReceiver>[0],
  fn: (r: Receiver) => Promise<void>,
): Promise<void> {
  const r = startReceiver(answer);
  try {
    await fn(r);
  } finally {
    await r.close();
  }
}

Deno.test("a delivery is a signed POST of the envelope a receiver can verify", () =>
  withReceiver(undefined, (rx) =>
    withApp(async (app) => {
      const { accountId } = await app.signup();
      // credits.updated is about the live side: a live key's endpoint hears it.
      const key = await app.liveKey(accountId);
      const hook = await register(app, key, rx.url);
      const data = { project_id: "proj_1", pack_id: "pack_500", credits_added: 500 };
      const evt = await emit(app, accountId, "credits.updated", data);

      const [got] = await rx.waitFor(1);
      assert.ok(verifySignature(hook.secret, got.raw, got.headers.get("x-serpwright-signature")));
      assert.ok(
        !verifySignature("0".repeat(64), got.raw, got.headers.get("x-serpwright-signature")),
      );
      assert.equal(got.headers.get("content-type"), "application/json");
      assert.equal(got.headers.get("x-serpwright-event"), "credits.updated");
      const deliveryId = got.headers.get("x-serpwright-delivery");
      assert.match(deliveryId ?? "", /^dlv_[0-9a-f]{26}$/);
      assert.deepEqual(got.body, {
        id: deliveryId,
        event: "credits.updated",
        created_at: new Date(evt.createdAt).toISOString(),
        data,
      });
      assert.deepEqual(Object.keys(got.body), ["id", "event", "created_at", "data"]);

      const rec = await pollUntil(async () => {
        const d = await delivery(app, deliveryId!);
        return d?.state === "delivered" ? d : null;
      }, truthy);
      assert.equal(rec.attempts, 1);
      assert.equal(rec.lastStatus, 200);
      const [w] = await listed(app, key);
      assert.equal(w.failure_count, 0);
      assert.equal(w.last_success_at, "2026-11-23T12:00:00.000Z");
      assert.equal(w.last_failure_at, null);
      // The outbox entry is gone and nothing is left pending.
      assert.equal((await app.kv.get(keys.outbox(evt.id))).value, null);
      assert.equal(await countPrefix(app, keys.deliveriesOfWebhookPrefix(hook.id)), 0);
      assert.equal(await countPrefix(app, keys.deliveriesDue()), 0);
    })));

Deno.test("a failing receiver gets retries with the same delivery id until it answers 2xx", () =>
  withReceiver(
    (r) => r.n <= 3 ? new Response("no", { status: 503 }) : new Response(null, { status: 204 }),
    (rx) =>
      withApp(async (app) => {
        const { key, accountId } = await app.signup();
        const hook = await register(app, key, rx.url);
        await emit(app, accountId, "audit.completed");
        const got = await rx.waitFor(4);
        const ids = new Set(got.map((g) => g.headers.get("x-serpwright-delivery")));
        assert.equal(ids.size, 1);
        assert.deepEqual(got.map((g) => g.headers.get("x-serpwright-attempt")), [
          "1",
          "2",
          "3",
          "4",
        ]);
        // The same bytes every time, so the same signature.
        assert.equal(new Set(got.map((g) => g.raw)).size, 1);
        for (const g of got) {
          assert.ok(verifySignature(hook.secret, g.raw, g.headers.get("x-serpwright-signature")));
        }
        const rec = await pollUntil(async () => {
          const d = await delivery(app, [...ids][0]!);
          return d?.state === "delivered" ? d : null;
        }, truthy);
        assert.equal(rec.attempts, 4);
        assert.equal(rec.lastStatus, 204);
        const [w] = await listed(app, key);
        // Consecutive failures reset on success; both times are recorded.
        assert.equal(w.failure_count, 0);
        assert.ok(w.last_failure_at);
        assert.ok(w.last_success_at);
        await quiet(200);
        assert.equal(rx.received.length, 4);
      }),
  ));

Deno.test("retries stop after 8 attempts; backoff doubles from the base and caps at 6 h", async () => {
  const fixed = () => 0;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7].map((n) => retryDelayMs(30_000, n, fixed)),
    [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000],
  );
  assert.equal(retryDelayMs(3_600_000, 7, () => 1), 6 * 3_600_000);
  assert.ok(retryDelayMs(1000, 1, () => 1) <= 1100);

  await withReceiver(() => new Response("down", { status: 500 }), (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      await register(app, key, rx.url);
      await emit(app, accountId, "audit.completed");
      const got = await rx.waitFor(8, 15_000);
      const id = got[0].headers.get("x-serpwright-delivery")!;
      const rec = await pollUntil(async () => {
        const d = await delivery(app, id);
        return d?.state === "failed" ? d : null;
      }, truthy);
      assert.equal(rec.attempts, 8);
      assert.equal(rec.lastStatus, 500);
      assert.equal(rec.lastError, "HTTP 500");
      await quiet(400);
      assert.equal(rx.received.length, 8);
      const [w] = await listed(app, key);
      assert.equal(w.failure_count, 8);
      assert.equal(w.active, true);
      assert.equal(w.last_success_at, null);
    }, { env: { WEBHOOK_RETRY_BASE_MS: "5" } }));
});

Deno.test("a receiver that hangs past the timeout counts as a failure and is retried", () => {
  let release: () => void = () => {};
  const hung = new Promise<void>((r) => (release = r));
  return withReceiver(async (r) => {
    if (r.n === 1) await hung;
    return new Response("ok");
  }, (rx) =>
    withApp(async (app) => {
      setWebhookNetOverrides(app.service.services.deps, { timeoutMs: 300 });
      const { key, accountId } = await app.signup();
      await register(app, key, rx.url);
      await emit(app, accountId, "audit.completed");
      const got = await rx.waitFor(2);
      release();
      const id = got[0].headers.get("x-serpwright-delivery")!;
      assert.equal(got[1].headers.get("x-serpwright-delivery"), id);
      const rec = await pollUntil(async () => {
        const d = await delivery(app, id);
        return d?.state === "delivered" ? d : null;
      }, truthy);
      assert.equal(rec.attempts, 2);
    }));
});

Deno.test("without an override, a receiver answering slowly but within 10 s succeeds at once", () =>
  // The interface gives receivers 10 s: a 1.5 s answer must be a first-attempt success, not a
  // timeout and a retry (the hanging-receiver test above shows the timeout itself firing).
  withReceiver(async () => {
    await new Promise((r) => setTimeout(r, 1_500));
    return new Response("ok");
  }, (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      await register(app, key, rx.url);
      await emit(app, accountId, "audit.completed");
      const [got] = await rx.waitFor(1);
      const id = got.headers.get("x-serpwright-delivery")!;
      const rec = await pollUntil(async () => {
        const d = await delivery(app, id);
        return d?.state === "delivered" ? d : null;
      }, truthy);
      assert.equal(rec.attempts, 1);
      assert.equal(rx.received.length, 1, "no retry was sent");
    })));

Deno.test("redirects are not followed: a 3xx is a failed attempt", () =>
  withReceiver(() => new Response("ok"), (target) =>
    withReceiver(
      (r) =>
        r.n === 1
          ? new Response(null, { status: 307, headers: { location: target.url } })
          : new Response("ok"),
      (rx) =>
        withApp(async (app) => {
          const { key, accountId } = await app.signup();
          await register(app, key, rx.url);
          await emit(app, accountId, "audit.completed");
          const got = await rx.waitFor(2);
          const rec = await pollUntil(async () => {
            const d = await delivery(app, got[0].headers.get("x-serpwright-delivery")!);
            return d?.state === "delivered" ? d : null;
          }, truthy);
          assert.equal(rec.attempts, 2);
          assert.equal(target.received.length, 0);
        }),
    )));

Deno.test("the events filter selects endpoints; reserved events are never sent", () =>
  withReceiver(undefined, (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      const other = await app.signup();
      const base = rx.url;
      await register(app, key, `${base}?h=audits`, ["audit.completed"]);
      await register(app, key, `${base}?h=all`);
      await register(app, key, `${base}?h=all-empty`, []);
      await register(app, key, `${base}?h=credits`, ["credits.updated"]);
      await register(app, key, `${base}?h=reserved`, ["article.generated"]);
      await register(app, other.key, `${base}?h=other-account`);

      await emit(app, accountId, "article.generated");
      await emit(app, accountId, "usage.threshold_reached");
      await emit(app, accountId, "audit.completed");
      const got = await rx.waitFor(3);
      await quiet(300);
      assert.equal(got.length, 3);
      assert.ok(got.every((g) => g.headers.get("x-serpwright-event") === "audit.completed"));
      assert.equal(new Set(got.map((g) => g.headers.get("x-serpwright-delivery"))).size, 3);
      // Which endpoints received it is visible in their success times.
      const hooks = await listed(app, key);
      const succeeded = hooks.filter((w: { last_success_at: string | null }) => w.last_success_at)
        .map((w: { url: string }) => new URL(w.url).searchParams.get("h"));
      assert.deepEqual(succeeded.sort(), ["all", "all-empty", "audits"]);
      // Reserved events left no outbox entries behind.
      assert.equal(await countPrefix(app, keys.outboxAll()), 0);
    })));

Deno.test("50 consecutive failures deactivate the endpoint; it then receives nothing", () =>
  withReceiver(() => new Response("no", { status: 500 }), (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      const hook = await register(app, key, rx.url);
      for (let i = 0; i < 8; i++) await emit(app, accountId, "audit.completed", { i });
      const w = await pollUntil(
        async () => {
          const [w] = await listed(app, key);
          return w.active === false ? w : null;
        },
        truthy,
        { timeoutMs: 20_000, what: "deactivation" },
      );
      assert.ok(w.failure_count >= 50, String(w.failure_count));
      assert.ok(w.last_failure_at);
      // Its other pending deliveries end without further requests.
      await pollUntil(
        async () => (await countPrefix(app, keys.deliveriesOfWebhookPrefix(hook.id))) === 0,
        truthy,
        { timeoutMs: 5_000, what: "pending deliveries to end" },
      );
      await quiet(200);
      const before = rx.received.length;
      assert.ok(before >= 50 && before < 64, String(before));
      await emit(app, accountId, "audit.completed");
      await quiet(300);
      assert.equal(rx.received.length, before);
      assert.equal(await countPrefix(app, keys.outboxAll()), 0);
    }, { env: { WEBHOOK_RETRY_BASE_MS: "1" } })));

Deno.test("DELETE drops the endpoint's queued deliveries; their retries never arrive", () =>
  withReceiver(() => new Response("no", { status: 500 }), (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      const keep = await register(app, key, `${rx.url}?keep`, ["credits.updated"]);
      const hook = await register(app, key, rx.url);
      await emit(app, accountId, "audit.completed", { n: 1 });
      await emit(app, accountId, "audit.completed", { n: 2 });
      await rx.waitFor(2);
      await pollUntil(async () => {
        const ids = await listKeys(app, keys.deliveriesOfWebhookPrefix(hook.id));
        const recs = await Promise.all(ids.map((id) => delivery(app, String(id))));
        return recs.length === 2 && recs.every((r) => r?.attempts === 1);
      }, truthy);
      const ids = await listKeys(app, keys.deliveriesOfWebhookPrefix(hook.id));

      const del = await app.req("DELETE", `/v1/webhooks/${hook.id}`, { key });
      assert.equal(del.status, 200);
      for (const id of ids) assert.equal(await delivery(app, String(id)), null);
      assert.equal(await countPrefix(app, keys.deliveriesOfWebhookPrefix(hook.id)), 0);
      assert.equal(await countPrefix(app, keys.deliveriesDue()), 0);
      // The retries were due 2 s later; the queued messages find nothing to do.
      await quiet(2_600);
      assert.equal(rx.received.length, 2);
      const left = await listed(app, key);
      assert.deepEqual(left.map((w: { webhook_id: string }) => w.webhook_id), [keep.id]);
    }, { env: { WEBHOOK_RETRY_BASE_MS: "2000" } })));

Deno.test("the address is re-checked at send time: a name now resolving privately is refused", () =>
  withApp(async (app) => {
    const dns: Record<string, string[]> = { "hooks.example.com": ["93.184.216.34"] };
    setWebhookNetOverrides(app.service.services.deps, {
      resolver: (h) => Promise.resolve(dns[h] ?? []),
    });
    const { key, accountId } = await app.signup();
    await register(app, key, "https://hooks.example.com/hook");
    dns["hooks.example.com"] = ["127.0.0.1"];
    await emit(app, accountId, "audit.completed");
    const w = await pollUntil(async () => {
      const [w] = await listed(app, key);
      return w.failure_count >= 1 ? w : null;
    }, truthy);
    assert.ok(w.last_failure_at);
    const [id] = await listKeys(app, keys.deliveriesOfWebhookPrefix(w.webhook_id));
    const rec = await delivery(app, String(id));
    assert.match(rec!.lastError!, /^target refused: must name a host that resolves to public/);
    assert.equal(rec!.lastStatus, null);
  }, { env: { ALLOW_PRIVATE_TARGETS: "0", WEBHOOK_RETRY_BASE_MS: "60000" } }));

Deno.test("an event exists only if its change commits (the outbox rides in the same commit)", () =>
  withReceiver(undefined, (rx) =>
    withApp(async (app) => {
      const { key, accountId } = await app.signup();
      await register(app, key, rx.url);
      // A state change whose check fails: neither it nor its event happen.
      const guard = ["test_state", "x"];
      await app.kv.set(guard, 1);
      const op = app.kv.atomic().check({ key: guard, versionstamp: null }).set(guard, 2);
      recordEvent(op, app.service.services.deps.queue, {
        accountId,
        event: "audit.completed",
        data: {},
        now: app.clock.now(),
      });
      assert.equal((await op.commit()).ok, false);
      await quiet(300);
      assert.equal(rx.received.length, 0);
      assert.equal(await countPrefix(app, keys.outboxAll()), 0);
    })));

async function listKeys(app: TestApp, prefix: readonly Deno.KvKeyPart[]) {
  const out: Deno.KvKeyPart[] = [];
  for await (const e of app.kv.list({ prefix: [...prefix] })) out.push(e.key[e.key.length - 1]);
  return out;
}

async function countPrefix(app: TestApp, prefix: readonly Deno.KvKeyPart[]): Promise<number> {
  return (await listKeys(app, prefix)).length;
}
