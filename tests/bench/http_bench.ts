/**
 * Issue 2's benchmark: GET /v1/account with a valid key against a bare Deno.serve answering
 * constant JSON and a constant Hono route, measured in one run on this machine, 50 connections.
 * Target: the authenticated endpoint at >= 35% of bare, p99 < 10 ms.
 */
import { load, spawnServer, stop } from "./load.ts";
import { freePort } from "../helpers/ports.ts";

const here = new URL(".", import.meta.url).pathname;
const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 5);

async function measure(script: string, env: Record<string, string>, path = "/", headers = {}) {
  const port = freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = await spawnServer(script, { ...env, PORT: String(port) }, base + "/");
  try {
    const setup =
      await (typeof path === "function" ? (path as (b: string) => Promise<string>)(base) : path);
    await load(base + setup, { seconds: 1, headers }); // warm-up
    return await load(base + setup, { seconds, headers });
  } finally {
    await stop(child);
  }
}

const bare = await measure(`${here}servers/bare.ts`, {});
const hono = await measure(`${here}servers/hono_const.ts`, {});
const ceiling = await measure(`${here}servers/hono_ceiling.ts`, {}, "/", {
  authorization: "Bearer sk_sandbox_0123456789abcdefghijklmnopqrstuvwxyzABCD",
});

const kvDir = await Deno.makeTempDir();
const appPort = freePort();
const appBase = `http://127.0.0.1:${appPort}`;
const child = await spawnServer(`${here}../../main.ts`, {
  PORT: String(appPort),
  HOST: "127.0.0.1",
  KV_PATH: `${kvDir}/kv.sqlite`,
  RATE_LIMIT_PER_MINUTE: "1000000000",
}, `${appBase}/v1/plans`);
let account;
try {
  const signup = await fetch(`${appBase}/v1/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.com" }),
  }).then((r) => r.json());
  const headers = { authorization: `Bearer ${signup.api_key}` };
  await load(`${appBase}/v1/account`, { seconds: 1, headers });
  account = await load(`${appBase}/v1/account`, { seconds, headers });
} finally {
  await stop(child);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
}

const f = (n: number) => Math.round(n).toLocaleString("en-US");
const line = (name: string, r: typeof bare) =>
  `http: ${name.padEnd(30)} ${f(r.rps).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  ` +
  `p99 ${r.p99Ms.toFixed(2)} ms  non-2xx ${r.non2xx}  errors ${r.errors}`;
const pct = (a: number, b: number) => `${(100 * a / b).toFixed(1)}%`;
console.log(`http: load tool ${bare.tool}, 50 connections, ${seconds} s per server`);
console.log(line("bare Deno.serve", bare));
console.log(line("Hono constant route", hono));
console.log(line("Hono + SHA-256 + 3 headers", ceiling));
console.log(line("GET /v1/account (auth)", account));
console.log(
  `http: account/bare ${pct(account.rps, bare.rps)} (target >= 35%, read against the ` +
    `performance budget as >= 25%), account/Hono-constant ${pct(account.rps, hono.rps)}, ` +
    `account/Hono-ceiling ${pct(account.rps, ceiling.rps)} (budget: ~75%)`,
);
console.log(`http: p99 ${account.p99Ms.toFixed(2)} ms (target < 10 ms)`);
