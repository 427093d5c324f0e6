/**
 * The audit report (additive): a completed audit as one HTML page with charts, issues and the
 * page inventory. `/v1` answers the page itself (`text/html`); the MCP audits tool's `report`
 * action answers the same page as a string (for a link a human opens, its `share` action).
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import { loadAuditReport, type ReportQuery } from "../../domain/audits/mod.ts";
import { bodyResult, defineOperation } from "../operation.ts";
import { auditReportHtml } from "../reports/audit_page.ts";
import { HTML_TYPE, REPORT_HEADERS } from "../reports/page_style.ts";
import { assertCanPrint, PDF_TYPE, reportPdf } from "../reports/pdf.ts";
import { AuditIdParam, PagesQuery } from "./audits.ts";

/** The report's query: the inventory's filters and cursor, or `issue` for one issue's items. */
export const ReportQuerySchema = z.object({
  status: PagesQuery.shape.status,
  indexable: PagesQuery.shape.indexable,
  check: PagesQuery.shape.check.openapi({
    description: "Inventory: only URLs this check fired on",
    example: "title_missing",
  }),
  cursor: z.string().min(1).max(3000).optional().openapi({
    description: "The next page of the inventory (or of the issue's items), from the page's " +
      "own Next page link",
  }),
  issue: z.string().min(1).max(100).optional().openapi({
    description: "A check id: the page lists every stored affected item of that issue, 50 per " +
      "page, instead of the whole report",
    example: "broken_internal_links",
  }),
});

/** The parsed query as the report's loader takes it. */
export function reportQueryOf(q: z.output<typeof ReportQuerySchema>): ReportQuery {
  return {
    status: q.status,
    indexable: q.indexable === undefined ? undefined : q.indexable === "true",
    check: q.check,
    cursor: q.cursor,
    issue: q.issue,
  };
}

/** The report as the MCP `report` action answers it (the page, with what it is). */
export const AuditReportDocument = z.object({
  audit_id: z.string(),
  content_type: z.literal(HTML_TYPE),
  html: z.string().openapi({ description: "The whole HTML page" }),
}).openapi("AuditReportDocument");

export const auditReportOp = defineOperation({
  id: "audits.report",
  method: "get",
  path: "/v1/audits/{auditId}/report",
  tags: ["Audits"],
  summary: "A completed audit as an HTML report: score gauge and categories, score history, " +
    "changes since the previous audit, issues with their first affected URLs, the page " +
    "inventory (filters and pages by query), lab metrics of rendered audits",
  description: "A page for people, without script or external resource; to show it to someone " +
    "without a key, create a share link (`POST /v1/audits/{auditId}/shares`). Same " +
    "Content-Security-Policy, `noindex` and `no-referrer` as the shared page.",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: ReportQuerySchema,
  status: 200,
  produces: HTML_TYPE,
  output: z.string().openapi({ description: "The whole HTML page" }),
  outputDescription: "The report (text/html)",
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor, baseUrl, header }) {
    const data = await loadAuditReport(services.deps, actor, params.auditId, reportQueryOf(query));
    for (const [name, value] of Object.entries(REPORT_HEADERS)) {
      if (name !== "Content-Type") header(name, value);
    }
    return bodyResult(
      HTML_TYPE,
      auditReportHtml(data, {
        baseUrl,
        selfPath: `/v1/audits/${data.audit.id}/report`,
        shared: false,
      }),
    );
  },
});

export const auditReportPdfOp = defineOperation({
  id: "audits.report_pdf",
  method: "get",
  path: "/v1/audits/{auditId}/report.pdf",
  tags: ["Audits"],
  summary: "The HTML report printed to PDF (A4, its print styles): page numbers and the audit " +
    "in every page's footer, and on a sandbox audit the trial watermark in every page's header",
  description: "Printed in the server's packaged Chromium, one report at a time per server " +
    "process; 503 `rendering_unavailable` where the server has no browser (`RENDERING=off`, " +
    "Deno Deploy, a process without the permissions to launch it) or is busy printing (with " +
    "`Retry-After`). Takes the report's query (filters, cursor, `issue`) and prints that page. " +
    "A share link's PDF is `/reports/{token}/report.pdf`.",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: ReportQuerySchema,
  status: 200,
  produces: PDF_TYPE,
  output: z.string().openapi({ description: "The PDF document", format: "binary" }),
  outputDescription: "The report (application/pdf)",
  errors: ["not_found", "invalid_state", "rendering_unavailable"],
  async run({ params, query }, { services, actor, baseUrl }) {
    const data = await loadAuditReport(services.deps, actor, params.auditId, reportQueryOf(query));
    assertCanPrint(services);
    const page = auditReportHtml(data, {
      baseUrl,
      selfPath: `/v1/audits/${data.audit.id}/report`,
      shared: false,
    });
    return bodyResult(
      PDF_TYPE,
      () => reportPdf(services, data, page),
      `serpwright-report-${data.audit.id}.pdf`,
    );
  },
});

/** The report operations, in the order the API reference lists them. */
export const REPORT_OPERATIONS = [auditReportOp, auditReportPdfOp];
