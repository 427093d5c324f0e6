/**
 * Every public page at a phone's and a desktop's width (390 and 1366 CSS px) in the packaged
 * Chromium: no horizontal overflow of the document, no element whose right edge passes the
 * viewport unless it is inside a container that scrolls on purpose, and no table that needs
 * sideways scrolling (on a phone the report's inventory is cards). The pages are the app's own
 * route list (every GET outside `/v1`, `/admin` and the machine-readable documents), so a new page
 * is checked as soon as it is routed; one with a path parameter needs a way to open it in
 * `OPEN` below, or this test fails. One browser, one context per width, each reused for every page.
 * `LAYOUT_SCREENSHOTS=<dir>` keeps a full-page screenshot of each page at each width.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { loadRouteGroups } from "../../capabilities.ts";
import { launchChromium } from "../../domain/render/chromium.ts";
import { buildApp } from "../../routes/app.ts";
import type { TestApp } from "../helpers/app.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { serveSite } from "../helpers/sites.ts";
import { FakeHost, startOAuthApp } from "../oauth/helpers.ts";
import { auditOnce, hostileSite } from "./fixture.ts";

const WIDTHS = [390, 1366];
/** Set: every page's full-page screenshot at each width is kept there (to look at). */
const ARTIFACTS = Deno.env.get("LAYOUT_SCREENSHOTS");

/** Paths that are not pages for people (documents for programs, operator endpoints). */
const NOT_PAGES = /^\/(v1|admin|mcp|\.well-known)(\/|$)|^\/server\.json$/;

interface World {
  app: TestApp;
  report: string;
  preview: string;
  host: FakeHost;
}

/** How to open each routed page with a path parameter (or its query), or null: not a page. */
const OPEN: Record<string, (w: World) => string | null> = {
  "/reports/:token": (w) => w.report,
  "/reports/:token/report.pdf": () => null, // the PDF (tests/reports/pdf.test.ts)
  "/previews/:token": (w) => w.preview,
  // The pages an unknown id or token opens (a real upgrade needs Stripe; tests/upgrades/).
  "/upgrade/:id": () => "/upgrade/upg_unknown0000000000000000",
  "/upgrade/:id/done": () => "/upgrade/upg_unknown0000000000000000/done",
  "/verify-email/:token": () => "/verify-email/evt_unknown",
  // The consent page a connecting MCP host opens.
  "/oauth/authorize": (w) =>
    "/oauth/authorize?" + new URLSearchParams({
      response_type: "code",
      client_id: w.host.docUrl,
      redirect_uri: w.host.redirectUri,
      code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
      code_challenge_method: "S256",
      resource: `${w.app.url}/mcp`,
      scope: "mcp",
      state: "layout",
    }),
};

/** What a page's layout looks like at its width. */
interface Layout {
  scroll: number;
  inner: number;
  offenders: string[];
  tables: { label: string; scroll: number; client: number }[];
}

const MEASURE = `(() => {
  const inner = window.innerWidth;
  const scrolls = (el) => {
    for (let a = el.parentElement; a && a !== document.documentElement; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o === "auto" || o === "scroll") return true;
    }
    return false;
  };
  const offenders = [];
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= inner + 1 || scrolls(el)) continue;
    offenders.push(el.tagName.toLowerCase() + (el.className ? "." + el.className : "") + " right " +
      Math.round(r.right) + ": " + (el.textContent || "").trim().slice(0, 60));
  }
  const tables = [...document.querySelectorAll("table")].map((t) => {
    let box = t.parentElement;
    while (box && getComputedStyle(box).overflowX === "visible") box = box.parentElement;
    box = box || document.documentElement;
    return {
      label: (t.caption?.textContent || box.getAttribute("aria-label") || "table").trim(),
      scroll: box.scrollWidth,
      client: box.clientWidth,
    };
  }).filter((t) => t.client > 0);
  return { scroll: document.documentElement.scrollWidth, inner, offenders: offenders.slice(0, 6), tables };
})()`;

async function check(page: Page, url: string, width: number): Promise<string[]> {
  const res = await page.goto(url, { waitUntil: "load" });
  const status = res?.status() ?? 0;
  const m: Layout = await page.evaluate(MEASURE);
  const where = `${new URL(url).pathname} at ${width}px (${status})`;
  const problems: string[] = [];
  if (m.inner !== width) problems.push(`${where}: viewport ${m.inner}`);
  if (m.scroll > width) problems.push(`${where}: scrollWidth ${m.scroll}`);
  for (const o of m.offenders) problems.push(`${where}: past the viewport: ${o}`);
  for (const t of m.tables) {
    if (t.scroll > t.client + 1) {
      problems.push(`${where}: table "${t.label}" needs scrolling (${t.scroll} > ${t.client})`);
    }
  }
  const slug = new URL(url).pathname.replace(/[^a-z0-9]+/gi, "-").replace(/^-|-$/g, "") || "home";
  if (ARTIFACTS) {
    await page.screenshot({
      path: `${ARTIFACTS}/${slug.slice(0, 40)}-${width}.png`,
      fullPage: true,
    });
  }
  return problems;
}

/** A completed sandbox audit's share link and a draft's preview link. */
async function sharedLinks(app: TestApp, origin: string) {
  const { key } = await app.signup();
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
  const auditId = await auditOnce(app, key, proj.body.project_id);
  const article = await app.req("POST", `/v1/projects/${proj.body.project_id}/articles`, {
    key,
    body: { topic: "How to choose running shoes for long distances" },
  });
  assert.equal(article.status, 202, article.text);
  await waitForArticle(app, key, article.body.article_id, { timeoutMs: 60_000 });
  const report = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
  const preview = await app.req("POST", `/v1/articles/${article.body.article_id}/shares`, {
    key,
    body: {},
  });
  assert.equal(report.status, 201, report.text);
  assert.equal(preview.status, 201, preview.text);
  return { report: new URL(report.body.url).pathname, preview: new URL(preview.body.url).pathname };
}

Deno.test({
  name: "layout: every public page at 390 and 1366 px, no horizontal overflow, no clipped table",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const app = await startOAuthApp();
    const host = await FakeHost.start({ name: "Layout Host" });
    const site = serveSite(hostileSite(6, { fixed: false }));
    const { browser } = await launchChromium();
    if (ARTIFACTS) await Deno.mkdir(ARTIFACTS, { recursive: true });
    try {
      const links = await sharedLinks(app, site.origin);
      const world: World = { app, host, ...links };
      const routes = buildApp(app.service.services, await loadRouteGroups()).routes
        .filter((r) => r.method === "GET" && !NOT_PAGES.test(r.path)).map((r) => r.path);
      const paths: string[] = [];
      for (const path of new Set(routes)) {
        const open = OPEN[path];
        if (!open && path.includes(":")) {
          assert.fail(`${path}: a page with a parameter; add how to open it to OPEN`);
        }
        const target = open ? open(world) : path;
        if (target === null) continue;
        const res = await fetch(app.url + target);
        await res.body?.cancel();
        if (!(res.headers.get("content-type") ?? "").startsWith("text/html")) continue;
        // Pages opened on purpose open (the unknown ids are their 404 pages, on purpose too).
        if (path in OPEN && !target.includes("unknown")) assert.equal(res.status, 200, target);
        paths.push(target);
      }
      for (
        const must of ["/", "/pricing", "/docs/agents", "/upgrade", links.report, links.preview]
      ) {
        assert.ok(paths.includes(must), `${must} is among the pages checked`);
      }
      // The packaged Chromium is one process: a closed context takes the browser with it, so
      // each width keeps its context (and page) open for every page.
      const pages = await Promise.all(WIDTHS.map(async (width) => {
        const context = await browser.newContext({
          viewport: { width, height: 900 },
          deviceScaleFactor: 1,
          ...(width < 500 ? { isMobile: true, hasTouch: true } : {}),
          extraHTTPHeaders: { "x-forwarded-for": `203.0.113.${width % 200}` },
        });
        return { width, page: await context.newPage() };
      }));
      const problems: string[] = [];
      for (const path of paths) {
        for (const { width, page } of pages) {
          problems.push(...await check(page, app.url + path, width));
        }
      }
      console.log(
        `${paths.length} pages checked at ${WIDTHS.join(" and ")} px: ${paths.join(" ")}`,
      );
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      await site.close();
      await host.close();
      await app.close();
    }
  },
});
