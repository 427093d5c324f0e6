/**
 * The HTML report's cost on a large audit: a completed audit of REPORT_BENCH_PAGES URLs (default
 * 100,000) written straight into the store (page records, 40 fired checks with their stored
 * items, 50 earlier audits for the history), then the report read with its key and through a
 * share link, unfiltered, filtered and one issue's items, against `GET /v1/audits/{id}` in the
 * same run: time to first byte and to the full page, p50 and p95, and the ratio to the baseline.
 * The report reads a bounded amount whatever the site's size (one inventory page, each issue's
 * first items, at most 50 earlier audits), so the ratio is what a large site costs.
 *
 * Run: deno run -A --unstable-kv tests/bench/report_bench.ts
 */
import { ALL_CHECKS } from "../../domain/audit_engine/checks/index.ts";
import type { PageRecord } from "../../domain/audit_engine/crawl/store.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";
import { keys } from "../../kv/keys.ts";
import { startTestApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";

const PAGES = Number(Deno.env.get("REPORT_BENCH_PAGES") ?? 100_000);
const RUNS = Number(Deno.env.get("REPORT_BENCH_RUNS") ?? 30);
const CHECKS = ALL_CHECKS.slice(0, 40).map((c) => c.id);
const ORIGIN = "https://bench.example";

const app = await startTestApp({
  env: { RATE_LIMIT_PER_MINUTE: "1000000000", SHARED_PAGE_RATE_PER_MINUTE: "1000000000" },
});
const { accountId, live } = await liveWithCredits(app, 0);
const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: ORIGIN } });
const projectId: string = proj.body.project_id;

function auditRecord(id: string, at: number, prev: string | null, score: number): AuditRecord {
  return {
    id,
    accountId,
    projectId,
    status: "completed",
    funding: { kind: "subscription" },
    createdAt: at,
    runningAt: at,
    completedAt: at,
    score,
    summary: {
      issues_critical: 10,
      issues_warning: 20,
      issues_info: 30,
      top_issues: [],
      categories: {
        performance: score,
        security: 90,
        indexability: score - 5,
        mobile: 100,
        structure: 70,
        agents: 80,
      },
    },
    error: null,
    attempts: 1,
    leaseUntil: at,
    jobsCompleted: PAGES,
    jobsFailed: 0,
    changes: { previous_audit_id: prev, new: 5, persisting: 30, fixed: 2 },
    limitsHit: {},
  };
}

function page(i: number): PageRecord {
  const status = i % 50 === 0 ? 404 : i % 37 === 0 ? 301 : 200;
  return {
    url: `${ORIGIN}/p/${String(i).padStart(6, "0")}`,
    hash: i,
    seq: i,
    depth: 1 + (i % 6),
    state: "fetched",
    status,
    failure: null,
    location: status === 301 ? `${ORIGIN}/p/000000` : null,
    externalLocation: false,
    html: status === 200,
    noindex: i % 97 === 0,
    inSitemap: true,
    title: `Generated page ${i} of the report benchmark`,
    description: null,
    h1: null,
    words: 400,
    textHash: i,
    canonicalOther: null,
    ttfbMs: 120,
    bytes: 30_000,
    outlinks: 40,
    inlinks: 3,
    linkScore: status === 200 ? i % 100 : undefined,
    checks: CHECKS.filter((_, k) => (i + k) % 20 === 0),
  };
}

const t0 = performance.now();
const now = app.clock.now();
let prev: string | null = null;
for (let h = 0; h < 50; h++) {
  const id = `aud_benchhistory${String(h).padStart(8, "0")}`;
  await app.kv.set(
    keys.audit(accountId, id),
    auditRecord(id, now - (50 - h) * 86_400_000, prev, 60 + (h % 30)),
  );
  prev = id;
}
const auditId = "aud_benchreport000000001";
await app.kv.atomic()
  .set(keys.audit(accountId, auditId), auditRecord(auditId, now, prev, 81))
  .set(keys.auditOwner(auditId), accountId)
  .set(keys.auditIssues(auditId), {
    previousAuditId: prev,
    issues: CHECKS.map((check, k) => ({
      check,
      affected: 100 + k,
      eligible: PAGES,
      stored: 2000,
      change: k % 7 === 0 ? "new" as const : "persisting" as const,
    })),
  })
  .commit();
for (let i = 0; i < PAGES; i += 400) {
  const op = app.kv.atomic();
  for (let k = i; k < Math.min(PAGES, i + 400); k++) {
    const p = page(k);
    op.set(keys.auditPage(auditId, p.url), p);
  }
  await op.commit();
}
for (const check of CHECKS) {
  const op = app.kv.atomic();
  for (let n = 0; n < 50; n++) {
    const url = `${ORIGIN}/p/${String(n * 20).padStart(6, "0")}`;
    op.set(keys.auditFinding(auditId, check, url, 0), { url, value: `evidence ${n}`, length: n });
  }
  await op.commit();
}
console.log(
  `wrote a ${PAGES.toLocaleString("en-US")}-URL audit in ${
    ((performance.now() - t0) / 1000).toFixed(1)
  } s`,
);

const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key: live, body: {} });
const shareUrl = app.url + String(share.body.url).slice("http://localhost:8000".length);

async function timed(url: string, key?: string) {
  const start = performance.now();
  const res = await fetch(url, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const first = performance.now() - start;
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${body.slice(0, 200)}`);
  return { first, full: performance.now() - start, bytes: body.length };
}

const cases: [string, string, string | undefined][] = [
  ["GET /v1/audits/{id} (baseline)", `${app.url}/v1/audits/${auditId}`, live],
  ["report, with the key", `${app.url}/v1/audits/${auditId}/report`, live],
  ["report, shared link", shareUrl, undefined],
  ["report ?status=4xx", `${app.url}/v1/audits/${auditId}/report?status=4xx`, live],
  ["report ?issue=<check>", `${app.url}/v1/audits/${auditId}/report?issue=${CHECKS[3]}`, live],
];
const samples = new Map<string, { first: number[]; full: number[]; bytes: number }>();
for (const [name] of cases) samples.set(name, { first: [], full: [], bytes: 0 });
// Warm-up, then interleaved runs so the machine's noise falls on every case alike.
for (const [, url, key] of cases) await timed(url, key);
for (let r = 0; r < RUNS; r++) {
  for (const [name, url, key] of cases) {
    const t = await timed(url, key);
    const s = samples.get(name)!;
    s.first.push(t.first);
    s.full.push(t.full);
    s.bytes = t.bytes;
  }
}

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};
const base = samples.get(cases[0][0])!;
console.log(
  `${RUNS} runs each, ${PAGES.toLocaleString("en-US")} URLs, 40 issues, 51 audits of history`,
);
for (const [name] of cases) {
  const s = samples.get(name)!;
  console.log(
    `${name.padEnd(32)} first byte p50 ${pct(s.first, 0.5).toFixed(1)} ms p95 ${
      pct(s.first, 0.95).toFixed(1)
    } ms; full p50 ${pct(s.full, 0.5).toFixed(1)} ms p95 ${pct(s.full, 0.95).toFixed(1)} ms ` +
      `(${(pct(s.full, 0.5) / pct(base.full, 0.5)).toFixed(1)}× baseline); ${
        Math.round(s.bytes / 1024)
      } KiB`,
  );
}
if (Deno.env.get("REPORT_BENCH_PROFILE")) {
  const { loadAuditReport } = await import("../../domain/audits/report_data.ts");
  const { auditReportHtml } = await import("../../app/reports/audit_page.ts");
  const deps = app.service.services.deps;
  for (let i = 0; i < 5; i++) {
    const a = performance.now();
    const d = await loadAuditReport(deps, { accountId, mode: "live" }, auditId, {});
    const b = performance.now();
    const html = auditReportHtml(d, { baseUrl: "x", selfPath: "/r", shared: false });
    const c = performance.now();
    console.log(`load ${(b - a).toFixed(1)} ms, render ${(c - b).toFixed(1)} ms, ${html.length}`);
  }
}
await app.close();
