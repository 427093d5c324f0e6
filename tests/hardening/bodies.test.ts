/**
 * Issue 16, decompression bombs: every body the service reads outside the crawler (which the audit
 * engine caps itself) is bounded while it streams. `safeFetch` counts decoded bytes as they come,
 * so a small gzip that inflates to 64 MiB stops at the cap; a webhook receiver's answer is never
 * read at all; the Stripe webhook's raw body is capped before parsing and never inflated.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import zlib from "node:zlib";
import { FetchFailedError, safeFetch } from "../../domain/net/safe_fetch.ts";
import { withApp } from "../helpers/app.ts";
import { serveSite } from "../helpers/sites.ts";
import { pollUntil, truthy } from "../helpers/jobs.ts";
import { emit, startReceiver } from "../webhooks/helpers.ts";

const BOMB = new Uint8Array(zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 }));

/** A site answering every path with the bomb. */
function serveBomb() {
  return serveSite(() => ({
    headers: { "content-encoding": "gzip", "content-type": "text/html" },
    body: BOMB,
  }));
}

Deno.test("safeFetch stops inflating a gzip bomb at its cap", async () => {
  assert.ok(BOMB.byteLength < 200_000, `${BOMB.byteLength} compressed bytes`);
  const site = serveBomb();
  try {
    const url = site.url("/");
    const res = await safeFetch(url, { allowPrivate: true, maxBytes: 1024 * 1024 });
    assert.equal(res.truncated, true);
    assert.equal(res.body.byteLength, 1024 * 1024);
    await assert.rejects(
      safeFetch(url, { allowPrivate: true, maxBytes: 1024 * 1024, failOnTooLarge: true }),
      (err: unknown) => err instanceof FetchFailedError && err.kind === "too_large",
    );
  } finally {
    await site.close();
  }
});

Deno.test("a webhook receiver answering with a gzip bomb costs one capped attempt, nothing more", () =>
  withApp(async (app) => {
    const rx = startReceiver(() =>
      new Response(BOMB, { headers: { "content-encoding": "gzip" }, status: 200 })
    );
    try {
      const { key, accountId } = await app.signup();
      await app.req("POST", "/v1/webhooks", { key, body: { url: rx.url } });
      await emit(app, accountId, "audit.completed", { project_id: "proj_bomb" });
      await rx.waitFor(1);
      // Delivered (2xx) without the service inflating the answer.
      await pollUntil(async () => {
        for await (const e of app.kv.list<{ state: string }>({ prefix: ["deliveries"] })) {
          if (e.value.state === "delivered") return true;
        }
        return false;
      }, truthy);
    } finally {
      await rx.close();
    }
  }));

Deno.test("the Stripe webhook reads at most 512 KiB and never inflates a gzipped body", () =>
  withApp(async (app) => {
    const res = await fetch(`${app.url}/webhooks/stripe`, {
      method: "POST",
      headers: { "content-encoding": "gzip", "stripe-signature": "t=1,v1=00" },
      body: BOMB,
    });
    const body = await res.json();
    // Read as the raw 65 KB it is: the signature check fails on it; nothing was inflated.
    assert.equal(res.status, 400);
    assert.equal(body.error.code, "invalid_request");
  }, { env: { STRIPE_WEBHOOK_SECRET: "whsec_test" } }));
