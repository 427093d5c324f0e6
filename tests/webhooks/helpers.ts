/**
 * Webhook test kit: a real receiver on loopback whose answer each test scripts, and a way to
 * record events the way audits, articles and billing do (in an atomic op with the change).
 */
import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { EventName } from "../../domain/platform/events.ts";
import { recordEvent } from "../../domain/platform/events.ts";
import type { OutboxEvent } from "../../domain/webhooks/types.ts";
import type { TestApp } from "../helpers/app.ts";

export interface Received {
  headers: Headers;
  raw: string;
  // deno-lint-ignore no-explicit-any
  body: any;
  /** 1-based arrival number at this receiver. */
  n: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** Starts a receiver; `answer` decides each response (default 200). */
export function startReceiver(
  answer: (r: Received) => Response | Promise<Response> = () => new Response("ok"),
  path = "/hook",
): Receiver {
  const received: Received[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  const ac = new AbortController();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const raw = await req.text();
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch { /* kept raw */ }
      const r: Received = { headers: req.headers, raw, body, n: received.length + 1 };
      received.push(r);
      waiters = waiters.filter((w) => {
        if (received.length >= w.count) w.resolve();
        return received.length < w.count;
      });
      return await answer(r);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}${path}`,
    received,
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`receiver got ${received.length} of ${count} requests`)),
          timeoutMs,
        );
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received);
          },
        });
      });
    },
    async close() {
      ac.abort();
      await server.finished;
    },
  };
}

/** Records an event in its own commit, as a state change would, and returns it. */
export async function emit(
  app: TestApp,
  accountId: string,
  event: EventName,
  data: Record<string, unknown> = { project_id: "proj_test" },
): Promise<OutboxEvent> {
  const op = app.kv.atomic();
  const evt = recordEvent(op, app.service.services.deps.queue, {
    accountId,
    event,
    data,
    now: app.clock.now(),
  });
  const res = await op.commit();
  if (!res.ok) throw new Error("event commit failed");
  return evt;
}

/** What a receiver does: HMAC the raw body with the secret and compare in constant time. */
export function verifySignature(secret: string, rawBody: string, header: string | null): boolean {
  if (!header || !/^[0-9a-f]{64}$/.test(header)) return false;
  const expected = createHmac("sha256", secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(header, "hex"));
}

/**
 * What a receiver of docs/webhooks.md does with the v2 scheme: the timestamp within 300 s of its
 * clock, the HMAC of `{id}.{timestamp}.{body}` in constant time, then dedupe on that signed id.
 * Answers why it refused, or null when the delivery is new and authentic.
 */
export function acceptV2(
  secret: string,
  headers: Headers,
  rawBody: string,
  nowS: number,
  seen: Set<string>,
): "bad_signature" | "stale" | "duplicate" | null {
  const id = headers.get("x-serpwright-delivery") ?? "";
  const ts = headers.get("x-serpwright-timestamp") ?? "";
  const sig = /^v2=([0-9a-f]{64})$/.exec(headers.get("x-serpwright-signature-v2") ?? "")?.[1];
  if (!sig || !/^\d+$/.test(ts)) return "bad_signature";
  const expected = createHmac("sha256", secret).update(`${id}.${ts}.${rawBody}`).digest();
  if (!timingSafeEqual(expected, Buffer.from(sig, "hex"))) return "bad_signature";
  if (Math.abs(nowS - Number(ts)) > 300) return "stale";
  if (seen.has(id)) return "duplicate";
  seen.add(id);
  return null;
}
