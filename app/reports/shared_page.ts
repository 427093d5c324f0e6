/**
 * The public pages a share link opens, as a use case of the share-link actor (app/actor.ts
 * `ShareLinkActor`): `shareLinkActor` resolves a token to the actor (or null), and
 * `openSharedPage` loads the one target the link names, as the account that made it, and renders
 * the page. Every answer that is not the page is a small message page: 404 for a link that opens
 * nothing (unknown, expired, revoked, made by a key or connected app that has ended, its target
 * or account gone, or the target no longer visible), 400 for filters that are not valid. The
 * route (routes/reports.ts) spends the client's page budget first and renders what this answers.
 *
 * @example
 * ```ts
 * import type { Services } from "../services.ts";
 * import { linkNotFound, openSharedPage, shareLinkActor } from "./shared_page.ts";
 * declare const services: Services;
 * declare const token: string, ip: string, query: Record<string, string>;
 * const actor = await shareLinkActor(services, "audit", token, ip);
 * const page = actor
 *   ? await openSharedPage(services, actor, { query, selfPath: `/reports/${token}` })
 *   : linkNotFound(services.deps.config.publicBaseUrl);
 * ```
 *
 * @module
 */
import { CHECKS_BY_ID } from "../../domain/audit_engine/mod.ts";
import { loadArticlePreview } from "../../domain/articles/mod.ts";
import { type AuditReportData, loadAuditReport } from "../../domain/audits/mod.ts";
import { ApiError } from "../../domain/platform/mod.ts";
import { resolveShare, type ShareKind } from "../../domain/shares/mod.ts";
import type { ShareLinkActor } from "../actor.ts";
import { reportQueryOf, ReportQuerySchema } from "../operations/reports.ts";
import type { Services } from "../services.ts";
import { articlePreviewHtml } from "./article_page.ts";
import { auditReportHtml } from "./audit_page.ts";
import { messagePage } from "./document.ts";

/** A shared page to send: its status and HTML (and the report's data, for its PDF). */
export interface SharedPage {
  status: 200 | 400 | 404;
  html: string;
  report?: AuditReportData;
}

const NOT_FOUND = "This link does not open anything: it may have expired or been revoked. " +
  "Ask whoever sent it for a new one.";

/** The 404 page of a link that opens nothing (the same for every reason). */
export function linkNotFound(baseUrl: string): SharedPage {
  return { status: 404, html: messagePage(baseUrl, "Link not found", NOT_FOUND) };
}

function badLink(baseUrl: string): SharedPage {
  return {
    status: 400,
    html: messagePage(baseUrl, "Bad link", "This page's filters are not valid."),
  };
}

/**
 * The actor a share link's token stands for on a `kind` page, or null when it opens nothing
 * (domain/shares/links.ts `resolveShare`: malformed, unknown, revoked, expired, of the other
 * kind, or its maker ended).
 */
export async function shareLinkActor(
  s: Services,
  kind: ShareKind,
  token: string,
  ip: string,
): Promise<ShareLinkActor | null> {
  const share = await resolveShare(s.deps, kind, token);
  if (!share) return null;
  return {
    kind: "share_link",
    share: share.kind,
    targetId: share.targetId,
    accountId: share.accountId,
    mode: share.mode,
    ip,
  };
}

/**
 * Loads and renders the page `actor`'s link opens: an article's preview, or an audit's report
 * filtered by `query` (the page's own query string; `selfPath` is where its filter links point).
 */
export async function openSharedPage(
  s: Services,
  actor: ShareLinkActor,
  page: { query: Record<string, string>; selfPath: string },
): Promise<SharedPage> {
  const { deps } = s;
  const base = deps.config.publicBaseUrl;
  const caller = { accountId: actor.accountId, mode: actor.mode };
  try {
    if (actor.share === "article") {
      const data = await loadArticlePreview(deps, caller, actor.targetId);
      return { status: 200, html: articlePreviewHtml(data, { baseUrl: base, shared: true }) };
    }
    const query = ReportQuerySchema.safeParse(page.query);
    if (!query.success || (query.data.issue && !CHECKS_BY_ID.has(query.data.issue))) {
      return badLink(base);
    }
    const data = await loadAuditReport(deps, caller, actor.targetId, reportQueryOf(query.data));
    return {
      status: 200,
      html: auditReportHtml(data, { baseUrl: base, selfPath: page.selfPath, shared: true }),
      report: data,
    };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === "invalid_request") return badLink(base);
    // The target is gone or no longer visible (not_found, invalid_state): as a bad token.
    return linkNotFound(base);
  }
}
