/**
 * Issue 24's benchmark: the same MCP `tools/call` (the `account` tool) with an OAuth access token
 * against an API key, on one server process, in one run. Target: the token's round trip within
 * 1.2× the key's (sequential p50 and mean, and requests per second under 50 connections).
 *
 * The token comes from the real flow (a fake host's metadata document, the consent page over
 * HTTP, the code exchange with PKCE through oauth4webapi). `BENCH_ROUNDS` (round trips per side)
 * and `BENCH_SECONDS` / `BENCH_LOAD_ROUNDS` (load rounds) set the sizes.
 */
import autocannon from "autocannon";
import { spawnServer, stop } from "./load.ts";
import { freePort } from "../helpers/ports.ts";
import {
  authorizationUrl,
  consentOverHttp,
  discover,
  exchange,
  FakeHost,
  MCP_HEADERS,
  toolCall,
} from "../oauth/helpers.ts";

const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 2);
const loadRounds = Number(Deno.env.get("BENCH_LOAD_ROUNDS") ?? 4);
const TARGET = 1.2;

const kvDir = await Deno.makeTempDir();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const child = await spawnServer(new URL("../../main.ts", import.meta.url).pathname, {
  PORT: String(port),
  HOST: "127.0.0.1",
  PUBLIC_BASE_URL: base,
  KV_PATH: `${kvDir}/kv.sqlite`,
  RATE_LIMIT_PER_MINUTE: "1000000000",
  ALLOW_PRIVATE_TARGETS: "1",
}, `${base}/v1/plans`);
const host = await FakeHost.start({ name: "Bench Host" });

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

try {
  const signup = await fetch(`${base}/v1/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "oauth-bench@example.com" }),
  }).then((r) => r.json());
  const key: string = signup.api_key;
  const d = await discover(`${base}/mcp`);
  const client = host.cimdClient();
  const attempt = await authorizationUrl(d, client, host.redirectUri);
  const { location } = await consentOverHttp(attempt.url, { key });
  const tokens = await exchange(d, client, new URL(location), attempt, host.redirectUri);

  const body = toolCall("account");
  const headersFor = (bearer: string) => ({ ...MCP_HEADERS, authorization: `Bearer ${bearer}` });
  const call = (bearer: string) => () =>
    fetch(`${base}/mcp`, { method: "POST", headers: headersFor(bearer), body }).then((r) =>
      r.text()
    );
  for (const [name, bearer] of [["key", key], ["token", tokens.access_token]]) {
    const text = await call(bearer)();
    if (!text.includes(signup.account_id) || text.includes('"isError":true')) {
      throw new Error(`the ${name} call did not answer the account: ${text}`);
    }
  }
  const paths: [string, () => Promise<unknown>][] = [
    ["tools/call with an API key", call(key)],
    ["tools/call with an access token", call(tokens.access_token)],
  ];
  const times = new Map<string, number[]>(paths.map(([n]) => [n, []]));
  for (const [, fn] of paths) for (let i = 0; i < 200; i++) await fn(); // warm-up
  for (let block = 0; block < rounds / 100; block++) {
    for (const [name, fn] of block % 2 === 0 ? paths : [...paths].reverse()) {
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        await fn();
        times.get(name)!.push(performance.now() - t);
      }
    }
  }
  console.log(`oauth: sequential round trips, ${rounds} each, interleaved`);
  const [keyStats, tokenStats] = paths.map(([n]) => stats(times.get(n)!));
  for (const [[name], s] of paths.map((p, i) => [p, [keyStats, tokenStats][i]] as const)) {
    console.log(
      `oauth: ${name.padEnd(32)} p50 ${s.p50.toFixed(3)} ms  p99 ${s.p99.toFixed(3)} ms  ` +
        `mean ${s.mean.toFixed(3)} ms`,
    );
  }

  interface Load {
    requests: { total: number };
    duration: number;
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  }
  const cannon = (bearer: string, duration = seconds) =>
    autocannon({
      url: `${base}/mcp`,
      method: "POST",
      headers: headersFor(bearer),
      body,
      connections: 50,
      duration,
    } as never) as Promise<Load>;
  await cannon(key, 1);
  await cannon(tokens.access_token, 1);
  const loads = { key: [] as Load[], token: [] as Load[] };
  for (let r = 0; r < loadRounds; r++) {
    const order = r % 2 === 0 ? ["key", "token"] as const : ["token", "key"] as const;
    for (const side of order) {
      loads[side].push(await cannon(side === "key" ? key : tokens.access_token));
    }
  }
  const rps = (ls: Load[]) =>
    ls.reduce((a, l) => a + l.requests.total, 0) / ls.reduce((a, l) => a + l.duration, 0);
  const bad = (ls: Load[]) => ls.reduce((a, l) => a + l.non2xx + l.errors, 0);
  const keyRps = rps(loads.key);
  const tokenRps = rps(loads.token);
  console.log(`oauth: 50 connections, ${loadRounds} rounds of ${seconds} s each, alternating`);
  console.log(
    `oauth: API key ${Math.round(keyRps).toLocaleString("en-US")} req/s, access token ` +
      `${Math.round(tokenRps).toLocaleString("en-US")} req/s (non-2xx/errors ` +
      `${bad(loads.key)} / ${bad(loads.token)})`,
  );
  const ratios = {
    p50: tokenStats.p50 / keyStats.p50,
    mean: tokenStats.mean / keyStats.mean,
    load: keyRps / tokenRps,
  };
  console.log(
    `oauth: token / key: p50 ${ratios.p50.toFixed(2)}×, mean ${ratios.mean.toFixed(2)}×, ` +
      `under load ${ratios.load.toFixed(2)}× (target ≤ ${TARGET}×): ` +
      (Object.values(ratios).every((r) => r <= TARGET) ? "PASS" : "OVER"),
  );
} finally {
  await host.close();
  await stop(child);
  await Deno.remove(kvDir, { recursive: true });
}
