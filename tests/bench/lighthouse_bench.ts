/**
 * Lighthouse's accessibility category on the shared audit report and the shared article preview,
 * at a phone's and a desktop's width, run offline by the `lighthouse` npm package against the
 * Chromium inside `@sparticuz/chromium` (started here with a DevTools port, multi-process, without
 * GPU). Optional: it runs only with `LIGHTHOUSE=1` (it downloads Lighthouse from npm once), and
 * fails under a score of 95. The test suite's own accessibility check is axe-core
 * (tests/reports/browser.test.ts), which Lighthouse's accessibility audits are built on.
 *
 * Run: LIGHTHOUSE=1 deno run -A --unstable-kv --unstable-cron tests/bench/lighthouse_bench.ts
 */
import lighthouse from "lighthouse";
import { chromiumLaunchOptions } from "../../domain/render/chromium.ts";
import { startTestApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { serveSite } from "../helpers/sites.ts";
import { freePort } from "../helpers/ports.ts";
import { auditOnce, hostileSite } from "../reports/fixture.ts";

if (Deno.env.get("LIGHTHOUSE") !== "1") {
  console.log("skipped: set LIGHTHOUSE=1 to run Lighthouse's accessibility category");
  Deno.exit(0);
}

const MIN_SCORE = 0.95;

const app = await startTestApp();
const state = { fixed: false };
const site = serveSite(hostileSite(20, state));
const home = await Deno.makeTempDir({ prefix: "serpwright-lighthouse-" });
const port = freePort();
const opts = await chromiumLaunchOptions({ home, sandbox: false });
const single = new Set(["--single-process", "--no-zygote"]);
const browser = new Deno.Command(opts.executablePath!, {
  args: [
    ...(opts.args ?? []).filter((a) => !single.has(a)),
    ...(Deno.uid() === 0 ? ["--no-sandbox"] : []),
    `--remote-debugging-port=${port}`,
    `--user-data-dir=${home}/profile`,
    "about:blank",
  ],
  env: opts.env as Record<string, string>,
  clearEnv: true,
  stdout: "null",
  stderr: "null",
}).spawn();
let failed = false;
try {
  const { live } = await liveWithCredits(app, 200);
  const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
  await auditOnce(app, live, proj.body.project_id);
  state.fixed = true;
  app.clock.advance(86_400_000);
  const auditId = await auditOnce(app, live, proj.body.project_id);
  const article = await app.req("POST", `/v1/projects/${proj.body.project_id}/articles`, {
    key: live,
    body: { topic: "How to choose running shoes" },
  });
  await waitForArticle(app, live, article.body.article_id, { timeoutMs: 60_000 });
  const local = (u: string) => app.url + u.slice("http://localhost:8000".length);
  const report = await app.req("POST", `/v1/audits/${auditId}/shares`, { key: live, body: {} });
  const preview = await app.req("POST", `/v1/articles/${article.body.article_id}/shares`, {
    key: live,
    body: {},
  });
  // The browser needs a moment to open its DevTools port.
  for (let i = 0; i < 50; i++) {
    try {
      await (await fetch(`http://127.0.0.1:${port}/json/version`)).body?.cancel();
      break;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  for (const [name, url] of [["report", report.body.url], ["preview", preview.body.url]]) {
    for (const mobile of [true, false]) {
      const size = mobile ? { width: 390, height: 844 } : { width: 1350, height: 940 };
      const result = await lighthouse(local(url), {
        port,
        onlyCategories: ["accessibility"],
        output: "json",
        logLevel: "error",
      }, {
        extends: "lighthouse:default",
        settings: {
          formFactor: mobile ? "mobile" : "desktop",
          screenEmulation: { mobile, ...size, deviceScaleFactor: 1, disabled: false },
        },
      });
      const category = result!.lhr.categories.accessibility;
      const failing = category.auditRefs
        .filter((ref) => ref.weight > 0)
        .map((ref) => result!.lhr.audits[ref.id])
        .filter((a) => a.score !== null && a.score < 1)
        .map((a) => a.id);
      const score = Math.round((category.score ?? 0) * 100);
      console.log(
        `lighthouse accessibility, ${name} at ${size.width}px: ${score}` +
          (failing.length ? ` (failing: ${failing.join(", ")})` : ""),
      );
      if ((category.score ?? 0) < MIN_SCORE) failed = true;
    }
  }
} finally {
  browser.kill();
  await browser.status;
  await site.close();
  await app.close();
  await Deno.remove(home, { recursive: true }).catch(() => {});
}
if (failed) {
  console.log(`below ${MIN_SCORE * 100}`);
  Deno.exit(1);
}
