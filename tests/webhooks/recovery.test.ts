import { openTestKv } from "../helpers/kv.ts";
import assert from "node:assert/strict";
import { keys } from "../../kv/keys.ts";
import type { Deps, JobQueue } from "../../domain/platform/deps.ts";
import type { OutboxEvent } from "../../domain/webhooks/types.ts";
import { runDelivery } from "../../domain/webhooks/deliver.ts";
import { deliveryIdFor, fanOutEvent } from "../../domain/webhooks/fan_out.ts";
import type { DeliveryRecord } from "../../domain/webhooks/types.ts";
import { startTestApp, type TestApp, withApp } from "../helpers/app.ts";
import { pollUntil, quiet, truthy } from "../helpers/jobs.ts";
import { startReceiver } from "./helpers.ts";

/** A queue that loses every message, to stand for a message lost in transit. */
const lossyQueue: JobQueue = { enqueue: () => Promise.resolve(), enqueueIn: () => {} };

function lossyDeps(app: TestApp): Deps {
  return { ...app.service.services.deps, queue: lossyQueue };
}

/** Writes an outbox entry as recordEvent would, but with its queue message lost. */
async function lostEvent(app: TestApp, accountId: string): Promise<OutboxEvent> {
  const evt: OutboxEvent = {
    id: `evt_lost_${crypto.randomUUID()}`,
    accountId,
    event: "audit.completed",
    createdAt: app.clock.now(),
    data: { project_id: "proj_1" },
  };
  await app.kv.set(keys.outbox(evt.id), evt);
  return evt;
}

async function register(app: TestApp, key: string, url: string): Promise<string> {
  const res = await app.req("POST", "/v1/webhooks", { key, body: { url } });
  assert.equal(res.status, 201);
  return res.body.webhook_id;
}

async function delivery(app: TestApp, id: string): Promise<DeliveryRecord | null> {
  return (await app.kv.get<DeliveryRecord>(keys.delivery(id))).value;
}

Deno.test("restart mid-retry: a new app on the same KV file finishes the delivery", async () => {
  const path = await Deno.makeTempFile({ suffix: ".sqlite" });
  const rx = startReceiver((r) => new Response("x", { status: r.n === 1 ? 503 : 200 }));
  const env = { WEBHOOK_RETRY_BASE_MS: "1500" };
  try {
    const first = await startTestApp({ kv: await openTestKv(path), env });
    let deliveryId = "";
    try {
      const { key, accountId } = await first.signup();
      const hookId = await register(first, key, rx.url);
      const op = first.kv.atomic();
      const { recordEvent } = await import("../../domain/platform/events.ts");
      const evt = recordEvent(op, first.service.services.deps.queue, {
        accountId,
        event: "audit.completed",
        data: { project_id: "proj_1" },
        now: first.clock.now(),
      });
      assert.ok((await op.commit()).ok);
      deliveryId = deliveryIdFor(evt.id, hookId);
      await rx.waitFor(1);
      // The failed first attempt is recorded and its retry queued, 1.5 s out.
      await pollUntil(async () => (await delivery(first, deliveryId))?.attempts === 1, truthy);
    } finally {
      await first.close();
    }
    assert.equal(rx.received.length, 1);

    const second = await startTestApp({ kv: await openTestKv(path), env });
    try {
      const got = await rx.waitFor(2, 15_000);
      assert.equal(got[1].headers.get("x-serpwright-delivery"), deliveryId);
      assert.equal(got[1].headers.get("x-serpwright-attempt"), "2");
      assert.equal(got[1].raw, got[0].raw);
      const rec = await pollUntil(async () => {
        const d = await delivery(second, deliveryId);
        return d?.state === "delivered" ? d : null;
      }, truthy);
      assert.equal(rec.attempts, 2);
    } finally {
      await second.close();
    }
  } finally {
    await rx.close();
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("the sweep re-sends an outbox event whose message was lost, after the grace period", () =>
  withApp(async (app) => {
    const rx = startReceiver();
    try {
      const { key, accountId } = await app.signup();
      await register(app, key, rx.url);
      const evt = await lostEvent(app, accountId);
      await app.service.tick();
      await quiet(200);
      assert.equal(rx.received.length, 0, "not before the grace period");

      app.clock.advance(61_000);
      await app.service.tick();
      const [got] = await rx.waitFor(1);
      assert.equal(got.body.created_at, new Date(evt.createdAt).toISOString());
      await pollUntil(async () => (await app.kv.get(keys.outbox(evt.id))).value === null, truthy);
      await app.service.tick();
      await quiet(200);
      assert.equal(rx.received.length, 1);
    } finally {
      await rx.close();
    }
  }));

Deno.test("the sweep re-sends a pending delivery whose message was lost", () =>
  withApp(async (app) => {
    const rx = startReceiver();
    try {
      const { key, accountId } = await app.signup();
      const hookId = await register(app, key, rx.url);
      const evt = await lostEvent(app, accountId);
      // Fan-out commits, but the first attempt's message is lost.
      assert.equal((await fanOutEvent(lossyDeps(app), evt.id)).length, 1);
      const id = deliveryIdFor(evt.id, hookId);
      assert.equal((await delivery(app, id))?.state, "pending");
      await app.service.tick();
      await quiet(200);
      assert.equal(rx.received.length, 0);

      app.clock.advance(61_000);
      await app.service.tick();
      const [got] = await rx.waitFor(1);
      assert.equal(got.headers.get("x-serpwright-delivery"), id);
      await pollUntil(async () => (await delivery(app, id))?.state === "delivered", truthy);
      assert.equal((await app.kv.get(keys.outbox(evt.id))).value, null);
    } finally {
      await rx.close();
    }
  }));

Deno.test("repeated messages are harmless: fan-out once, each attempt recorded once", () =>
  withApp(async (app) => {
    const rx = startReceiver(() => new Response("no", { status: 500 }));
    try {
      const { key, accountId } = await app.signup();
      const hookId = await register(app, key, rx.url);
      const deps = lossyDeps(app);
      const evt = await lostEvent(app, accountId);
      const created = await Promise.all([1, 2, 3].map(() => fanOutEvent(deps, evt.id)));
      assert.deepEqual(created.map((c) => c.length).sort(), [0, 0, 1]);
      const id = deliveryIdFor(evt.id, hookId);

      // Two runners of attempt 1 at once: one records it, the other finds it stale.
      const outcomes = await Promise.all([
        runDelivery(deps, `${id}:1`),
        runDelivery(deps, `${id}:1`),
      ]);
      assert.deepEqual(outcomes.sort(), ["retry_scheduled", "stale"]);
      const rec = await delivery(app, id);
      assert.equal(rec?.attempts, 1);
      const hooks = (await app.req("GET", "/v1/webhooks", { key })).body.webhooks;
      assert.equal(hooks[0].failure_count, 1);

      // A late message for an attempt already made sends nothing.
      const before = rx.received.length;
      assert.equal(await runDelivery(deps, `${id}:1`), "stale");
      assert.equal(rx.received.length, before);
    } finally {
      await rx.close();
    }
  }, { env: { WEBHOOK_RETRY_BASE_MS: "600000" } }));
