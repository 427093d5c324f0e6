/**
 * Audits (endpoints 9–10, and the findings listings of a completed audit): start a technical
 * audit of a project, read it, and page through its issues, one check's evidence and its page
 * inventory.
 *
 * @module
 */
import { z } from "@hono/zod-openapi";
import {
  type AuditOptions,
  auditSummaryMarkdown,
  createAudit,
  getAudit,
  groupNameProblem,
  listAuditGroups,
  listAuditIssues,
  listAuditPages,
  listIssueItems,
  MAX_GROUPS,
  MAX_LIST_CHARS,
  MAX_LIST_URL_LENGTH,
  MAX_LIST_URLS,
  MAX_PAGE_SIZE,
  SUMMARY_MAX_BYTES,
} from "../../domain/audits/mod.ts";
import { CATEGORIES } from "../../domain/audit_engine/types.ts";
import {
  FIX_FIRST_SIZE,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_WILDCARDS,
  MAX_PATTERNS,
  patternProblem,
  type SiteAuth,
  USER_AGENT_PRESETS,
} from "../../domain/audit_engine/mod.ts";
import { auditPages, auditPollSeconds, queueDepth } from "../jobs/poll_hint.ts";
import { activeShareUrl } from "../../domain/shares/mod.ts";
// Past audits/mod.ts on purpose: it loads csv-stringify, kept off a worker's load (layers.test.ts).
import {
  exportAuditIssues,
  exportAuditPages,
  type ExportFile,
  exportIssueItems,
} from "../../domain/audits/exports.ts";
import { type BodyResult, bodyResult, defineOperation } from "../operation.ts";
import { auditView } from "../views.ts";
import {
  MaskedSiteAuthSchema,
  MaxRpsSchema,
  PolitenessSchema,
  SiteAuthSchema,
} from "./audit_access_schema.ts";
import { ProjectIdParam } from "./projects.ts";

/** The largest `limit` of the findings listings. */
export { MAX_PAGE_SIZE };

const Severity = z.enum(["critical", "warning", "info"]);

const FixFirstItem = z.object({
  check: z.string().openapi({ example: "broken_internal_links" }),
  title: z.string().openapi({ description: "The check's title, for people" }),
  category: z.enum(CATEGORIES as [string, ...string[]]),
  severity: Severity,
  impact: z.number().int().min(1).max(5).openapi({
    description: "What the finding costs in search: 5 keeps pages out of search, 4 loses " +
      "pages or links, 3 weakens ranking, 2 minor, 1 hygiene (see /docs/checks)",
  }),
  effort: z.enum(["low", "medium", "high"]).openapi({ description: "What fixing it takes" }),
  affected_count: z.number().int(),
  eligible_count: z.number().int(),
  reach: z.number().min(0).max(1).openapi({ description: "affected_count ÷ eligible_count" }),
  priority: z.number().openapi({
    description: "4^(impact − 1) × √reach: the order of the list",
  }),
  cost: z.string().openapi({ description: "What the finding costs the site" }),
  fix: z.string().openapi({ description: "How to fix it" }),
}).openapi("FixFirstItem");

export const AuditSummary = z.object({
  issues_critical: z.number().int(),
  issues_warning: z.number().int(),
  issues_info: z.number().int(),
  top_issues: z.array(z.object({
    check: z.string().openapi({ example: "title_missing" }),
    severity: Severity,
    title: z.string(),
    affected_count: z.number().int(),
  })).max(10),
  categories: z.object({
    performance: z.number().int(),
    security: z.number().int(),
    indexability: z.number().int(),
    mobile: z.number().int(),
    structure: z.number().int(),
    agents: z.number().int().optional().openapi({
      description: "How AI crawlers and agents see the site (docs/audit.md); absent on audits " +
        "completed before the category existed",
    }),
  }),
  fix_first: z.array(FixFirstItem).max(FIX_FIRST_SIZE).optional().openapi({
    description: "Fix first (additive): the findings with the largest impact × √reach, best " +
      'first (docs/audit.md "Fix first"); absent on audits completed before it existed',
  }),
}).openapi("AuditSummary");

const Changes = z.object({
  previous_audit_id: z.string().nullable().openapi({
    description: "The project's previous completed audit compared against; null when none",
  }),
  new: z.number().int().openapi({ description: "Checks that fire now and did not before" }),
  persisting: z.number().int().openapi({ description: "Checks that fired before and still do" }),
  fixed: z.number().int().openapi({ description: "Checks that fired before and no longer do" }),
}).openapi("AuditChanges");

const PathPattern = z.string().superRefine((p, ctx) => {
  const problem = patternProblem(p);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
}).openapi({ example: "/blog/**" });

const PageGroupDefSchema = z.object({
  name: z.string().superRefine((n, ctx) => {
    const problem = groupNameProblem(n);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  }).openapi({ example: "blog" }),
  pattern: PathPattern,
}).strict().openapi("PageGroupDef");

const PATTERN_RULES = `at most ${MAX_PATTERNS} patterns of at most ${MAX_PATTERN_LENGTH} ` +
  `characters and ${MAX_PATTERN_WILDCARDS} wildcards each, each starting with /. Globs over the ` +
  "URL path: * is any run of characters within a segment, ** any run including /, a pattern " +
  "ending in /** also matches the path without it, everything else is literal; a pattern with " +
  "? is matched against path and query. The start URL is always audited";

/**
 * The audit options (issue 22): one shape, taken by `POST /v1/projects/{projectId}/audits`, the
 * schedule's PUT (each run) and the MCP audits and schedule tools. The API checks the shape;
 * the domain checks what needs the project (list-mode URLs on its site), options.ts.
 */
export const AuditOptionsFields = {
  include: z.array(PathPattern).max(MAX_PATTERNS).optional().openapi({
    description: `Crawl only URLs whose path matches one of these patterns; ${PATTERN_RULES}. ` +
      "Sitemap URLs are filtered the same way.",
    example: ["/blog/**"],
  }),
  exclude: z.array(PathPattern).max(MAX_PATTERNS).optional().openapi({
    description: `Never crawl URLs whose path matches one of these (exclude wins over include); ` +
      `${PATTERN_RULES}. Links to excluded URLs are not judged broken.`,
    example: ["/tag/**", "/search?*"],
  }),
  max_depth: z.number().int().min(0).max(1000).optional().openapi({
    description: "Crawl only URLs at most this many clicks from the start URL (0: the start " +
      "page only); URLs only the sitemap reaches are then left out (their depth is unknown)",
    example: 3,
  }),
  urls: z.array(z.string().min(1).max(MAX_LIST_URL_LENGTH)).min(1).max(MAX_LIST_URLS)
    .refine((l) => l.reduce((n, u) => n + u.length, 0) <= MAX_LIST_CHARS, {
      message: `at most ${MAX_LIST_CHARS} characters in all`,
    }).optional().openapi({
      description: `List mode: audit exactly these URLs (up to ${MAX_LIST_URLS}, and the ` +
        "audit's page budget) of the project's own site (same host, with or without www., " +
        "http or https; others are 400 naming urls.N). No link is followed and the start page " +
        "is audited only when listed; robots.txt, the sitemaps and the other site-wide checks " +
        "still run. Not with include, exclude, max_depth or sitemap_only",
      example: ["https://example.com/pricing", "https://example.com/blog/launch"],
    }),
  sitemap_only: z.boolean().optional().openapi({
    description: "Crawl only the start page and the URLs the sitemaps list (links to other " +
      "URLs are not followed); default false",
  }),
  user_agent: z.enum(USER_AGENT_PRESETS).optional().openapi({
    description: "Who the crawler says it is, and so which robots.txt group it obeys: " +
      "serpwright (default, token SerpwrightBot), googlebot_smartphone and googlebot_desktop " +
      "(token Googlebot), bingbot (token bingbot). Every preset's User-Agent names SerpwrightBot " +
      "and its info URL beside the preset's token (e.g. Googlebot/2.1), so a site that varies " +
      "by User-Agent answers as it answers that crawler; it never passes for the real one",
    example: "googlebot_smartphone",
  }),
  auth: SiteAuthSchema.optional(),
  max_rps: MaxRpsSchema.optional(),
  groups: z.array(PageGroupDefSchema).min(1).max(MAX_GROUPS)
    .refine((l) => new Set(l.map((g) => g.name)).size === l.length, {
      message: "group names must be distinct",
    }).optional().openapi({
      description: `Page groups (up to ${MAX_GROUPS}): each URL of the inventory goes to the ` +
        "first group whose pattern matches its path (same glob rules as include), the rest to " +
        "`other`. Read per group with ?group= on the pages and issues lists and " +
        "GET /v1/audits/{auditId}/groups. Default: groups are detected from the crawled URLs " +
        "(each first path segment 3 or more URLs share, as /segment/**, the 20 largest)",
      example: [{ name: "blog", pattern: "/blog/**" }, { name: "products", pattern: "/p/*" }],
    }),
};

/** The domain's audit options from a body (or MCP arguments) validated by AuditOptionsFields. */
export function auditOptionsOf(body: {
  include?: string[];
  exclude?: string[];
  max_depth?: number;
  urls?: string[];
  sitemap_only?: boolean;
  user_agent?: AuditOptions["userAgent"];
  groups?: { name: string; pattern: string }[];
}): AuditOptions {
  return {
    include: body.include,
    exclude: body.exclude,
    maxDepth: body.max_depth,
    urls: body.urls,
    sitemapOnly: body.sitemap_only,
    userAgent: body.user_agent,
    groups: body.groups,
  };
}

/** The options as an audit or schedule shows them (app/views.ts `auditOptionsView`). */
export const AuditOptionsView = z.object({
  include: z.array(z.string()).optional(),
  exclude: z.array(z.string()).optional(),
  max_depth: z.number().int().optional(),
  urls: z.array(z.string()).optional().openapi({ description: "Canonical, distinct" }),
  sitemap_only: z.literal(true).optional(),
  user_agent: z.enum(USER_AGENT_PRESETS),
  auth: MaskedSiteAuthSchema.optional().openapi({ description: "Staging access, secrets masked" }),
  max_rps: z.number().optional().openapi({ description: "The per-host rate cap asked for" }),
  groups: z.array(z.object({ name: z.string(), pattern: z.string() })).optional().openapi({
    description: "The page groups asked for; absent: detected",
  }),
}).openapi("AuditOptions", {
  description: "The options the audit was started with (defaults left out, user_agent always " +
    "shown); secrets are never shown",
});

export const Audit = z.object({
  audit_id: z.string(),
  project_id: z.string(),
  status: z.enum(["queued", "running", "completed", "failed"]),
  trigger: z.enum(["api", "schedule"]).openapi({
    description: "Who started the audit (additive): `api` for an API or MCP call, `schedule` " +
      "for the project's schedule. An API audit that served a scheduled slot stays `api`",
  }),
  started_at: z.string(),
  completed_at: z.string().optional(),
  score: z.number().int().min(0).max(100).optional(),
  summary: AuditSummary.optional(),
  changes: Changes.optional().openapi({
    description: "Completed audits: issues new, persisting and fixed against the project's " +
      "previous completed audit (additive)",
  }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  render: z.object({
    requested: z.literal(true),
    pages_rendered: z.number().int().optional(),
    lab_pages: z.number().int().optional(),
    pages_failed: z.number().int().optional(),
    pages_discovered: z.number().int().optional().openapi({
      description: "URLs first found in rendered pages (links JavaScript added) and queued " +
        'for the crawl; the page inventory marks them `discovered_by: "render"`',
    }),
    rounds: z.number().int().optional().openapi({
      description: "Render rounds: 1 after the raw crawl, one more after each crawl of the " +
        "URLs the round before found (RENDER_MAX_ROUNDS, default 5)",
    }),
  }).optional().openapi({
    description: "Rendered audits only (additive): pages rendered in the browser once " +
      "completed, the lab (throttled) share, renders that failed (timeout, crash), URLs " +
      "found only in rendered pages, and render rounds",
  }),
  limits_hit: z.array(z.object({
    limit: z.string().openapi({ example: "links_per_page" }),
    value: z.number().int().openapi({ description: "The cap's value on this server" }),
    left_out: z.number().int().openapi({ description: "How much the cap left out (see unit)" }),
    unit: z.string().openapi({ example: "links not kept" }),
    budget: z.enum(["trial", "plan", "operator"]).optional().openapi({
      description: "A budget that stopped the crawl (`pages`, `bytes`, `duration`, " +
        "`error_rate`): whose it is, the sandbox trial's, the plan's, or the operator's " +
        "error-rate stop",
    }),
    upgrade_path: z.string().optional().openapi({
      example: "/v1/upgrades",
      description: "The trial's budgets only: POST it with the sandbox key to start an upgrade " +
        "a human completes (a paid audit crawls the plan's budget)",
    }),
  })).optional().openapi({
    description: "Completed audits (additive): the crawl caps this site hit and what each left " +
      "out (links per page, frontier, URL length, redirect hops, sitemaps, robots.txt, the " +
      "page, byte and time budgets, retries given up, the error-rate stop); empty when none " +
      "was hit",
  }),
  crawl: z.object({
    complete: z.boolean().openapi({
      description: "False when a budget (or the error-rate stop) cut the crawl short: the " +
        "findings are then those of the part crawled",
    }),
    pages_fetched: z.number().int(),
    urls_not_fetched: z.number().int().openapi({
      description: "URLs found (links, redirects, the sitemap) and never fetched",
    }),
    pages_reused: z.number().int().openapi({
      description: "Pages of pages_fetched judged on the previous audit's stored facts: the " +
        "site answered 304 to If-None-Match / If-Modified-Since, or sent the same body " +
        "(an incremental crawl; findings as a full crawl's)",
    }),
  }).optional().openapi({
    description: "Completed audits (additive): what the crawl covered",
  }),
  options: AuditOptionsView,
  scope: z.object({
    left_out: z.object({
      urls: z.number().int().optional(),
      sitemap_only: z.number().int().optional(),
      exclude: z.number().int().optional(),
      include: z.number().int().optional(),
      max_depth: z.number().int().optional(),
    }).openapi({
      description: "Per scope option given: the link occurrences and sitemap URLs it kept out " +
        "of the crawl (0: it left nothing out). Each is counted under the first option that " +
        "refused it, in this order",
    }),
  }).optional().openapi({
    description: "Completed audits started with scope options (include, exclude, max_depth, " +
      "urls, sitemap_only): what the scope left out. Out-of-scope URLs are neither fetched nor " +
      "listed in the page inventory, and links to them are not broken",
  }),
  politeness: PolitenessSchema.optional().openapi({
    description: "Completed audits (additive): how the site's Crawl-delay, 429/503 answers and " +
      "the rate cap paced the crawl",
  }),
  report_url: z.string().optional().openapi({
    description: "Once completed (additive): the HTML report, opened with the API key " +
      "(GET /v1/audits/{auditId}/report)",
  }),
  share_url: z.string().nullable().optional().openapi({
    description: "Once completed (additive): the newest live share link of the report (opens " +
      "without a key), or null when there is none (POST /v1/audits/{auditId}/shares makes one)",
  }),
}).openapi("Audit");

export const StartAuditBody = z.object({
  render: z.boolean().optional().openapi({
    description: "Also render a sample of pages in a real browser (home page, top templates by " +
      "inlinks, up to 50 pages; 10 of them with lab LCP/CLS/TBT) and run the rendered checks; " +
      "links that scripts add are crawled and rendered too (same page budget, same site). " +
      "Priced apart: included with pro, rendering_addon for basic, rendered_audit for credits " +
      "(GET /v1/plans rendered_audit_pricing). 503 rendering_unavailable where this server " +
      "cannot render. Default false: the raw-HTML audit, unchanged.",
  }),
  ...AuditOptionsFields,
}).strict().openapi("StartAudit");

const Category = z.enum(CATEGORIES as [string, ...string[]]);
const Change = z.enum(["new", "persisting", "fixed"]);

export const AuditIdParam = z.object({
  auditId: z.string().min(1).max(100).openapi({ param: { name: "auditId", in: "path" } }),
});

/** `limit` and `cursor` of every paged audit listing. */
export const PageQuery = {
  limit: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional().openapi({
    description: `Items per page, 1 to ${MAX_PAGE_SIZE} (default 50)`,
    example: 50,
  }),
  cursor: z.string().min(1).max(3000).optional().openapi({
    description: "The `next_cursor` of the previous page; omit for the first page",
  }),
};

/** The cursor of a page of a listing, null on the last page. */
export const NextCursor = z.string().nullable().openapi({
  description: "Pass as `cursor` to get the next page; null on the last page",
});

const IssueBase = {
  check: z.string().openapi({ example: "broken_internal_links" }),
  category: Category,
  severity: Severity,
  title: z.string(),
  meaning: z.string().openapi({ description: "What the finding means for the site" }),
  fix: z.string().openapi({ description: "How to fix it" }),
  doc_url: z.string().openapi({
    description: "The check's entry on /docs/checks",
    example: "http://localhost:8000/docs/checks#broken_internal_links",
  }),
  affected_count: z.number().int().openapi({
    description: "Affected pages or URLs (the true count, also beyond the stored items)",
  }),
  eligible_count: z.number().int().openapi({ description: "Pages or URLs the check applied to" }),
  items_stored: z.number().int().openapi({
    description: "Evidence items stored and listed (at most 2,000 per check)",
  }),
  change: Change.openapi({
    description: "Against the project's previous completed audit: new, persisting, or fixed " +
      "(fired before, not now; affected_count 0)",
  }),
};

const Issue = z.object({
  ...IssueBase,
  items_url: z.string().openapi({ example: "/v1/audits/aud_0abc/issues/broken_internal_links" }),
}).openapi("AuditIssue");

/** The files a findings listing also comes as (`format`, or `Accept`), whole and streamed. */
const EXPORT_FORMATS = {
  csv: {
    contentType: "text/csv; charset=utf-8; header=present",
    description: "the whole list (not one page) as RFC 4180 CSV with a header row, streamed; " +
      "evidence fields as columns (nested `a.b`, arrays joined with ` | `); text cells that " +
      "start with = + - @ or a tab are prefixed with '; `limit` and `cursor` do not apply",
  },
  ndjson: {
    contentType: "application/x-ndjson",
    description: "the whole list as newline-delimited JSON, one `data` item per line, streamed; " +
      "`limit` and `cursor` do not apply",
  },
};

const ExportFormat = z.enum(["json", "csv", "ndjson"]).optional().openapi({
  description: "json (default): a page of the list. csv or ndjson: the whole list as a " +
    "download, under the same filters (also chosen by `Accept: text/csv` or " +
    "`application/x-ndjson`; `format` wins)",
});

const Bom = z.enum(["0", "1"]).optional().openapi({
  description: "csv only: 1 starts the file with a UTF-8 byte order mark, so Excel reads it as " +
    "UTF-8 (default 0: no BOM, as RFC 4180 tools expect)",
});

const GroupFilter = z.string().min(1).max(60).optional().openapi({
  description: "Only this page group (a `name` of GET /v1/audits/{auditId}/groups, e.g. blog " +
    "or other); 400 invalid_request for a group the audit does not have",
  example: "blog",
});

/** A whole-list file as the operation's body result. */
function exported(file: ExportFile, format: "csv" | "ndjson"): BodyResult {
  return bodyResult(EXPORT_FORMATS[format].contentType, file.chunks, file.filename);
}

/** The filters of `GET /v1/audits/{auditId}/issues` (also the MCP audits tool's). */
export const IssuesQuery = z.object({
  severity: Severity.optional(),
  category: Category.optional(),
  change: Change.optional(),
  group: GroupFilter.openapi({
    description: "Only the checks that fired on this page group's pages, each counted over " +
      "the group: affected_count is the group's pages it fired on, eligible_count the " +
      "group's pages (fixed checks are left out); 400 invalid_request for an unknown group",
    example: "blog",
  }),
  ...PageQuery,
  format: ExportFormat,
  bom: Bom,
});

/** The filters of `GET /v1/audits/{auditId}/pages` (also the MCP audits tool's). */
export const PagesQuery = z.object({
  status: z.enum(["2xx", "3xx", "4xx", "5xx", "failed", "blocked", "not_fetched"])
    .optional(),
  indexable: z.enum(["true", "false"]).optional(),
  check: z.string().min(1).max(100).optional().openapi({
    description: "Only URLs this check fired on",
    example: "title_missing",
  }),
  group: GroupFilter,
  ...PageQuery,
  format: ExportFormat,
  bom: Bom,
});

/** The paging of `GET /v1/audits/{auditId}/issues/{check}`. */
export const IssueItemsQuery = z.object({ ...PageQuery, format: ExportFormat, bom: Bom });

export const IssueList = z.object({
  audit_id: z.string(),
  changes: Changes.nullable(),
  data: z.array(Issue),
  next_cursor: NextCursor,
}).openapi("AuditIssueList");

const Evidence = z.record(z.string(), z.unknown()).openapi("AuditEvidence", {
  description: "One affected item: `url` (the page it is on) and facts that fit the check, e.g. " +
    "target, anchor and status for a broken link, every hop of a redirect chain, the value and " +
    "its length for a title, the measured figure for TTFB",
  example: {
    url: "https://example.com/blog",
    target: "https://example.com/old-page",
    anchor: "our old guide",
    status: 404,
  },
});

export const IssueItems = z.object({
  audit_id: z.string(),
  ...IssueBase,
  data: z.array(Evidence),
  next_cursor: NextCursor,
}).openapi("AuditIssueItems");

const PageItem = z.object({
  url: z.string(),
  fetch_state: z.enum(["fetched", "failed", "blocked", "not_fetched"]),
  status: z.number().int().nullable().openapi({ description: "HTTP status; null if not fetched" }),
  failure: z.string().nullable().openapi({ description: "timeout, network, tls, dns, ..." }),
  redirect_target: z.string().nullable(),
  depth: z.number().int().nullable().openapi({
    description: "Clicks from the start URL; null when only reachable through the sitemap (or " +
      "listed in list mode, `urls`)",
  }),
  in_sitemap: z.boolean(),
  indexable: z.boolean(),
  not_indexable_reason: z.enum([
    "blocked_by_robots",
    "fetch_failed",
    "not_fetched",
    "redirect",
    "error_status",
    "not_html",
    "noindex",
    "canonicalised",
  ]).nullable(),
  title: z.string().nullable(),
  word_count: z.number().int().nullable().openapi({
    description: "Visible words (counted up to the audit engine's word cap); HTML pages only",
  }),
  inlinks: z.number().int().openapi({ description: "Followable internal links pointing here" }),
  link_score: z.number().int().min(0).max(100).nullable().openapi({
    description: "Internal link equity, 0-100 on a logarithmic scale: a PageRank (damping " +
      "0.85) over followable internal links, 100 for the best-linked page; HTML 200 pages only",
  }),
  outlinks: z.number().int().nullable().openapi({ description: "Internal links on the page" }),
  response_time_ms: z.number().int().nullable().openapi({ description: "Time to first byte" }),
  size_bytes: z.number().int().nullable().openapi({ description: "HTML bytes (decoded)" }),
  canonical: z.string().nullable().openapi({ description: "Canonical URL when it is another URL" }),
  checks: z.array(z.string()).openapi({ description: "Checks that fired on this URL" }),
  meta_description: z.string().nullable().openapi({ description: "Meta description (additive)" }),
  h1: z.string().nullable().openapi({ description: "The first h1 (additive)" }),
  group: z.string().nullable().openapi({
    description: "The page group the URL is in (additive; GET /v1/audits/{auditId}/groups); " +
      "null on audits completed before groups",
  }),
  issue_counts: z.object({
    performance: z.number().int(),
    security: z.number().int(),
    indexability: z.number().int(),
    mobile: z.number().int(),
    structure: z.number().int(),
  }).openapi({ description: "Checks that fired on this URL, per category (additive)" }),
  discovered_by: z.literal("render").optional().openapi({
    description: "Rendered audits (additive): `render` when the URL was first found in a " +
      "rendered page (a link JavaScript added) rather than in served HTML or a sitemap; " +
      "absent otherwise",
  }),
  lab: z.object({
    lcp_ms: z.number().int().nullable().openapi({
      description: "Largest Contentful Paint, ms; null when nothing was painted that counts",
    }),
    cls: z.number().openapi({ description: "Cumulative Layout Shift (largest session window)" }),
    tbt_ms: z.number().int().openapi({ description: "Total Blocking Time after FCP, ms" }),
    bytes: z.number().int().openapi({ description: "Bytes transferred by every request" }),
    requests: z.number().int().openapi({ description: "Requests the page made" }),
  }).optional().openapi({
    description: "Rendered audits (additive): the lab figures of a lab-sampled page (a " +
      "throttled phone, Lighthouse's mobile conditions), whether or not a lab check fired; " +
      "absent on pages not lab-sampled and when the lab render failed",
  }),
}).openapi("AuditPage");

export const PageList = z.object({
  audit_id: z.string(),
  data: z.array(PageItem),
  next_cursor: NextCursor,
  total_count: z.number().int().optional().openapi({
    description: "Additive: how many URLs the whole listing holds, on the first page of the " +
      "inventory unfiltered or of one group alone (absent where it would take a scan, and for " +
      "audits completed before page groups)",
    example: 120,
  }),
}).openapi("AuditPageList");

export const AuditAccepted = z.object({
  audit_id: z.string(),
  status: z.enum(["queued", "running"]),
  poll: z.string().openapi({ example: "/v1/audits/aud_0abc" }),
  poll_after_seconds: z.number().int().openapi({
    description: "When to poll first, estimated from the job's size and the jobs queued ahead " +
      "(2 to 60 s; also the Retry-After header)",
    example: 2,
  }),
}).openapi("AuditAccepted");

const CheckParam = AuditIdParam.extend({
  check: z.string().min(1).max(100).openapi({
    param: { name: "check", in: "path" },
    example: "broken_internal_links",
  }),
});

const SUMMARY_FORMAT = {
  contentType: "text/markdown; charset=utf-8",
  description: `the summary of a completed audit in at most ${SUMMARY_MAX_BYTES} bytes of ` +
    "Markdown (as `GET /v1/audits/{auditId}/summary.md`)",
};

const AuditQuery = z.object({
  format: z.enum(["json", "markdown"]).optional().openapi({
    description: "json (default): the audit. markdown: its short summary (409 `invalid_state` " +
      "before it completed); also chosen by `Accept: text/markdown`",
  }),
});

/**
 * The summary as a body, with the audit's newest live share link when one can be repeated. The
 * share lookup is keyed by the caller's account, so another account's audit finds none (and the
 * builder answers `not_found` for it anyway).
 */
async function summaryBody(
  deps: Parameters<typeof auditSummaryMarkdown>[0],
  actor: { accountId: string; mode: "sandbox" | "live" },
  auditId: string,
): Promise<BodyResult> {
  const shareUrl = await activeShareUrl(deps, actor.accountId, auditId);
  const text = await auditSummaryMarkdown(deps, actor, auditId, { shareUrl });
  return bodyResult(SUMMARY_FORMAT.contentType, text);
}

export const startAuditOp = defineOperation({
  id: "audits.start",
  method: "post",
  path: "/v1/projects/{projectId}/audits",
  tags: ["Audits"],
  summary: "Start a technical audit (202; an audit already queued or running with the same " +
    "options is returned as is, one with other options is 409 audit_in_progress). Poll after " +
    "poll_after_seconds (Retry-After).",
  access: "key",
  tokens: "allow",
  sandbox: { limit: "1 raw audit in the trial; rendered audits 402" },
  leaves: "an audit, kept with the project",
  params: ProjectIdParam,
  body: StartAuditBody,
  optionalBody: true,
  bodyDescription: "Optional; no body (or {}) starts the raw-HTML audit of the whole site. " +
    "Unknown fields are refused (400 naming the field)",
  status: 202,
  output: AuditAccepted,
  outputDescription: "Accepted; poll the `poll` path",
  errors: [
    "not_found",
    "payment_required",
    "insufficient_credits",
    "sandbox_limit_reached",
    "idempotency_conflict",
    "payload_too_large",
    "rendering_unavailable",
    "audit_in_progress",
    "site_auth_not_configured",
  ],
  idempotent: true,
  machinePayable: true,
  // Sandbox usage moves (the Account shows it).
  changesAccount: true,
  async run({ params, body }, { services, actor }) {
    const { audit } = await createAudit(services.deps, actor, params.projectId, undefined, {
      trigger: "api",
      render: body.render === true,
      audit: auditOptionsOf(body),
      access: {
        ...(body.auth ? { auth: { plain: body.auth as SiteAuth } } : {}),
        ...(body.max_rps !== undefined ? { maxRps: body.max_rps } : {}),
      },
    });
    const pages = await auditPages(services.deps, audit);
    return {
      audit_id: audit.id,
      status: audit.status as "queued" | "running",
      poll: `/v1/audits/${audit.id}`,
      poll_after_seconds: auditPollSeconds(pages, await queueDepth(services.deps)),
    };
  },
});

export const getAuditOp = defineOperation({
  id: "audits.get",
  method: "get",
  path: "/v1/audits/{auditId}",
  tags: ["Audits"],
  summary: "An audit: status, and score and summary once completed",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: AuditQuery,
  status: 200,
  output: Audit,
  outputDescription: "The audit",
  formats: { markdown: SUMMARY_FORMAT },
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor, baseUrl }) {
    if (query.format === "markdown") return await summaryBody(services.deps, actor, params.auditId);
    const audit = await getAudit(services.deps, actor.accountId, params.auditId, actor.mode);
    const view = auditView(audit);
    if (audit.status !== "completed") return view;
    // The report it links: the keyed HTML page, and the newest live share link when there is one.
    return {
      ...view,
      report_url: `${baseUrl}/v1/audits/${audit.id}/report`,
      share_url: await activeShareUrl(services.deps, actor.accountId, audit.id),
    };
  },
});

export const getAuditSummaryOp = defineOperation({
  id: "audits.summary",
  method: "get",
  path: "/v1/audits/{auditId}/summary.md",
  tags: ["Audits"],
  summary: `A completed audit in at most ${SUMMARY_MAX_BYTES.toLocaleString("en-US")} bytes ` +
    "of Markdown, to paste into a chat or a pull request",
  description: "Score and category scores with their change since the previous audit, new, " +
    "fixed and persisting issues, the five worst issues with their counts and fix, and the link " +
    "to the JSON audit. The same text as `GET /v1/audits/{auditId}?format=markdown`. 409 " +
    "`invalid_state` while the audit is queued or running, or when it failed.",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  status: 200,
  produces: SUMMARY_FORMAT.contentType,
  output: z.string().openapi({ example: "## SEO audit: example.com\n**Score 72/100** (+5) …" }),
  outputDescription: "The summary (text/markdown)",
  errors: ["not_found", "invalid_state"],
  async run({ params }, { services, actor }) {
    return await summaryBody(services.deps, actor, params.auditId);
  },
});

export const listAuditIssuesOp = defineOperation({
  id: "audits.issues",
  method: "get",
  path: "/v1/audits/{auditId}/issues",
  tags: ["Audits"],
  summary: "A completed audit's issues: each fired check with what it means, how to fix it, " +
    "its affected count and its change since the previous audit (plus the fixed ones)",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: IssuesQuery,
  status: 200,
  output: IssueList,
  outputDescription: "Issues, worst first, then the fixed ones",
  formats: EXPORT_FORMATS,
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor }) {
    const filters = {
      severity: query.severity,
      category: query.category as never,
      change: query.change,
      group: query.group,
    };
    if (query.format === "csv" || query.format === "ndjson") {
      const file = await exportAuditIssues(
        services.deps,
        actor,
        params.auditId,
        filters,
        query.format,
        { bom: query.bom === "1" },
      );
      return exported(file, query.format);
    }
    return await listAuditIssues(services.deps, actor, params.auditId, {
      ...filters,
      limit: query.limit,
      cursor: query.cursor,
    });
  },
});

export const getAuditIssueOp = defineOperation({
  id: "audits.issue",
  method: "get",
  path: "/v1/audits/{auditId}/issues/{check}",
  tags: ["Audits"],
  summary: "The affected items of one check, with their evidence, by URL",
  access: "key",
  tokens: "allow",
  params: CheckParam,
  query: IssueItemsQuery,
  status: 200,
  output: IssueItems,
  outputDescription: "The check and a page of its items",
  formats: EXPORT_FORMATS,
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor }) {
    if (query.format === "csv" || query.format === "ndjson") {
      const { auditId, check } = params;
      const file = await exportIssueItems(services.deps, actor, auditId, check, query.format, {
        bom: query.bom === "1",
      });
      return exported(file, query.format);
    }
    return await listIssueItems(services.deps, actor, params.auditId, params.check, query);
  },
});

export const listAuditPagesOp = defineOperation({
  id: "audits.pages",
  method: "get",
  path: "/v1/audits/{auditId}/pages",
  tags: ["Audits"],
  summary: "The page inventory of a completed audit: every URL the crawl met, by URL",
  description: "Filtered pages examine at most 1,000 URLs per request, so a page may hold " +
    "fewer than `limit` items: follow `next_cursor` until it is null.",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  query: PagesQuery,
  status: 200,
  output: PageList,
  outputDescription: "A page of the inventory",
  formats: EXPORT_FORMATS,
  errors: ["not_found", "invalid_state"],
  async run({ params, query }, { services, actor }) {
    const filters = {
      status: query.status,
      indexable: query.indexable === undefined ? undefined : query.indexable === "true",
      check: query.check,
      group: query.group,
    };
    if (query.format === "csv" || query.format === "ndjson") {
      const file = await exportAuditPages(
        services.deps,
        actor,
        params.auditId,
        filters,
        query.format,
        { bom: query.bom === "1" },
      );
      return exported(file, query.format);
    }
    return await listAuditPages(services.deps, actor, params.auditId, {
      ...filters,
      limit: query.limit,
      cursor: query.cursor,
    });
  },
});

const GroupItem = z.object({
  name: z.string().openapi({ example: "blog" }),
  pattern: z.string().nullable().openapi({
    description: "Its path glob (e.g. /blog/**); null for `other`",
    example: "/blog/**",
  }),
  source: z.enum(["custom", "detected", "other"]).openapi({
    description: "custom: from the audit's `groups` option; detected: a first path segment 3 " +
      "or more URLs share; other: the URLs no group took",
  }),
  pages: z.number().int().openapi({ description: "URLs of the inventory in the group" }),
  pages_with_issues: z.number().int().openapi({ description: "Its URLs some check fired on" }),
  issues_critical: z.number().int(),
  issues_warning: z.number().int(),
  issues_info: z.number().int(),
  top_issues: z.array(z.object({
    check: z.string(),
    severity: Severity,
    title: z.string(),
    affected_count: z.number().int().openapi({ description: "The group's URLs it fired on" }),
  })).max(5),
  pages_url: z.string().openapi({ example: "/v1/audits/aud_0abc/pages?group=blog" }),
  issues_url: z.string().openapi({ example: "/v1/audits/aud_0abc/issues?group=blog" }),
}).openapi("AuditPageGroup");

export const GroupList = z.object({
  audit_id: z.string(),
  data: z.array(GroupItem),
}).openapi("AuditPageGroupList");

export const listAuditGroupsOp = defineOperation({
  id: "audits.groups",
  method: "get",
  path: "/v1/audits/{auditId}/groups",
  tags: ["Audits"],
  summary: "A completed audit's page groups (URL templates such as /blog/**, detected or the " +
    "audit's `groups` option, then `other`) with pages and issue counts per group",
  description: `At most ${MAX_GROUPS + 1} groups, in one answer (not paged). Every URL of ` +
    "the inventory is in exactly one group; read one with `?group=` on the pages and issues " +
    "lists. Empty for an audit completed before groups existed.",
  access: "key",
  tokens: "allow",
  params: AuditIdParam,
  status: 200,
  output: GroupList,
  outputDescription: "The groups in their order",
  errors: ["not_found", "invalid_state"],
  async run({ params }, { services, actor }) {
    return await listAuditGroups(services.deps, actor, params.auditId);
  },
});

/** The audit operations, in the order the API reference lists them. */
export const AUDIT_OPERATIONS = [
  startAuditOp,
  getAuditOp,
  getAuditSummaryOp,
  listAuditIssuesOp,
  getAuditIssueOp,
  listAuditPagesOp,
  listAuditGroupsOp,
];
