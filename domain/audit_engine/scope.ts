/**
 * The scope of an audit's crawl (the audit options `include`, `exclude`, `max_depth`, `urls`,
 * `sitemap_only`): which URLs the crawl may fetch as pages. A URL outside the scope is neither
 * fetched nor stored; a link to it is not broken (its target is unknown, as a link past the page
 * budget), and the crawl counts, per rule, what the scope left out.
 *
 * Path patterns are globs matched against the whole URL path (percent-escapes decoded and
 * non-ASCII characters as UTF-8 octets on both sides, as robots.txt patterns are):
 * - `*` matches any run of characters within one path segment (never `/`);
 * - `**` matches any run of characters, `/` included; a pattern ending in `/**` also matches the
 *   path without that ending (`/blog/**` matches `/blog`, `/blog/` and `/blog/a/b`);
 * - every other character is literal (`?` too); a pattern with a `?` is matched against the path
 *   and the query (`/search?*`), one without against the path alone.
 *
 * Matching (glob_match.ts) places the pattern's pieces left to right with `indexOf`, segment by
 * segment: no regular expression and no backtracking over the path, with at most
 * MAX_PATTERN_WILDCARDS wildcards per pattern and paths judged by their first MAX_PATH_OCTETS.
 *
 * @module
 */
import type { ScopeRule } from "./types.ts";
import { type CompiledGlob, compileTokens, type GlobToken, matchGlob } from "./glob_match.ts";
import { toOctets } from "./robots_pattern.ts";

/** The scope options as the crawl receives them (already validated and normalised). */
export interface CrawlScope {
  /** Path globs; a URL must match one of them (when any is given). */
  include?: string[];
  /** Path globs; a URL matching one is left out (exclude wins over include). */
  exclude?: string[];
  /** Link depth from the start URL past which nothing is crawled (0: the start URL only). */
  maxDepth?: number;
  /** List mode: exactly these URLs (canonical, same site), in this order; no link followed. */
  urls?: string[];
  /** Only URLs listed in the sitemaps (and the start URL) are crawled. */
  sitemapOnly?: boolean;
}

/** Which rule left a URL out, in the order they are asked. */
export const SCOPE_RULES = [
  "urls",
  "sitemap_only",
  "exclude",
  "include",
  "max_depth",
] as const satisfies readonly ScopeRule[];
export type { ScopeRule };

/** Bounds of the options (the API validates them; the engine relies on them). */
export const MAX_PATTERNS = 20;
export const MAX_PATTERN_LENGTH = 200;
export const MAX_PATTERN_WILDCARDS = 10;
/** Octets of path (and query) a pattern is matched against; a longer one is judged by these. */
export const MAX_PATH_OCTETS = 2048;

/** One compiled glob. */
export interface Glob {
  compiled: CompiledGlob;
  /** Matched against path + query (the pattern has a `?`), else the path alone. */
  withQuery: boolean;
  /** The same pattern without a trailing `/**` (also a match), or null. */
  bare: CompiledGlob | null;
}

/**
 * Why a pattern is refused, or null when it is usable: it must start with `/`, hold no
 * whitespace, control character or `#`, be at most MAX_PATTERN_LENGTH characters, and have at
 * most MAX_PATTERN_WILDCARDS wildcards.
 */
export function patternProblem(pattern: string): string | null {
  if (pattern.length === 0) return "must not be empty";
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return `must be at most ${MAX_PATTERN_LENGTH} characters`;
  }
  if (!pattern.startsWith("/")) return "must start with / (a URL path, e.g. /blog/**)";
  // deno-lint-ignore no-control-regex
  if (/[\s\x00-\x1f\x7f#]/.test(pattern)) {
    return "must not contain whitespace, control characters or #";
  }
  const wildcards = pattern.match(/\*+/g)?.length ?? 0;
  if (wildcards > MAX_PATTERN_WILDCARDS) {
    return `must have at most ${MAX_PATTERN_WILDCARDS} wildcards (* or **)`;
  }
  return null;
}

/** A pattern as tokens (exported for the tests' reference matcher). */
export function tokenize(pattern: string): GlobToken[] {
  const tokens: GlobToken[] = [];
  for (const part of pattern.split(/(\*+)/)) {
    if (part === "") continue;
    if (part[0] === "*") tokens.push(part.length === 1 ? { star: 1 } : { globstar: 1 });
    else tokens.push({ lit: toOctets(part) });
  }
  return tokens;
}

/** Compiles a pattern `patternProblem` accepts. */
export function compileGlob(pattern: string): Glob {
  const withQuery = pattern.includes("?");
  const bare = pattern.length > 3 && pattern.endsWith("/**")
    ? compileTokens(tokenize(pattern.slice(0, -3)))
    : null;
  return { compiled: compileTokens(tokenize(pattern)), withQuery, bare };
}

/** A URL's path (and path + query) as octets cut at `/`, made once for all patterns. */
class Subject {
  private path: string[] | null = null;
  private withQuery: string[] | null = null;
  constructor(private readonly url: URL) {}

  segments(query: boolean): string[] {
    if (query) return this.withQuery ??= cut(this.url.pathname + this.url.search);
    return this.path ??= cut(this.url.pathname);
  }
}

function cut(raw: string): string[] {
  return toOctets(raw.slice(0, 3 * MAX_PATH_OCTETS)).slice(0, MAX_PATH_OCTETS).split("/");
}

function matches(g: Glob, subject: Subject): boolean {
  const segs = subject.segments(g.withQuery);
  return matchGlob(g.compiled, segs) || (g.bare !== null && matchGlob(g.bare, segs));
}

/** Whether a compiled glob matches a URL. */
export function globMatches(g: Glob, url: URL): boolean {
  return matches(g, new Subject(url));
}

/** The scope of one crawl, compiled once per step. */
export class Scope {
  private readonly include: Glob[];
  private readonly exclude: Glob[];
  private readonly maxDepth: number | null;
  private readonly sitemapOnly: boolean;
  /** List mode: the listed URLs. */
  readonly list: ReadonlySet<string> | null;

  private constructor(s: CrawlScope) {
    this.include = (s.include ?? []).map(compileGlob);
    this.exclude = (s.exclude ?? []).map(compileGlob);
    this.maxDepth = s.maxDepth ?? null;
    this.sitemapOnly = s.sitemapOnly === true;
    this.list = s.urls && s.urls.length > 0 ? new Set(s.urls) : null;
  }

  /** The compiled scope, or null when nothing narrows the crawl. */
  static of(s: CrawlScope | undefined): Scope | null {
    if (!s) return null;
    const narrows = (s.include?.length ?? 0) > 0 || (s.exclude?.length ?? 0) > 0 ||
      s.maxDepth !== undefined || (s.urls?.length ?? 0) > 0 || s.sitemapOnly === true;
    return narrows ? new Scope(s) : null;
  }

  /** The path rule that leaves `url` out (exclude, then include), or null. */
  pathRule(url: string): "exclude" | "include" | null {
    if (this.include.length === 0 && this.exclude.length === 0) return null;
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return "exclude";
    }
    const subject = new Subject(u);
    if (this.exclude.some((g) => matches(g, subject))) return "exclude";
    if (this.include.length > 0 && !this.include.some((g) => matches(g, subject))) {
      return "include";
    }
    return null;
  }

  /**
   * The rule that leaves out a URL met by the crawl (a link, redirect, frame, canonical or
   * hreflang target at link `depth`, or a sitemap URL seeded at depth -1; `inSitemap`: listed in
   * the sitemaps), or null when it is in scope. The start URL and the listed URLs of list mode
   * are queued by the first step and never asked about.
   */
  leftOutBy(url: string, depth: number, inSitemap: boolean): ScopeRule | null {
    if (this.list !== null) return this.list.has(url) ? null : "urls";
    if (this.sitemapOnly && !inSitemap) return "sitemap_only";
    const path = this.pathRule(url);
    if (path !== null) return path;
    if (this.maxDepth !== null && (depth < 0 || depth > this.maxDepth)) return "max_depth";
    return null;
  }
}
