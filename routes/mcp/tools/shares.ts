/**
 * The report and share-link actions of the `audits` and `articles` tools, over the same
 * operations as `GET /v1/audits/{id}/report` and `/v1/{audits|articles}/{id}/shares`: `report`
 * (the HTML page's address and size, never the page), `share` (a link a human opens without a
 * key, shown once), `shares` (the links, newest first, paged, never their tokens) and
 * `revoke_share`. Kept apart from the tools' other actions (tools/jobs.ts), which spread them
 * in. The account's own `list_shares` and `end_shares` (`GET`, `DELETE /v1/shares`) are
 * actions of the `api_keys` tool (tools/accounts.ts), beside the keys and apps that make links.
 *
 * @module
 */
import { z } from "zod";
import {
  AuditReportDocument,
  auditReportOp,
  auditReportPdfOp,
} from "../../../app/operations/reports.ts";
import { PDF_TYPE } from "../../../app/reports/pdf.ts";
import { HTML_TYPE } from "../../../app/reports/page_style.ts";
import {
  AccountShareList,
  ArticleShare,
  ArticleShareList,
  AuditShare,
  AuditShareList,
  createArticleShareOp,
  createAuditShareOp,
  endAccountSharesOp,
  EndedShares,
  listAccountSharesOp,
  listArticleSharesOp,
  listAuditSharesOp,
  revokeArticleShareOp,
  revokeAuditShareOp,
} from "../../../app/operations/shares.ts";
import { activeShareUrl, MAX_SHARE_DAYS, MAX_SHARE_PAGE } from "../../../domain/shares/mod.ts";
import { action, bodyText, required, restAddress } from "../kit.ts";

/** The arguments the share actions take (both tools). */
export const ShareArgs = {
  expires_in_days: z.number().int().optional()
    .describe(`share: days until the link stops working, 1 to ${MAX_SHARE_DAYS} (default 30)`),
  share_id: z.string().min(1).max(100).optional().describe("revoke_share: the link (shr_…)"),
};

/** How a listing of links pages (the articles tool; the audits tool has its own `limit`, `cursor`). */
export const ShareListArgs = {
  limit: z.number().optional()
    .describe(`shares: 1 to ${MAX_SHARE_PAGE}`),
  cursor: z.string().optional().describe("shares: the previous next_cursor"),
};

/** What the report action takes besides `audit_id` (the inventory's filters, or one issue). */
export const ReportArgs = {
  issue: z.string().min(1).max(100).optional()
    .describe("report: a check id; the page lists that issue's items instead"),
};

/** The audits tool's output fields of these actions. */
export const AuditShareOutputs = {
  report: AuditReportDocument.optional()
    .describe("report: the address of the HTML page (GET /v1/audits/{audit_id}/report)"),
  share: AuditShare.extend({ url: z.string().optional() }).optional()
    .describe("share: the new link (url shown once); revoke_share: the revoked link"),
  shares: AuditShareList.optional().describe("shares: GET /v1/audits/{audit_id}/shares"),
};

/** The articles tool's output fields of these actions. */
export const ArticleShareOutputs = {
  share: ArticleShare.extend({ url: z.string().optional() }).optional()
    .describe("share: the new link (url shown once); revoke_share: the revoked link"),
  shares: ArticleShareList.optional().describe("shares: GET /v1/articles/{article_id}/shares"),
};

interface AuditArgs {
  audit_id?: string;
  expires_in_days?: number;
  share_id?: string;
  status?: string;
  indexable?: boolean;
  check?: string;
  cursor?: string;
  issue?: string;
  limit?: number;
}

interface ArticleArgs {
  article_id?: string;
  expires_in_days?: number;
  share_id?: string;
  limit?: number;
  cursor?: string;
}

interface AccountShareArgs {
  limit?: number;
  cursor?: string;
}

/** The api_keys tool's output fields of the account's share-link actions. */
export const AccountShareOutputs = {
  all_shares: AccountShareList.optional().describe("list_shares: GET /v1/shares"),
  ended_shares: EndedShares.optional().describe("end_shares: DELETE /v1/shares"),
};

const nextPage = (cursor: string | null) =>
  cursor === null ? "" : ` More: call again with cursor ${cursor}.`;

const kb = (text: string) =>
  `${Math.max(1, Math.round(new TextEncoder().encode(text).length / 1024))} KB`;

function reportInput(a: AuditArgs) {
  return {
    params: { auditId: required(a.audit_id, "audit_id", "report") },
    query: {
      status: a.status,
      indexable: a.indexable === undefined ? undefined : String(a.indexable),
      check: a.check,
      cursor: a.cursor,
      issue: a.issue,
    },
  };
}

export const AUDIT_SHARE_ACTIONS = {
  report: action(auditReportOp, reportInput, async (result, a, ctx) => {
    // The HTML page is a document, never inlined (issue 33): its address, opened with the key,
    // and the live share link a human opens without one when there is one.
    const html = bodyText(result);
    const rest = restAddress(ctx, auditReportOp, reportInput(a));
    const shareUrl = ctx.actor.kind === "account"
      ? await activeShareUrl(ctx.services.deps, ctx.actor.accountId, a.audit_id!)
      : null;
    const report = {
      audit_id: a.audit_id!,
      content_type: HTML_TYPE,
      bytes: new TextEncoder().encode(html).length,
      report_url: rest.slice("GET ".length),
      share_url: shareUrl,
    };
    return {
      structured: report,
      summary: `The HTML report of audit ${report.audit_id} (${kb(html)}) opens at ` +
        `${report.report_url} with the API key (Authorization: Bearer).` +
        (shareUrl
          ? ` For a human without a key: ${shareUrl}.`
          : " To give a human a link that opens it without a key, use action share."),
      rest,
    };
  }),
  report_pdf: action(auditReportPdfOp, reportInput, (_result, a, ctx) => {
    // The checks ran (not_found, invalid_state, rendering_unavailable); the PDF is printed only
    // when its address is fetched, never for an answer that would not carry it.
    const rest = restAddress(ctx, auditReportPdfOp, reportInput(a));
    const pdf = {
      audit_id: a.audit_id!,
      content_type: PDF_TYPE,
      pdf_url: rest.slice("GET ".length),
    };
    return {
      structured: pdf,
      summary: `The PDF of audit ${pdf.audit_id}'s report downloads from ${pdf.pdf_url} with the ` +
        "API key (Authorization: Bearer); a share link's PDF is the link followed by /report.pdf.",
      rest,
    };
  }),
  share: action(createAuditShareOp, (a: AuditArgs) => ({
    params: { auditId: required(a.audit_id, "audit_id", "share") },
    body: { expires_in_days: a.expires_in_days },
  }), (share) => ({
    structured: share,
    summary: `Share link of audit ${share.audit_id}'s report, until ${share.expires_at}: ` +
      `${share.url} (anyone with it can open the report; shown once; revoke with action ` +
      `revoke_share, share_id ${share.share_id}).`,
  })),
  shares: action(listAuditSharesOp, (a: AuditArgs) => ({
    params: { auditId: required(a.audit_id, "audit_id", "shares") },
    query: { limit: a.limit, cursor: a.cursor },
  }), (shares) => ({
    structured: shares,
    summary: `${shares.data.length} share link(s) of audit ${shares.audit_id}, newest first, ` +
      `${shares.data.filter((s) => s.status === "active").length} active.` +
      nextPage(shares.next_cursor),
  })),
  revoke_share: action(revokeAuditShareOp, (a: AuditArgs) => ({
    params: {
      auditId: required(a.audit_id, "audit_id", "revoke_share"),
      shareId: required(a.share_id, "share_id", "revoke_share"),
    },
  }), (share) => ({
    structured: share,
    summary: `Share link ${share.share_id} of audit ${share.audit_id} is revoked.`,
  })),
};

export const ARTICLE_SHARE_ACTIONS = {
  share: action(createArticleShareOp, (a: ArticleArgs) => ({
    params: { articleId: required(a.article_id, "article_id", "share") },
    body: { expires_in_days: a.expires_in_days },
  }), (share) => ({
    structured: share,
    summary: `Preview link of article ${share.article_id}, until ${share.expires_at}: ` +
      `${share.url} (for a human to read and approve the draft; shown once; revoke with ` +
      `action revoke_share, share_id ${share.share_id}).`,
  })),
  shares: action(listArticleSharesOp, (a: ArticleArgs) => ({
    params: { articleId: required(a.article_id, "article_id", "shares") },
    query: { limit: a.limit, cursor: a.cursor },
  }), (shares) => ({
    structured: shares,
    summary: `${shares.data.length} preview link(s) of article ${shares.article_id}, newest ` +
      `first, ${shares.data.filter((s) => s.status === "active").length} active.` +
      nextPage(shares.next_cursor),
  })),
  revoke_share: action(revokeArticleShareOp, (a: ArticleArgs) => ({
    params: {
      articleId: required(a.article_id, "article_id", "revoke_share"),
      shareId: required(a.share_id, "share_id", "revoke_share"),
    },
  }), (share) => ({
    structured: share,
    summary: `Preview link ${share.share_id} of article ${share.article_id} is revoked.`,
  })),
};

/** The account's share links, as actions of the api_keys tool. */
export const ACCOUNT_SHARE_ACTIONS = {
  list_shares: action(listAccountSharesOp, (a: AccountShareArgs) => ({
    query: { limit: a.limit, cursor: a.cursor },
  }), (all_shares) => ({
    structured: all_shares,
    summary: `${all_shares.data.length} live share link(s), newest first: ` +
      all_shares.data.map((s) => `${s.share_id} (${s.kind} ${s.audit_id ?? s.article_id})`)
        .join(", ") +
      nextPage(all_shares.next_cursor),
  })),
  end_shares: action(endAccountSharesOp, () => ({}), (ended_shares) => ({
    structured: ended_shares,
    summary: `${ended_shares.ended} share link(s) ended; they answer 404 from now on.`,
  })),
};
