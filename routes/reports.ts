/**
 * The report and share-link endpoints under `/v1` (from the application layer's operations), and
 * the public pages a share link opens: `/reports/{token}` (an audit's report) and
 * `/previews/{token}` (an article's preview). The public pages take no key: the token is the
 * only credential, so every request, a bad token included, first spends the client IP's budget
 * (`SHARED_PAGE_RATE_PER_MINUTE`, 60 by default), and every answer that is not the page is the
 * same small 404 (unknown, expired, revoked, made by a key or connected app that has ended, or
 * its audit, article or account gone).
 *
 * @module
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { REPORT_OPERATIONS, reportQueryOf, ReportQuerySchema } from "../app/operations/reports.ts";
import {
  ACCOUNT_SHARE_OPERATIONS,
  ARTICLE_SHARE_OPERATIONS,
  AUDIT_SHARE_OPERATIONS,
} from "../app/operations/shares.ts";
import { articlePreviewHtml } from "../app/reports/article_page.ts";
import { auditReportHtml } from "../app/reports/audit_page.ts";
import { messagePage } from "../app/reports/document.ts";
import { REPORT_HEADERS } from "../app/reports/page_style.ts";
import { CHECKS_BY_ID } from "../domain/audit_engine/checks/index.ts";
import { ApiError } from "../domain/platform/errors.ts";
import { loadArticlePreview } from "../domain/articles/preview_data.ts";
import { loadAuditReport } from "../domain/audits/report_data.ts";
import { resolveShare, type ShareKind } from "../domain/shares/links.ts";
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
  app.get("/previews/:token", (c) => sharedPage(c, s, "article"));
}

function page(c: Context<AppEnv>, status: number, body: string): Response {
  return c.body(body, status as 200, REPORT_HEADERS);
}

const NOT_FOUND = "This link does not open anything: it may have expired or been revoked. " +
  "Ask whoever sent it for a new one.";

async function sharedPage(c: Context<AppEnv>, s: Services, kind: ShareKind): Promise<Response> {
  const { deps } = s;
  const base = deps.config.publicBaseUrl;
  const decision = await s.limits.sharedPages.hit(clientIp(c, deps.config));
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
  const share = await resolveShare(deps, kind, token);
  if (!share) return page(c, 404, messagePage(base, "Link not found", NOT_FOUND));
  const caller = { accountId: share.accountId, mode: share.mode };
  try {
    if (kind === "article") {
      const data = await loadArticlePreview(deps, caller, share.targetId);
      return page(c, 200, articlePreviewHtml(data, { baseUrl: base, shared: true }));
    }
    const query = ReportQuerySchema.safeParse(c.req.query());
    if (!query.success || (query.data.issue && !CHECKS_BY_ID.has(query.data.issue))) {
      return page(c, 400, messagePage(base, "Bad link", "This page's filters are not valid."));
    }
    const data = await loadAuditReport(deps, caller, share.targetId, reportQueryOf(query.data));
    const selfPath = `/reports/${token}`;
    return page(c, 200, auditReportHtml(data, { baseUrl: base, selfPath, shared: true }));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === "invalid_request") {
      return page(c, 400, messagePage(base, "Bad link", "This page's filters are not valid."));
    }
    // The target is gone or no longer visible (not_found, invalid_state): as a bad token.
    return page(c, 404, messagePage(base, "Link not found", NOT_FOUND));
  }
}
