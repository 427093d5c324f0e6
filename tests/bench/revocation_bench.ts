/**
 * Revocation propagation between two server processes on one KV file: how long after process A
 * answers 200 to `DELETE /v1/api-keys/{id}` process B, which had the key cached, answers 401.
 *
 * Each round mints a key on A, warms it on B (`GET /v1/account` 200), revokes it on A, then asks B
 * back to back until it refuses; the time is taken from A's 200 (the revocation committed) to B's
 * first 401, and also from the moment the DELETE was sent. Both processes cache key lookups for
 * 60 s, so B's refusal comes from the revocation signal (`AUTH_REVOCATION_POLL_MS`, 50 ms on a
 * KV file). The baseline, measured in the same run, is the mechanism it replaces: the signal not
 * read across processes (`AUTH_REVOCATION_POLL_MS=0`: `kv.watch` alone, which on a local KV file
 * sees only its own process's writes) and the default 2 s cache TTL.
 *
 * Run: `deno run -A tests/bench/revocation_bench.ts` (or `deno task bench revocation`).
 * `REVOCATION_ROUNDS=20` (default) rounds; the baseline runs 5. `AUTH_REVOCATION_POLL_MS` sets the
 * signal run's poll period (default 50, the service's default on a KV file). The load average is
 * printed: on a busy machine the tail is the scheduler's, not the poll's.
 */
import { type ServerProcess, startServer, tempKvPath } from "../proof/process.ts";
import { freshIp } from "../helpers/app.ts";

const ROUNDS = Number(Deno.env.get("REVOCATION_ROUNDS") ?? 20);
const BASELINE_ROUNDS = Math.min(5, ROUNDS);
const LIMITS = { RATE_LIMIT_PER_MINUTE: "100000000", ACCOUNT_RATE_LIMIT_PER_MINUTE: "100000000" };

interface Round {
  /** From A's 200 to B's first 401. */
  afterCommit: number;
  /** From sending the DELETE to B's first 401. */
  afterSend: number;
  /** Requests B answered 200 in between. */
  stale: number;
}

async function measure(env: Record<string, string>, rounds: number): Promise<Round[]> {
  const kvFile = await tempKvPath();
  let a: ServerProcess | null = null;
  let b: ServerProcess | null = null;
  try {
    a = await startServer(kvFile.path, { ...LIMITS, ...env });
    b = await startServer(kvFile.path, { ...LIMITS, ...env });
    const signup = await a.req("POST", "/v1/accounts", {
      body: { email: `bench-${crypto.randomUUID()}@example.com` },
      ip: freshIp(),
    });
    if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`);
    const holder = signup.body.api_key as string;
    const out: Round[] = [];
    for (let i = 0; i < rounds; i++) {
      const minted = await a.req("POST", "/v1/api-keys", { key: holder });
      if (minted.status !== 201) throw new Error(`mint: ${minted.status} ${minted.text}`);
      const key = minted.body.api_key as string;
      const warm = await b.req("GET", "/v1/account", { key });
      if (warm.status !== 200) throw new Error(`warm: ${warm.status} ${warm.text}`);
      const sent = performance.now();
      const del = await a.req("DELETE", `/v1/api-keys/${minted.body.id}`, { key: holder });
      if (del.status !== 200) throw new Error(`revoke: ${del.status} ${del.text}`);
      const committed = performance.now();
      let stale = 0;
      while (true) {
        const res = await b.req("GET", "/v1/account", { key });
        if (res.status === 401) break;
        if (res.status !== 200) throw new Error(`B answered ${res.status} ${res.text}`);
        stale++;
        if (performance.now() - committed > 30_000) throw new Error("B never refused the key");
      }
      const now = performance.now();
      out.push({ afterCommit: now - committed, afterSend: now - sent, stale });
      // Rounds start at different points of the poll period and of the TTL.
      await new Promise((r) => setTimeout(r, 37 + Math.random() * 100));
    }
    return out;
  } catch (err) {
    console.error(`A:\n${a?.logs()}\nB:\n${b?.logs()}`);
    throw err;
  } finally {
    await Promise.all([a?.stop(), b?.stop()]);
    await kvFile.remove();
  }
}

function stats(values: number[]) {
  const sorted = [...values].sort((x, y) => x - y);
  const median = sorted.length % 2
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { median, max: sorted.at(-1)!, min: sorted[0] };
}

function report(label: string, rounds: Round[]): number {
  const commit = stats(rounds.map((r) => r.afterCommit));
  const send = stats(rounds.map((r) => r.afterSend));
  const stale = rounds.reduce((n, r) => n + r.stale, 0);
  console.log(
    `${label}: ${rounds.length} revocations; after A's 200: median ${
      commit.median.toFixed(1)
    } ms, ` +
      `max ${commit.max.toFixed(1)} ms (min ${commit.min.toFixed(1)}); after the DELETE was ` +
      `sent: median ${send.median.toFixed(1)} ms, max ${send.max.toFixed(1)} ms; ` +
      `${stale} stale 200s from B in all`,
  );
  return commit.median;
}

const POLL_MS = Deno.env.get("AUTH_REVOCATION_POLL_MS") ?? "50";
const load = () => Deno.loadavg().map((l) => l.toFixed(1)).join(" ");
console.log(`load average before: ${load()} (${navigator.hardwareConcurrency} cores)`);
const signal = await measure(
  { AUTH_CACHE_TTL_MS: "60000", AUTH_REVOCATION_POLL_MS: POLL_MS },
  ROUNDS,
);
const base = await measure(
  { AUTH_CACHE_TTL_MS: "2000", AUTH_REVOCATION_POLL_MS: "0" },
  BASELINE_ROUNDS,
);
const withSignal = report(`revocation signal (60 s TTL, poll ${POLL_MS} ms)`, signal);
const withTtl = report("baseline: TTL only (2 s TTL, no cross-process signal)", base);
const max = stats(signal.map((r) => r.afterCommit)).max;
console.log(
  `median propagation ${(withSignal / withTtl * 100).toFixed(1)}% of the TTL-only baseline; ` +
    `max ${max.toFixed(1)} ms against the 100 ms target (${max <= 100 ? "within" : "OVER"}); ` +
    `load average after: ${load()}`,
);
