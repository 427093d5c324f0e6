/**
 * Webhooks benchmark: events recorded with their state change (outbox in the same commit), fanned
 * out and delivered to a local receiver by the real service on a KV file. Prints events/s and the
 * p50/p99 time from the state change's commit to the receiver's 2xx, for a burst and for a paced
 * stream, and a baseline measured in the same run: the same POSTs sent straight to the receiver
 * through the same `safeFetch`, so the ratio shows what the outbox, queue and records cost.
 *
 * Run: `deno run -A tests/bench/webhooks_bench.ts` (optional: EVENTS=500 ENDPOINTS=1)
 */
import { loadConfig } from "../../config.ts";
import { recordEvent } from "../../domain/platform/events.ts";
import { safeFetch } from "../../domain/net/safe_fetch.ts";
import { startService } from "../../main.ts";

interface Arrival {
  seq: number;
  at: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function startReceiver() {
  const arrivals: Arrival[] = [];
  let want = 0;
  let done: () => void = () => {};
  let waiting: Promise<void> = Promise.resolve();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    arrivals.push({ seq: body.data?.seq ?? -1, at: performance.now() });
    if (arrivals.length >= want) done();
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    arrivals,
    expect(n: number) {
      arrivals.length = 0;
      want = n;
      waiting = new Promise((r) => (done = r));
    },
    wait: () => waiting,
    close: () => server.shutdown(),
  };
}

export async function main(): Promise<string[]> {
  const events = Number(Deno.env.get("EVENTS") ?? 500);
  const endpoints = Number(Deno.env.get("ENDPOINTS") ?? 1);
  const kvPath = await Deno.makeTempFile({ suffix: ".sqlite" });
  const rx = startReceiver();
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    KV_PATH: kvPath,
    ALLOW_PRIVATE_TARGETS: "1",
    WEBHOOK_ENCRYPTION_KEY: btoa(
      String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
    ),
  });
  const service = await startService({ config });
  const lines: string[] = [];
  try {
    const signup = await fetch(`${service.url}/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "bench@example.com" }),
    }).then((r) => r.json());
    const key = signup.api_key as string;
    const accountId = signup.account_id as string;
    for (let i = 0; i < endpoints; i++) {
      const res = await fetch(`${service.url}/v1/webhooks`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ url: `${rx.url}?e=${i}` }),
      });
      if (res.status !== 201) throw new Error(`webhook create failed: ${await res.text()}`);
      await res.body?.cancel();
    }
    const { kv, queue, clock } = service.services.deps;

    // A state change and its event in one commit, as audits, articles and billing do it.
    const change = async (seq: number): Promise<number> => {
      const op = kv.atomic().set(["bench_state", seq], { done: true });
      recordEvent(op, queue, {
        accountId,
        event: "audit.completed",
        data: { seq, project_id: "proj_bench", status: "completed" },
        now: clock.now(),
      });
      const res = await op.commit();
      if (!res.ok) throw new Error("commit failed");
      return performance.now();
    };

    const run = async (label: string, count: number, paceMs: number, offset: number) => {
      rx.expect(count * endpoints);
      const committed = new Map<number, number>();
      const t0 = performance.now();
      if (paceMs > 0) {
        for (let i = 0; i < count; i++) {
          committed.set(offset + i, await change(offset + i));
          await new Promise((r) => setTimeout(r, paceMs));
        }
      } else {
        // A burst: 8 writers at once, like concurrent requests and jobs changing state.
        let next = 0;
        await Promise.all(Array.from({ length: 8 }, async () => {
          while (next < count) {
            const seq = offset + next++;
            committed.set(seq, await change(seq));
          }
        }));
      }
      await rx.wait();
      const seconds = (performance.now() - t0) / 1000;
      const lat = rx.arrivals.map((a) => a.at - committed.get(a.seq)!).sort((a, b) => a - b);
      const rate = count / seconds;
      const p = (q: number) => percentile(lat, q).toFixed(1);
      lines.push(
        paceMs > 0
          ? `webhooks ${label}: ${count} events, one every ${paceMs} ms, × ${endpoints} endpoint(s); state change→2xx p50 ${
            p(50)
          } ms p99 ${p(99)} ms`
          : `webhooks ${label}: ${count} events × ${endpoints} endpoint(s) delivered in ${
            seconds.toFixed(2)
          } s = ${rate.toFixed(0)} events/s (${
            (rate * endpoints).toFixed(0)
          } deliveries/s); state change→2xx p50 ${p(50)} ms p99 ${p(99)} ms`,
      );
      return rate * endpoints;
    };

    // Warm-up (JIT, KV file, connection paths), not reported.
    rx.expect(20 * endpoints);
    for (let i = 0; i < 20; i++) await change(1_000_000 + i);
    await rx.wait();

    const burst = await run("burst", events, 0, 0);
    await run("paced", Math.min(events, 200), 10, 100_000);

    // Baseline: the same number of signed-size POSTs straight to the receiver, 16 at a time.
    const n = events * endpoints;
    rx.expect(n);
    const body = JSON.stringify({ id: "dlv_x", event: "audit.completed", data: { seq: -1 } });
    const b0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next < n) {
        next++;
        await safeFetch(rx.url, {
          allowPrivate: true,
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
          shouldReadBody: () => false,
        });
      }
    }));
    await rx.wait();
    const bare = n / ((performance.now() - b0) / 1000);
    lines.push(
      `webhooks baseline: the same POSTs sent directly with safeFetch, 16 at a time: ${
        bare.toFixed(0)
      }/s; service burst deliveries = ${(100 * burst / bare).toFixed(1)}% of direct`,
    );
  } finally {
    await service.close();
    await rx.close();
    await Deno.remove(kvPath).catch(() => {});
  }
  return lines;
}

if (import.meta.main) {
  for (const line of await main()) console.log(line);
}
