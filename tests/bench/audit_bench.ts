/**
 * Audit engine benchmark: crawls a generated 1,000-page site on loopback and prints pages per
 * second, peak RSS, and the CPU cost of fact extraction + page checks against a bare
 * htmlparser2 parse of the same pages (a ratio, measured in the same run because these machines
 * are noisy).
 *
 * Run: deno run -A tests/bench/audit_bench.ts
 */
import { Parser } from "htmlparser2";
import { PageTally, runAudit } from "../../domain/audit_engine/run_audit.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";
import { isNoindex } from "../../domain/audit_engine/checks/helpers.ts";

const PAGES = 1000;
const WORDS = ("search engines read pages quickly when the markup is clean and the links are " +
  "plain and every heading says what follows in a few honest words ").split(" ");

/** A realistic ~30 KB page: head tags, nav, 40 internal links, images, paragraphs. */
function makePage(i: number, origin: string): string {
  const links: string[] = [];
  for (let k = 1; k <= 40; k++) links.push(`/p/${(i * 7 + k * 13) % PAGES}`);
  if (i + 1 < PAGES) links.push(`/p/${i + 1}`);
  const paras: string[] = [];
  for (let p = 0; p < 30; p++) {
    const w: string[] = [];
    for (let k = 0; k < 60; k++) w.push(WORDS[(i + p * 7 + k * 3) % WORDS.length]);
    paras.push(`<p class="body-text">Page ${i} part ${p}. ${w.join(" ")}.</p>`);
  }
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Generated page number ${i} of the benchmark</title>
<meta name="description" content="Benchmark page ${i}: a generated page with enough text and links to look real.">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="canonical" href="${origin}/p/${i}"><link rel="stylesheet" href="/site.css">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"WebPage","name":"p${i}"}</script>
</head><body><header><nav><ul>${
    links.map((l, k) => `<li class="nav-item"><a href="${l}" class="nav-link">Topic ${k}</a></li>`)
      .join("")
  }</ul></nav></header><main><article><h1>Page ${i}</h1><h2>Intro</h2>${paras.join("\n")}
<img src="/img/${i}.png" alt="figure ${i}" width="640" height="480"></article></main>
<footer><p>Footer text &copy; Serpwright</p></footer></body></html>`;
}

const ac = new AbortController();
const pages = new Map<string, string>();
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen() {}, signal: ac.signal },
  (req) => {
    const path = new URL(req.url).pathname;
    const body = path === "/" ? pages.get("/p/0") : pages.get(path);
    if (path === "/robots.txt") return new Response("User-agent: *\nDisallow:\n");
    if (!body) return new Response("not found", { status: 404 });
    return new Response(body, {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "strict-transport-security": "max-age=63072000",
      },
    });
  },
);
const origin = `http://127.0.0.1:${server.addr.port}`;
for (let i = 0; i < PAGES; i++) pages.set(`/p/${i}`, makePage(i, origin));
const avgKb = [...pages.values()].reduce((a, p) => a + p.length, 0) / PAGES / 1024;

const baseRss = Deno.memoryUsage().rss;
let peakRss = baseRss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
}, 20);

const t0 = performance.now();
const report = await runAudit({
  startUrl: `${origin}/p/0`,
  maxPages: PAGES,
  concurrency: 8,
  allowPrivate: true,
});
const secs = (performance.now() - t0) / 1000;
clearInterval(sampler);
peakRss = Math.max(peakRss, Deno.memoryUsage().rss);
ac.abort();
await server.finished;

// CPU: bare htmlparser2 (empty callbacks) vs fact extraction + page checks, same bodies.
const bodies = [...pages.entries()].map(([path, html]) => ({ url: new URL(origin + path), html }));
function bare() {
  for (const b of bodies) {
    const p = new Parser({ onopentag() {}, ontext() {}, onclosetag() {} });
    p.end(b.html);
  }
}
function checks() {
  const tally = new PageTally();
  const headers = new Headers({ "content-type": "text/html; charset=utf-8" });
  for (const b of bodies) {
    const facts = extractPageFacts(b.html, b.url, b.url.host);
    const noindex = isNoindex(facts, headers, 0);
    tally.add({
      url: b.url,
      status: 200,
      headers,
      facts,
      depth: 1,
      isHome: false,
      indexable: !noindex,
      now: 0,
    });
  }
}
function time(fn: () => void): number {
  const t = performance.now();
  fn();
  return performance.now() - t;
}
for (let i = 0; i < 3; i++) {
  bare();
  checks();
}
// Back-to-back pairs, ratio per pair, median of the ratios: on a shared machine the load drifts
// between pairs more than within one, so a per-pair ratio cancels most of it.
const bareTimes: number[] = [];
const checkTimes: number[] = [];
const ratios: number[] = [];
for (let i = 0; i < 15; i++) {
  const b = time(bare);
  const c = time(checks);
  bareTimes.push(b);
  checkTimes.push(c);
  ratios.push(c / b);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const bareMs = med(bareTimes);
const checkMs = med(checkTimes);
const ratio = med(ratios);
const minRatio = Math.min(...checkTimes) / Math.min(...bareTimes);
const pps = report.pages_crawled / secs;
const rssMiB = peakRss / 1024 / 1024;

console.log(`audit: site of ${PAGES} pages, ${avgKb.toFixed(1)} KB average HTML`);
console.log(
  `audit: ${report.pages_crawled} pages in ${secs.toFixed(2)} s = ${pps.toFixed(0)} pages/s ` +
    `(target >= 200) ${pps >= 200 ? "OK" : "MISS"}`,
);
console.log(
  `audit: bare parse ${(bareMs / PAGES * 1000).toFixed(0)} us/page, facts+checks ` +
    `${(checkMs / PAGES * 1000).toFixed(0)} us/page`,
);
console.log(
  `audit: checks/parse cpu ratio ${ratio.toFixed(2)} (target <= 1.5) ${
    ratio <= 1.5 ? "OK" : "MISS"
  }; fastest runs ${minRatio.toFixed(2)}; facts include the full-text fingerprint ` +
    `(exact hash, MinHash, word count)`,
);
console.log(
  `audit: peak RSS ${rssMiB.toFixed(0)} MiB (target < 200) ${rssMiB < 200 ? "OK" : "MISS"}; ` +
    `${(baseRss / 1024 / 1024).toFixed(0)} MiB before the crawl (runtime, server, site in memory)`,
);
console.log(
  `audit: score ${report.score}, top issue ${report.summary.top_issues[0]?.check ?? "-"}`,
);
