/**
 * A completed audit's lists as files: its issues, one check's evidence items and its page
 * inventory, whole, as CSV or NDJSON. The rows come from the whole-list reads of
 * domain/audits/results.ts (every check done first, rows read in batches as the file is sent) and
 * are encoded batch by batch (domain/audits/export_encode.ts), so memory stays flat for a 100,000-URL
 * inventory. Same filters, order and items as the paged JSON listings.
 *
 * @module
 */
import {
  allAuditIssues,
  allAuditPages,
  allIssueItems,
  type AllRows,
  type Caller,
  type IssueFilters,
  type IssueView,
  type PageFilters,
  type PageView,
} from "./results.ts";
import { evidenceColumns, OTHER_COLUMN } from "../audit_engine/mod.ts";
import type { Deps } from "../platform/mod.ts";
import { CATEGORIES } from "../audit_engine/types.ts";
import { csvChunks, ndjsonChunks, rowOf } from "./export_encode.ts";

export type ExportFormat = "csv" | "ndjson";

/** A file: its name and its text, produced chunk by chunk as it is read. */
export interface ExportFile {
  filename: string;
  chunks: AsyncIterable<string>;
}

/** The CSV columns of the issue list: every field of a JSON issue, in its order. */
export const ISSUE_COLUMNS = [
  "check",
  "category",
  "severity",
  "title",
  "meaning",
  "fix",
  "doc_url",
  "affected_count",
  "eligible_count",
  "items_stored",
  "change",
  "items_url",
] as const satisfies readonly (keyof IssueView)[];

/** Compiles only while every field of a JSON issue has a column. */
const _EVERY_ISSUE_FIELD: [Exclude<keyof IssueView, typeof ISSUE_COLUMNS[number]>] extends [never]
  ? true
  : never = true;

/**
 * The CSV columns of the page inventory: every field of a JSON page, the older ones first in
 * their order, then the fields added since (meta description, h1, group, the issue count per
 * category), then the lab figures, which only an audit that sampled lab data has (LAB_COLUMNS).
 */
export const PAGE_COLUMNS = [
  "url",
  "fetch_state",
  "status",
  "failure",
  "redirect_target",
  "depth",
  "in_sitemap",
  "indexable",
  "not_indexable_reason",
  "title",
  "word_count",
  "inlinks",
  "link_score",
  "outlinks",
  "response_time_ms",
  "size_bytes",
  "canonical",
  "checks",
  "discovered_by",
  "meta_description",
  "h1",
  "group",
  ...CATEGORIES.map((c) => `issue_counts.${c}` as const),
] as const;

/** The inventory's lab columns: only in the CSV of an audit that sampled lab data. */
export const LAB_COLUMNS = [
  "lab.lcp_ms",
  "lab.cls",
  "lab.tbt_ms",
  "lab.bytes",
  "lab.requests",
] as const;

/** The field a column reads: `lab` for `lab.cls`. */
type FieldOf<C extends string> = C extends `${infer F}.${string}` ? F : C;
/**
 * Compiles only while every field of a JSON page has a column: a field added to the inventory
 * must be added to its CSV too.
 */
const _EVERY_PAGE_FIELD: [
  Exclude<keyof PageView, FieldOf<typeof PAGE_COLUMNS[number] | typeof LAB_COLUMNS[number]>>,
] extends [never] ? true : never = true;

/** The byte order mark: Excel reads a CSV as UTF-8 only when it starts with one. */
export const UTF8_BOM = "\uFEFF";

/** How a file is written beyond its format. */
export interface ExportOptions {
  /** CSV only: start with UTF8_BOM (`?bom=1`), for spreadsheets that guess the encoding. */
  bom?: boolean;
}

async function* withBom(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let first = true;
  for await (const c of chunks) {
    yield first ? UTF8_BOM + c : c;
    first = false;
  }
}

function file<T extends object>(
  name: string,
  format: ExportFormat,
  columns: readonly string[],
  rows: AllRows<T>,
  options: ExportOptions,
  other?: string,
): ExportFile {
  const row = rowOf(columns, other) as (item: T) => ReturnType<ReturnType<typeof rowOf>>;
  const csv = () => {
    const chunks = csvChunks(columns, row, rows.batches);
    return options.bom ? withBom(chunks) : chunks;
  };
  return {
    filename: `serpwright-${rows.audit_id}-${name}.${format}`,
    chunks: format === "csv" ? csv() : ndjsonChunks(rows.batches),
  };
}

/** `GET /v1/audits/{id}/issues` as a file. */
export async function exportAuditIssues(
  deps: Deps,
  caller: Caller,
  auditId: string,
  filters: IssueFilters,
  format: ExportFormat,
  options: ExportOptions = {},
): Promise<ExportFile> {
  const rows = await allAuditIssues(deps, caller, auditId, filters);
  return file("issues", format, ISSUE_COLUMNS, rows, options);
}

/** `GET /v1/audits/{id}/issues/{check}` as a file: its items with their evidence as columns. */
export async function exportIssueItems(
  deps: Deps,
  caller: Caller,
  auditId: string,
  checkId: string,
  format: ExportFormat,
  options: ExportOptions = {},
): Promise<ExportFile> {
  const rows = await allIssueItems(deps, caller, auditId, checkId);
  const columns = evidenceColumns(checkId);
  return file(`issues-${checkId}`, format, columns, rows, options, OTHER_COLUMN);
}

/** `GET /v1/audits/{id}/pages` as a file (the lab columns only when the audit has lab data). */
export async function exportAuditPages(
  deps: Deps,
  caller: Caller,
  auditId: string,
  filters: PageFilters,
  format: ExportFormat,
  options: ExportOptions = {},
): Promise<ExportFile> {
  const rows = await allAuditPages(deps, caller, auditId, filters);
  const columns = rows.lab ? [...PAGE_COLUMNS, ...LAB_COLUMNS] : PAGE_COLUMNS;
  return file("pages", format, columns, rows, options);
}
