/**
 * The audit report as a PDF: the same page as the HTML report (app/reports/audit_page.ts),
 * printed with its print styles in the packaged Chromium, with a footer carrying the audit, the
 * site and "Page N of M" on every page, and for a sandbox audit the trial watermark in the
 * header of every page (the HTML report shows it once, at the top). Only where this process can
 * print (`RenderService.printing`); elsewhere 503 `rendering_unavailable`.
 *
 * Bounded like the HTML page it prints: the report shows the first page of the inventory and the
 * first affected URLs of each issue (what `loadAuditReport` loads), whatever the site's size, and
 * one print runs at a time per process with at most `MAX_QUEUED_PRINTS` waiting.
 *
 * @module
 */
import type { AuditReportData } from "../../domain/audits/mod.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import { RenderFailedError } from "../../domain/render/mod.ts";
import type { Services } from "../services.ts";
import { html } from "../html.ts";

export const PDF_TYPE = "application/pdf";

/** Whole print, from the browser being up: a report is one long page, but only one. */
const PRINT_TIMEOUT_MS = 60_000;

/** The text of the watermark on every page of a sandbox audit's PDF. */
export const SANDBOX_WATERMARK = "Sandbox report: made with a free trial key";

/** Throws 503 `rendering_unavailable` where this process cannot print, or is printing its fill. */
export function assertCanPrint(s: Services): void {
  const render = s.deps.render;
  if (!render?.printing) {
    throw new ApiError(
      "rendering_unavailable",
      "This server prints no PDF: it has no browser (RENDERING=off, Deno Deploy, or a process " +
        "without the permissions to launch Chromium). The HTML report is GET " +
        "/v1/audits/{auditId}/report.",
    );
  }
  if (!render.printRoom()) {
    throw new ApiError(
      "rendering_unavailable",
      "This server is printing other reports; try again in a few seconds.",
      undefined,
      { "Retry-After": "10" },
    );
  }
}

function host(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The print header and footer (Chromium's templates: inline styles only, its own classes). */
function templates(d: AuditReportData): { headerTemplate: string; footerTemplate: string } {
  // No ligatures here nor in the report's print style: Chromium's PDF maps a ligature glyph to one
  // character ("ﬁ"), so an id, a URL or a word copied or searched in the PDF ("aud_…fi…",
  // "/profile", "fix") would not be what it says.
  const small =
    "font:8px system-ui,sans-serif;font-variant-ligatures:none;width:100%;margin:0 12mm;";
  const site = d.project ? host(d.project.url) : d.audit.id;
  const headerTemplate = d.sandbox
    ? html`<div style="${small}text-align:center;color:#b42318;font-weight:700">${SANDBOX_WATERMARK}
      · not a full audit</div>`.value
    : html`<div style="${small}"></div>`.value;
  const footerTemplate =
    html`<div style="${small}display:flex;justify-content:space-between;color:#57606a">
      <span>Serpwright audit ${d.audit.id} · ${site}</span>
      <span>Page <span class="pageNumber"></span> of <span class="totalPages"></span></span></div>`
      .value;
  return { headerTemplate, footerTemplate };
}

/** The report page `page` (made from `d`) printed to PDF; 503 when the print fails. */
export async function reportPdf(
  s: Services,
  d: AuditReportData,
  page: string,
): Promise<Uint8Array> {
  assertCanPrint(s);
  try {
    return await s.deps.render!.print(page, { ...templates(d), timeoutMs: PRINT_TIMEOUT_MS });
  } catch (err) {
    if (!(err instanceof RenderFailedError)) throw err;
    throw new ApiError(
      "rendering_unavailable",
      `The report could not be printed (${err.kind}); try again, or use the HTML report.`,
      undefined,
      { "Retry-After": "30" },
    );
  }
}
