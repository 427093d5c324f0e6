/**
 * Issue 16: outbound deliveries sign a timestamp and the delivery id with the body (v2), so a
 * captured delivery cannot be replayed later or under a fresh delivery header; the body-only v1
 * signature stays for existing receivers.
 */
import assert from "node:assert/strict";
import { withApp } from "../helpers/app.ts";
import { keys } from "../../kv/keys.ts";
import { signedV2 } from "../../domain/webhooks/deliver.ts";
import { signHex } from "../../domain/webhooks/secret_box.ts";
import { VERIFY_SNIPPET } from "../../routes/pages/agents_doc.ts";
import type { DeliveryRecord } from "../../domain/webhooks/types.ts";
import { pollUntil, truthy } from "../helpers/jobs.ts";
import { acceptV2, emit, type Received, startReceiver, verifySignature } from "./helpers.ts";

Deno.test("v2 signs id.timestamp.body; a replayed or re-labelled capture is refused", async () => {
  // The first attempt fails; while answering it, 90 s pass on the service clock.
  let onFirst = () => {};
  const rx = startReceiver((r) => {
    if (r.n > 1) return new Response(null, { status: 204 });
    onFirst();
    return new Response(null, { status: 500 });
  });
  try {
    await withApp(async (app) => {
      const { accountId } = await app.signup();
      const key = await app.liveKey(accountId); // credits.updated is the live side's
      const sentAt = Math.floor(app.clock.now() / 1000);
      onFirst = () => app.clock.advance(90_000);
      const res = await app.req("POST", "/v1/webhooks", { key, body: { url: rx.url } });
      const secret = res.body.secret as string;
      await emit(app, accountId, "credits.updated", { pack_id: "pack_500" });
      const [first, retry] = await rx.waitFor(2);
      assert.equal(first.headers.get("x-serpwright-timestamp"), String(sentAt));
      // v1 still verifies for receivers written against it.
      assert.ok(verifySignature(secret, first.raw, first.headers.get("x-serpwright-signature")));

      const seen = new Set<string>();
      const at = (r: Received, nowS: number, headers = r.headers) =>
        acceptV2(secret, headers, r.raw, nowS, seen);
      // Another id in the delivery header breaks the v2 signature (v1 alone would pass).
      const relabelled = new Headers(first.headers);
      relabelled.set("x-serpwright-delivery", "dlv_00000000000000000000000000");
      assert.ok(verifySignature(secret, first.raw, relabelled.get("x-serpwright-signature")));
      assert.equal(at(first, sentAt, relabelled), "bad_signature");
      // Played back six minutes later: stale.
      assert.equal(at(first, sentAt + 360), "stale");
      assert.equal(at(first, sentAt + 5), null);
      assert.equal(at(first, sentAt + 6), "duplicate");

      // The retry is the same delivery (same id, same body) signed at its own time.
      assert.equal(retry.raw, first.raw);
      assert.equal(
        retry.headers.get("x-serpwright-delivery"),
        first.headers.get("x-serpwright-delivery"),
      );
      const retryAt = Number(retry.headers.get("x-serpwright-timestamp"));
      assert.equal(retryAt, sentAt + 90);
      assert.notEqual(
        retry.headers.get("x-serpwright-signature-v2"),
        first.headers.get("x-serpwright-signature-v2"),
      );
      assert.equal(at(retry, retryAt), "duplicate", "already handled: deduped on the signed id");
      assert.equal(acceptV2(secret, retry.headers, retry.raw, retryAt, new Set()), null);
      const id = retry.headers.get("x-serpwright-delivery")!;
      await pollUntil(
        async () =>
          (await app.kv.get<DeliveryRecord>(keys.delivery(id))).value?.state === "delivered",
        truthy,
      );
    });
  } finally {
    await rx.close();
  }
});

Deno.test("the receiver code on /docs/agents verifies what the service signs, and refuses replays", async () => {
  const source = VERIFY_SNIPPET.slice(0, VERIFY_SNIPPET.indexOf("// A receiver"));
  const code = new TextEncoder().encode(`${source}\nexport { verifyDelivery };`);
  const mod = await import(
    `data:application/typescript;base64,${btoa(String.fromCharCode(...code))}`
  );
  const verify = mod.verifyDelivery as (
    secret: string,
    raw: string,
    id: string | null,
    ts: string | null,
    header: string | null,
  ) => Promise<boolean>;
  const secret = "a".repeat(64);
  const raw = '{"id":"dlv_1","event":"credits.updated"}';
  const sign = async (id: string, ts: number) =>
    `v2=${await signHex(secret, signedV2(id, ts, new TextEncoder().encode(raw)))}`;
  const now = Math.floor(Date.now() / 1000);
  assert.equal(await verify(secret, raw, "dlv_1", String(now), await sign("dlv_1", now)), true);
  const header = await sign("dlv_1", now);
  assert.equal(await verify(secret, raw, "dlv_2", String(now), header), false, "another id");
  assert.equal(await verify(secret, raw + " ", "dlv_1", String(now), header), false, "body");
  const old = now - 301;
  assert.equal(await verify(secret, raw, "dlv_1", String(old), await sign("dlv_1", old)), false);
});
