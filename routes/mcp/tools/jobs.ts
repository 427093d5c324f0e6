/**
 * The long-running work: audits (endpoints 9–10, and the findings of a completed audit) and
 * articles (11–12), as action tools over the application layer's operations
 * (app/operations/audits.ts, app/operations/articles.ts). Starting returns at once with the id
 * and a polling hint, exactly as the `202` of `/v1`; `wait` (up to 60 s, MCP only) holds the call
 * and sends progress notifications while the job runs, re-reading the job through its get
 * operation, then answers the job as it stands. A 2026-07-28 client that declares the tasks
 * extension gets a task handle from `start` instead (task_wire.ts; no `wait` is held then): it
 * polls `tasks/get`, whose result is what `get` answers.
 */
import { z } from "zod";
import { Article, getArticleOp, startArticleOp } from "../../../app/operations/articles.ts";
import {
  Audit,
  getAuditIssueOp,
  getAuditOp,
  getAuditSummaryOp,
  GroupList,
  IssueItems,
  IssueList,
  listAuditGroupsOp,
  listAuditIssuesOp,
  listAuditPagesOp,
  MAX_PAGE_SIZE,
  PageList,
  startAuditOp,
} from "../../../app/operations/audits.ts";
import { getRecheckOp, Recheck, startRecheckOp } from "../../../app/operations/rechecks.ts";
import {
  FixList,
  listFixesOp,
  listRedirectsOp,
  RedirectList,
} from "../../../app/operations/fixes.ts";
import { type BodyResult, execute, type Operation } from "../../../app/operation.ts";
import type { articleView } from "../../../app/views.ts";
import {
  action,
  actionTool,
  bodyText,
  IdempotencyKeyArg,
  jsonResult,
  required,
  type ToolAnswer,
  type ToolContext,
} from "../kit.ts";
import { appMeta, ARTICLE_APP_URI, AUDIT_APP_URI } from "../apps.ts";
import { taskAnswer } from "../task_wire.ts";
import { MAX_WAIT_SECONDS, waitForJob } from "../wait.ts";
import { AuditOptionArgs, auditOptionsBody } from "./audit_options.ts";
import {
  ARTICLE_SHARE_ACTIONS,
  ArticleShareOutputs,
  AUDIT_SHARE_ACTIONS,
  AuditShareOutputs,
  ReportArgs,
  ShareArgs,
  ShareListArgs,
} from "./shares.ts";

type AuditOut = z.output<typeof Audit>;
type RecheckOut = z.output<typeof Recheck>;
type ArticleOut = ReturnType<typeof articleView>;

/** Rows a listing shows as lines in its text, and the page an MCP listing defaults to. */
const LINES = 10;
const MCP_PAGE = 10;

const Wait = z.number().int().min(0).max(MAX_WAIT_SECONDS).optional().describe(
  `Seconds (max ${MAX_WAIT_SECONDS}) to hold the call until the job finishes, with progress`,
);

const AuditsInput = z.object({
  action: z.enum([
    "start",
    "get",
    "summary",
    "issues",
    "issue",
    "pages",
    "groups",
    "fixes",
    "redirects",
    "recheck",
    "recheck_get",
    "report",
    "report_pdf",
    "share",
    "shares",
    "revoke_share",
  ]).describe(
    "start: audit project_id (with the start/ options; the same audit running is returned, " +
      "not charged twice). get: the audit (score, summary, report_url once completed). Once " +
      "completed: summary: Markdown, max 2 KB; issues: worst first (filters severity, " +
      "category, change, group); issue: one check's items; pages: the URLs crawled (filters " +
      "status, indexable, check, group); groups: URL templates; fixes: changes to apply " +
      "(check); redirects: the redirect map. recheck: after a fix, fetch only the affected " +
      "URLs of one check (check; max 100; priced per URL), each judged fixed, still_failing or " +
      "not_checked; recheck_get: it (recheck_id). report, report_pdf: the report's URL (filters " +
      "as pages, or issue). share: a link opening the report without a key (shown once); " +
      "shares: the links; revoke_share: end one.",
  ),
  project_id: z.string().min(1).max(100).optional().describe("start: the project (proj_…)"),
  audit_id: z.string().min(1).max(100).optional()
    .describe("the audit (aud_…)"),
  recheck_id: z.string().min(1).max(100).optional()
    .describe("recheck_get: the re-check (rck_…)"),
  render: z.boolean().optional()
    .describe("start: also render up to 50 pages in a browser (priced apart)"),
  ...AuditOptionArgs,
  wait: Wait,
  idempotency_key: IdempotencyKeyArg,
  check: z.string().optional()
    .describe("issue, recheck: a check id (title_missing…); pages, fixes: a filter"),
  severity: z.string().optional().describe("issues: critical, warning or info"),
  category: z.string().optional()
    .describe("issues: indexability, structure, security, performance, mobile or agents"),
  change: z.string().optional().describe("issues: new, persisting or fixed"),
  status: z.string().optional()
    .describe("pages: 2xx, 3xx, 4xx, 5xx, failed, blocked or not_fetched"),
  indexable: z.boolean().optional().describe("pages: only indexable (true) or not (false) URLs"),
  group: z.string().optional().describe("issues, pages: a group's name"),
  limit: z.number().optional()
    .describe(`issues, issue, pages, shares: 1 to ${MAX_PAGE_SIZE} (default ${MCP_PAGE})`),
  cursor: z.string().optional().describe("the previous page's next_cursor"),
  format: z.enum(["json", "csv", "ndjson"]).optional().describe(
    "json; csv and ndjson are files: the answer names their REST URL",
  ),
  ...ReportArgs,
  ...ShareArgs,
}).strict();

type AuditArgs = z.output<typeof AuditsInput>;

const AUDIT_STEPS: Record<AuditOut["status"], number> = {
  queued: 0,
  running: 1,
  completed: 2,
  failed: 2,
};

function auditSummary(a: AuditOut): string {
  if (a.status === "completed") {
    const s = a.summary!;
    // Titles for the person reading; the ids an agent passes on are in the structured result.
    const first = (s.fix_first ?? []).slice(0, 3).map((t) =>
      `${t.title} (${t.affected_count}/${t.eligible_count}, effort ${t.effort})`
    );
    const top = s.top_issues.slice(0, 3).map((t) => `${t.title} (${t.affected_count})`);
    return `Audit ${a.audit_id} completed: score ${a.score}/100; ${s.issues_critical} critical, ` +
      `${s.issues_warning} warning, ${s.issues_info} info.` +
      (first.length
        ? ` Fix first: ${first.join("; ")}.`
        : top.length
        ? ` Top issues: ${top.join("; ")}.`
        : "");
  }
  if (a.status === "failed") {
    return `Audit ${a.audit_id} failed: ${a.error?.code ?? "audit_failed"} ${
      a.error?.message ?? ""
    }`
      .trim();
  }
  return `Audit ${a.audit_id} is ${a.status}. Next: audits action get, audit_id ` +
    `${a.audit_id}, with wait (up to ${MAX_WAIT_SECONDS} s).`;
}

/** Where to go from a completed audit, in tool terms. */
function auditNext(a: AuditOut): string {
  if (a.status !== "completed") return "";
  const worst = a.summary?.fix_first?.[0]?.check ?? a.summary?.top_issues[0]?.check;
  return "\nNext: audits action summary (Markdown), issues (worst first)" +
    (worst ? `, issue with check ${worst} (its items)` : "") +
    `, pages (the inventory), share (a link for a human). HTML report (with the key): ` +
    `${a.report_url}` + (a.share_url ? `; live share link: ${a.share_url}` : "");
}

/**
 * A job's view as its get operation answers it, held up to `seconds` while the job runs (the
 * MCP-only `wait`): `first` is the view already read (the get action's own result), later reads
 * run the get operation again for the same actor.
 */
function holdJob<T>(
  ctx: ToolContext,
  seconds: number,
  job: { kind: "audit" | "article" | "recheck"; id: string },
  // deno-lint-ignore no-explicit-any
  get: Operation<any, any, any, T, any>,
  params: Record<string, string>,
  first: T | null,
  done: (value: T) => boolean,
  step: (value: T) => { at: number; total: number; message: string },
): Promise<T> {
  let pending = first;
  const read = async () => {
    if (pending !== null) {
      const value = pending;
      pending = null;
      return value;
    }
    return (await execute(ctx.services, get, ctx.actor, { params, query: {}, body: {} })).body;
  };
  const accountId = ctx.actor.kind === "account" ? ctx.actor.accountId : "";
  return waitForJob(ctx, seconds, { ...job, accountId }, read, done, step);
}

/** The answer of `start` and `get`: the audit as it stands after any wait. */
async function auditAnswer(
  ctx: ToolContext,
  id: string,
  first: AuditOut | null,
  wait: number | undefined,
): Promise<ToolAnswer> {
  const audit = await holdJob(
    ctx,
    wait ?? 0,
    { kind: "audit", id },
    // Without `format` the audit's get answers the audit itself, never its Markdown.
    getAuditOp as unknown as Operation<never, never, never, AuditOut>,
    { auditId: id },
    first,
    (a) => a.status === "completed" || a.status === "failed",
    (a) => ({ at: AUDIT_STEPS[a.status], total: 2, message: `audit ${a.status}` }),
  );
  return {
    structured: audit,
    summary: auditSummary(audit) + auditNext(audit),
    rest: `GET ${ctx.baseUrl}/v1/audits/${audit.audit_id}`,
  };
}

/**
 * The answer of a start the call does not wait for: the `/v1` 202 body as is (the id, the poll
 * path, and when to poll).
 */
function acceptedAnswer(
  ctx: ToolContext,
  accepted: { status: string; poll: string; poll_after_seconds: number },
  noun: string,
  id: string,
  get: string,
): ToolAnswer {
  return {
    structured: accepted,
    summary: `${noun} ${id} is ${accepted.status}. Next: ${get} with wait (up to ` +
      `${MAX_WAIT_SECONDS} s), or poll it in ${accepted.poll_after_seconds} s.`,
    rest: `GET ${ctx.baseUrl}${accepted.poll}`,
  };
}

const RECHECK_STEPS: Record<RecheckOut["status"], number> = {
  queued: 0,
  running: 1,
  completed: 2,
  failed: 2,
};

function recheckSummary(r: RecheckOut): string {
  const c = r.counts;
  const i = r.item_counts;
  if (r.status === "completed") {
    return `Re-check ${r.recheck_id} of ${r.check} completed: ${c.fixed} fixed, ` +
      `${c.still_failing} still failing, ${c.not_checked} not checked of ${r.urls_checked} ` +
      `URL(s)` + (r.urls_left_out ? ` (${r.urls_left_out} affected URL(s) left out)` : "") +
      "." + (i && r.check.endsWith("_links")
        ? ` Per link: ${i.fixed} fixed, ${i.still_failing} still failing, ${i.not_checked} ` +
          "not checked (items[].item_results)."
        : "");
  }
  if (r.status === "failed") {
    return `Re-check ${r.recheck_id} failed: ${r.error?.code ?? "recheck_failed"} ${
      r.error?.message ?? ""
    }`.trim();
  }
  return `Re-check ${r.recheck_id} of ${r.check} is ${r.status} (${r.urls_done}/` +
    `${r.urls_checked} URLs). Next: audits action recheck_get, recheck_id ` +
    `${r.recheck_id}, with wait (up to ${MAX_WAIT_SECONDS} s).`;
}

/** The answer of `recheck` and `recheck_get`: the re-check as it stands after any wait. */
async function recheckAnswer(
  ctx: ToolContext,
  id: string,
  first: RecheckOut | null,
  wait: number | undefined,
): Promise<ToolAnswer> {
  const recheck = await holdJob(
    ctx,
    wait ?? 0,
    { kind: "recheck", id },
    getRecheckOp,
    { recheckId: id },
    first,
    (r) => r.status === "completed" || r.status === "failed",
    (r) => ({ at: RECHECK_STEPS[r.status], total: 2, message: `re-check ${r.status}` }),
  );
  const still = recheck.items?.filter((u) => u.result === "still_failing") ?? [];
  return {
    structured: recheck,
    summary: recheckSummary(recheck),
    lines: still.slice(0, LINES).map((u) => `still failing: ${u.url}`),
    rest: `GET ${ctx.baseUrl}/v1/rechecks/${recheck.recheck_id}`,
  };
}

/**
 * Issues past the first unfiltered page: the list holds every check that fires plus the fixed
 * ones, which its `changes` counts (new + persisting + fixed); unknown elsewhere.
 */
function issuesLeft(
  issues: { data: unknown[]; changes: { new: number; persisting: number; fixed: number } | null },
  a: AuditArgs,
): number | undefined {
  if (a.cursor !== undefined || a.severity || a.category || a.change || !issues.changes) {
    return undefined;
  }
  const left = issues.changes.new + issues.changes.persisting + issues.changes.fixed -
    issues.data.length;
  return left > 0 ? left : undefined;
}

/** One evidence item as a short line: its URL and its first few facts. */
function evidenceLine(e: Record<string, unknown>): string {
  const facts = Object.entries(e).filter(([k, v]) => k !== "url" && v !== null).slice(0, 3)
    .map(([k, v]) => `${k} ${String(typeof v === "object" ? JSON.stringify(v) : v).slice(0, 60)}`);
  return `${e.url ?? ""}${facts.length ? `: ${facts.join("; ")}` : ""}`;
}

/** A listing's answer; a CSV or NDJSON file is refused (`jsonResult`) with its `/v1` address. */
function listAnswer<O>(
  result: O | BodyResult,
  ctx: ToolContext,
  a: AuditArgs,
  list: string,
  answer: (body: O) => ToolAnswer,
): ToolAnswer {
  const download = `${ctx.baseUrl}/v1/audits/${a.audit_id}/${list}?format=${a.format}`;
  return answer(jsonResult(result, download));
}

function nextPage(cursor: string | null, left?: number): string {
  if (!cursor) return ".";
  return `. ${left !== undefined && left > 0 ? `${left} more` : "More"}: call again with ` +
    `cursor ${cursor}.`;
}

/**
 * The listing actions run the same operations as `GET /v1/audits/{id}/issues`, `/issues/{check}`
 * and `/pages` (the same query validation and bodies, `not_found` for another account's audit and
 * `invalid_state` before it completed). As in `/v1`, a filter another listing takes is ignored.
 */
export const auditsTool = actionTool({
  name: "audits",
  title: "Technical SEO audits",
  description:
    "Crawl a project's site and score it 0-100 with its issues. start answers at once with audit_id and " +
    "poll_after_seconds; pass wait to get (or start) to hold until done. Costs: sandbox 1 " +
    "audit; live 25 credits unless subscribed. recheck: 1 credit per 10 URLs.",
  input: AuditsInput,
  meta: appMeta(AUDIT_APP_URI),
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
    groups: GroupList.optional().describe("groups: GET /v1/audits/{audit_id}/groups"),
    fixes: FixList.optional().describe("fixes: the body of GET /v1/audits/{audit_id}/fixes"),
    redirects: RedirectList.optional()
      .describe("redirects: the body of GET /v1/audits/{audit_id}/fixes/redirects"),
    recheck: Recheck.optional().describe("recheck, recheck_get: the re-check"),
    audit_id: z.string().optional().describe("summary: the audit summarised"),
    markdown: z.string().optional()
      .describe("summary: the body of GET /v1/audits/{audit_id}/summary.md"),
    ...AuditShareOutputs,
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  actions: {
    start: action(startAuditOp, (a: AuditArgs) => ({
      params: { projectId: required(a.project_id, "project_id", "start") },
      body: { render: a.render, ...auditOptionsBody(a) },
    }), (accepted, a, ctx) =>
      taskAnswer(
        ctx,
        "audit",
        accepted.audit_id,
        () =>
          a.wait ? auditAnswer(ctx, accepted.audit_id, null, a.wait) : Promise.resolve(
            acceptedAnswer(ctx, accepted, "Audit", accepted.audit_id, "audits action get"),
          ),
      )),
    get: action(getAuditOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "get") },
    }), (result, a, ctx) => {
      const audit = jsonResult(result, `${ctx.baseUrl}/v1/audits/${a.audit_id}`);
      return auditAnswer(ctx, audit.audit_id, audit, a.wait);
    }),
    summary: action(getAuditSummaryOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "summary") },
    }), (result, a, ctx) => {
      const markdown = bodyText(result);
      // The Markdown is the text; the structured result names it once, not a second copy.
      return {
        structured: {
          audit_id: a.audit_id,
          markdown_url: `${ctx.baseUrl}/v1/audits/${a.audit_id}/summary.md`,
        },
        summary: markdown,
        rest: `GET ${ctx.baseUrl}/v1/audits/${a.audit_id}/summary.md`,
      };
    }),
    issues: action(listAuditIssuesOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "issues") },
      query: {
        severity: a.severity,
        category: a.category,
        change: a.change,
        group: a.group,
        limit: a.limit ?? MCP_PAGE,
        cursor: a.cursor,
        format: a.format,
      },
    }), (result, a, ctx) =>
      listAnswer(result, ctx, a, "issues", (issues) => ({
        structured: issues as unknown as Record<string, unknown>,
        summary: `${issues.data.length} issue(s) of audit ${issues.audit_id}, worst first` +
          nextPage(issues.next_cursor, issuesLeft(issues, a)) +
          " Next: audits action issue with a check (its items), recheck after a fix.",
        lines: issues.data.map((i) =>
          `${i.check} (${i.severity}, ${i.affected_count} affected, ${i.change}): ${i.title}`
        ),
      }))),
    issue: action(getAuditIssueOp, (a: AuditArgs) => ({
      params: {
        auditId: required(a.audit_id, "audit_id", "issue"),
        check: required(a.check, "check", "issue"),
      },
      query: { limit: a.limit ?? MCP_PAGE, cursor: a.cursor, format: a.format },
    }), (result, a, ctx) =>
      listAnswer(result, ctx, a, `issues/${a.check}`, (issue) => ({
        structured: issue as unknown as Record<string, unknown>,
        summary: `${issue.check} (${issue.severity}): ${issue.affected_count} affected; ` +
          `${issue.data.length} item(s) in this page` +
          nextPage(
            issue.next_cursor,
            // Known on the first page only: the stored items past it.
            a.cursor === undefined ? issue.items_stored - issue.data.length : undefined,
          ) +
          ` Fix: ${issue.fix} After fixing: audits action recheck, check ${issue.check}.`,
        lines: issue.data.slice(0, LINES).map(evidenceLine),
      }))),
    recheck: action(
      startRecheckOp,
      (a: AuditArgs) => ({
        params: {
          auditId: required(a.audit_id, "audit_id", "recheck"),
          check: required(a.check, "check", "recheck"),
        },
      }),
      (accepted, a, ctx) =>
        a.wait ? recheckAnswer(ctx, accepted.recheck_id, null, a.wait) : acceptedAnswer(
          ctx,
          accepted,
          "Re-check",
          accepted.recheck_id,
          "audits action recheck_get",
        ),
    ),
    recheck_get: action(getRecheckOp, (a: AuditArgs) => ({
      params: { recheckId: required(a.recheck_id, "recheck_id", "recheck_get") },
    }), (r, a, ctx) => recheckAnswer(ctx, r.recheck_id, r, a.wait)),
    pages: action(listAuditPagesOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "pages") },
      query: {
        status: a.status,
        indexable: a.indexable === undefined ? undefined : String(a.indexable),
        check: a.check,
        group: a.group,
        limit: a.limit ?? MCP_PAGE,
        cursor: a.cursor,
        format: a.format,
      },
    }), (result, a, ctx) =>
      listAnswer(result, ctx, a, "pages", (pages) => ({
        structured: pages as unknown as Record<string, unknown>,
        summary: `${pages.data.length} URL(s) of audit ${pages.audit_id}` +
          nextPage(
            pages.next_cursor,
            pages.total_count === undefined ? undefined : pages.total_count - pages.data.length,
          ),
        lines: pages.data.slice(0, LINES).map((p) =>
          `${p.url} ${p.status ?? p.fetch_state}` + (p.indexable ? "" : " not indexable") +
          (p.checks.length ? `; ${p.checks.join(", ")}` : "")
        ),
      }))),
    groups: action(listAuditGroupsOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "groups") },
    }), (groups) => ({
      structured: groups as unknown as Record<string, unknown>,
      summary: `${groups.data.length} page group(s) of audit ${groups.audit_id}. Next: audits ` +
        "action pages or issues with a group.",
      lines: groups.data.map((g) =>
        `${g.name} (${g.pattern ?? "the rest"}): ${g.pages} pages, ${g.pages_with_issues} ` +
        `with issues; ${g.issues_critical} critical, ${g.issues_warning} warning checks`
      ),
    })),
    fixes: action(listFixesOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "fixes") },
      query: { check: a.check, limit: a.limit ?? MCP_PAGE, cursor: a.cursor, format: a.format },
    }), (result, a, ctx) =>
      listAnswer(result, ctx, a, "fixes", (fixes) => ({
        structured: fixes as unknown as Record<string, unknown>,
        summary: `${fixes.data.length} fix(es) of audit ${fixes.audit_id}` +
          nextPage(fixes.next_cursor) +
          ` Redirect map for servers: GET ${ctx.baseUrl}/v1/audits/${fixes.audit_id}/fixes/` +
          "redirects?format=nginx (or apache, csv). After applying: audits action recheck.",
        lines: fixes.data.slice(0, LINES).map((f) =>
          `${f.check} ${f.url}: ${f.current ?? "(none)"} -> ${f.proposed ?? "(remove)"} ` +
          `(${f.confidence})`
        ),
      }))),
    redirects: action(listRedirectsOp, (a: AuditArgs) => ({
      params: { auditId: required(a.audit_id, "audit_id", "redirects") },
      query: { limit: a.limit ?? MCP_PAGE, cursor: a.cursor, format: a.format },
    }), (result, a, ctx) =>
      listAnswer(result, ctx, a, "fixes/redirects", (map) => ({
        structured: map as unknown as Record<string, unknown>,
        summary: `${map.data.length} redirect(s) of audit ${map.audit_id}` +
          nextPage(map.next_cursor) +
          ` Server files: GET ${ctx.baseUrl}/v1/audits/${map.audit_id}/fixes/redirects?` +
          "format=nginx (or apache, csv).",
        lines: map.data.slice(0, LINES).map((r) =>
          `${r.from} -> ${r.to ?? "(none similar)"}` +
          (r.nginx.written ? "" : ` (left out: ${r.nginx.reason})`)
        ),
      }))),
    ...AUDIT_SHARE_ACTIONS,
  },
});

const ArticlesInput = z.object({
  action: z.enum(["start", "get", "share", "shares", "revoke_share"]).describe(
    "start: one draft for project_id (topic and/or primary_keyword). get: the article " +
      "(article_id), its markdown once ready. share: a preview link for a human without a key " +
      "(shown once); shares: the links (limit, cursor); revoke_share: end one (share_id).",
  ),
  project_id: z.string().min(1).max(100).optional().describe("start: the project (proj_…)"),
  topic: z.string().optional().describe("start: the planned title, 3 to 180 characters"),
  primary_keyword: z.string().optional()
    .describe("start: the keyword to rank for, 2 to 120 characters (default: from the topic)"),
  article_id: z.string().min(1).max(100).optional()
    .describe("get, share, shares, revoke_share: the article (art_…)"),
  wait: Wait,
  idempotency_key: IdempotencyKeyArg,
  ...ShareArgs,
  ...ShareListArgs,
}).strict();

type ArticleArgs = z.output<typeof ArticlesInput>;

const ARTICLE_STEPS: Record<ArticleOut["status"], number> = {
  queued: 0,
  generating: 1,
  qa: 2,
  ready: 3,
  failed: 3,
  published: 3,
};

function articleSummary(a: ArticleOut): string {
  if (a.status === "ready" || a.status === "published") {
    return `Article ${a.article_id} is ${a.status}: "${a.title}", ${a.word_count} words, QA ` +
      `${a.qa_score}/100. The draft markdown is in content_markdown; publish it yourself.` +
      (a.watermark ? " Sandbox draft (watermarked)." : "");
  }
  if (a.status === "failed") {
    return `Article ${a.article_id} failed: ${a.error?.code ?? "failed"} ${a.error?.message ?? ""}`
      .trim() + " Its cost was refunded.";
  }
  return `Article ${a.article_id} is ${a.status}. Next: articles action get, article_id ` +
    `${a.article_id}, with wait (up to ${MAX_WAIT_SECONDS} s).`;
}

/** The answer of `start` and `get`: the article as it stands after any wait. */
async function articleAnswer(
  ctx: ToolContext,
  id: string,
  first: ArticleOut | null,
  wait: number | undefined,
): Promise<ToolAnswer> {
  const article = await holdJob(
    ctx,
    wait ?? 0,
    { kind: "article", id },
    getArticleOp,
    { articleId: id },
    first,
    (a) => ARTICLE_STEPS[a.status] === 3,
    (a) => ({ at: ARTICLE_STEPS[a.status], total: 3, message: `article ${a.status}` }),
  );
  return {
    structured: article,
    summary: articleSummary(article),
    rest: `GET ${ctx.baseUrl}/v1/articles/${article.article_id}`,
  };
}

export const articlesTool = actionTool({
  name: "articles",
  title: "Draft SEO articles",
  description: "Generate one draft SEO article (markdown, QA score; never published by " +
    "itself). start answers at once with poll_after_seconds; pass wait to hold until ready. " +
    "One at a time per project. Costs: sandbox 2 (watermarked); live 15 credits unless " +
    "subscribed.",
  input: ArticlesInput,
  meta: appMeta(ARTICLE_APP_URI),
  output: z.object({
    article: Article.optional().describe("start, get"),
    poll_after_seconds: z.number().int().optional()
      .describe("Present while the article generates: when to call get again"),
    idempotent_replayed: z.boolean().optional(),
    ...ArticleShareOutputs,
  }),
  access: "key",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  actions: {
    start: action(startArticleOp, (a: ArticleArgs) => ({
      params: { projectId: required(a.project_id, "project_id", "start") },
      body: { topic: a.topic, primary_keyword: a.primary_keyword },
    }), (accepted, a, ctx) =>
      taskAnswer(
        ctx,
        "article",
        accepted.article_id,
        () =>
          a.wait ? articleAnswer(ctx, accepted.article_id, null, a.wait) : Promise.resolve(
            acceptedAnswer(ctx, accepted, "Article", accepted.article_id, "articles action get"),
          ),
      )),
    get: action(getArticleOp, (a: ArticleArgs) => ({
      params: { articleId: required(a.article_id, "article_id", "get") },
    }), (article, a, ctx) => articleAnswer(ctx, article.article_id, article, a.wait)),
    ...ARTICLE_SHARE_ACTIONS,
  },
});
