/**
 * Issues 13 and 21's benchmark: the `account` tool called over `/mcp` against `GET /v1/account`,
 * on one server process, in one run. Target (issue 21): an MCP round trip within 2× the REST one
 * both in latency (sequential round trips, p50 and p99) and in requests per second under 50
 * connections; the last lines print both ratios and the verdict.
 *
 * The MCP requests are the exact bytes the SDK's own client sends (recorded from a real
 * `callTool`), replayed with plain fetch so the client library's own work is not billed to the
 * server; the SDK client's full round trip is printed too. Sequential round trips (one
 * connection, latency) and 50 connections (autocannon, throughput), each in interleaved rounds so
 * that drift on a shared machine hits both sides alike. `BENCH_ROUNDS` (round trips per path),
 * `BENCH_SECONDS` (seconds per load round) and `BENCH_LOAD_ROUNDS` set the sizes.
 */
import autocannon from "autocannon";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { spawnServer, stop } from "./load.ts";
import { freePort } from "../helpers/ports.ts";

const here = new URL(".", import.meta.url).pathname;
const rounds = Number(Deno.env.get("BENCH_ROUNDS") ?? 2000);
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 2);
const loadRounds = Number(Deno.env.get("BENCH_LOAD_ROUNDS") ?? 5);

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

  interface Load {
    requests: { average: number; total: number };
    latency: { p50: number; p99: number };
    duration: number;
    non2xx: number;
    errors: number;
  }
  const cannon = (opts: Record<string, unknown>) =>
    autocannon({ connections: 50, duration: seconds, ...opts } as never) as Promise<Load>;
  const loads: [string, Record<string, unknown>][] = [
    ["GET /v1/account", { url: `${base}/v1/account`, headers: { authorization: `Bearer ${key}` } }],
    ["MCP account (2026-07-28)", {
      url: `${base}/mcp`,
      method: "POST",
      headers: modern.request.headers,
      body: modern.request.body,
    }],
    ["MCP account (2025-11-25)", {
      url: `${base}/mcp`,
      method: "POST",
      headers: legacy.request.headers,
      body: legacy.request.body,
    }],
  ];
  const results = new Map<string, Load[]>(loads.map(([n]) => [n, []]));
  for (const [, opts] of loads) await cannon({ ...opts, duration: 1 }); // warm-up
  // Rounds in alternating order: REST, MCP, … then MCP, …, REST.
  for (let round = 0; round < loadRounds; round++) {
    for (const [name, opts] of round % 2 === 0 ? loads : [...loads].reverse()) {
      results.get(name)!.push(await cannon(opts));
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  /** Requests per second over every round; latency percentiles as their median over rounds. */
  const combine = (rs: Load[]) => {
    const total = rs.reduce((a, r) => a + r.requests.total, 0);
    const time = rs.reduce((a, r) => a + r.duration, 0);
    return {
      rps: total / time,
      p50: median(rs.map((r) => r.latency.p50)),
      p99: median(rs.map((r) => r.latency.p99)),
      spread: rs.map((r) => Math.round(r.requests.average).toLocaleString("en-US")).join(" / "),
      bad: rs.reduce((a, r) => a + r.non2xx + r.errors, 0),
    };
  };
  console.log(`mcp: 50 connections, ${loadRounds} rounds of ${seconds} s each (autocannon)`);
  const load = new Map([...results].map(([n, rs]) => [n, combine(rs)]));
  for (const [name, r] of load) {
    console.log(
      `mcp: ${name.padEnd(28)} ${Math.round(r.rps).toLocaleString("en-US")} req/s ` +
        `(rounds ${r.spread})  p50 ${r.p50} ms  p99 ${r.p99} ms  non-2xx/errors ${r.bad}`,
    );
  }

  const floorMean = stats(times.get("MCP SDK alone, constant tool")!).mean;
  const modernStats = stats(times.get("MCP account (2026-07-28)")!);
  console.log(
    `mcp: our MCP path against the SDK alone: ${(modernStats.mean / floorMean).toFixed(2)}× ` +
      `(the SDK alone is ${(floorMean / restStats.mean).toFixed(2)}× REST)`,
  );
  const x = (v: number) => `${v.toFixed(2)}×`;
  const restLoad = load.get("GET /v1/account")!;
  const verdicts: boolean[] = [];
  for (const era of ["2026-07-28", "2025-11-25"]) {
    const seq = stats(times.get(`MCP account (${era})`)!);
    const under = load.get(`MCP account (${era})`)!;
    const p50 = seq.p50 / restStats.p50;
    const p99 = seq.p99 / restStats.p99;
    // Each round's REST and MCP runs are neighbours in time: the median of their ratios shrugs
    // off the other tenants' load, which moves from one round to the next.
    const rest = results.get("GET /v1/account")!;
    const perRound = results.get(`MCP account (${era})`)!.map((r, i) =>
      rest[i].requests.average / r.requests.average
    );
    const rps = median(perRound);
    console.log(
      `mcp: MCP (${era}) against REST: latency ${x(p50)} p50, ${x(p99)} p99 ` +
        `(sequential; under load ${x(under.p50 / Math.max(restLoad.p50, 1))} p50, ` +
        `${x(under.p99 / Math.max(restLoad.p99, 1))} p99); requests per second ${x(rps)} ` +
        `(REST/MCP, 50 connections, median of rounds ${perRound.map(x).join(" ")}; ` +
        `${x(restLoad.rps / under.rps)} over all rounds)`,
    );
    if (era === "2026-07-28") verdicts.push(p50 <= 2, rps <= 2);
  }
  const [latencyOk, rpsOk] = verdicts;
  console.log(
    `mcp: target ≤ 2× (2026-07-28 account against GET /v1/account): latency p50 ` +
      `${latencyOk ? "PASS" : "FAIL"}, requests per second ${rpsOk ? "PASS" : "FAIL"}`,
  );
  await modern.client.close();
  await legacy.client.close();
} finally {
  await stop(child);
  await stop(floor);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
}
