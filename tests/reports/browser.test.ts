/**
 * The shared report and the shared article preview in the real packaged Chromium (the one inside
 * `@sparticuz/chromium`, as the service renders with): at a desktop's and a phone's width, with
 * JavaScript on and off. Each page: no console error (a refused style or script would be one, the
 * policy being this strict), no request outside the service, no horizontal overflow, every chart
 * present, laid out and named, zero serious or critical accessibility violations by axe-core
 * (injected through the DevTools protocol, which the page's policy does not govern), filters that
 * work as plain links with JavaScript off, and a PDF from the print styles. Screenshots and PDFs
 * are kept in `TEST_ARTIFACTS_DIR` (default `./test-artifacts/reports`).
 */
import assert from "node:assert/strict";
import axe from "axe-core";
import type { BrowserContextOptions } from "playwright-core";
import type { ArticleRecord } from "../../domain/articles/articles.ts";
import { launchChromium } from "../../domain/render/chromium.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { serveSite } from "../helpers/sites.ts";
import { auditOnce, hostileSite } from "./fixture.ts";

const BASE = "http://localhost:8000";
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const ARTIFACTS = Deno.env.get("TEST_ARTIFACTS_DIR") ?? "./test-artifacts/reports";

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[];
  passes: unknown[];
}

/** The report and preview links of a live account's audited project and draft. */
async function sharedPages(app: TestApp, origin: string, state: { fixed: boolean }) {
  const { accountId, live } = await liveWithCredits(app, 200);
  const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: origin } });
  await auditOnce(app, live, proj.body.project_id);
  state.fixed = true;
  app.clock.advance(86_400_000);
  const auditId = await auditOnce(app, live, proj.body.project_id);
  const article = await app.req("POST", `/v1/projects/${proj.body.project_id}/articles`, {
    key: live,
    body: { topic: "How to choose running shoes" },
  });
  await waitForArticle(app, live, article.body.article_id, { timeoutMs: 60_000 });
  const entry = await app.kv.get<ArticleRecord>(keys.article(accountId, article.body.article_id));
  await app.kv.set(entry.key, {
    ...entry.value!,
    contentMarkdown: "# Choosing shoes\n\nA <script>alert(1)</script> draft with " +
      "[a bad link](javascript:alert(2)), [our pricing](/a1) and a table:\n\n" +
      "| size | fit |\n|:--|--:|\n| 42 | wide |\n\n## Fit\n\nText.\n\n#### Deep\n\nMore text.",
  });
  const report = await app.req("POST", `/v1/audits/${auditId}/shares`, { key: live, body: {} });
  const preview = await app.req("POST", `/v1/articles/${article.body.article_id}/shares`, {
    key: live,
    body: {},
  });
  assert.equal(report.status, 201, report.text);
  assert.equal(preview.status, 201, preview.text);
  const local = (u: string) => app.url + u.slice(BASE.length);
  return { report: local(report.body.url), preview: local(preview.body.url) };
}

async function check(
  appUrl: string,
  url: string,
  name: string,
  size: { width: number; height: number },
  charts: number,
): Promise<void> {
  const options: BrowserContextOptions = size === PHONE
    ? { viewport: PHONE, deviceScaleFactor: 1, isMobile: true, hasTouch: true }
    : { viewport: DESKTOP };
  // The packaged Chromium runs as one process: a closed context takes the browser with it, so
  // each check has a browser of its own.
  const { browser } = await launchChromium();
  const context = await browser.newContext({
    ...options,
    extraHTTPHeaders: { "x-forwarded-for": `203.0.113.${size === PHONE ? 31 : 32}` },
  });
  const label = `${name} at ${size.width}px`;
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    const foreign: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("request", (r) => {
      if (!r.url().startsWith(appUrl) && !r.url().startsWith("data:")) foreign.push(r.url());
    });
    const res = await page.goto(url, { waitUntil: "load" });
    assert.equal(res?.status(), 200, label);
    const m: {
      scroll: number;
      inner: number;
      charts: { name: string; width: number; right: number }[];
      lang: string;
      title: string;
    } = await page.evaluate(`({
      scroll: document.documentElement.scrollWidth,
      inner: window.innerWidth,
      lang: document.documentElement.lang,
      title: document.title,
      charts: [...document.querySelectorAll('svg[role="img"]')].map((s) => ({
        name: (s.getAttribute("aria-labelledby") || "").split(" ")
          .map((id) => document.getElementById(id)?.textContent || "").join(" ").trim(),
        width: s.getBoundingClientRect().width,
        right: s.getBoundingClientRect().right,
      })),
    })`);
    assert.equal(m.inner, size.width, `${label}: the viewport meta is honoured`);
    assert.ok(m.scroll <= size.width, `${label}: scrollWidth ${m.scroll} > ${size.width}`);
    assert.equal(m.lang, "en");
    assert.ok(m.title.length > 0);
    assert.equal(m.charts.length, charts, `${label}: charts`);
    for (const c of m.charts) {
      assert.ok(c.name.length > 10, `${label}: a chart without a name`);
      assert.ok(c.width > 50, `${label}: chart ${c.name} laid out (${c.width}px)`);
      assert.ok(c.right <= size.width + 1, `${label}: chart ${c.name} inside the viewport`);
    }
    // axe-core through the DevTools protocol (the page's policy allows no script of its own).
    await page.evaluate(axe.source);
    const result: AxeResult = await page.evaluate(`axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    })`);
    const serious = result.violations.filter((v) =>
      v.impact === "serious" || v.impact === "critical"
    );
    const others = result.violations.filter((v) => !serious.includes(v));
    if (others.length) {
      console.log(
        `${label}: minor/moderate: ${others.map((v) => `${v.id} (${v.help})`).join("; ")}`,
      );
    }
    assert.deepEqual(
      serious.map((v) => `${v.id}: ${v.help} (${v.nodes.length})`),
      [],
      `${label}: serious or critical accessibility violations`,
    );
    assert.ok(result.passes.length > 20, "axe ran its rules");
    const slug = `${name}-${size.width}`;
    await page.screenshot({ path: `${ARTIFACTS}/${slug}-top.png` });
    await page.screenshot({ path: `${ARTIFACTS}/${slug}.png`, fullPage: true });
    const shot = await Deno.readFile(`${ARTIFACTS}/${slug}.png`);
    assert.deepEqual([...shot.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG");
    if (size === DESKTOP) {
      await page.emulateMedia({ media: "print" });
      const pdf = await page.pdf({ path: `${ARTIFACTS}/${name}.pdf`, format: "A4" });
      assert.equal(new TextDecoder().decode(pdf.subarray(0, 5)), "%PDF-");
    }
    assert.deepEqual(problems, [], `${label}: console errors or warnings`);
    assert.deepEqual(foreign, [], `${label}: requests outside the service`);
  } finally {
    await browser.close();
  }
}

/** With JavaScript off the report reads and filters the same: filters and pages are links. */
async function withoutScript(url: string): Promise<void> {
  const { browser } = await launchChromium();
  const context = await browser.newContext({
    viewport: PHONE,
    javaScriptEnabled: false,
    extraHTTPHeaders: { "x-forwarded-for": "203.0.113.33" },
  });
  try {
    const page = await context.newPage();
    assert.equal((await page.goto(url))?.status(), 200);
    assert.equal(await page.locator('svg[role="img"]').count(), 4);
    await page.locator('nav.filters a:text-is("4xx")').click();
    await page.waitForURL(/status=4xx/);
    const rows = await page.locator("#pages tbody tr").count();
    assert.ok(rows >= 1, "the 4xx pages");
    const statuses = await page.locator("#pages tbody tr td:nth-child(2)").allTextContents();
    for (const s of statuses) assert.match(s.trim(), /^4\d\d$/);
    // Back to any status; the issue filter opens without script (a details element).
    await page.locator('nav.filters a:text-is("any")').first().click();
    await page.waitForURL((u) => !u.search.includes("status="));
    await page.locator("nav.filters summary").click();
    // Issues by title, for people; the check id stays in the link.
    await page.locator('nav.filters details a:text-is("Pages linking to broken internal URLs")')
      .click();
    await page.waitForURL(/check=broken_internal_links/);
    assert.ok(await page.locator("#pages tbody tr").count() >= 1);
  } finally {
    await browser.close();
  }
}

Deno.test({
  name:
    "report and preview in headless chromium: phone and desktop, no overflow, charts, axe, no JS",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withApp(async (app) => {
      const state = { fixed: false };
      const site = serveSite(hostileSite(6, state));
      await Deno.mkdir(ARTIFACTS, { recursive: true });
      try {
        const links = await sharedPages(app, site.origin, state);
        for (const size of [DESKTOP, PHONE]) {
          await check(app.url, links.report, "report", size, 4);
          await check(app.url, links.preview, "preview", size, 0);
        }
        await withoutScript(links.report);
        console.log(`screenshots and PDFs in ${await Deno.realPath(ARTIFACTS)}`);
      } finally {
        await site.close();
      }
    }),
});
