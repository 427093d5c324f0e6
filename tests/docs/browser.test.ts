/**
 * The public pages in a real headless browser (the Chromium that ships inside the
 * `@sparticuz/chromium` npm package, driven by playwright-core) at a phone's viewport: no console
 * errors, no horizontal overflow, a screenshot of the pricing page. Nothing outside npm is needed,
 * so this runs for real on a machine with only Node and npm.
 */
import assert from "node:assert/strict";
import { launchChromium } from "../../domain/render/chromium.ts";
import { withApp } from "../helpers/app.ts";

const PHONE = { width: 390, height: 844 };

Deno.test({
  name: "pages in headless chromium on a phone: no console errors, no overflow, a screenshot",
  // playwright-core keeps its pipes to the browser process beyond what the sanitizers track.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withApp(async (app) => {
      const { browser } = await launchChromium();
      const dir = await Deno.makeTempDir({ prefix: "serpwright-pages-" });
      try {
        const context = await browser.newContext({
          viewport: PHONE,
          deviceScaleFactor: 2,
          isMobile: true,
          hasTouch: true,
        });
        const page = await context.newPage();
        const problems: string[] = [];
        const foreign: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error" || m.type() === "warning") {
            problems.push(`${m.type()}: ${m.text()}`);
          }
        });
        page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
        page.on("request", (r) => {
          if (!r.url().startsWith(app.url)) foreign.push(r.url());
        });
        for (const path of ["/pricing", "/", "/docs/agents", "/docs/errors"]) {
          const res = await page.goto(app.url + path, { waitUntil: "load" });
          assert.equal(res?.status(), 200, path);
          // A string, so the DOM names are not type-checked against Deno's libs.
          const m: { scroll: number; inner: number; fontSize: number; h1: string } = await page
            .evaluate(`({
              scroll: document.documentElement.scrollWidth,
              inner: window.innerWidth,
              fontSize: parseFloat(getComputedStyle(document.body).fontSize),
              h1: document.querySelector("h1")?.textContent ?? "",
            })`);
          assert.equal(m.inner, PHONE.width, `${path}: the viewport meta is honoured`);
          assert.ok(m.scroll <= PHONE.width, `${path}: scrollWidth ${m.scroll} > ${PHONE.width}`);
          assert.ok(m.fontSize >= 14, `${path}: readable font size`);
          assert.ok(m.h1.length > 0, `${path}: has an h1`);
          if (path === "/pricing") {
            const shot = `${dir}/pricing.png`;
            await page.screenshot({ path: shot, fullPage: true });
            const bytes = await Deno.readFile(shot);
            assert.ok(bytes.length > 1000, "screenshot is not empty");
            assert.deepEqual([...bytes.subarray(1, 4)], [0x50, 0x4e, 0x47], "a PNG");
            // The plan anchors the checkout_urls point at are on the page.
            for (const id of ["plan-basic", "plan-pro"]) {
              assert.ok(await page.locator(`#${id}`).isVisible(), id);
            }
          }
        }
        assert.deepEqual(problems, [], "console errors or warnings");
        assert.deepEqual(foreign, [], "requests outside the service");
        await context.close();
      } finally {
        await browser.close();
        await Deno.remove(dir, { recursive: true });
      }
    }),
});
