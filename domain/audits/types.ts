/**
 * Persisted shapes of audits: the audit record, its stored issues, lab results and sealed site credentials.
 *
 * A leaf: it imports only other capabilities' `types.ts`, so the key table (domain/platform/store.ts)
 * depends on no module with code.
 *
 * @module
 */
import type { UserAgentPreset } from "../audit_engine/types.ts";

/** The options of one audit, as stored (all optional; absent means the default). */
export interface AuditOptions {
  /** Path globs a URL must match one of (domain/audit_engine/scope.ts). */
  include?: string[];
  /** Path globs that leave a URL out (they win over include). */
  exclude?: string[];
  /** Link depth from the start URL past which nothing is crawled. */
  maxDepth?: number;
  /** List mode: exactly these URLs of the project's site (canonical, distinct, in order). */
  urls?: string[];
  /** Only the start URL and the URLs the sitemaps list. */
  sitemapOnly?: boolean;
  /** Who the crawl says it is (user_agents.ts); absent: `serpwright`. */
  userAgent?: UserAgentPreset;
}
