/**
 * Issue 13's benchmark: the `account` tool called over `/mcp` against `GET /v1/account`, on one
 * server process, in one run. Target: an MCP round trip costs no more than 2× the REST one.
 *
 * The MCP requests are the exact bytes the SDK's own client sends (recorded from a real
 * `callTool`), replayed with plain fetch so the client library's own work is not billed to the
 * server; the SDK client's full round trip is printed too. Sequential round trips (one
 * connection, latency) and 50 connections (autocannon, throughput).
 */
import autocannon from "autocannon";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { freePort, spawnServer, stop } from "./load.ts";

const here = new URL(".", import.meta.url).pathname;
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 4);

const floorPort = freePort();
const floorBase = `http://127.0.0.1:${floorPort}`;
const floor = await spawnServer(
  `${here}servers/mcp_floor.ts`,
  { PORT: String(floorPort) },
  floorBase,
);
const kvDir = await Deno.makeTempDir();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const child = await spawnServer(`${here}../../main.ts`, {
  PORT: String(port),
  HOST: "127.0.0.1",
  KV_PATH: `${kvDir}/kv.sqlite`,
  RATE_LIMIT_PER_MINUTE: "1000000000",
}, `${base}/v1/plans`);

interface Recorded {
  headers: Record<string, string>;
  body: string;
}

/** Connects the SDK client in `era` and records the request of one `account` tool call. */
async function record(key: string, era: "modern" | "legacy") {
  let last: Recorded | null = null;
  const client = new Client(
    { name: "bench", version: "1" },
    era === "modern" ? { versionNegotiation: { mode: { pin: "2026-07-28" } } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: (url, init) => {
        const body = typeof init?.body === "string" ? init.body : "";
        if (body.includes('"tools/call"')) {
          last = { headers: Object.fromEntries(new Headers(init?.headers).entries()), body };
        }
        return fetch(url, init);
      },
    }),
  );
  const res = await client.callTool({ name: "account", arguments: {} });
  if (res.isError) throw new Error(JSON.stringify(res));
  return { client, request: last! as Recorded };
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

try {
  const signup = await fetch(`${base}/v1/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "mcp-bench@example.com" }),
  }).then((r) => r.json());
  const key: string = signup.api_key;
  const modern = await record(key, "modern");
  const legacy = await record(key, "legacy");

  const rest = () =>
    fetch(`${base}/v1/account`, { headers: { authorization: `Bearer ${key}` } })
      .then((r) => r.text());
  const replay = (r: Recorded) => () =>
    fetch(`${base}/mcp`, { method: "POST", headers: r.headers, body: r.body }).then((x) =>
      x.text()
    );
  const sdk = () => modern.client.callTool({ name: "account", arguments: {} });
  const check = await replay(modern.request)();
  if (!check.includes('"account_id"') || check.includes('"isError":true')) {
    throw new Error(`the replayed tool call did not answer the account: ${check}`);
  }

  const floorCall = () =>
    fetch(`${floorBase}/mcp`, {
      method: "POST",
      headers: { ...modern.request.headers, authorization: "" },
      body: modern.request.body,
    }).then((x) => x.text());
  const paths: [string, () => Promise<unknown>][] = [
    ["GET /v1/account", rest],
    ["MCP SDK alone, constant tool", floorCall],
    ["MCP account (2026-07-28)", replay(modern.request)],
    ["MCP account (2025-11-25)", replay(legacy.request)],
    ["MCP account via SDK client", sdk],
  ];
  const times = new Map<string, number[]>(paths.map(([n]) => [n, []]));
  for (const [, fn] of paths) for (let i = 0; i < 200; i++) await fn(); // warm-up
  // Interleaved blocks, so drift on a noisy machine hits every path alike.
  for (let block = 0; block < rounds / 100; block++) {
    for (const [name, fn] of paths) {
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        await fn();
        times.get(name)!.push(performance.now() - t);
      }
    }
  }
  const restStats = stats(times.get("GET /v1/account")!);
  console.log(`mcp: sequential round trips, ${rounds} each, interleaved`);
  for (const [name] of paths) {
    const s = stats(times.get(name)!);
    console.log(
      `mcp: ${name.padEnd(28)} p50 ${s.p50.toFixed(3)} ms  p99 ${s.p99.toFixed(3)} ms  ` +
        `mean ${s.mean.toFixed(3)} ms  ${(s.mean / restStats.mean).toFixed(2)}× REST (mean)`,
    );
  }

  const cannon = (opts: Record<string, unknown>) =>
    autocannon({ connections: 50, duration: seconds, ...opts } as never) as Promise<
      { requests: { average: number }; latency: { p99: number }; non2xx: number }
    >;
  const restLoad = await cannon({
    url: `${base}/v1/account`,
    headers: { authorization: `Bearer ${key}` },
  });
  const mcpLoad = await cannon({
    url: `${base}/mcp`,
    method: "POST",
    headers: modern.request.headers,
    body: modern.request.body,
  });
  console.log(`mcp: 50 connections, ${seconds} s each (autocannon)`);
  for (const [name, r] of [["GET /v1/account", restLoad], ["MCP account", mcpLoad]] as const) {
    console.log(
      `mcp: ${name.padEnd(28)} ${Math.round(r.requests.average).toLocaleString("en-US")} req/s  ` +
        `p99 ${r.latency.p99} ms  non-2xx ${r.non2xx}`,
    );
  }
  const floorMean = stats(times.get("MCP SDK alone, constant tool")!).mean;
  const modernMean = stats(times.get("MCP account (2026-07-28)")!).mean;
  console.log(
    `mcp: our MCP path against the SDK alone: ${(modernMean / floorMean).toFixed(2)}× ` +
      `(the SDK alone is ${(floorMean / restStats.mean).toFixed(2)}× REST)`,
  );
  const ratio = modernMean / restStats.mean;
  const tput = restLoad.requests.average / mcpLoad.requests.average;
  console.log(
    `mcp: cost of an MCP round trip against REST: ${ratio.toFixed(2)}× latency, ` +
      `${tput.toFixed(2)}× per request under load (target ≤ 2×) ` +
      (ratio <= 2 ? "PASS" : "FAIL"),
  );
  await modern.client.close();
  await legacy.client.close();
} finally {
  await stop(child);
  await stop(floor);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
}
