/**
 * Issue 8's load benchmark: the real server as a child process (file KV, the interface's 600
 * requests per minute per key), 50 accounts with their sandbox keys and one project each, driven
 * by autocannon (npm) over a mix of authenticated reads and idempotent POSTs rotating across the
 * 50 keys: GET /v1/account, GET /v1/projects, GET /v1/projects/{id}, and POST /v1/api-keys with
 * a per-key Idempotency-Key (a replay after the first). Prints throughput, p50/p99, non-2xx and
 * 5xx counts, and the ratio to a bare `Deno.serve` measured with the same tool in the same run.
 *
 * Every key gets the same number of requests, kept under its 600 per minute, so no 429 is
 * expected; the X-RateLimit-Remaining values each key saw must be exactly distinct and
 * consecutive (no lost or double counts under concurrency). A last phase hits one fresh key 601
 * times in sequence: Remaining must fall by exactly 1 per request and the 601st must be 429.
 *
 * Env: LOAD_CONNECTIONS (50), LOAD_PER_KEY (500 measured requests per key).
 */
import autocannon from "autocannon";
import { spawnServer, stop } from "./load.ts";
import { freePort } from "../helpers/ports.ts";

const here = new URL(".", import.meta.url).pathname;
const CONNECTIONS = Number(Deno.env.get("LOAD_CONNECTIONS") ?? 50);
const PER_KEY = Number(Deno.env.get("LOAD_PER_KEY") ?? 500);
const WARMUP_PER_KEY = 40;
const KEYS = 50;
const LIMIT = 600;

interface Stats {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  s4xx: number;
  s5xx: number;
  errors: number;
  timeouts: number;
  seconds: number;
}

// deno-lint-ignore no-explicit-any
function stats(r: any): Stats {
  return {
    // Completed requests over the run's wall time (per-second samples are too coarse here).
    rps: r.requests.total / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    s4xx: r["4xx"],
    s5xx: r["5xx"],
    errors: r.errors,
    timeouts: r.timeouts,
    seconds: r.duration,
  };
}

// Baseline: bare Deno.serve, same tool, same connections, about as many requests.
const barePort = freePort();
const bareBase = `http://127.0.0.1:${barePort}`;
const bareChild = await spawnServer(`${here}servers/bare.ts`, { PORT: String(barePort) }, bareBase);
let bare: Stats;
try {
  await autocannon({ url: bareBase, connections: CONNECTIONS, amount: 5_000 });
  bare = stats(await autocannon({ url: bareBase, connections: CONNECTIONS, duration: 5 }));
} finally {
  await stop(bareChild);
}

const kvDir = await Deno.makeTempDir();
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const child = await spawnServer(`${here}../../main.ts`, {
  PORT: String(port),
  HOST: "127.0.0.1",
  KV_PATH: `${kvDir}/kv.sqlite`,
  TRUST_PROXY: "1",
  // The bench opens all its accounts from one /24.
  SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "100000",
  // Projects on made-up hosts (`site1.example`, …): no DNS check at creation.
  ALLOW_PRIVATE_TARGETS: "1",
}, `${base}/v1/plans`);

let mixed: Stats;
let exactness = "";
let exactFailures = 0;
let sequential = "";
let sequentialOk = false;
try {
  // 50 accounts, each from its own IP (signups are 5 per hour per IP), one project each.
  const accounts: { key: string; projectId: string }[] = [];
  for (let i = 0; i < KEYS; i++) {
    const signup = await fetch(`${base}/v1/accounts`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-forwarded-for": `10.8.${i >> 8}.${i & 255}`,
      },
      body: JSON.stringify({ email: `load${i}@bench.example` }),
    }).then((r) => r.json());
    const project = await fetch(`${base}/v1/projects`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${signup.api_key}` },
      body: JSON.stringify({ url: `https://site${i}.example` }),
    }).then((r) => r.json());
    accounts.push({ key: signup.api_key, projectId: project.project_id });
  }

  /** Request i goes to key i % 50; the mix cycles over ten slots per key. */
  const mix = (i: number) => {
    const k = i % KEYS;
    const slot = Math.floor(i / KEYS) % 10;
    const a = accounts[k];
    const headers: Record<string, string> = {
      authorization: `Bearer ${a.key}`,
      "x-request-id": `k${k}-${i}`,
    };
    if (slot < 4) return { method: "GET", path: "/v1/account", headers };
    if (slot < 6) return { method: "GET", path: "/v1/projects", headers };
    if (slot < 8) return { method: "GET", path: `/v1/projects/${a.projectId}`, headers };
    return {
      method: "POST",
      path: "/v1/api-keys",
      headers: { ...headers, "content-type": "application/json", "idempotency-key": `bench-${k}` },
      body: '{"name":"bench"}',
    };
  };

  const run = async (perKey: number, record: boolean) => {
    let n = 0;
    const seen = new Map<string, number[]>();
    const r = await autocannon({
      url: base,
      connections: CONNECTIONS,
      amount: KEYS * perKey,
      requests: [{
        setupRequest: (req: Record<string, unknown>) => ({ ...req, ...mix(n++) }),
        onResponse: (
          _status: number,
          _body: string,
          _ctx: unknown,
          headers: Record<string, string>,
        ) => {
          if (!record) return;
          // Header names arrive as sent; replays keep the handler's own spelling.
          headers = Object.fromEntries(
            Object.entries(headers).map(([name, v]) => [name.toLowerCase(), v]),
          );
          const k = /^k(\d+)-/.exec(headers["x-request-id"] ?? "")?.[1];
          if (k === undefined) return;
          const id = `${k}@${headers["x-ratelimit-reset"]}`;
          const list = seen.get(id) ?? [];
          list.push(Number(headers["x-ratelimit-remaining"]));
          seen.set(id, list);
        },
      }],
    });
    return { r: stats(r), seen };
  };

  await run(WARMUP_PER_KEY, false);
  const measured = await run(PER_KEY, true);
  mixed = measured.r;
  // Exactness: per key and window, the Remaining values are distinct and consecutive.
  let windows = 0;
  for (const [id, values] of measured.seen) {
    windows++;
    const sorted = [...values].sort((a, b) => a - b);
    const consecutive = sorted.every((v, j) => j === 0 || v === sorted[j - 1] + 1);
    if (!consecutive || new Set(values).size !== values.length) {
      exactFailures++;
      if (exactFailures <= 3) console.log(`load: inexact remaining for ${id}: ${sorted.join(",")}`);
    }
  }
  exactness = `${windows} key-windows checked, ${exactFailures} inexact`;

  // Sequential exactness on one fresh key: 600 allowed, each one less, then 429.
  for (let attempt = 0; attempt < 3 && !sequentialOk; attempt++) {
    const s = await fetch(`${base}/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.9.0.${attempt + 1}` },
      body: JSON.stringify({ email: `seq${attempt}@bench.example` }),
    }).then((r) => r.json());
    let expected = LIMIT - 1;
    let reset = "";
    let ok = true;
    let crossed = false;
    let last = 0;
    for (let i = 0; i < LIMIT + 1; i++) {
      const res = await fetch(`${base}/v1/account`, {
        headers: { authorization: `Bearer ${s.api_key}` },
      });
      await res.body?.cancel();
      const rem = Number(res.headers.get("x-ratelimit-remaining"));
      const r = res.headers.get("x-ratelimit-reset") ?? "";
      if (reset && r !== reset) {
        crossed = true; // the minute rolled over mid-run: try again with a new key
        break;
      }
      reset = r;
      last = res.status;
      if (i < LIMIT) {
        if (res.status !== 200 || rem !== expected) {
          ok = false;
          sequential = `request ${
            i + 1
          }: status ${res.status}, remaining ${rem}, expected ${expected}`;
          break;
        }
        expected--;
      } else if (res.status !== 429 || rem !== 0 || !res.headers.get("retry-after")) {
        ok = false;
        sequential = `request 601: status ${res.status}, remaining ${rem}`;
      }
    }
    if (crossed) continue;
    sequentialOk = ok;
    if (ok) sequential = `600 × 200 with Remaining 599..0 step 1, then ${last} with Retry-After`;
  }
} finally {
  await stop(child);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
}

const f = (n: number) => Math.round(n).toLocaleString("en-US");
const line = (name: string, s: Stats) =>
  `load: ${name.padEnd(34)} ${f(s.rps).padStart(7)} req/s  p50 ${s.p50.toFixed(2)} ms  p99 ${
    s.p99.toFixed(2)
  } ms  ${f(s.total)} requests  non-2xx ${s.non2xx}  5xx ${s.s5xx}  errors ${s.errors}`;
console.log(`load: autocannon, ${CONNECTIONS} connections, ${KEYS} keys × ${PER_KEY} requests`);
console.log(line("bare Deno.serve", bare));
console.log(line("mix (4 account/2 list/2 get/2 POST)", mixed));
console.log(`load: ratio mix/bare ${(100 * mixed.rps / bare.rps).toFixed(1)}%`);
console.log(`load: rate-limit headers under load: ${exactness}`);
console.log(`load: sequential limit check: ${sequential}`);
const failed = mixed.s5xx > 0 || mixed.non2xx > 0 || mixed.errors > 0 || exactFailures > 0 ||
  !sequentialOk;
console.log(
  `load: verdict ${failed ? "FAIL" : "ok"} (no 5xx, no non-2xx, exact rate-limit headers)`,
);
if (failed) Deno.exit(1);
