/**
 * The report as a PDF over HTTP (`GET /v1/audits/{id}/report.pdf` and a share link's
 * `/reports/{token}/report.pdf`), printed in the packaged Chromium and read back
 * (tests/helpers/pdf.ts): its page count, "Page N of M" on every page, and the sandbox watermark
 * on every page of a sandbox audit and on none of a live one. The /v1 rules (key, rate-limit
 * headers, not_found for another account's audit), and 503 `rendering_unavailable` on a server
 * that does not render.
 */
import assert from "node:assert/strict";
import { SANDBOX_WATERMARK } from "../../app/reports/pdf.ts";
import { loadConfig } from "../../config.ts";
import { MAX_QUEUED_PRINTS, RenderService } from "../../domain/render/mod.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { readPdf } from "../helpers/pdf.ts";
import { connectMcp } from "../mcp/helpers.ts";
import { serveSite } from "../helpers/sites.ts";
import { auditOnce, hostileSite } from "./fixture.ts";

const BASE = "http://localhost:8000";

async function fetchPdf(url: string, key?: string): Promise<{ res: Response; bytes: Uint8Array }> {
  const res = await fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** Reads `bytes` back and checks the page numbers and the watermark of every page. */
async function checkPdf(bytes: Uint8Array, watermarked: boolean, auditId: string) {
  const pdf = await readPdf(bytes);
  assert.ok(pdf.pages.length >= 2, `a report is more than a page (${pdf.pages.length})`);
  assert.equal(pdf.count, pdf.pages.length, "the page tree's count is its pages");
  pdf.pages.forEach((text, i) => {
    assert.ok(
      text.includes(`Page ${i + 1} of ${pdf.count}`),
      `page ${i + 1} numbered: ${text.slice(-120)}`,
    );
    assert.ok(text.includes(auditId), `page ${i + 1} names the audit`);
    // Ligature glyphs read back as one character ("ﬁ"): an id with "fi" in it, a URL, "fix".
    assert.doesNotMatch(text, /[\uFB00-\uFB06]/, `page ${i + 1}: no ligature`);
    assert.equal(text.includes(SANDBOX_WATERMARK), watermarked, `page ${i + 1}: watermark`);
  });
  assert.match(pdf.pages[0], /SEO audit of 127\.0\.0\.1/, "the report's own heading");
  return pdf;
}

async function sandboxAudit(app: TestApp, origin: string) {
  const { key } = await app.signup();
  const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
  assert.equal(proj.status, 201, proj.text);
  return { key, auditId: await auditOnce(app, key, proj.body.project_id) };
}

Deno.test({
  name: "report.pdf: printed, page numbers, sandbox watermark on every page, share link, /v1 rules",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withApp(async (app) => {
      const site = serveSite(hostileSite(30, { fixed: false }));
      try {
        const { key, auditId } = await sandboxAudit(app, site.origin);
        const path = `/v1/audits/${auditId}/report.pdf`;
        const { res, bytes } = await fetchPdf(app.url + path, key);
        assert.equal(res.status, 200, new TextDecoder().decode(bytes.subarray(0, 300)));
        assert.equal(res.headers.get("content-type"), "application/pdf");
        assert.match(res.headers.get("content-disposition") ?? "", /\.pdf"$/);
        assert.ok(res.headers.get("x-ratelimit-limit"), "the /v1 rate-limit headers");
        await checkPdf(bytes, true, auditId);

        // The MCP action answers the address (and prints nothing); the address is the PDF.
        const mcp = await connectMcp(app, { key });
        try {
          const res = await mcp.callTool({
            name: "audits",
            arguments: { action: "report_pdf", audit_id: auditId },
          });
          assert.ok(!res.isError, JSON.stringify(res.content));
          const out = res.structuredContent as { pdf_url: string; content_type: string };
          assert.equal(out.content_type, "application/pdf");
          assert.equal(new URL(out.pdf_url).pathname, path);
        } finally {
          await mcp.close();
        }

        // Another account's audit is not found; no key is unauthorized.
        const other = await app.signup();
        const foreign = await app.req("GET", path, { key: other.key });
        assert.equal(foreign.status, 404);
        assert.equal(errorCode(foreign), "not_found");
        const anonymous = await app.req("GET", path);
        assert.equal(anonymous.status, 401);

        // The share link's PDF: no key, same watermark; a bad token is the shared 404 page.
        const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
        assert.equal(share.status, 201, share.text);
        const link = app.url + share.body.url.slice(BASE.length);
        const shared = await fetchPdf(`${link}/report.pdf`);
        assert.equal(shared.res.status, 200);
        assert.equal(shared.res.headers.get("content-type"), "application/pdf");
        await checkPdf(shared.bytes, true, auditId);
        const bad = await fetch(`${app.url}/reports/shr_nothing/report.pdf`);
        assert.equal(bad.status, 404);
        assert.match(bad.headers.get("content-type") ?? "", /text\/html/);
        await bad.body?.cancel();

        // A live audit's PDF carries no watermark.
        const { live } = await liveWithCredits(app, 100);
        const proj = await app.req("POST", "/v1/projects", {
          key: live,
          body: { url: site.origin },
        });
        const liveAudit = await auditOnce(app, live, proj.body.project_id);
        const printed = await fetchPdf(`${app.url}/v1/audits/${liveAudit}/report.pdf`, live);
        assert.equal(printed.res.status, 200);
        await checkPdf(printed.bytes, false, liveAudit);
      } finally {
        await site.close();
      }
    }),
});

Deno.test({
  name: "report.pdf: 503 rendering_unavailable where the server does not render",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withApp(async (app) => {
      const site = serveSite(hostileSite(2, { fixed: false }));
      try {
        const { key, auditId } = await sandboxAudit(app, site.origin);
        const res = await app.req("GET", `/v1/audits/${auditId}/report.pdf`, { key });
        assert.equal(res.status, 503, res.text);
        assert.equal(errorCode(res), "rendering_unavailable");
        assert.ok(res.headers.get("x-ratelimit-limit"), "the /v1 rate-limit headers");
        // The HTML report is still there.
        assert.equal((await app.req("GET", `/v1/audits/${auditId}/report`, { key })).status, 200);
        const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
        const link = app.url + share.body.url.slice(BASE.length);
        const shared = await fetch(`${link}/report.pdf`);
        assert.equal(shared.status, 503);
        assert.match(await shared.text(), /PDF unavailable/);
      } finally {
        await site.close();
      }
    }, { env: { RENDERING: "off" } }),
});

Deno.test({
  name: "report.pdf: one print at a time per process, at most MAX_QUEUED_PRINTS waiting",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const render = new RenderService(loadConfig({}));
    assert.ok(render.printing, "the tests may launch the browser");
    const templates = {
      headerTemplate: "<span></span>",
      footerTemplate: '<div style="font-size:8px">Page <span class="pageNumber"></span></div>',
      timeoutMs: 30_000,
    };
    try {
      const prints: Promise<Uint8Array>[] = [];
      // Asked in one go, before any has started: MAX_QUEUED_PRINTS wait, then there is no room.
      while (render.printRoom()) {
        prints.push(render.print(`<h1>Print ${prints.length}</h1>`, templates));
      }
      assert.equal(prints.length, MAX_QUEUED_PRINTS);
      const done = await Promise.all(prints);
      assert.ok(render.printRoom(), "room again once they are done");
      for (const [i, bytes] of done.entries()) {
        const pdf = await readPdf(bytes);
        assert.equal(pdf.count, 1);
        assert.match(pdf.pages[0], new RegExp(`Print ${i}\\b.*Page 1`));
      }
      assert.equal(render.stats()?.peakInFlight, 1, "never two prints at once");
    } finally {
      await render.close();
    }
  },
});
