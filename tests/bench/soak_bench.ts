/**
 * Issue 8's soak: a bounded run (SOAK_SECONDS, default 120) of steady mixed load against the real
 * server as a child process on a KV file, sampling every SOAK_SAMPLE_SECONDS (5) the child's RSS
 * (/proc/<pid>/status VmRSS), the KV file size (sqlite + WAL) and the live rows of the expiring
 * collections (read through a second handle on the same file), then printing first/last/max and
 * a growth verdict.
 *
 * The mix, at a steady SOAK_RATE (300 req/s): authenticated reads rotating over 20 keys, replayed
 * idempotent POSTs, unauthenticated GET /v1/plans from a pool of 3,000 client IPs (each IP a
 * rate-limit bucket in memory and a row in KV), and bad keys. Per-key and per-IP counts stay
 * under 600 a minute, so no 429 is expected. Rate-limit rows expire after two minutes and
 * idempotency records after 24 hours (that last one shown with the manual clock in
 * tests/fuzz/expiry.test.ts: a soak cannot wait a day).
 */
import autocannon from "autocannon";
import { spawnServer, stop } from "./load.ts";
import { freePort } from "../helpers/ports.ts";

const here = new URL(".", import.meta.url).pathname;
const SECONDS = Number(Deno.env.get("SOAK_SECONDS") ?? 120);
const SAMPLE_S = Number(Deno.env.get("SOAK_SAMPLE_SECONDS") ?? 5);
const RATE = Number(Deno.env.get("SOAK_RATE") ?? 300);
const KEYS = 20;
const IPS = 3_000;

const kvDir = await Deno.makeTempDir();
const kvPath = `${kvDir}/kv.sqlite`;
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const child = await spawnServer(`${here}../../main.ts`, {
  PORT: String(port),
  HOST: "127.0.0.1",
  KV_PATH: kvPath,
  TRUST_PROXY: "1",
  // The bench opens all its accounts from one /24.
  SIGNUP_SANDBOXES_PER_BLOCK_PER_DAY: "100000",
}, `${base}/v1/plans`);

interface Sample {
  t: number;
  rssKb: number;
  kvBytes: number;
  rateRows: number;
  idemRows: number;
}

async function rssKb(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

async function fileSize(path: string): Promise<number> {
  return (await Deno.stat(path).catch(() => ({ size: 0 }))).size;
}

async function count(kv: Deno.Kv, prefix: string): Promise<number> {
  let n = 0;
  for await (const _ of kv.list({ prefix: [prefix] })) n++;
  return n;
}

const samples: Sample[] = [];
let result;
let reader: Deno.Kv | null = null;
try {
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i++) {
    const s = await fetch(`${base}/v1/accounts`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `10.7.0.${i + 1}` },
      body: JSON.stringify({ email: `soak${i}@bench.example` }),
    }).then((r) => r.json());
    keys.push(s.api_key);
  }
  reader = await Deno.openKv(kvPath);

  const sample = async (t0: number) => {
    samples.push({
      t: Math.round((performance.now() - t0) / 1000),
      rssKb: await rssKb(child.pid),
      kvBytes: (await fileSize(kvPath)) + (await fileSize(`${kvPath}-wal`)),
      rateRows: await count(reader!, "rate_limits"),
      idemRows: await count(reader!, "idempotency"),
    });
  };

  let n = 0;
  const next = () => {
    const i = n++;
    const slot = i % 10;
    const key = keys[Math.floor(i / 10) % KEYS];
    if (slot < 4) {
      const path = slot < 2 ? "/v1/account" : slot === 2 ? "/v1/projects" : "/v1/api-keys";
      return { method: "GET", path, headers: { authorization: `Bearer ${key}` } };
    }
    if (slot === 4) {
      return {
        method: "POST",
        path: "/v1/api-keys",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
          "idempotency-key": `soak-${Math.floor(i / 10) % KEYS}`,
        },
        body: "{}",
      };
    }
    const ip = i % IPS;
    const headers = { "x-forwarded-for": `10.${100 + (ip >> 16)}.${(ip >> 8) & 255}.${ip & 255}` };
    if (slot === 9) {
      return {
        method: "GET",
        path: "/v1/account",
        headers: { ...headers, authorization: "Bearer sk_sandbox_doesnotexist0000000000" },
      };
    }
    return { method: "GET", path: "/v1/plans", headers };
  };

  const t0 = performance.now();
  await sample(t0);
  const timer = setInterval(() => void sample(t0), SAMPLE_S * 1000);
  try {
    result = await autocannon({
      url: base,
      connections: 20,
      duration: SECONDS,
      overallRate: RATE,
      requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, ...next() }) }],
    });
  } finally {
    clearInterval(timer);
  }
  await sample(t0);
} finally {
  reader?.close();
  await stop(child);
  await Deno.remove(kvDir, { recursive: true }).catch(() => {});
}

const pick = (f: (s: Sample) => number) => {
  const v = samples.map(f);
  return { first: v[0], last: v[v.length - 1], max: Math.max(...v) };
};
const rss = pick((s) => s.rssKb);
const kv = pick((s) => s.kvBytes);
const rate = pick((s) => s.rateRows);
const idem = pick((s) => s.idemRows);
// Growth after warm-up: RSS at the end against RSS halfway (the first minute fills the limiter's
// per-IP buckets and the JIT; a leak keeps climbing after it).
const quarter = samples[Math.floor(samples.length / 2)];
const rssGrowth = (rss.last - quarter.rssKb) / quarter.rssKb;
const mb = (kb: number) => (kb / 1024).toFixed(1);

console.log(
  `soak: ${SECONDS} s at ${RATE} req/s: ${result.requests.total} requests, non-2xx ${result.non2xx}, ` +
    `5xx ${
      result["5xx"]
    }, errors ${result.errors}, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
);
console.log(
  `soak: RSS MB first ${mb(rss.first)}, at 50% ${mb(quarter.rssKb)}, last ${mb(rss.last)}, max ${
    mb(rss.max)
  } (growth after warm-up ${(100 * rssGrowth).toFixed(1)}%)`,
);
console.log(
  `soak: KV file bytes first ${kv.first}, last ${kv.last}, max ${kv.max}; live rate_limits rows first ${rate.first}, last ${rate.last}, max ${rate.max}; idempotency rows last ${idem.last}`,
);
console.log(
  `soak: samples t(s)/RSS MB/rate rows: ${
    samples.map((s) => `${s.t}/${mb(s.rssKb)}/${s.rateRows}`).join(" ")
  }`,
);
// Rate-limit rows should plateau at about two windows' worth of buckets once the first ones
// expire (after 120 s): 20 keys plus up to 3,000 IPs per minute.
const bound = 2 * (KEYS + IPS) + 100;
const rssOk = rssGrowth < 0.1;
const rateOk = rate.max <= bound;
console.log(
  `soak: verdict RSS ${rssOk ? "stable" : "GROWING"}; rate-limit rows ${
    rateOk ? `bounded (≤ ${bound})` : `ABOVE ${bound}`
  }; idempotency rows ${idem.last <= KEYS + 5 ? "bounded (one per key used)" : "GROWING"}`,
);
if (result["5xx"] > 0 || result.non2xx > Math.ceil(result.requests.total * 0.11) || !rssOk) {
  Deno.exit(1);
}
