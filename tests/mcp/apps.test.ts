/**
 * MCP Apps (issue 33 item 3): the audits and articles tools link their UI resources, the
 * resources are served as `text/html;profile=mcp-app`, and the audit app, read over MCP and
 * rendered in the packaged Chromium inside a sandboxed iframe under a CSP that allows no domain,
 * completes the extension's handshake, draws the score chart from the tool result it is handed,
 * opens links through the host, calls no tool and logs no console error; the article app shows
 * the draft as text (its markdown's markup never becomes elements).
 */
import assert from "node:assert/strict";
import type { FrameLocator, Page } from "playwright-core";
import { launchChromium } from "../../domain/render/chromium.ts";
import { ARTICLE_APP_URI, AUDIT_APP_URI, UI_MIME_TYPE } from "../../routes/mcp/apps.ts";
import { withApp } from "../helpers/app.ts";
import { connectMcp } from "./helpers.ts";

const AUDIT = {
  audit_id: "aud_0example",
  project_id: "proj_0example",
  status: "completed",
  score: 72,
  summary: {
    issues_critical: 2,
    issues_warning: 1,
    issues_info: 3,
    top_issues: [
      {
        check: "title_missing",
        severity: "critical",
        title: "<b>Pages</b> without a title",
        affected_count: 3,
      },
      { check: "redirect_chain", severity: "warning", title: "Redirect chains", affected_count: 1 },
    ],
    categories: { performance: 90, security: 80, indexability: 70, mobile: 100, structure: 60 },
  },
  report_url: "http://localhost:8000/v1/audits/aud_0example/report",
  share_url: "http://localhost:8000/reports/token",
};

Deno.test("the audits and articles tools link their MCP Apps, served as mcp-app HTML", () =>
  withApp(async (app) => {
    const { key } = await app.signup();
    const client = await connectMcp(app, { key });
    try {
      const tools = (await client.listTools()).tools;
      const meta = (name: string) =>
        // deno-lint-ignore no-explicit-any
        (tools.find((t) => t.name === name)?._meta as any)?.ui?.resourceUri;
      assert.equal(meta("audits"), AUDIT_APP_URI);
      assert.equal(meta("articles"), ARTICLE_APP_URI);
      const listed = (await client.listResources()).resources;
      for (const uri of [AUDIT_APP_URI, ARTICLE_APP_URI]) {
        const r = listed.find((x) => x.uri === uri);
        assert.equal(r?.mimeType, UI_MIME_TYPE, uri);
        const read = await client.readResource({ uri });
        // deno-lint-ignore no-explicit-any
        const content = read.contents[0] as any;
        assert.equal(content.mimeType, UI_MIME_TYPE);
        assert.match(content.text, /^<!DOCTYPE html>/);
        assert.ok(
          !/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3\.org)/.test(content.text),
        );
      }
    } finally {
      await client.close();
    }
  }));

/**
 * Reads the app `uri` over MCP, renders it in a sandboxed iframe under a CSP that allows no
 * domain, answers its handshake, hands it `structured` as a tool result, then runs `check` on the
 * frame. Returns the JSON-RPC methods the app sent and any console error or warning.
 */
async function renderApp(
  uri: string,
  structured: Record<string, unknown>,
  check: (frame: FrameLocator, page: Page) => Promise<void>,
): Promise<{ methods: (string | undefined)[]; problems: string[] }> {
  let seen: { methods: (string | undefined)[]; problems: string[] } | undefined;
  await withApp(async (app) => {
    const { key } = await app.signup();
    const client = await connectMcp(app, { key });
    // deno-lint-ignore no-explicit-any
    const appHtml = ((await client.readResource({ uri })).contents[0] as any).text as string;
    await client.close();
    const csp = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
      "img-src data:";
    const framed = appHtml.replace(
      "<head>",
      `<head><meta http-equiv="Content-Security-Policy" content="${csp}">`,
    );
    const host = `<!DOCTYPE html><html><body><iframe id="app" sandbox="allow-scripts"></iframe>
<script>
  window.received = [];
  const frame = document.getElementById("app");
  window.addEventListener("message", (e) => {
    if (e.source !== frame.contentWindow) return;
    const m = e.data;
    window.received.push(m);
    const reply = (result) => frame.contentWindow.postMessage({ jsonrpc: "2.0", id: m.id, result }, "*");
    if (m.method === "ui/initialize") {
      reply({ protocolVersion: m.params.protocolVersion, hostInfo: { name: "test-host", version: "1" },
        hostCapabilities: {}, hostContext: {} });
    } else if (m.method === "ui/notifications/initialized") {
      frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-result",
        params: { content: [{ type: "text", text: "Done" }],
          structuredContent: ${JSON.stringify(structured).replaceAll("</", "<\\/")} } }, "*");
    } else if (m.method === "ui/open-link") {
      reply({});
    }
  });
  frame.srcdoc = ${JSON.stringify(framed).replaceAll("</", "<\\/")};
</script></body></html>`;
    const { browser } = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error" || m.type() === "warning") problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(e.message));
      await page.setContent(host);
      try {
        await check(page.frameLocator("#app"), page);
      } catch (err) {
        const seen = await page.evaluate(() => JSON.stringify(Reflect.get(globalThis, "received")));
        throw new Error(`${err}; received ${seen}; problems ${problems.join(" | ")}`);
      }
      const methods = await page.evaluate(() =>
        (Reflect.get(globalThis, "received") as { method?: string }[]).map((m) => m.method)
      );
      seen = { methods, problems };
    } finally {
      await browser.close();
    }
  });
  if (!seen) throw new Error("the app did not render");
  return seen;
}

Deno.test({
  name: "the audit app renders in a sandboxed iframe under a no-domain CSP: chart, no errors",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { methods, problems } = await renderApp(AUDIT_APP_URI, AUDIT, async (frame, page) => {
      await frame.locator("#score-chart").waitFor({ timeout: 10_000 });
      assert.equal(await frame.locator("#score-chart text").textContent(), "72");
      const items = await frame.locator("li").allTextContents();
      // A title is text, never markup.
      assert.deepEqual(items, ["<b>Pages</b> without a title (3)", "Redirect chains (1)"]);
      await frame.getByText("Share link").click();
      await page.waitForFunction(() =>
        // deno-lint-ignore no-explicit-any
        (globalThis as any).received.some((m: { method?: string }) => m.method === "ui/open-link")
      );
    });
    assert.deepEqual(methods, ["ui/initialize", "ui/notifications/initialized", "ui/open-link"]);
    assert.deepEqual(problems, []);
  },
});

const ARTICLE = {
  article_id: "art_0example",
  project_id: "proj_0example",
  status: "ready",
  title: "How to <i>choose</i> running shoes",
  qa_score: 88,
  word_count: 1234,
  content_markdown: "# Running shoes\n\n<script>document.title='x'</script> Fit first.",
};

Deno.test({
  name: "the article app renders the draft as text in a sandboxed iframe: no markup, no errors",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { methods, problems } = await renderApp(ARTICLE_APP_URI, ARTICLE, async (frame) => {
      await frame.locator("pre").waitFor({ timeout: 10_000 });
      assert.equal(await frame.locator("h1").textContent(), ARTICLE.title);
      assert.equal(await frame.locator("pre").textContent(), ARTICLE.content_markdown);
      assert.match(await frame.locator("p").textContent() ?? "", /QA 88\/100, 1234 words/);
      // The markdown's script is text: nothing of it ran or became an element.
      assert.equal(await frame.locator("script, i").count(), 1); // only the app's own script
    });
    assert.deepEqual(methods, ["ui/initialize", "ui/notifications/initialized"]);
    assert.deepEqual(problems, []);
  },
});
