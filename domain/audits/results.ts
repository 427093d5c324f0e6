/**
 * What a completed audit found, read in pages: its issues (with what they mean, how to fix them
 * and their change against the previous audit), the evidence items of one issue, and the page
 * inventory. Plain functions `(deps, caller, auditId, query) => page` for the HTTP routes and
 * any other caller (an MCP tool, say). Each listing is one KV prefix read with a cursor: keys
 * sort the way the lists come out, so no listing scans the audit.
 *
 * @module
 */
import {
  ApiError,
  badCursor,
  decodeCursor,
  type Deps,
  encodeCursor,
  keys,
  list,
  type ListedEntry,
  type ListIterator,
  type Prefix,
  read,
  readMany,
} from "../platform/mod.ts";
import {
  checkDoc,
  checkDocUrl,
  CHECKS_BY_ID,
  getPages,
  listInPages,
  type PageRecord,
} from "../audit_engine/mod.ts";
import { CATEGORIES, type Category, type Evidence, type Severity } from "../audit_engine/types.ts";
import type { IssueChange, StoredIssues } from "./compare.ts";
import { type AuditChanges, type AuditRecord, getAudit } from "./record.ts";
import type { KeyMode } from "../identity/types.ts";
import { GroupMatcher, readGroups } from "./groups.ts";
import type { PageGroupRecord } from "./types.ts";

/** Whose audit: the account, and the calling key's mode (a sandbox key sees only its sandbox side). */
export interface Caller {
  accountId: string;
  mode: KeyMode;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** Entries a filtered page listing examines per request (it may return fewer than `limit`). */
export const MAX_SCAN = 1_000;

export interface Page<T> {
  data: T[];
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: string | null;
}

export interface IssueView {
  check: string;
  category: Category;
  severity: Severity;
  title: string;
  meaning: string;
  fix: string;
  doc_url: string;
  affected_count: number;
  eligible_count: number;
  /** Evidence items stored (at most 2,000 per check; affected_count stays the true count). */
  items_stored: number;
  change: IssueChange;
  items_url: string;
}

export type PageStatusClass =
  | "2xx"
  | "3xx"
  | "4xx"
  | "5xx"
  | "failed"
  | "blocked"
  | "not_fetched";

export interface PageView {
  url: string;
  fetch_state: "fetched" | "failed" | "blocked" | "not_fetched";
  status: number | null;
  failure: string | null;
  redirect_target: string | null;
  depth: number | null;
  in_sitemap: boolean;
  indexable: boolean;
  not_indexable_reason: string | null;
  title: string | null;
  word_count: number | null;
  inlinks: number;
  link_score: number | null;
  outlinks: number | null;
  response_time_ms: number | null;
  size_bytes: number | null;
  canonical: string | null;
  checks: string[];
  /** The meta description, as crawled (clipped by the crawl). */
  meta_description: string | null;
  /** The first h1, as crawled. */
  h1: string | null;
  /** The page group it is in (groups.ts); null on audits completed before groups. */
  group: string | null;
  /** Checks that fired on this URL, counted per category. */
  issue_counts: Record<Category, number>;
  /** `render`: first found in a rendered page; absent otherwise. */
  discovered_by?: "render";
  /** A lab-sampled page's lab figures; absent otherwise. */
  lab?: { lcp_ms: number | null; cls: number; tbt_ms: number; bytes: number; requests: number };
}

function pageSize(limit: number | undefined): number {
  return Math.max(1, Math.min(MAX_PAGE_SIZE, limit ?? DEFAULT_PAGE_SIZE));
}

/** An audit of the account that has completed, or 404 / 409. */
async function completedAudit(deps: Deps, caller: Caller, auditId: string) {
  const audit = await getAudit(deps, caller.accountId, auditId, caller.mode);
  if (audit.status !== "completed") {
    throw new ApiError(
      "invalid_state",
      `Audit '${auditId}' is ${audit.status}; its findings are listed once it is completed`,
    );
  }
  return audit;
}

function issueView(baseUrl: string, auditId: string, i: StoredIssues["issues"][number]) {
  const check = CHECKS_BY_ID.get(i.check)!;
  const doc = checkDoc(check);
  return {
    check: check.id,
    category: check.category,
    severity: check.severity,
    title: check.title,
    meaning: doc.meaning,
    fix: doc.fix,
    doc_url: checkDocUrl(baseUrl, check.id),
    affected_count: i.affected,
    eligible_count: i.eligible,
    items_stored: i.stored,
    change: i.change,
    items_url: `/v1/audits/${auditId}/issues/${check.id}`,
  } satisfies IssueView;
}

/**
 * The issues of a completed audit: fired checks worst first (severity, affected count, id), then
 * the checks fixed since the previous completed audit; filters by severity, category and change.
 */
export async function listAuditIssues(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: IssueFilters & { limit?: number; cursor?: string },
): Promise<Page<IssueView> & { audit_id: string; changes: AuditChanges | null }> {
  const audit = await completedAudit(deps, caller, auditId);
  const all = await filteredIssues(deps.kv, auditId, query);
  // The list is small (one entry per check) and immutable: the cursor is an offset.
  let offset = 0;
  if (query.cursor !== undefined) {
    const m = /^o([0-9]{1,4})$/.exec(query.cursor);
    if (!m) throw badCursor();
    offset = Number(m[1]);
  }
  const limit = pageSize(query.limit);
  const slice = all.slice(offset, offset + limit);
  const base = deps.config.publicBaseUrl;
  return {
    audit_id: audit.id,
    changes: audit.changes ?? null,
    data: slice.map((i) => issueView(base, audit.id, i)),
    next_cursor: offset + limit < all.length ? `o${offset + limit}` : null,
  };
}

/** The filters of the issue listing. */
export interface IssueFilters {
  severity?: Severity;
  category?: Category;
  change?: IssueChange;
  /** A page group: its checks only, counted over its pages (fixed checks left out). */
  group?: string;
}

/**
 * A finished audit's stored issues that pass the filters, worst first, then the fixed ones.
 * With a group, each issue counts the group's pages the check fired on (`affected`) out of the
 * group's pages (`eligible`): the group record's counters, no page read.
 */
async function filteredIssues(kv: Deno.Kv, auditId: string, query: IssueFilters) {
  const group = query.group === undefined
    ? null
    : requireGroup(await readGroups(kv, auditId), query.group, auditId);
  const stored = (await read(kv, keys.auditIssues(auditId))).value;
  const issues = (stored?.issues ?? []).filter((i) => {
    const c = CHECKS_BY_ID.get(i.check);
    return c !== undefined &&
      (!query.severity || c.severity === query.severity) &&
      (!query.category || c.category === query.category) &&
      (!query.change || i.change === query.change) &&
      (group === null || (group.checks[i.check] ?? 0) > 0);
  });
  if (group === null) return issues;
  return issues.map((i) => ({ ...i, affected: group.checks[i.check], eligible: group.pages }))
    .sort((a, b) =>
      sevRank(a.check) - sevRank(b.check) || b.affected - a.affected ||
      (a.check < b.check ? -1 : 1)
    );
}

const SEV_RANK: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
const sevRank = (check: string) => SEV_RANK[CHECKS_BY_ID.get(check)!.severity];

/** The named group of an audit, or 400 naming `group`. */
function requireGroup(
  groups: readonly PageGroupRecord[],
  name: string,
  auditId: string,
): PageGroupRecord {
  const g = groups.find((r) => r.name === name);
  if (g) return g;
  throw new ApiError(
    "invalid_request",
    groups.length === 0
      ? `group: audit '${auditId}' has no page groups (it completed before groups existed)`
      : `group: no group '${name}' in audit '${auditId}'; GET /v1/audits/${auditId}/groups ` +
        "lists them",
  );
}

/** How a listing names each URL's group: null on an audit completed before groups. */
async function groupNamer(kv: Deno.Kv, auditId: string) {
  const groups = await readGroups(kv, auditId);
  const matcher = groups.length > 0 ? new GroupMatcher(groups) : null;
  return {
    groups,
    of: (url: string): string | null => matcher?.groupOf(url) ?? null,
  };
}

/** One check's stored issue of a finished audit (a check that did not fire reads as fixed). */
async function storedIssue(kv: Deno.Kv, auditId: string, checkId: string) {
  if (!CHECKS_BY_ID.has(checkId)) {
    throw new ApiError("not_found", `No check '${checkId}'; see /docs/checks`);
  }
  const stored = (await read(kv, keys.auditIssues(auditId))).value;
  return stored?.issues.find((i) => i.check === checkId) ??
    { check: checkId, affected: 0, eligible: 0, stored: 0, change: "fixed" as const };
}

/** The evidence items of one check of a completed audit, by URL. 404 for an unknown check id. */
export async function listIssueItems(
  deps: Deps,
  caller: Caller,
  auditId: string,
  checkId: string,
  query: { limit?: number; cursor?: string },
): Promise<Page<Evidence> & Omit<IssueView, "items_url"> & { audit_id: string }> {
  const audit = await completedAudit(deps, caller, auditId);
  const issue = await storedIssue(deps.kv, auditId, checkId);
  const { items_url: _, ...view } = issueView(deps.config.publicBaseUrl, audit.id, issue);
  const limit = pageSize(query.limit);
  const data: Evidence[] = [];
  const next = issue.affected > 0
    ? await scan(
      deps.kv,
      keys.auditFindings(auditId, checkId),
      limit,
      query.cursor,
      (e) => {
        data.push(e.value);
        return "go";
      },
    )
    : null;
  return { audit_id: audit.id, ...view, data, next_cursor: next };
}

function fetchState(r: PageRecord): PageView["fetch_state"] {
  return r.state === "fetched" || r.state === "failed" || r.state === "blocked"
    ? r.state
    : "not_fetched";
}

/** Why a URL cannot be indexed, or null when it can. */
export function notIndexableReason(r: PageRecord): string | null {
  if (r.state === "blocked") return "blocked_by_robots";
  if (r.state === "failed") return "fetch_failed";
  if (r.state !== "fetched") return "not_fetched";
  if (r.status >= 300 && r.status < 400) return "redirect";
  if (r.status < 200 || r.status >= 300) return "error_status";
  if (!r.html) return "not_html";
  if (r.noindex) return "noindex";
  if (r.canonicalOther !== null) return "canonicalised";
  return null;
}

function statusClass(r: PageRecord): PageStatusClass {
  const s = fetchState(r);
  if (s !== "fetched") return s;
  return `${Math.min(5, Math.max(2, Math.floor(r.status / 100)))}xx` as PageStatusClass;
}

function issueCounts(checks: readonly string[]): Record<Category, number> {
  const out = Object.fromEntries(CATEGORIES.map((c) => [c, 0])) as Record<Category, number>;
  for (const id of checks) {
    const c = CHECKS_BY_ID.get(id);
    if (c) out[c.category]++;
  }
  return out;
}

export function pageView(r: PageRecord, group: string | null = null): PageView {
  const reason = notIndexableReason(r);
  const fetched = r.state === "fetched";
  return {
    url: r.url,
    fetch_state: fetchState(r),
    status: fetched ? r.status : null,
    failure: r.failure,
    redirect_target: r.location,
    depth: r.depth >= 0 ? r.depth : null,
    in_sitemap: r.inSitemap,
    indexable: reason === null,
    not_indexable_reason: reason,
    title: r.title,
    word_count: r.html ? r.words : null,
    inlinks: r.inlinks,
    link_score: r.linkScore ?? null,
    outlinks: r.html ? r.outlinks : null,
    response_time_ms: fetched ? r.ttfbMs : null,
    size_bytes: r.html ? r.bytes : null,
    canonical: r.canonicalOther,
    checks: r.checks,
    meta_description: r.description,
    h1: r.h1,
    group,
    issue_counts: issueCounts(r.checks),
    ...(r.discoveredBy ? { discovered_by: r.discoveredBy } : {}),
    ...(r.lab
      ? {
        lab: {
          lcp_ms: r.lab.lcpMs,
          cls: r.lab.cls,
          tbt_ms: r.lab.tbtMs,
          bytes: r.lab.bytes,
          requests: r.lab.requests,
        },
      }
      : {}),
  };
}

/**
 * The page inventory of a completed audit: every URL the crawl met, by URL. Filters by status
 * class, indexability and check; a filtered page examines at most MAX_SCAN entries, so it may
 * hold fewer than `limit` items with a `next_cursor` to continue.
 */
export async function listAuditPages(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: PageFilters & { limit?: number; cursor?: string },
): Promise<Page<PageView> & { audit_id: string; total_count?: number }> {
  const audit: AuditRecord = await completedAudit(deps, caller, auditId);
  const limit = pageSize(query.limit);
  const keep = pageFilter(query);
  const named = await groupNamer(deps.kv, auditId);
  const view = (r: PageRecord) => pageView(r, named.of(r.url));
  // The whole listing's size, where the group records know it without a scan: the first page of
  // the inventory unfiltered, or of one group alone (audits completed before groups: unknown).
  const plain = query.cursor === undefined && query.status === undefined &&
    query.indexable === undefined && query.check === undefined;
  const counted = named.groups.filter((g) => query.group === undefined || g.name === query.group);
  const total = plain && counted.length > 0
    ? { total_count: counted.reduce((n, g) => n + g.pages, 0) }
    : {};
  if (query.group !== undefined) {
    requireGroup(named.groups, query.group, auditId);
    const page = await pagesOfGroup(deps.kv, auditId, query, limit, keep, view);
    return { audit_id: audit.id, ...page, ...total };
  }
  if (query.check !== undefined) {
    const page = await pagesOfCheck(deps.kv, auditId, query.check, limit, keep, query.cursor);
    return {
      audit_id: audit.id,
      data: page.data.map((p) => ({ ...p, group: named.of(p.url) })),
      next_cursor: page.next_cursor,
    };
  }
  const filtered = query.status !== undefined || query.indexable !== undefined;
  const data: PageView[] = [];
  const next = await scan(
    deps.kv,
    keys.auditPages(auditId),
    filtered ? MAX_SCAN : limit,
    query.cursor,
    (e) => {
      if (keep(e.value)) data.push(view(e.value));
      return data.length === limit ? "stop_after" : "go";
    },
  );
  return { audit_id: audit.id, data, next_cursor: next, ...total };
}

/** The filters of the page inventory. */
export interface PageFilters {
  status?: PageStatusClass;
  indexable?: boolean;
  check?: string;
  /** A page group: its index is walked, the other filters applied to its records. */
  group?: string;
}

/**
 * A page of one group's URLs: its index read from the cursor, records read ten at a time, the
 * other filters (`check` too) applied to them; at most MAX_SCAN index entries when filtered.
 */
async function pagesOfGroup(
  kv: Deno.Kv,
  auditId: string,
  query: PageFilters & { cursor?: string },
  limit: number,
  keep: (r: PageRecord) => boolean,
  view: (r: PageRecord) => PageView,
): Promise<Page<PageView>> {
  const check = query.check;
  const filtered = query.status !== undefined || query.indexable !== undefined ||
    check !== undefined;
  const max = filtered ? MAX_SCAN : limit;
  const data: PageView[] = [];
  let held: { url: string; after: Deno.KvListIterator<unknown>["cursor"] }[] = [];
  let stopAt: string | null = null;
  const drain = async () => {
    const recs = await readMany(kv, held.map((h) => keys.auditPage(auditId, h.url)));
    for (let i = 0; i < held.length && stopAt === null; i++) {
      const r = recs[i].value;
      if (r && keep(r) && (check === undefined || r.checks.includes(check))) {
        data.push(view(r));
        if (data.length === limit) stopAt = encodeCursor(held[i].after);
      }
    }
    held = [];
  };
  let n = 0;
  let it: ListIterator<true, readonly [string, string, string, string]>;
  try {
    it = list(kv, { prefix: keys.auditGroupPages(auditId, query.group!) }, {
      limit: max,
      cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
      batchSize: Math.min(max, 500),
    });
    for await (const e of it) {
      n++;
      held.push({ url: e.key[3], after: it.cursor });
      if (held.length === 10) await drain();
      if (stopAt !== null) return { data, next_cursor: stopAt };
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (query.cursor !== undefined) throw badCursor();
    throw err;
  }
  await drain();
  if (stopAt !== null) return { data, next_cursor: stopAt };
  return { data, next_cursor: n === max ? encodeCursor(it.cursor) : null };
}

/** The records the filters keep (`check` is applied by walking that check's findings). */
function pageFilter(query: PageFilters): (r: PageRecord) => boolean {
  if (query.check !== undefined && !CHECKS_BY_ID.has(query.check)) {
    throw new ApiError("invalid_request", `check: no check '${query.check}'`);
  }
  return (r) =>
    (query.status === undefined || statusClass(r) === query.status) &&
    (query.indexable === undefined || (notIndexableReason(r) === null) === query.indexable);
}

/** Entries a whole-list read takes from KV at a time: its memory bound, whatever the list. */
export const EXPORT_BATCH = 250;

/**
 * A whole listing for an export: every check runs now (404, 409, a bad filter), the rows are
 * read from KV only as `batches` is iterated, EXPORT_BATCH entries at a time, in the order and
 * under the filters of the paged listing.
 */
export interface AllRows<T> {
  audit_id: string;
  batches: AsyncIterable<T[]>;
  /** The inventory's: the audit sampled lab data (its pages may carry `lab`). */
  lab?: boolean;
}

/** Every issue of a completed audit under the filters of `listAuditIssues` (one small value). */
export async function allAuditIssues(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: IssueFilters,
): Promise<AllRows<IssueView>> {
  const audit = await completedAudit(deps, caller, auditId);
  const base = deps.config.publicBaseUrl;
  const issues = (await filteredIssues(deps.kv, auditId, query))
    .map((i) => issueView(base, audit.id, i));
  return { audit_id: audit.id, batches: once(issues) };
}

/** Every stored evidence item of one check of a completed audit, by URL. */
export async function allIssueItems(
  deps: Deps,
  caller: Caller,
  auditId: string,
  checkId: string,
): Promise<AllRows<Evidence>> {
  const audit = await completedAudit(deps, caller, auditId);
  const issue = await storedIssue(deps.kv, auditId, checkId);
  const kv = deps.kv;
  async function* batches() {
    if (issue.affected === 0) return;
    for await (const page of listInPages(kv, keys.auditFindings(auditId, checkId), EXPORT_BATCH)) {
      yield page.map((e) => e.value);
    }
  }
  return { audit_id: audit.id, batches: batches() };
}

/** Every URL of a completed audit's inventory under the filters of `listAuditPages`. */
export async function allAuditPages(
  deps: Deps,
  caller: Caller,
  auditId: string,
  query: PageFilters,
): Promise<AllRows<PageView>> {
  const audit = await completedAudit(deps, caller, auditId);
  const keep = pageFilter(query);
  const kv = deps.kv;
  const named = await groupNamer(kv, auditId);
  if (query.group !== undefined) requireGroup(named.groups, query.group, auditId);
  const toView = (r: PageRecord) => pageView(r, named.of(r.url));
  const lab = (audit.renderStats?.lab_pages ?? 0) > 0;
  async function* batches() {
    if (query.group !== undefined) {
      const check = query.check;
      const index = keys.auditGroupPages(auditId, query.group);
      for await (const page of listInPages(kv, index, EXPORT_BATCH)) {
        const records = await getPages(kv, auditId, page.map((e) => e.key[3]));
        yield records.filter((r): r is PageRecord =>
          r !== null && keep(r) && (check === undefined || r.checks.includes(check))
        ).map(toView);
      }
      return;
    }
    if (query.check === undefined) {
      for await (const page of listInPages(kv, keys.auditPages(auditId), EXPORT_BATCH)) {
        yield page.filter((e) => keep(e.value)).map((e) => toView(e.value));
      }
      return;
    }
    // The check's findings by URL (several items of one URL are consecutive), joined to records.
    let last: string | null = null;
    const findings = keys.auditFindings(auditId, query.check);
    for await (const page of listInPages(kv, findings, EXPORT_BATCH)) {
      const urls: string[] = [];
      for (const e of page) {
        const url = e.key[3];
        if (url !== last) urls.push(last = url);
      }
      const records = await getPages(kv, auditId, urls);
      yield records.filter((r): r is PageRecord => r !== null && keep(r)).map(toView);
    }
  }
  return { audit_id: audit.id, lab, batches: batches() };
}

async function* once<T>(rows: T[]): AsyncIterable<T[]> {
  yield rows;
}

/**
 * Walks a prefix from a cursor, at most `max` entries. `visit` may stop the walk after the
 * entry ("stop_after") or before it ("stop_before"). Returns the cursor to continue from, or
 * null when the prefix is exhausted.
 */
async function scan<T, K extends Deno.KvKey>(
  kv: Deno.Kv,
  prefix: Prefix<T, K>,
  max: number,
  cursor: string | undefined,
  visit: (e: ListedEntry<T, K>) => "go" | "stop_after" | "stop_before",
): Promise<string | null> {
  const kvCursor = cursor === undefined ? undefined : decodeCursor(cursor);
  let it: ListIterator<T, K>;
  let before = cursor ?? null;
  let n = 0;
  try {
    it = list(kv, { prefix }, { limit: max, cursor: kvCursor, batchSize: Math.min(max, 500) });
    for await (const e of it) {
      n++;
      const v = visit(e);
      if (v === "stop_before") return before;
      if (v === "stop_after") return encodeCursor(it.cursor);
      before = encodeCursor(it.cursor);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (cursor !== undefined) throw badCursor();
    throw err;
  }
  return n === max ? encodeCursor(it.cursor) : null;
}

/** Pages a check fired on: its findings (by URL) joined to the page records. */
async function pagesOfCheck(
  kv: Deno.Kv,
  auditId: string,
  check: string,
  limit: number,
  keep: (r: PageRecord) => boolean,
  cursor: string | undefined,
): Promise<Page<PageView>> {
  const urls: string[] = [];
  const next = await scan(
    kv,
    keys.auditFindings(auditId, check),
    MAX_SCAN,
    cursor,
    (e) => {
      const url = e.key[3];
      if (urls[urls.length - 1] === url) return "go";
      if (urls.length === limit) return "stop_before";
      urls.push(url);
      return "go";
    },
  );
  const data: PageView[] = [];
  for (let i = 0; i < urls.length; i += 10) {
    const recs = await readMany(
      kv,
      urls.slice(i, i + 10).map((u) => keys.auditPage(auditId, u)),
    );
    for (const e of recs) if (e.value && keep(e.value)) data.push(pageView(e.value));
  }
  return { data, next_cursor: next };
}

/** One page group of a completed audit, as `GET /v1/audits/{id}/groups` lists it. */
export interface GroupView {
  name: string;
  pattern: string | null;
  source: PageGroupRecord["source"];
  pages: number;
  pages_with_issues: number;
  /** Checks that fired on the group's pages, per severity (as the audit's summary counts). */
  issues_critical: number;
  issues_warning: number;
  issues_info: number;
  /** The group's worst checks (severity, then pages), at most TOP_GROUP_ISSUES. */
  top_issues: { check: string; severity: Severity; title: string; affected_count: number }[];
  pages_url: string;
  issues_url: string;
}

/** Worst checks a group shows. */
export const TOP_GROUP_ISSUES = 5;

/** A group's view: its counters summed per severity, its worst checks. */
export function groupView(auditId: string, g: PageGroupRecord): GroupView {
  const fired = Object.entries(g.checks).flatMap(([id, n]) => {
    const c = CHECKS_BY_ID.get(id);
    return c && n > 0 ? [{ c, n }] : [];
  }).sort((a, b) =>
    SEV_RANK[a.c.severity] - SEV_RANK[b.c.severity] || b.n - a.n || (a.c.id < b.c.id ? -1 : 1)
  );
  const count = (s: Severity) => fired.filter((f) => f.c.severity === s).length;
  const q = encodeURIComponent(g.name);
  return {
    name: g.name,
    pattern: g.pattern,
    source: g.source,
    pages: g.pages,
    pages_with_issues: g.pagesWithIssues,
    issues_critical: count("critical"),
    issues_warning: count("warning"),
    issues_info: count("info"),
    top_issues: fired.slice(0, TOP_GROUP_ISSUES).map(({ c, n }) => ({
      check: c.id,
      severity: c.severity,
      title: c.title,
      affected_count: n,
    })),
    pages_url: `/v1/audits/${auditId}/pages?group=${q}`,
    issues_url: `/v1/audits/${auditId}/issues?group=${q}`,
  };
}

/**
 * The page groups of a completed audit (groups.ts): the caller's or the detected ones in their
 * order, then `other`; at most MAX_GROUPS + 1 entries, so one answer, never paged. Empty for an
 * audit completed before groups existed.
 */
export async function listAuditGroups(
  deps: Deps,
  caller: Caller,
  auditId: string,
): Promise<{ audit_id: string; data: GroupView[] }> {
  const audit = await completedAudit(deps, caller, auditId);
  const groups = await readGroups(deps.kv, auditId);
  return { audit_id: audit.id, data: groups.map((g) => groupView(audit.id, g)) };
}
