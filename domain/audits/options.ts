/**
 * Audit options (issue 22 §1): what one audit crawls and how, given on
 * `POST /v1/projects/{projectId}/audits`, on a schedule (each of its runs) and in the MCP audits
 * tool. The API validates their shape; `normalizeAuditOptions` applies the rules that need the
 * project (list-mode URLs on its own site) and gives the one stored form, kept on the audit
 * record (and the schedule) and turned into the crawl's input by `crawlScopeOf`.
 *
 * Later parts of issue 22 slot in here as further optional fields: staging access (`auth`,
 * stored encrypted elsewhere, only its non-secret summary here, shown masked by the view) and
 * politeness (`maxRps`).
 *
 * @module
 */
import type { AuditOptions } from "./types.ts";
import { canonicalUrl, type CrawlScope, siteKeyOf } from "../audit_engine/mod.ts";
import { ApiError } from "../platform/mod.ts";

export type { AuditOptions };

/** Most URLs in list mode, and most characters they may have together (the record's size). */
export const MAX_LIST_URLS = 500;
export const MAX_LIST_CHARS = 32_000;
export const MAX_LIST_URL_LENGTH = 1_500;

/** The scope options other than `urls` (list mode takes none of them). */
const SCOPE_FIELDS = ["include", "exclude", "max_depth", "sitemap_only"] as const;

/**
 * The stored form of `options` for a project at `projectUrl`, or undefined when no option is
 * set. Throws 400 `invalid_request` naming the field: a `urls` entry that is not an http(s) URL
 * of the project's site (same host, with or without `www.`, either scheme), or `urls` together
 * with a scope option (a list is its own scope). Empty lists count as absent; `urls` keeps the
 * first of each canonical URL.
 */
export function normalizeAuditOptions(
  options: AuditOptions | undefined,
  projectUrl: string,
): AuditOptions | undefined {
  if (!options) return undefined;
  const out: AuditOptions = {};
  if (options.include?.length) out.include = [...options.include];
  if (options.exclude?.length) out.exclude = [...options.exclude];
  if (options.maxDepth !== undefined) out.maxDepth = options.maxDepth;
  if (options.sitemapOnly === true) out.sitemapOnly = true;
  if (options.userAgent !== undefined && options.userAgent !== "serpwright") {
    out.userAgent = options.userAgent;
  }
  if (options.groups?.length) {
    out.groups = options.groups.map((g) => ({ name: g.name, pattern: g.pattern }));
  }
  if (options.urls?.length) {
    const given = SCOPE_FIELDS.filter((f) =>
      f === "include"
        ? out.include
        : f === "exclude"
        ? out.exclude
        : f === "max_depth"
        ? out.maxDepth !== undefined
        : out.sitemapOnly
    );
    if (given.length > 0) {
      throw new ApiError(
        "invalid_request",
        `urls: list mode audits exactly the listed URLs; leave out ${given.join(", ")}`,
      );
    }
    out.urls = listUrls(options.urls, projectUrl);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The listed URLs, canonical and distinct, each on the project's site. */
function listUrls(urls: string[], projectUrl: string): string[] {
  const site = siteKeyOf(new URL(projectUrl));
  const seen = new Set<string>();
  urls.forEach((raw, i) => {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new ApiError("invalid_request", `urls.${i}: not an absolute URL`);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") {
      throw new ApiError("invalid_request", `urls.${i}: only http and https URLs`);
    }
    if (u.username || u.password) {
      throw new ApiError("invalid_request", `urls.${i}: URLs with credentials are not allowed`);
    }
    if (siteKeyOf(u) !== site) {
      throw new ApiError(
        "invalid_request",
        `urls.${i}: not on the project's site (${site}); list mode audits the project's own URLs`,
      );
    }
    const url = canonicalUrl(u);
    if (url.length > MAX_LIST_URL_LENGTH) {
      throw new ApiError("invalid_request", `urls.${i}: longer than ${MAX_LIST_URL_LENGTH}`);
    }
    seen.add(url);
  });
  return [...seen];
}

/** The crawl's scope for stored options (undefined: the whole site). */
export function crawlScopeOf(options: AuditOptions | undefined): CrawlScope | undefined {
  if (!options) return undefined;
  const scope: CrawlScope = {
    ...(options.include ? { include: options.include } : {}),
    ...(options.exclude ? { exclude: options.exclude } : {}),
    ...(options.maxDepth !== undefined ? { maxDepth: options.maxDepth } : {}),
    ...(options.urls ? { urls: options.urls } : {}),
    ...(options.sitemapOnly ? { sitemapOnly: true } : {}),
  };
  return Object.keys(scope).length > 0 ? scope : undefined;
}

/** Whether the options narrow the crawl to part of the site (any scope option). */
export function isScoped(options: AuditOptions | undefined): boolean {
  return crawlScopeOf(options) !== undefined;
}

/**
 * Whether two stored option sets ask for the same audit (a running audit is adopted only by a
 * start with the same options; a regression is only judged between audits of the same scope).
 */
export function sameAuditOptions(
  a: AuditOptions | undefined,
  b: AuditOptions | undefined,
): boolean {
  return canonical(a) === canonical(b);
}

function canonical(o: AuditOptions | undefined): string {
  if (!o) return "{}";
  const entries = Object.entries(o).filter(([, v]) => v !== undefined).sort(([x], [y]) =>
    x < y ? -1 : x > y ? 1 : 0
  );
  return JSON.stringify(Object.fromEntries(entries));
}
