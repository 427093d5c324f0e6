/**
 * Billing test helpers: the real app wired to a fake Stripe, live accounts and projects over HTTP,
 * signed webhook posts, and a domain-level harness (KV + manual clock + a queue that records
 * messages) for checks on the outbox, which the running app's queue listener would drain.
 */
import assert from "node:assert/strict";
import { openTestKv } from "../helpers/kv.ts";
import { signup } from "../../domain/identity/accounts.ts";
import { manualClock } from "../../domain/platform/clock.ts";
import { loadConfig } from "../../config.ts";
import type { Deps, JobMessage } from "../../domain/platform/deps.ts";
import { createProject } from "../../domain/projects/projects.ts";
import type { CheckoutRecord, PendingCheckoutRecord } from "../../domain/billing/types.ts";
import type { OutboxEvent } from "../../domain/webhooks/types.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import {
  type FakeStripe,
  paidSession,
  signPayload,
  startFakeStripe,
  stripeEnv,
} from "./fake_stripe.ts";

export const START = Date.parse("2026-11-23T12:00:00Z");

/** Runs `fn` with a fake Stripe and the app pointed at it; closes both. */
export async function withBilling(
  fn: (app: TestApp, fake: FakeStripe) => Promise<void>,
  env: (fake: FakeStripe) => Record<string, string> = (fake) => stripeEnv(fake),
): Promise<void> {
  const fake = await startFakeStripe();
  try {
    await withApp((app) => fn(app, fake), { env: env(fake), start: START });
  } finally {
    await fake.close();
  }
}

/** A fresh account with its sandbox key and a live key. */
export async function liveAccount(app: TestApp) {
  const { key: sandboxKey, accountId } = await app.signup();
  const key = await app.liveKey(accountId);
  return { accountId, key, sandboxKey };
}

/** Creates a project with `key` and returns its id. */
export async function newProject(app: TestApp, key: string, url = "https://example.com") {
  const res = await app.req("POST", "/v1/projects", { key, body: { url } });
  if (res.status !== 201) throw new Error(`project failed: ${res.status} ${res.text}`);
  return res.body.project_id as string;
}

/**
 * Opens a checkout through the API (`path` with `body`, which must answer 201) and returns the
 * paid session Stripe would report for it: the metadata the service sent the fake Stripe, its
 * session id, and `extra` fields.
 */
export async function checkoutFor(
  app: TestApp,
  fake: FakeStripe,
  key: string,
  path: "/v1/subscriptions" | "/v1/credits/purchases",
  body: Record<string, string>,
  extra: Record<string, unknown> = {},
) {
  const res = await app.req("POST", path, { key, body });
  assert.equal(res.status, 201, res.text);
  const call = fake.sessionCreates().at(-1)!;
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.form)) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m) metadata[m[1]] = v;
  }
  return paidSession(metadata, { id: res.body.checkout_url.split("/").pop(), ...extra });
}

/** Posts a Stripe event to the webhook, signed at the app's clock unless told otherwise. */
export async function postStripeEvent(
  app: TestApp,
  event: unknown,
  opts: { timestampMs?: number; secret?: string; signature?: string | null } = {},
) {
  const payload = JSON.stringify(event);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const signature = opts.signature !== undefined
    ? opts.signature
    : await signPayload(payload, opts.timestampMs ?? app.clock.now(), opts.secret);
  if (signature !== null) headers["stripe-signature"] = signature;
  return await app.req("POST", "/webhooks/stripe", { rawBody: payload, headers });
}

export interface Harness {
  /**
   * Stores a checkout as `POST /v1/subscriptions` or `/v1/credits/purchases` would have, and
   * returns the paid session Stripe reports for it.
   */
  checkout(
    meta: Record<string, string>,
    extra?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  deps: Deps;
  clock: ReturnType<typeof manualClock>;
  messages: JobMessage[];
  outbox(): Promise<OutboxEvent[]>;
  /** A live account with one live project. */
  liveProject(): Promise<{ accountId: string; projectId: string }>;
  close(): void;
}

/** Domain-level harness with no queue listener, so outbox entries stay where they were written. */
export async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const kv = await openTestKv();
  const clock = manualClock(START);
  const messages: JobMessage[] = [];
  const deps: Deps = {
    kv,
    clock,
    config: loadConfig({
      KV_PATH: ":memory:",
      STRIPE_WEBHOOK_SECRET: "whsec_test",
      ALLOW_PRIVATE_TARGETS: "1",
      ...env,
    }),
    queue: {
      enqueue(message) {
        messages.push(message);
        return Promise.resolve();
      },
      enqueueIn(_op, message) {
        messages.push(message);
      },
    },
  };
  return {
    async checkout(meta, extra = {}) {
      const session = paidSession(meta, extra);
      const sessionId = session.id as string;
      const now = clock.now();
      const record: CheckoutRecord = {
        sessionId,
        kind: meta.kind as CheckoutRecord["kind"],
        accountId: meta.account_id,
        projectId: meta.project_id ?? null,
        planId: (meta.plan_id ?? null) as CheckoutRecord["planId"],
        packId: meta.pack_id ?? null,
        url: `https://checkout.stripe.test/c/pay/${sessionId}`,
        createdAt: now,
        completedAt: null,
      };
      const op = kv.atomic().set(keys.checkout(sessionId), record);
      if (record.kind === "subscription") {
        op.set(
          keys.pendingCheckout(record.projectId!),
          {
            sessionId,
            planId: record.planId!,
            url: record.url,
            createdAt: now,
          } satisfies PendingCheckoutRecord,
        );
      }
      await op.commit();
      return session;
    },
    deps,
    clock,
    messages,
    async outbox() {
      const out: OutboxEvent[] = [];
      for await (const e of kv.list<OutboxEvent>({ prefix: keys.outboxAll() })) out.push(e.value);
      return out;
    },
    async liveProject() {
      const { account } = await signup(deps, {
        email: `${crypto.randomUUID()}@example.com`,
        companyName: null,
        origin: "agent",
      });
      const project = await createProject(deps, { accountId: account.id, mode: "live" }, {
        url: "https://example.com",
      });
      return { accountId: account.id, projectId: project.id };
    },
    close() {
      kv.close();
    },
  };
}
