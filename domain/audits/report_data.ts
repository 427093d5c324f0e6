/**
 * What an audit's HTML report shows, read from KV for one caller (a key's account and mode, or a
 * share link's): the completed audit, the project's score history, the comparison with the
 * previous audit, every issue with its first affected items, one page of the inventory (filtered
 * server-side) or of one issue's items, and the lab metrics of a rendered audit.
 *
 * Everything is bounded whatever the site's size: the history follows the audits' own
 * `previous_audit_id` links, at most `MAX_HISTORY` of them; each issue shows its first
 * `ITEMS_PER_ISSUE` items (one short prefix read each); the inventory and an issue's items come a
 * page at a time through the same listings as `GET /v1/audits/{id}/pages` and
 * `/issues/{check}`, cursors included.
 *
 * @module
 */
import {
  type Caller,
  type GroupView,
  groupView,
  type IssueView,
  listAuditIssues,
  listAuditPages,
  listIssueItems,
  type Page,
  type PageStatusClass,
  type PageView,
} from "./results.ts";
import {
  CHECKS_BY_ID,
  type FixFirstItem,
  labPagesOf,
  type LabRecord,
} from "../audit_engine/mod.ts";
import { auditFixFirst } from "./compare.ts";
import type { Category, Evidence } from "../audit_engine/types.ts";
import { type AuditRecord, getAudit } from "./record.ts";
import { readGroups } from "./groups.ts";
import { ApiError, type Deps, keys, list, read } from "../platform/mod.ts";

/** Completed audits the score history goes back at most (this one included). */
export const MAX_HISTORY = 50;
/** Affected items shown under each issue; the rest are one link away. */
export const ITEMS_PER_ISSUE = 5;
/** Inventory rows, or an issue's items, per report page. */
export const REPORT_PAGE_SIZE = 50;

/** The report's query: the inventory's filters and cursor, or one issue's full list. */
export interface ReportQuery {
  status?: PageStatusClass;
  indexable?: boolean;
  check?: string;
  cursor?: string;
  /** A check id: the page lists that issue's affected items instead of the whole report. */
  issue?: string;
}

/** One completed audit on the project's score history. */
export interface HistoryPoint {
  audit_id: string;
  completed_at: number;
  score: number;
  categories: Record<Category, number>;
}

/** An issue of the report with its first affected items. */
export interface ReportIssue extends IssueView {
  sample: Evidence[];
}

export interface AuditReportData {
  audit: AuditRecord;
  project: { id: string; name: string; url: string; sandbox: boolean } | null;
  /** The audit was made on the sandbox side (watermarked). */
  sandbox: boolean;
  /** Oldest first, ending with this audit. */
  history: HistoryPoint[];
  /** The previous completed audit compared against, when there is one. */
  previous: HistoryPoint | null;
  issues: ReportIssue[];
  /** "Fix first": the summary's list, the same the JSON and the Markdown lead with. */
  fixFirst: FixFirstItem[];
  /** What the page lists: one page of the inventory, or of one issue's items. */
  view:
    | { kind: "report"; query: ReportQuery; pages: Page<PageView> }
    | {
      kind: "issue";
      query: ReportQuery;
      issue: IssueView;
      items: Page<Evidence>;
    };
  /** Rendered audits: the figures of each lab page. */
  lab: LabRecord[];
  /** The page groups with their counts (groups.ts); empty for an audit before groups. */
  groups: GroupView[];
}

/** The audit, or 404 / 409 before it completed (as the findings listings answer). */
async function completed(deps: Deps, caller: Caller, auditId: string): Promise<AuditRecord> {
  const audit = await getAudit(deps, caller.accountId, auditId, caller.mode);
  if (audit.status !== "completed") {
    throw new ApiError(
      "invalid_state",
      `Audit '${auditId}' is ${audit.status}; its report exists once it is completed`,
    );
  }
  return audit;
}

function point(a: AuditRecord): HistoryPoint | null {
  if (a.status !== "completed" || a.score === null || !a.summary || a.completedAt === null) {
    return null;
  }
  return {
    audit_id: a.id,
    completed_at: a.completedAt,
    score: a.score,
    categories: a.summary.categories,
  };
}

/**
 * The project's completed audits up to this one, oldest first: each completed audit names the
 * one it was compared with (`changes.previous_audit_id`), so the chain is read one record at a
 * time, at most MAX_HISTORY, without listing the account's audits.
 */
export async function scoreHistory(deps: Deps, audit: AuditRecord): Promise<HistoryPoint[]> {
  const out: HistoryPoint[] = [];
  const seen = new Set<string>();
  let current: AuditRecord | null = audit;
  while (current && out.length < MAX_HISTORY && !seen.has(current.id)) {
    seen.add(current.id);
    const p = point(current);
    if (!p) break;
    out.push(p);
    const prev: string | null | undefined = current.changes?.previous_audit_id;
    if (!prev) break;
    const next: AuditRecord | null = (await read(deps.kv, keys.audit(audit.accountId, prev)))
      .value;
    current = next && next.projectId === audit.projectId ? next : null;
  }
  return out.reverse();
}

/** Every issue of a completed audit (one entry per check: a few pages of the listing). */
async function allIssues(deps: Deps, caller: Caller, auditId: string): Promise<IssueView[]> {
  const out: IssueView[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await listAuditIssues(deps, caller, auditId, { limit: 100, cursor });
    out.push(...page.data);
    if (!page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return out;
}

/** The first items of a check's evidence, by URL. */
async function firstItems(kv: Deno.Kv, auditId: string, check: string): Promise<Evidence[]> {
  const out: Evidence[] = [];
  const it = list(kv, { prefix: keys.auditFindings(auditId, check) }, { limit: ITEMS_PER_ISSUE });
  for await (const e of it) out.push(e.value);
  return out;
}

/** Runs `fn` over `items`, `width` at a time, keeping the order. */
async function inBatches<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>) {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) {
    out.push(...await Promise.all(items.slice(i, i + width).map(fn)));
  }
  return out;
}

/**
 * Everything one page of an audit's report shows, for `caller` (404 for an audit it may not
 * see, 409 before completion, 404 for an unknown `issue`, 400 for an unknown `check` filter or
 * a cursor of another list).
 */
export async function loadAuditReport(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: ReportQuery,
): Promise<AuditReportData> {
  const audit = await completed(deps, caller, auditId);
  const [projectEntry, history, issues, lab, groups] = await Promise.all([
    read(deps.kv, keys.project(audit.accountId, audit.projectId)),
    scoreHistory(deps, audit),
    allIssues(deps, caller, auditId),
    audit.render ? labPagesOf(deps.kv, auditId) : Promise.resolve([]),
    readGroups(deps.kv, auditId),
  ]);
  const project = projectEntry.value;
  const fired = issues.filter((i) => i.change !== "fixed");
  const samples = await inBatches(fired, 10, (i) => firstItems(deps.kv, auditId, i.check));
  const sampleOf = new Map(fired.map((i, n) => [i.check, samples[n]]));
  let view: AuditReportData["view"];
  if (query.issue !== undefined) {
    if (!CHECKS_BY_ID.has(query.issue)) {
      throw new ApiError("not_found", `No check '${query.issue}'; see /docs/checks`);
    }
    const { data, next_cursor, audit_id: _, ...issue } = await listIssueItems(
      deps,
      caller,
      auditId,
      query.issue,
      { limit: REPORT_PAGE_SIZE, cursor: query.cursor },
    );
    view = {
      kind: "issue",
      query,
      issue: { ...issue, items_url: `/v1/audits/${auditId}/issues/${issue.check}` },
      items: { data, next_cursor },
    };
  } else {
    const pages = await listAuditPages(deps, caller, auditId, {
      status: query.status,
      indexable: query.indexable,
      check: query.check,
      limit: REPORT_PAGE_SIZE,
      cursor: query.cursor,
    });
    view = { kind: "report", query, pages: { data: pages.data, next_cursor: pages.next_cursor } };
  }
  return {
    audit,
    project: project
      ? { id: project.id, name: project.name, url: project.url, sandbox: project.sandbox }
      : null,
    sandbox: project?.sandbox ?? caller.mode === "sandbox",
    history,
    previous: history.length > 1 ? history[history.length - 2] : null,
    issues: issues.map((i) => ({ ...i, sample: sampleOf.get(i.check) ?? [] })),
    fixFirst: auditFixFirst(
      audit.summary,
      issues.map((i) => ({
        check: i.check,
        eligible: i.eligible_count,
        affected: i.affected_count,
        change: i.change,
      })),
    ),
    view,
    lab,
    groups: groups.map((g) => groupView(audit.id, g)),
  };
}
