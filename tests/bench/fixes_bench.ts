/**
 * The fixes of a large audit (issue 31): the service a child process (`main.ts` on a KV file) so
 * its memory is its own; a completed audit written straight into the KV file with the crawl's
 * writers (tests/helpers/seed_audit.ts: a title missing on every 10th page, broken links on every
 * 25th), plus 500 findings of distinct broken URLs near live ones written straight to KV, so the
 * redirect map has work to do at any size. Then:
 *
 * 1. the first `GET /v1/audits/{id}/fixes?limit=100` (works out the redirect map: one pass over
 *    every page record), its time;
 * 2. JSON paging: every page of the fixes, cursor after cursor;
 * 3. `?format=csv` and `fixes/redirects?format=nginx`: whole, streamed.
 *
 * For each: rows/s and the service's RSS (baseline before, peak during). 20,000 pages by
 * default; `SERPWRIGHT_DEEP=1` makes it 100,000, `BENCH_FIXES_PAGES` any count.
 * Run: deno task bench fixes
 */
import {
  liveAccount,
  newProject,
  type ServerProcess,
  startServer,
  tempKvPath,
} from "../proof/process.ts";
import { seedCompletedAudit, seededUrl } from "../helpers/seed_audit.ts";
import { rssOf } from "./site_process.ts";
import { keys } from "../../domain/platform/store.ts";

const PAGES = Number(
  Deno.env.get("BENCH_FIXES_PAGES") ??
    (Deno.env.get("SERPWRIGHT_DEEP") === "1" ? 100_000 : 20_000),
);
// BENCH_FIXES_V8 adds V8 flags (a capped old space shows whether a peak is garbage or held).
const FLAGS = [`--v8-flags=--max-semi-space-size=2${Deno.env.get("BENCH_FIXES_V8") ?? ""}`];
const MiB = 1024 * 1024;
const AUDIT = "aud_fixesbench00000001";
const ORIGIN = "https://big.example";

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
    const r = await server.req("GET", `/v1/audits/${AUDIT}/fixes?limit=100${q}`, { key });
    if (r.status !== 200) throw new Error(`fixes: ${r.status} ${r.text}`);
    rows += r.body.data.length;
    cursor = r.body.next_cursor;
    requests++;
  } while (cursor !== null);
  return { rows, requests };
}

async function download(server: ServerProcess, key: string, path: string) {
  const res = await fetch(`${server.url}${path}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  let rows = 0;
  for await (const chunk of res.body!) for (const b of chunk) if (b === 10) rows++;
  return { rows, requests: 1 };
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
  const projectId = await newProject(server, key, ORIGIN);
  const kv = await Deno.openKv(kvFile.path);
  const t0 = performance.now();
  // 500 broken URLs, each a typo of a live page's URL ("/p/000123" → "/p/000123-old").
  const broken = Array.from({ length: 500 }, (_, j) => ({
    target: `${seededUrl(ORIGIN, (j * 37) % PAGES)}-old`,
    anchor: `Page ${j}`,
    status: 404,
    failure: null,
  }));
  await seedCompletedAudit(kv, {
    accountId,
    projectId,
    auditId: AUDIT,
    pages: PAGES,
    origin: ORIGIN,
  });
  // Written past the crawl's cap of stored items a check (the seeded links fill it at 100k), on
  // pages of their own, so the redirect map has 500 broken URLs to place at any size.
  for (let j = 0; j < broken.length; j += 100) {
    const op = kv.atomic();
    broken.slice(j, j + 100).forEach((e, i) => {
      op.set(
        keys.auditFinding(AUDIT, "broken_internal_links", seededUrl(ORIGIN, j + i) + "?b", 0),
        { url: seededUrl(ORIGIN, j + i) + "?b", ...e },
      );
    });
    await op.commit();
  }
  kv.close();
  console.log(`seeded ${PAGES} pages in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  for (
    const [name, run] of [
      ["first page (works out the redirect map)", async () => {
        const r = await server.req("GET", `/v1/audits/${AUDIT}/fixes?limit=100`, { key });
        if (r.status !== 200) throw new Error(`fixes: ${r.status} ${r.text}`);
        return { rows: r.body.data.length, requests: 1 };
      }],
      ["json paging (limit=100)", () => pagedJson(server, key)],
      ["csv export", () => download(server, key, `/v1/audits/${AUDIT}/fixes?format=csv`)],
      [
        "nginx redirect map",
        () => download(server, key, `/v1/audits/${AUDIT}/fixes/redirects?format=nginx`),
      ],
    ] as const
  ) {
    const start = performance.now();
    const { value, before, peak } = await withRss(server.pid, run);
    const ms = performance.now() - start;
    console.log(
      `${name}: ${value.rows} rows in ${(ms / 1000).toFixed(2)} s = ` +
        `${Math.round(value.rows / (ms / 1000))} rows/s; ${value.requests} request(s); ` +
        `service RSS ${(before / MiB).toFixed(0)} -> peak ${(peak / MiB).toFixed(0)} MiB ` +
        `(+${((peak - before) / MiB).toFixed(1)})`,
    );
  }
} finally {
  await server.kill();
  await kvFile.remove();
}
