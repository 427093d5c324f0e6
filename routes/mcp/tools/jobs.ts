/**
 * The long-running work: audits (endpoints 9–10) and articles (11–12). Starting returns at once
 * with the id and a polling hint, exactly as the `202` of `/v1`; `wait` (up to 60 s) holds the
 * call and sends progress notifications while the job runs, then answers the job as it stands.
 */
import type { KeyMode } from "../../../domain/records.ts";
import { z } from "zod";
import { type ArticleRecord, createArticle, getArticle } from "../../../domain/articles.ts";
import {
  listAuditIssues,
  listAuditPages,
  listIssueItems,
  MAX_PAGE_SIZE,
} from "../../../domain/audit_results.ts";
import { createAudit } from "../../../domain/audits/create.ts";
import { type AuditRecord, getAudit } from "../../../domain/audits/record.ts";
import { Article, articleView, CreateArticleBody } from "../../articles.ts";
import {
  Audit,
  auditView,
  IssueItems,
  IssueItemsQuery,
  IssueList,
  IssuesQuery,
  PageList,
  PagesQuery,
} from "../../audits.ts";
import { idempotent } from "../idempotency.ts";
import {
  asBody,
  IdempotencyKeyArg,
  required,
  type ToolAnswer,
  type ToolContext,
  type ToolDef,
} from "../kit.ts";
import { MAX_WAIT_SECONDS, waitForJob } from "../wait.ts";

const Wait = z.number().int().min(0).max(MAX_WAIT_SECONDS).optional().describe(
  `Seconds (0 to ${MAX_WAIT_SECONDS}, default 0) to hold the call while the job runs, with ` +
    "progress notifications; it returns early when the job finishes. Jobs can outlast it: " +
    "then poll with action get.",
);

const AuditsInput = z.object({
  action: z.enum(["start", "get", "issues", "issue", "pages"]).describe(
    "start: queue a technical audit of project_id (an audit already queued or running is " +
      "returned as is, not charged twice). get: an audit (audit_id) with its score and summary " +
      "once completed. Once completed: issues: its issues worst first with meaning, fix and " +
      "change since the previous audit (filters severity, category, change); issue: the " +
      "affected items of one check with their evidence; pages: every URL the crawl met " +
      "(filters status, indexable, check). Listings page with limit and cursor.",
  ),
  project_id: z.string().min(1).max(100).optional().describe("start: the project (proj_…)"),
  audit_id: z.string().min(1).max(100).optional()
    .describe("get, issues, issue, pages: the audit (aud_…)"),
  render: z.boolean().optional().describe(
    "start: also render up to 50 pages in a real browser (priced apart: GET /v1/plans " +
      "rendered_audit_pricing; rendering_unavailable where the server has no browser)",
  ),
  wait: Wait,
  idempotency_key: IdempotencyKeyArg,
  check: z.string().optional()
    .describe("issue: the check id (e.g. broken_internal_links); pages: only URLs it fired on"),
  severity: z.string().optional().describe("issues: critical, warning or info"),
  category: z.string().optional()
    .describe("issues: indexability, structure, security, performance or mobile"),
  change: z.string().optional().describe("issues: new, persisting or fixed"),
  status: z.string().optional()
    .describe("pages: 2xx, 3xx, 4xx, 5xx, failed, blocked or not_fetched"),
  indexable: z.boolean().optional().describe("pages: only indexable (true) or not (false) URLs"),
  limit: z.number().optional()
    .describe(`issues, issue, pages: items per page, 1 to ${MAX_PAGE_SIZE} (default 50)`),
  cursor: z.string().optional()
    .describe("issues, issue, pages: the next_cursor of the previous page"),
}).strict();

const AUDIT_STEPS: Record<AuditRecord["status"], number> = {
  queued: 0,
  running: 1,
  completed: 2,
  failed: 2,
};

function auditSummary(a: ReturnType<typeof auditView>): string {
  if (a.status === "completed") {
    const s = a.summary!;
    const top = s.top_issues.slice(0, 3).map((t) =>
      `${t.check} (${t.severity}, ${t.affected_count})`
    );
    return `Audit ${a.audit_id} completed: score ${a.score}/100; ${s.issues_critical} critical, ` +
      `${s.issues_warning} warning, ${s.issues_info} info.` +
      (top.length ? ` Top issues: ${top.join(", ")}.` : "");
  }
  if (a.status === "failed") {
    return `Audit ${a.audit_id} failed: ${a.error?.code ?? "audit_failed"} ${
      a.error?.message ?? ""
    }`
      .trim();
  }
  return `Audit ${a.audit_id} is ${a.status}. Poll with audits action get, audit_id ` +
    `${a.audit_id}, every 30-60 s (or pass wait, up to ${MAX_WAIT_SECONDS} s).`;
}

function waitForAudit(
  ctx: ToolContext,
  owner: { accountId: string; mode: KeyMode },
  id: string,
  seconds: number,
) {
  return waitForJob(
    ctx,
    seconds,
    { kind: "audit", accountId: owner.accountId, id },
    () => getAudit(ctx.services.deps, owner.accountId, id, owner.mode),
    (a) => a.status === "completed" || a.status === "failed",
    (a) => ({ at: AUDIT_STEPS[a.status], total: 2, message: `audit ${a.status}` }),
  );
}

export const auditsTool: ToolDef<typeof AuditsInput> = {
  name: "audits",
  title: "Technical SEO audits",
  description: "Crawl a project's site and score it 0-100 with the critical, warning and info " +
    "issues found (indexability, structure, security, performance, mobile). start returns at " +
    "once with the audit_id; an audit takes a few minutes: pass wait (up to 60 s) or poll get " +
    "every 30-60 s. Costs: sandbox 1 audit per key; live keys 25 credits unless the project is " +
    "subscribed (insufficient_credits / payment_required otherwise).",
  input: AuditsInput,
  output: z.object({
    audit: Audit.optional().describe("start, get"),
    poll_after_seconds: z.number().int().optional()
      .describe("Present while the audit runs: when to call get again"),
    idempotent_replayed: z.boolean().optional(),
    issues: IssueList.optional()
      .describe("issues: the body of GET /v1/audits/{audit_id}/issues"),
    issue: IssueItems.optional()
      .describe("issue: the body of GET /v1/audits/{audit_id}/issues/{check}"),
    pages: PageList.optional().describe("pages: the body of GET /v1/audits/{audit_id}/pages"),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller } = ctx;
    const p = caller.principal!;
    if (args.action === "issues" || args.action === "issue" || args.action === "pages") {
      return await auditListing(args, ctx);
    }
    let id: string;
    let replayed = false;
    if (args.action === "start") {
      const projectId = required(args.project_id, "project_id", "start");
      const answer = await idempotent(
        services,
        caller,
        {
          key: args.idempotency_key,
          endpoint: `POST /v1/projects/${projectId}/audits`,
          ...(args.render ? { body: { render: true } } : {}),
        },
        async () => {
          const owner = { accountId: p.account.id, mode: p.key.mode };
          const { audit, created } = await createAudit(services.deps, owner, projectId, undefined, {
            trigger: "api",
            render: args.render === true,
          });
          if (created) services.resolver.invalidateAccount(p.account.id);
          return {
            status: 202,
            body: { audit_id: audit.id, status: audit.status, poll: `/v1/audits/${audit.id}` },
          };
        },
      );
      id = answer.body.audit_id;
      replayed = answer.replayed;
    } else {
      id = required(args.audit_id, "audit_id", "get");
    }
    const audit = auditView(
      await waitForAudit(
        ctx,
        { accountId: p.account.id, mode: p.key.mode },
        id,
        args.wait ?? 0,
      ),
    );
    const running = audit.status === "queued" || audit.status === "running";
    return {
      structured: {
        audit,
        ...(running ? { poll_after_seconds: 30 } : {}),
        ...(replayed ? { idempotent_replayed: true } : {}),
      },
      summary: auditSummary(audit),
    };
  },
};

/**
 * The listing actions: the same query validation (the `/v1` route's zod query schema) and domain
 * functions as `GET /v1/audits/{id}/issues`, `/issues/{check}` and `/pages`, so the answers are
 * the same bodies, with `not_found` for another account's audit and `invalid_state` before it
 * completed. As in `/v1`, a filter another listing takes is ignored.
 */
async function auditListing(
  args: z.output<typeof AuditsInput>,
  ctx: ToolContext,
): Promise<ToolAnswer> {
  const { deps } = ctx.services;
  const p = ctx.caller.principal!;
  const owner = { accountId: p.account.id, mode: p.key.mode };
  const action = args.action as "issues" | "issue" | "pages";
  const auditId = required(args.audit_id, "audit_id", action);
  const paging = { limit: args.limit, cursor: args.cursor };
  if (action === "issues") {
    const q = asBody(IssuesQuery, {
      severity: args.severity,
      category: args.category,
      change: args.change,
      ...paging,
    });
    const issues = await listAuditIssues(deps, owner, auditId, {
      severity: q.severity,
      category: q.category as never,
      change: q.change,
      limit: q.limit,
      cursor: q.cursor,
    });
    return {
      structured: { issues },
      summary: `${issues.data.length} issue(s) of audit ${auditId}` +
        (issues.data.length
          ? `: ${
            issues.data.slice(0, 5).map((i) => `${i.check} (${i.severity}, ${i.change})`)
              .join(", ")
          }`
          : "") +
        nextPage(issues.next_cursor),
    };
  }
  if (action === "issue") {
    const check = required(args.check, "check", "issue");
    const q = asBody(IssueItemsQuery, paging);
    const issue = await listIssueItems(deps, owner, auditId, check, q);
    return {
      structured: { issue },
      summary: `${issue.check} (${issue.severity}): ${issue.affected_count} affected; ` +
        `${issue.data.length} item(s) in this page. Fix: ${issue.fix}` +
        nextPage(issue.next_cursor),
    };
  }
  const q = asBody(PagesQuery, {
    status: args.status,
    indexable: args.indexable === undefined ? undefined : String(args.indexable),
    check: args.check,
    ...paging,
  });
  const pages = await listAuditPages(deps, owner, auditId, {
    status: q.status,
    indexable: q.indexable === undefined ? undefined : q.indexable === "true",
    check: q.check,
    limit: q.limit,
    cursor: q.cursor,
  });
  return {
    structured: { pages },
    summary: `${pages.data.length} URL(s) of audit ${auditId}` + nextPage(pages.next_cursor),
  };
}

function nextPage(cursor: string | null): string {
  return cursor ? ". More: call again with cursor set to next_cursor." : ".";
}

const ArticlesInput = z.object({
  action: z.enum(["start", "get"]).describe(
    "start: queue one draft article for project_id (topic and/or primary_keyword). get: an " +
      "article (article_id): status while generating, then the draft markdown.",
  ),
  project_id: z.string().min(1).max(100).optional().describe("start: the project (proj_…)"),
  topic: z.string().optional().describe("start: the planned title, 3 to 180 characters"),
  primary_keyword: z.string().optional()
    .describe("start: the keyword to rank for, 2 to 120 characters (default: from the topic)"),
  article_id: z.string().min(1).max(100).optional().describe("get: the article (art_…)"),
  wait: Wait,
  idempotency_key: IdempotencyKeyArg,
}).strict();

const ARTICLE_STEPS: Record<ArticleRecord["status"], number> = {
  queued: 0,
  generating: 1,
  qa: 2,
  ready: 3,
  failed: 3,
  published: 3,
};

function articleSummary(a: ReturnType<typeof articleView>): string {
  if (a.status === "ready" || a.status === "published") {
    return `Article ${a.article_id} is ${a.status}: "${a.title}", ${a.word_count} words, QA ` +
      `${a.qa_score}/100. The draft markdown is in content_markdown; publish it yourself.` +
      (a.watermark ? " Sandbox draft (watermarked)." : "");
  }
  if (a.status === "failed") {
    return `Article ${a.article_id} failed: ${a.error?.code ?? "failed"} ${a.error?.message ?? ""}`
      .trim() + " Its cost was refunded.";
  }
  return `Article ${a.article_id} is ${a.status}. Poll with articles action get, article_id ` +
    `${a.article_id}, every 60 s (or pass wait, up to ${MAX_WAIT_SECONDS} s).`;
}

export const articlesTool: ToolDef<typeof ArticlesInput> = {
  name: "articles",
  title: "Draft SEO articles",
  description: "Generate one draft SEO article in markdown for a project, with a QA score; it " +
    "is never published automatically. start returns at once with the article_id; generation " +
    "can take minutes: pass wait (up to 60 s) or poll get every 60 s. One article at a time " +
    "per project (article_in_progress). Costs: sandbox 2 per key (watermarked); live keys 15 " +
    "credits unless the project is subscribed.",
  input: ArticlesInput,
  output: z.object({
    article: Article,
    poll_after_seconds: z.number().int().optional()
      .describe("Present while the article generates: when to call get again"),
    idempotent_replayed: z.boolean().optional(),
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async run(args, ctx) {
    const { services, caller } = ctx;
    const p = caller.principal!;
    let id: string;
    let replayed = false;
    if (args.action === "start") {
      const projectId = required(args.project_id, "project_id", "start");
      const body = asBody(CreateArticleBody, {
        topic: args.topic,
        primary_keyword: args.primary_keyword,
      });
      const answer = await idempotent(
        services,
        caller,
        { key: args.idempotency_key, endpoint: `POST /v1/projects/${projectId}/articles`, body },
        async () => {
          const owner = { accountId: p.account.id, mode: p.key.mode };
          const article = await createArticle(services.deps, owner, projectId, {
            topic: body.topic,
            primaryKeyword: body.primary_keyword,
          });
          services.resolver.invalidateAccount(p.account.id);
          return {
            status: 202,
            body: { article_id: article.id, status: "queued", poll: `/v1/articles/${article.id}` },
          };
        },
      );
      id = answer.body.article_id;
      replayed = answer.replayed;
    } else {
      id = required(args.article_id, "article_id", "get");
    }
    const record = await waitForJob(
      ctx,
      args.wait ?? 0,
      { kind: "article", accountId: p.account.id, id },
      () => getArticle(services.deps, p.account.id, id, p.key.mode),
      (a) => ARTICLE_STEPS[a.status] === 3,
      (a) => ({ at: ARTICLE_STEPS[a.status], total: 3, message: `article ${a.status}` }),
    );
    const article = articleView(record);
    return {
      structured: {
        article,
        ...(ARTICLE_STEPS[record.status] < 3 ? { poll_after_seconds: 60 } : {}),
        ...(replayed ? { idempotent_replayed: true } : {}),
      },
      summary: articleSummary(article),
    };
  },
};
