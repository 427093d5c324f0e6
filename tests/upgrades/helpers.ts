/**
 * Upgrade test kit: a cookie-keeping form client for the human's pages (plain HTTP, no browser),
 * starting an upgrade over `/v1`, and paying it the way Stripe reports it: the paid session
 * built from what the service sent the fake Stripe, signed and posted to `/webhooks/stripe`.
 */
import assert from "node:assert/strict";
import type { TestApp, TestResponse } from "../helpers/app.ts";
import { freshIp } from "../helpers/app.ts";
import { type FakeStripe, paidSession } from "../billing/fake_stripe.ts";
import { postStripeEvent } from "../billing/helpers.ts";
import { stripeEvent } from "../billing/fake_stripe.ts";

/** A browser stand-in: keeps the page cookie, posts forms, follows no redirect. */
export class PageClient {
  #cookies = new Map<string, string>();
  constructor(private base: string, readonly ip = freshIp()) {}

  async get(path: string) {
    return await this.#send(path, { method: "GET" });
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    return await this.#send(path, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    });
  }

  /** Posts a form of `page` (its CSRF token included) with `fields`. */
  async submit(page: { text: string }, path: string, fields: Record<string, string> = {}) {
    return await this.post(path, { csrf: csrfIn(page.text), ...fields });
  }

  async #send(path: string, init: RequestInit) {
    const headers = new Headers(init.headers);
    headers.set("x-forwarded-for", this.ip);
    if (this.#cookies.size > 0) {
      headers.set("cookie", [...this.#cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    const res = await fetch(this.base + path, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const i = pair.indexOf("=");
      this.#cookies.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
}

/** The page's form token. */
export function csrfIn(html: string): string {
  const m = /name="csrf" value="([0-9a-f]{64})"/.exec(html);
  if (!m) throw new Error("no csrf token on the page");
  return m[1];
}

/** Starts an upgrade with `key` (201) and returns the answer's body. */
export async function startUpgrade(
  app: TestApp,
  key: string,
  headers: Record<string, string> = {},
) {
  const res = await app.req("POST", "/v1/upgrades", { key, headers });
  assert.ok(res.status === 201 || res.status === 200, res.text);
  return res.body as {
    upgrade_id: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_at: string;
    interval: number;
    poll: string;
  };
}

/** The local path of a service URL (PUBLIC_BASE_URL is http://localhost:8000 in tests). */
export function local(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/**
 * A human's way from the code to Stripe over plain HTTP: enters the code, chooses (`fields`:
 * `fund_<project>` and `pack`), and returns the Checkout URL the service sent the browser to.
 */
export async function humanChooses(
  app: TestApp,
  code: string,
  fields: Record<string, string>,
  client = new PageClient(app.url),
): Promise<{ client: PageClient; upgradeId: string; checkoutUrl: string }> {
  const entry = await client.get(`/upgrade?code=${code}`);
  assert.equal(entry.status, 200, entry.text);
  const entered = await client.submit(entry, "/upgrade", { code });
  assert.equal(entered.status, 303, entered.text);
  const path = entered.headers.get("location")!;
  const choice = await client.get(path);
  assert.equal(choice.status, 200, choice.text);
  const leaving = await client.submit(choice, `${path}/checkout`, fields);
  assert.equal(leaving.status, 200, leaving.text);
  const url = /http-equiv="refresh" content="0;url=([^"]+)"/.exec(leaving.text)?.[1];
  assert.ok(url, "the page sends the browser to Stripe");
  return {
    client,
    upgradeId: path.split("/").pop()!,
    checkoutUrl: url.replaceAll("&amp;", "&"),
  };
}

/** The paid session Stripe would report for the last session created, opened at `checkoutUrl`. */
export function paidLastSession(
  fake: FakeStripe,
  checkoutUrl: string,
  extra: Record<string, unknown> = {},
) {
  const call = fake.sessionCreates().at(-1)!;
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(call.form)) {
    const m = /^metadata\[(.+)\]$/.exec(k);
    if (m) metadata[m[1]] = v;
  }
  return paidSession(metadata, {
    id: checkoutUrl.split("/").pop(),
    customer: call.form.customer ?? null,
    ...extra,
  });
}

/** Sends `checkout.session.completed` for `session`, signed; returns the webhook's answer. */
export async function completeCheckout(
  app: TestApp,
  session: Record<string, unknown>,
  eventId?: string,
): Promise<TestResponse> {
  return await postStripeEvent(app, stripeEvent("checkout.session.completed", session, eventId));
}
