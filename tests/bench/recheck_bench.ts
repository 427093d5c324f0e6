/**
 * Re-check benchmark: a generated 1,000-page site on loopback where every fifth page has no
 * title (200 affected pages) is audited through the real service (`POST /v1/projects/{id}/audits`,
 * polled until completed); then `title_missing` is re-checked on its first 100 URLs
 * (`POST /v1/audits/{id}/issues/title_missing/recheck`, polled until completed), three times.
 * Both run in the same process with the same operator settings (concurrency, step size), so the
 * ratio of the two wall times is what a user saves by re-checking a fix instead of re-auditing.
 *
 * Prints: the audit's wall time and pages/s, the re-check's median wall time and URLs/s, and the
 * ratio re-check / audit (the baseline, measured in the same run).
 *
 * Run: `deno run -A --unstable-kv --unstable-cron tests/bench/recheck_bench.ts` (part of
 * `deno task bench`). `PAGES=300` for a quick run.
 */
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { grantCredits } from "../helpers/credits.ts";

const PAGES = Number(Deno.env.get("PAGES") ?? 1000);
const RUNS = 3;
const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words ").split(" ");

/** A ~30 KB page with 40 internal links; every fifth page has no title. */
function makePage(i: number): string {
  const links: string[] = [];
  for (let k = 1; k <= 40; k++) links.push(`/p/${(i * 7 + k * 13) % PAGES}`);
  if (i + 1 < PAGES) links.push(`/p/${i + 1}`);
  const paras: string[] = [];
  for (let p = 0; p < 30; p++) {
    const w: string[] = [];
    for (let k = 0; k < 60; k++) w.push(WORDS[(i + p * 7 + k * 3) % WORDS.length]);
    paras.push(`<p>Page ${i} part ${p}. ${w.join(" ")}.</p>`);
  }
  const title = i % 5 === 1 ? "" : `<title>Generated page number ${i} of the benchmark</title>`;
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">${title}
<meta name="description" content="Benchmark page ${i}: a generated page with enough text.">
<meta name="viewport" content="width=device-width, initial-scale=1"></head><body><nav><ul>${
    links.map((l, k) => `<li><a href="${l}">Topic ${k}</a></li>`).join("")
  }</ul></nav><main><h1>Page ${i}</h1>${paras.join("\n")}</main></body></html>`;
}

const pages = new Map<string, string>();
for (let i = 0; i < PAGES; i++) pages.set(`/p/${i}`, makePage(i));
const ac = new AbortController();
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {}, signal: ac.signal },
  (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/robots.txt") return new Response("User-agent: *\nDisallow:\n");
    const body = path === "/" ? pages.get("/p/0") : pages.get(path);
    if (!body) return new Response("not found", { status: 404 });
    return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
  },
);
const origin = `http://127.0.0.1:${server.addr.port}`;

/** Polls `path` until its status ends; returns the body. */
async function until(app: TestApp, key: string, path: string) {
  while (true) {
    const res = await app.req("GET", path, { key });
    if (res.body?.status === "completed" || res.body?.status === "failed") return res.body;
    await new Promise((r) => setTimeout(r, 10));
  }
}

const app = await startTestApp({ env: { CRAWL_MAX_PAGES: String(PAGES + 10) } });
try {
  const { accountId } = await app.signup();
  const key = await app.liveKey(accountId);
  await grantCredits(app, accountId, 1000);
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });

  const t0 = performance.now();
  const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
  const audit = await until(app, key, `/v1/audits/${started.body.audit_id}`);
  const auditS = (performance.now() - t0) / 1000;
  if (audit.status !== "completed") throw new Error(`audit ${JSON.stringify(audit)}`);
  const top = audit.summary.top_issues.find((t: { check: string }) => t.check === "title_missing");

  const times: number[] = [];
  let last = null;
  for (let run = 0; run < RUNS; run++) {
    const t = performance.now();
    const res = await app.req(
      "POST",
      `/v1/audits/${started.body.audit_id}/issues/title_missing/recheck`,
      { key },
    );
    last = await until(app, key, res.body.poll);
    times.push((performance.now() - t) / 1000);
    if (last.status !== "completed") throw new Error(`re-check ${JSON.stringify(last)}`);
  }
  const recheckS = [...times].sort((a, b) => a - b)[times.length >> 1];
  const ratio = recheckS / auditS;
  console.log(
    `recheck: site of ${PAGES} pages, title_missing on ${top?.affected_count ?? 0} of them`,
  );
  console.log(
    `recheck: full audit ${auditS.toFixed(2)} s (${(PAGES / auditS).toFixed(0)} pages/s, ` +
      `the baseline)`,
  );
  console.log(
    `recheck: ${last.urls_checked} URLs re-checked in ${recheckS.toFixed(3)} s median of ` +
      `${RUNS} (${times.map((t) => t.toFixed(3)).join(", ")}; ` +
      `${(last.urls_checked / recheckS).toFixed(0)} URLs/s), ${last.urls_left_out} left out, ` +
      `counts ${JSON.stringify(last.counts)}`,
  );
  console.log(
    `recheck: re-check / full audit wall time ${ratio.toFixed(3)} ` +
      `(${(1 / ratio).toFixed(1)}x faster)`,
  );
} finally {
  await app.close();
  ac.abort();
  await server.finished;
}
