/**
 * The whole OAuth flow as a browser-based MCP host drives it, with the human in the real packaged
 * Chromium (`@sparticuz/chromium` through playwright-core) at a phone's width: a fake host on
 * loopback discovers the metadata from a 401, registers (a Client ID Metadata Document, then
 * dynamic registration), sends the browser to the consent page; the test types an API key (and,
 * in a second context, signs up with an email) and approves; the host checks `iss` and `state`,
 * exchanges the code with PKCE, calls `tools/list` and `tools/call` with the token, refreshes,
 * and is refused after revocation. One browser session (the machine is slow).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchChromium } from "../../domain/render/chromium.ts";
import {
  authorizationUrl,
  discover,
  type Discovered,
  exchange,
  FakeHost,
  mcp,
  refreshTokens,
  registerDcr,
  revoke,
  startOAuthApp,
  toolCall,
} from "./helpers.ts";

const PHONE = { width: 390, height: 844 };

/** What the page must hold at a phone's width: no overflow, no console error (CSP included). */
async function checkPage(page: Page, problems: string[], label: string) {
  const m: { scroll: number; inner: number } = await page.evaluate(
    `({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth })`,
  );
  assert.ok(m.scroll <= PHONE.width, `${label}: scrollWidth ${m.scroll} > ${PHONE.width}`);
  assert.deepEqual(problems, [], `${label}: console errors`);
}

Deno.test({
  name:
    "OAuth in Chromium: discover, register both ways, sign in with a key or sign up, approve, call tools, refresh, revoke; an unapproved client's error page",
  // playwright-core keeps its pipes to the browser process beyond what the sanitizers track.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const app = await startOAuthApp();
    const host = await FakeHost.start({ name: "Phone Host" });
    const { browser } = await launchChromium();
    try {
      const mcpUrl = `${app.url}/mcp`;
      const d: Discovered = await discover(mcpUrl);
      const { key, accountId } = await app.signup();

      // One context for both (a single-process Chromium ends with its last context).
      const context = await browser.newContext({
        viewport: PHONE,
        deviceScaleFactor: 2,
        isMobile: true,
        hasTouch: true,
      });
      const session = async (setup: (page: Page) => Promise<void>, client = host.cimdClient()) => {
        await context.clearCookies();
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
        });
        page.on("pageerror", (e) => problems.push(e.message));
        const attempt = await authorizationUrl(d, client, host.redirectUri);
        const callback = host.nextCallback();
        const res = await page.goto(attempt.url, { waitUntil: "load" });
        assert.equal(res?.status(), 200);
        assert.equal(await page.locator("#redirect-host").textContent(), new URL(host.origin).host);
        assert.ok(await page.locator("#loopback-warning").isVisible());
        await checkPage(page, problems, "sign-in");
        await setup(page);
        await page.waitForSelector("#approve");
        await checkPage(page, problems, "consent");
        await page.click("#approve");
        const url = await callback;
        await page.waitForURL((u) => u.href.startsWith(host.redirectUri));
        const tokens = await exchange(d, client, url, attempt, host.redirectUri);
        await page.close();
        return tokens;
      };

      // 1. A Client ID Metadata Document client; the human types an existing API key.
      const viaKey = await session(async (page) => {
        assert.equal(await page.locator("#client-name").textContent(), "Phone Host");
        await page.fill("#api_key", key);
        await page.click("#sign-in");
      });
      const list = await mcp(
        mcpUrl,
        viaKey.access_token,
        JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      );
      // deno-lint-ignore no-explicit-any
      const names = (list.body.result as any).tools.map((t: { name: string }) => t.name);
      assert.ok(names.includes("projects") && names.includes("audits"), names.join(","));
      const created = await mcp(
        mcpUrl,
        viaKey.access_token,
        toolCall("projects", { action: "create", url: "https://browser.example.com" }),
      );
      // deno-lint-ignore no-explicit-any
      const project = (created.body.result as any).structuredContent;
      assert.match(project.project?.project_id ?? project.project_id, /^proj_/);
      const refreshed = await refreshTokens(d, host.cimdClient(), viaKey.refresh_token!);
      const account = await mcp(mcpUrl, refreshed.access_token, toolCall("account"));
      // deno-lint-ignore no-explicit-any
      assert.equal((account.body.result as any).structuredContent.account_id, accountId);
      await revoke(d, host.cimdClient(), refreshed.refresh_token!);
      const refused = await mcp(mcpUrl, refreshed.access_token, toolCall("account"));
      assert.equal(refused.status, 401);

      // 2. A dynamically registered client; the human signs up with an email on the page.
      const dcr = await registerDcr(d.as, host.redirectUri, "Registered Host");
      const email = `browser-${crypto.randomUUID()}@example.com`;
      const viaSignup = await session(async (page) => {
        assert.equal(await page.locator("#client-name").textContent(), "Registered Host");
        await page.fill("#email", email);
        await page.click("#sign-up");
        await page.waitForSelector("#new-key");
        assert.match((await page.locator("#new-key").textContent()) ?? "", /^sk_sandbox_/);
        assert.equal(await page.locator("#account-mode").textContent(), "sandbox");
      }, dcr);
      const who = await mcp(mcpUrl, viaSignup.access_token, toolCall("account"));
      // deno-lint-ignore no-explicit-any
      const view = (who.body.result as any).structuredContent;
      assert.deepEqual([view.email, view.mode], [email, "sandbox"]);

      // 3. A client no approval has used, with a bad request: an error page, not a redirect.
      const unused = await registerDcr(d.as, host.redirectUri, "Unapproved Host");
      const page = await context.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        // The page's own 400 status is reported as a console error; nothing else may be.
        if (!/status of 400/.test(m.text())) problems.push(m.text());
      });
      const bad = await authorizationUrl(d, unused, host.redirectUri, {
        code_challenge_method: "plain",
      });
      const res = await page.goto(bad.url, { waitUntil: "load" });
      assert.equal(res?.status(), 400);
      assert.equal(new URL(page.url()).origin, app.url, "not sent to the app");
      assert.match((await page.locator("#error-note").textContent()) ?? "", /Unapproved Host/);
      await checkPage(page, problems, "error");
      await page.close();
      await context.close();
    } finally {
      await browser.close();
      await host.close();
      await app.close();
    }
  },
});
