/**
 * Audits: their lifecycle (create, run as a job, complete), results and exports, the report
 * data, and comparison between runs. The public face of the capability; the crawl itself is
 * domain/audit_engine, the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import type { Deps } from "../platform/mod.ts";
 * declare const deps: Deps, accountId: string;
 * import { getAudit } from "./mod.ts";
 * const audit = await getAudit(deps, accountId, "aud_123", "live");
 * ```
 *
 * @module
 */
export { crawlDepth } from "./crawl_depth.ts";
export { createAudit, requireRendering } from "./create.ts";
export {
  exportAuditFixes,
  exportAuditRedirects,
  FIX_CHECKS,
  type FixView,
  listAuditFixes,
  listAuditRedirects,
  type RedirectView,
} from "./fixes.ts";
export { type AuditRunner, runAuditJob, runCrawlHelper } from "./job.ts";
export {
  groupNameProblem,
  MAX_GROUPS,
  OTHER_GROUP,
  type PageGroupDef,
  type PageGroupRecord,
} from "./groups.ts";
export { AUDIT_JOB } from "./lifecycle.ts";
export {
  type AuditOptions,
  crawlScopeOf,
  MAX_LIST_CHARS,
  MAX_LIST_URL_LENGTH,
  MAX_LIST_URLS,
  normalizeAuditOptions,
  sameAuditOptions,
} from "./options.ts";
export { type AuditRecord, getAudit, triggerOf } from "./record.ts";
export {
  type AuditReportData,
  type HistoryPoint,
  ITEMS_PER_ISSUE,
  loadAuditReport,
  type ReportIssue,
  type ReportQuery,
} from "./report_data.ts";
export {
  type Caller,
  type GroupView,
  listAuditGroups,
  listAuditIssues,
  listAuditPages,
  listIssueItems,
  MAX_PAGE_SIZE,
  type PageView,
} from "./results.ts";
export { auditAuthFor, sealAuditAuth } from "./site_access.ts";
export { auditSummaryMarkdown, SUMMARY_MAX_BYTES } from "./summary_markdown.ts";
