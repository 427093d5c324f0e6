/**
 * The report and share-link endpoints under `/v1` (from the application layer's operations), and
 * the public pages a share link opens: `/reports/{token}` (an audit's report) and
 * `/previews/{token}` (an article's preview), and `/reports/{token}/report.pdf` (the report
 * printed, where this server prints). The public pages take no key: the token is the
 * only credential, so every request, a bad token included, first spends the client IP's budget
 * (`SHARED_PAGE_RATE_PER_MINUTE`, 60 by default), and every answer that is not the page is the
 * same small 404 (unknown, expired, revoked, made by a key or connected app that has ended, or
 * its audit, article or account gone). The page is the share-link actor's use case
 * (app/reports/shared_page.ts); the route spends the budget, parses and renders.
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { REPORT_OPERATIONS } from "../app/operations/reports.ts";
import {
  ACCOUNT_SHARE_OPERATIONS,
  ARTICLE_SHARE_OPERATIONS,
  AUDIT_SHARE_OPERATIONS,
} from "../app/operations/shares.ts";
import { messagePage } from "../app/reports/document.ts";
import { REPORT_HEADERS } from "../app/reports/page_style.ts";
import { PDF_TYPE, reportPdf } from "../app/reports/pdf.ts";
import { linkNotFound, openSharedPage, shareLinkActor } from "../app/reports/shared_page.ts";
import { ApiError } from "../domain/platform/mod.ts";
import type { ShareKind } from "../domain/shares/mod.ts";
import type { AppEnv, Services } from "./env.ts";
import { setHeaders } from "./middleware/rate_limit.ts";
import { clientIp } from "./middleware/request_id.ts";
import { mountOperations } from "./operation_routes.ts";

/** The operations, and the two public pages. */
export function reportRoutes(app: OpenAPIHono<AppEnv>, s: Services): void {
  mountOperations(app, s, [
    ...REPORT_OPERATIONS,
    ...AUDIT_SHARE_OPERATIONS,
    ...ARTICLE_SHARE_OPERATIONS,
    ...ACCOUNT_SHARE_OPERATIONS,
  ]);
  app.get("/reports/:token", (c) => sharedPage(c, s, "audit"));
  app.get("/reports/:token/report.pdf", (c) => sharedPage(c, s, "audit", true));
  app.get("/previews/:token", (c) => sharedPage(c, s, "article"));
}

function page(c: Context<AppEnv>, status: number, body: string): Response {
  return c.body(body, status as 200, REPORT_HEADERS);
}

/**
 * Spends the client's page budget, resolves the token to its actor, and renders the page (`pdf`:
 * the report printed, app/reports/pdf.ts; where this server cannot print, a 503 page).
 */
async function sharedPage(
  c: Context<AppEnv>,
  s: Services,
  kind: ShareKind,
  pdf = false,
): Promise<Response> {
  const { deps } = s;
  const base = deps.config.publicBaseUrl;
  const ip = clientIp(c, deps.config);
  const decision = await s.limits.sharedPages.hit(ip);
  setHeaders(c, decision);
  if (!decision.allowed) {
    c.header("Retry-After", String(decision.retryAfter));
    return page(
      c,
      429,
      messagePage(
        base,
        "Too many requests",
        `Too many shared pages opened from this address; try again in ${decision.retryAfter} s.`,
      ),
    );
  }
  const token = c.req.param("token") ?? "";
  const actor = await shareLinkActor(s, kind, token, ip);
  const shared = actor
    ? await openSharedPage(s, actor, { query: c.req.query(), selfPath: `/reports/${token}` })
    : linkNotFound(base);
  if (!pdf || !shared.report) return page(c, shared.status, shared.html);
  try {
    const bytes = await reportPdf(s, shared.report, shared.html);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      ...REPORT_HEADERS,
      "Content-Type": PDF_TYPE,
      "Content-Disposition": `inline; filename="serpwright-report-${shared.report.audit.id}.pdf"`,
    });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== "rendering_unavailable") throw err;
    for (const [name, value] of Object.entries(err.headers ?? {})) c.header(name, value);
    return page(c, 503, messagePage(base, "PDF unavailable", err.message));
  }
}
