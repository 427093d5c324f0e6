/**
 * The page inventory as a file against the same inventory paged as JSON, in one run, the service
 * a child process (`main.ts` on a KV file, started as `deno task start` runs it) so its memory is
 * its own. The inventory is written into the KV file with the crawl's writers
 * (tests/helpers/seed_audit.ts), then read back:
 *
 * 1. JSON paging: every page of `GET /v1/audits/{id}/pages?limit=100`, cursor after cursor;
 * 2. `?format=csv`: the whole list in one streamed response (time to first byte, total);
 * 3. `?format=ndjson`: the same.
 *
 * For each: rows/s and the service's RSS sampled every 20 ms (baseline before, peak during).
 * 20,000 pages by default; `SERPWRIGHT_DEEP=1` makes it 100,000, `BENCH_EXPORT_PAGES` any count.
 * Run: deno run -A --unstable-kv tests/bench/export_bench.ts
 */
import {
  liveAccount,
  newProject,
  type ServerProcess,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { rssOf } from "./site_process.ts";

const PAGES = Number(
  Deno.env.get("BENCH_EXPORT_PAGES") ??
    (Deno.env.get("SERPWRIGHT_DEEP") === "1" ? 100_000 : 20_000),
);
const FLAGS = ["--v8-flags=--max-semi-space-size=2"];
const MiB = 1024 * 1024;
const AUDIT = "aud_exportbench0000001";

/** Samples the child's RSS while `work` runs: the baseline just before, and the peak. */
async function withRss<T>(pid: number, work: () => Promise<T>) {
  const before = rssOf(pid);
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  try {
    const value = await work();
    peak = Math.max(peak, rssOf(pid));
    return { value, before, peak };
  } finally {
    clearInterval(timer);
  }
}

async function pagedJson(server: ServerProcess, key: string) {
  let cursor: string | null = null;
  let rows = 0;
  let requests = 0;
  do {
    const q: string = cursor ? `&cursor=${cursor}` : "";
    const r = await server.req("GET", `/v1/audits/${AUDIT}/pages?limit=100${q}`, { key });
    if (r.status !== 200) throw new Error(`pages: ${r.status} ${r.text}`);
    rows += r.body.data.length;
    cursor = r.body.next_cursor;
    requests++;
  } while (cursor !== null);
  return { rows, requests, bytes: 0, firstByteMs: NaN, curve: [] as number[] };
}

/** Reads a file export to its end without keeping it: rows counted by line ends. */
async function download(server: ServerProcess, key: string, format: "csv" | "ndjson") {
  // The service's RSS at each tenth of the rows received: flat, or growing with the list.
  const curve: number[] = [];
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/audits/${AUDIT}/pages?format=${format}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (res.status !== 200) throw new Error(`${format}: ${res.status} ${await res.text()}`);
  let firstByteMs = NaN;
  let bytes = 0;
  let rows = 0;
  const decoder = new TextDecoder();
  // Each row starts with its page URL; a CSV title may hold line breaks, a URL never.
  const mark = format === "csv" ? "\r\nhttps://big.example/p/" : "\n";
  let carry = "";
  for await (const chunk of res.body!) {
    if (Number.isNaN(firstByteMs)) firstByteMs = performance.now() - t0;
    bytes += chunk.length;
    const s = carry + decoder.decode(chunk, { stream: true });
    for (let at = s.indexOf(mark); at >= 0; at = s.indexOf(mark, at + 1)) {
      if (++rows % Math.ceil(PAGES / 10) === 0) curve.push(Math.round(rssOf(server.pid) / MiB));
    }
    // Shorter than the mark: a mark cut at a chunk edge is counted once, whole.
    carry = s.slice(s.length - (mark.length - 1));
  }
  return { rows, requests: 1, bytes, firstByteMs, curve };
}

const kvFile = await tempKvPath();
const server = await startServer(
  kvFile.path,
  { RATE_LIMIT_PER_MINUTE: "100000000" },
  30_000,
  FLAGS,
);
try {
  const { accountId, key } = await liveAccount(server);
  const projectId = await newProject(server, key, "https://big.example");
  const kv = await Deno.openKv(kvFile.path);
  const t0 = performance.now();
  await seedCompletedAudit(kv, { accountId, projectId, auditId: AUDIT, pages: PAGES });
  kv.close();
  console.log(`seeded ${PAGES} pages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // Warm both paths (JIT, KV page cache) on a small read first.
  await server.req("GET", `/v1/audits/${AUDIT}/pages?limit=100`, { key });
  await fetch(`${server.url}/v1/audits/${AUDIT}/issues?format=csv`, {
    headers: { authorization: `Bearer ${key}` },
  }).then((r) => r.text());

  const results: Record<string, { ms: number; rows: number; rssBefore: number; rssPeak: number }> =
    {};
  for (
    const [name, run] of [
      ["json paging (limit=100)", () => pagedJson(server, key)],
      ["csv export", () => download(server, key, "csv")],
      ["ndjson export", () => download(server, key, "ndjson")],
    ] as const
  ) {
    const start = performance.now();
    const { value, before, peak } = await withRss(server.pid, run);
    const ms = performance.now() - start;
    if (value.rows !== PAGES) throw new Error(`${name}: ${value.rows} rows, expected ${PAGES}`);
    results[name] = { ms, rows: value.rows, rssBefore: before, rssPeak: peak };
    console.log(
      `${name}: ${value.rows} rows in ${(ms / 1000).toFixed(2)} s = ` +
        `${Math.round(value.rows / (ms / 1000))} rows/s; ${value.requests} request(s)` +
        (value.bytes ? `, ${(value.bytes / MiB).toFixed(1)} MiB` : "") +
        (Number.isNaN(value.firstByteMs) ? "" : `, first byte ${value.firstByteMs.toFixed(0)} ms`) +
        `; service RSS ${(before / MiB).toFixed(0)} -> peak ${(peak / MiB).toFixed(0)} MiB ` +
        `(+${((peak - before) / MiB).toFixed(1)})` +
        (value.curve.length ? `; RSS by tenths of the rows: ${value.curve.join(", ")} MiB` : ""),
    );
  }
  const json = results["json paging (limit=100)"];
  const csv = results["csv export"];
  console.log(
    `csv vs json paging: ${(json.ms / csv.ms).toFixed(2)}x the rows/s; RSS growth ` +
      `${((csv.rssPeak - csv.rssBefore) / MiB).toFixed(1)} MiB vs ` +
      `${((json.rssPeak - json.rssBefore) / MiB).toFixed(1)} MiB`,
  );
} finally {
  await server.kill();
  await kvFile.remove();
}
