/**
 * Render engine benchmark: a generated 50-page loopback site rendered in the packaged Chromium
 * (mobile device, every request through the guarded fetch), against raw-fetching and parsing the
 * same pages with the crawler's own extractor in the same run (the cost ratio). Prints pages per
 * second of both, the lab sample's time (10 pages under Lighthouse's mobile throttling, where the
 * simulated network dominates), peak RSS of this process and peak memory of the browser's
 * processes (PSS summed, and RSS summed for comparison).
 *
 * Then the audit pipeline (the stepped crawl, `runAuditDetailed`) on the same site: a raw audit
 * and a rendered audit (every page rendered, the default 10 in lab conditions, same pool caps as
 * the service): pages per second, peak RSS of this process (the service's role) and of the
 * browser, and the cost ratio rendered / raw audit. Last, the existing raw audit benchmark
 * (`audit_bench.ts`, 1,000 pages) runs in the same run and its figures are printed, so a change
 * in the raw audit shows next to these.
 *
 * Run: deno run -A tests/bench/render_bench.ts
 */
import { BrowserPool } from "../../domain/render/pool.ts";
import { renderPage } from "../../domain/render/renderer.ts";
import { evaluateRenderedPage } from "../../domain/render/checks.ts";
import { findProcessTree } from "../../domain/render/processes.ts";
import { safeFetch } from "../../domain/net/safe_fetch.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";

const PAGES = 50;
const LAB_PAGES = 10;
const CONCURRENCY = 2;
const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words ").split(" ");

function makePage(i: number): string {
  const links: string[] = [];
  for (let k = 1; k <= 30; k++) links.push(`/p/${(i * 7 + k * 13) % PAGES}`);
  const paras: string[] = [];
  for (let p = 0; p < 20; p++) {
    const w: string[] = [];
    for (let k = 0; k < 60; k++) w.push(WORDS[(i + p * 7 + k * 3) % WORDS.length]);
    paras.push(`<p>Page ${i} part ${p}. ${w.join(" ")}.</p>`);
  }
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Generated page ${i}</title><link rel="stylesheet" href="/site.css">
</head><body><nav>${links.map((l, k) => `<a href="${l}">Topic ${k}</a>`).join(" ")}</nav>
<main><h1>Page ${i}</h1>${paras.join("\n")}<img src="/img/${i % 5}.svg" width="300" height="200"
alt=""></main><script src="/app.js" defer></script></body></html>`;
}

const CSS = "body{font:16px/1.5 sans-serif;margin:16px}nav a{display:inline-block;padding:14px}";
const JS = `document.querySelector("main").insertAdjacentHTML("beforeend",
  "<section><h2>Related</h2><a href='/p/1'>One</a> <a href='/p/2'>Two</a></section>");`;
const SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="300" height="200">` +
  `<rect width="300" height="200" fill="#48a"/></svg>`;

const pages = new Map<string, string>();
for (let i = 0; i < PAGES; i++) pages.set(`/p/${i}`, makePage(i));
const ac = new AbortController();
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {}, signal: ac.signal },
  (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/site.css") return new Response(CSS, { headers: { "content-type": "text/css" } });
    if (path === "/app.js") {
      return new Response(JS, { headers: { "content-type": "text/javascript" } });
    }
    if (path.startsWith("/img/")) {
      return new Response(SVG, { headers: { "content-type": "image/svg+xml" } });
    }
    const body = pages.get(path);
    if (!body) return new Response("not found", { status: 404 });
    return new Response(body, { headers: { "content-type": "text/html; charset=utf-8" } });
  },
);
const origin = `http://127.0.0.1:${server.addr.port}`;
const urls = [...pages.keys()].map((p) => origin + p);
const network = { allowPrivate: false, allowLoopback: true };

/** Runs `fn` over `items` with `n` in flight. */
async function pool<T>(items: T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

function rssSum(pids: number[]): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // gone
    }
  }
  return total;
}

// Raw baseline: fetch through the guard and extract facts, as the crawler does.
let rawWords = 0;
const tRaw = performance.now();
await pool(urls, CONCURRENCY, async (u) => {
  const res = await safeFetch(u, network);
  rawWords += extractPageFacts(res.body, new URL(u), new URL(u).host).wordCount;
});
const rawSecs = (performance.now() - tRaw) / 1000;

const browserPool = new BrowserPool({ maxPagesInFlight: CONCURRENCY });
let peakRss = Deno.memoryUsage().rss;
let peakBrowserPss = 0;
let peakBrowserRss = 0;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
}, 50);
// Reading PSS walks the browser's page tables (~50 ms): once a second, not to skew the timing.
const browserSampler = setInterval(() => {
  const pids = browserPool.browserPids();
  peakBrowserPss = Math.max(
    peakBrowserPss,
    browserPool.browserBytes(),
    browserPool.stats.peakBrowserBytes,
  );
  peakBrowserRss = Math.max(peakBrowserRss, rssSum(pids));
}, 1000);

// Launch once outside the timing (a service keeps its browser warm between pages).
const tLaunch = performance.now();
await renderPage(urls[0], { pool: browserPool, network, lab: false });
const launchMs = performance.now() - tLaunch;

let findings = 0;
const tRender = performance.now();
await pool(urls, CONCURRENCY, async (u) => {
  const r = await renderPage(u, { pool: browserPool, network, lab: false });
  findings += evaluateRenderedPage({ result: r, now: Date.now() }).findings.length;
});
const renderSecs = (performance.now() - tRender) / 1000;

const tLab = performance.now();
const lcps: number[] = [];
await pool(urls.slice(0, LAB_PAGES), CONCURRENCY, async (u) => {
  const r = await renderPage(u, { pool: browserPool, network, lab: true });
  if (r.lab?.lcpMs != null) lcps.push(r.lab.lcpMs);
});
const labSecs = (performance.now() - tLab) / 1000;
clearInterval(sampler);
clearInterval(browserSampler);
const stats = { ...browserPool.stats };
await browserPool.close();

// The audit pipeline: raw, then rendered, on the same site (home: /p/0 links the rest).
const auditInput = {
  startUrl: `${origin}/p/0`,
  maxPages: PAGES + 10,
  concurrency: 4,
  allowPrivate: true,
};
const tRawAudit = performance.now();
const rawAudit = await runAuditDetailed(auditInput);
const rawAuditSecs = (performance.now() - tRawAudit) / 1000;

const auditPool = new BrowserPool({ maxPagesInFlight: CONCURRENCY });
let auditPeakRss = Deno.memoryUsage().rss;
let auditPeakBrowser = 0;
const auditSampler = setInterval(() => {
  auditPeakRss = Math.max(auditPeakRss, Deno.memoryUsage().rss);
}, 50);
const auditBrowserSampler = setInterval(() => {
  auditPeakBrowser = Math.max(auditPeakBrowser, auditPool.browserBytes());
}, 1000);
const tRenderedAudit = performance.now();
const renderedAudit = await runAuditDetailed({
  ...auditInput,
  render: {
    renderer: { render: (url, lab) => renderPage(url, { pool: auditPool, network, lab }) },
    maxPages: PAGES,
    labPages: LAB_PAGES,
    pagesPerStep: 2 * CONCURRENCY,
  },
});
const renderedAuditSecs = (performance.now() - tRenderedAudit) / 1000;
clearInterval(auditSampler);
clearInterval(auditBrowserSampler);
auditPeakBrowser = Math.max(auditPeakBrowser, auditPool.stats.peakBrowserBytes);
const auditStats = { ...auditPool.stats };
await auditPool.close();
ac.abort();

const mib = (b: number) => (b / 1024 / 1024).toFixed(0);
lcps.sort((a, b) => a - b);
console.log(
  `site: ${PAGES} pages (~${(makePage(1).length / 1024).toFixed(0)} KiB HTML, css, js, ` +
    `image each), ${CONCURRENCY} in flight, raw words ${rawWords}`,
);
console.log(
  `raw fetch + parse:   ${(PAGES / rawSecs).toFixed(1)} pages/s (${rawSecs.toFixed(2)} s)`,
);
console.log(
  `rendered (DOM+mobile): ${(PAGES / renderSecs).toFixed(1)} pages/s ` +
    `(${renderSecs.toFixed(2)} s), ${findings} findings; browser launch ${launchMs.toFixed(0)} ms`,
);
console.log(
  `cost ratio rendered / raw (wall time per page): ${(renderSecs / rawSecs).toFixed(1)}x`,
);
console.log(
  `lab sample: ${LAB_PAGES} pages under mobile slow 4G + 4x CPU in ${labSecs.toFixed(1)} s ` +
    `(${(LAB_PAGES / labSecs).toFixed(2)} pages/s), median LCP ${lcps[lcps.length >> 1]} ms`,
);
console.log(
  `peak RSS: this process ${mib(peakRss)} MiB; browser processes ${mib(peakBrowserPss)} ` +
    `MiB PSS (${mib(peakBrowserRss)} MiB RSS summed); launches ${stats.launches}, ` +
    `crashes ${stats.crashes}, peak pages in flight ${stats.peakInFlight}`,
);
const renderFindings = [...renderedAudit.tallies].filter(([id, t]) =>
  t.affected > 0 && !rawAudit.tallies.get(id)?.affected
).map(([id]) => id);
console.log(
  `audit pipeline, raw:      ${rawAudit.report.pages_crawled} pages in ` +
    `${rawAuditSecs.toFixed(2)} s (${(rawAudit.report.pages_crawled / rawAuditSecs).toFixed(1)} ` +
    `pages/s), score ${rawAudit.report.score}`,
);
console.log(
  `audit pipeline, rendered: ${renderedAudit.report.pages_crawled} pages crawled, ` +
    `${auditStats.pagesRendered} rendered (${LAB_PAGES} lab) in ${
      renderedAuditSecs.toFixed(1)
    } s ` +
    `(${(renderedAudit.report.pages_crawled / renderedAuditSecs).toFixed(2)} pages/s), score ` +
    `${renderedAudit.report.score}, ${renderedAudit.steps} steps, rendered-only checks fired: ` +
    `${renderFindings.join(", ") || "none"}`,
);
console.log(
  `rendered audit cost ratio (wall time, same site): ${
    (renderedAuditSecs / rawAuditSecs).toFixed(1)
  }x the raw audit; peak RSS this process ${mib(auditPeakRss)} MiB, browser ` +
    `${mib(auditPeakBrowser)} MiB PSS; launches ${auditStats.launches}, crashes ` +
    `${auditStats.crashes}`,
);
if (findProcessTree("serpwright-render").length > 0) console.log("warning: browser left running");

// The existing raw audit benchmark, same run.
console.log("--- raw audit benchmark (tests/bench/audit_bench.ts), same run ---");
const child = await new Deno.Command(Deno.execPath(), {
  args: ["run", "-A", new URL("./audit_bench.ts", import.meta.url).pathname],
  stdout: "piped",
  stderr: "inherit",
}).output();
console.log(new TextDecoder().decode(child.stdout).trimEnd());
