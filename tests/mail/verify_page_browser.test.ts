/**
 * The verification link's page in a real headless browser at a phone's width and a desktop's (the Chromium inside
 * `@sparticuz/chromium`, driven by playwright-core): it lays out at 390 px without overflow, the
 * strict policy raises no console error (a violation would), axe-core finds nothing serious, and
 * pressing the button confirms, through the cookie and the form's token.
 */
import assert from "node:assert/strict";
import axe from "axe-core";
import { launchChromium } from "../../domain/render/chromium.ts";
import { startTestApp } from "../helpers/app.ts";
import { linkIn, startSmtp } from "../helpers/smtp.ts";
import { freePort } from "../helpers/ports.ts";

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 900 };
const ARTIFACTS = Deno.env.get("MAIL_ARTIFACTS_DIR") ?? "./test-artifacts/mail";

interface AxeResult {
  violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[];
  passes: unknown[];
}

Deno.test({
  name:
    "verify page in headless chromium at 390 and 1366 px: no overflow, no console error, confirms",
  // playwright-core keeps its pipes to the browser process beyond what the sanitizers track.
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const smtp = await startSmtp();
    const port = freePort();
    const app = await startTestApp({
      env: {
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        SMTP_URL: smtp.url,
        MAIL_FROM: "noreply@serpwright.test",
      },
    });
    const { browser } = await launchChromium();
    try {
      const { key } = await app.signup();
      assert.equal((await app.req("POST", "/v1/account/verify-email", { key })).status, 202);
      const link = linkIn((await smtp.waitFor(1))[0]);

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
        if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
      });
      page.on("request", (r) => {
        if (!r.url().startsWith(app.url)) foreign.push(r.url());
      });
      const res = await page.goto(link, { waitUntil: "load" });
      assert.equal(res?.status(), 200);
      const button = page.getByRole("button", { name: "Confirm my email address" });
      const box = await button.boundingBox();
      assert.ok(box && box.height >= 40 && box.x + box.width <= PHONE.width, "a tappable button");

      // Layout and accessibility (axe runs through the DevTools protocol: the page's policy
      // allows no script of its own).
      const m: { scroll: number; inner: number; fontSize: number } = await page.evaluate(`({
        scroll: document.documentElement.scrollWidth,
        inner: window.innerWidth,
        fontSize: parseFloat(getComputedStyle(document.body).fontSize),
      })`);
      assert.equal(m.inner, PHONE.width, "the viewport meta is honoured");
      assert.ok(m.scroll <= PHONE.width, `scrollWidth ${m.scroll} > ${PHONE.width}`);
      assert.ok(m.fontSize >= 14);
      await page.evaluate(axe.source);
      const result: AxeResult = await page.evaluate(`axe.run(document, {
        runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
      })`);
      const serious = result.violations.filter((v) =>
        v.impact === "serious" || v.impact === "critical"
      );
      assert.deepEqual(serious.map((v) => `${v.id}: ${v.help}`), []);
      assert.ok(result.passes.length > 10, "axe ran its rules");
      await Deno.mkdir(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: `${ARTIFACTS}/verify-390.png`, fullPage: true });
      await page.setViewportSize(DESKTOP);
      const wide: number = await page.evaluate("document.documentElement.scrollWidth");
      assert.ok(wide <= DESKTOP.width, `scrollWidth ${wide} at ${DESKTOP.width}`);
      await page.screenshot({ path: `${ARTIFACTS}/verify-1366.png`, fullPage: true });
      await page.setViewportSize(PHONE);

      // The button posts the form with the page's cookie: verified, without any script.
      await Promise.all([page.waitForURL(link), button.click()]);
      await page.waitForLoadState("load");
      assert.equal(await page.locator("h1").textContent(), "Email address verified");
      assert.equal((await app.req("GET", "/v1/account", { key })).body.email_verified, true);
      assert.deepEqual(problems, [], "console errors or warnings (a CSP violation is one)");
      assert.deepEqual(foreign, [], "requests outside the service");
      await context.close();
    } finally {
      await browser.close();
      await app.close();
      await smtp.close();
    }
  },
});
