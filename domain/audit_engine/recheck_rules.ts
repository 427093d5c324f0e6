/**
 * Which checks can be re-checked on their own URLs (`POST /v1/audits/{id}/issues/{check}/recheck`),
 * and how: every check of the catalogue (checks/index.ts) is listed here once, so a new check
 * must be classified before it ships (tests/audit_engine/recheck_rules.test.ts walks them all).
 *
 * - `page`: the check's own `evaluate` on the freshly fetched page, with the crawl's eligibility
 *   rule (page_checks.ts `pageEligibility`): every page check but `deep_page`.
 * - `status`: the URL's own answer, fetched again without following redirects as the crawl does
 *   (http_4xx, http_5xx, fetch_failed).
 * - `links`: the page fetched again; each link target its stored evidence names is fetched again
 *   if the page still links to it (broken_internal_links, internal_redirect_links).
 * - `refused`: a verdict that needs the whole crawl (robots.txt, sitemaps, the start URL,
 *   duplicates across pages, the link graph, click depth), a browser, or the agent-readiness
 *   step: answered 409 with `why`. A new audit re-checks those.
 *
 * @module
 */

/** How one check is re-checked, or why it cannot be. */
export type RecheckRule =
  | { mode: "page" }
  | { mode: "status"; fails: "4xx" | "5xx" | "failed" }
  | { mode: "links"; fails: "broken" | "redirect" }
  | { mode: "refused"; why: string };

const PAGE: RecheckRule = { mode: "page" };

const refused = (why: string): RecheckRule => ({ mode: "refused", why });

const SITE_VERDICT = refused(
  "a verdict on the whole site (robots.txt, sitemaps, the start URL or the https setup), not " +
    "on the affected URLs one by one",
);
const ACROSS_PAGES = refused(
  "it compares pages with each other (duplicates across the site); fixing one page can " +
    "change another's verdict",
);
const LINK_GRAPH = refused(
  "it needs the whole crawl's link graph, redirect map or inventory (inlinks, click depth, " +
    "targets of sitemaps, canonicals and hreflang)",
);
const SITE_STATS = refused("a figure over every page of the crawl (the median and its outliers)");
const AGENT = refused("an agent-readiness verdict on the whole site (llms.txt, robots.txt rules)");
const RENDERED = refused("it needs the browser of a rendered audit (render: true)");

/** Every check id → how it is re-checked. Keep in the catalogue's order. */
export const RECHECK_RULES: Readonly<Record<string, RecheckRule>> = {
  // Indexability.
  robots_txt_unreachable: SITE_VERDICT,
  robots_txt_invalid: SITE_VERDICT,
  robots_txt_missing: SITE_VERDICT,
  start_url_blocked: SITE_VERDICT,
  crawler_blocked: SITE_VERDICT,
  blocked_by_robots: SITE_VERDICT,
  home_page_error: SITE_VERDICT,
  http_4xx: { mode: "status", fails: "4xx" },
  http_5xx: { mode: "status", fails: "5xx" },
  fetch_failed: { mode: "status", fails: "failed" },
  noindex: PAGE,
  noindex_sitewide: SITE_VERDICT,
  head_tags_in_body: PAGE,
  sitemap_missing: SITE_VERDICT,
  sitemap_invalid: SITE_VERDICT,
  sitemap_bad_entries: LINK_GRAPH,
  canonical_invalid: PAGE,
  canonical_suspicious: PAGE,
  canonical_target_bad: LINK_GRAPH,
  canonical_chain: LINK_GRAPH,
  sitemap_missing_indexable: LINK_GRAPH,
  x_robots_tag_non_html: LINK_GRAPH,
  hreflang_invalid: PAGE,
  hreflang_cluster: PAGE,
  hreflang_no_return: LINK_GRAPH,
  hreflang_target_bad: LINK_GRAPH,
  hreflang_x_default_missing: PAGE,
  // Structure.
  title_missing: PAGE,
  title_length: PAGE,
  title_duplicate: ACROSS_PAGES,
  meta_description_missing: PAGE,
  meta_description_length: PAGE,
  meta_description_duplicate: ACROSS_PAGES,
  duplicate_head_tags: PAGE,
  h1_missing: PAGE,
  heading_order: PAGE,
  html_lang_missing: PAGE,
  html_lang_invalid: PAGE,
  thin_content: PAGE,
  likely_client_rendered: PAGE,
  duplicate_content: ACROSS_PAGES,
  url_case_duplicates: ACROSS_PAGES,
  parameter_duplicates: ACROSS_PAGES,
  near_duplicate_content: ACROSS_PAGES,
  broken_internal_links: { mode: "links", fails: "broken" },
  broken_fragment: LINK_GRAPH,
  broken_resources: LINK_GRAPH,
  internal_redirect_links: { mode: "links", fails: "redirect" },
  redirect_chain: LINK_GRAPH,
  redirect_loop: LINK_GRAPH,
  meta_refresh: PAGE,
  uncrawlable_links: PAGE,
  link_text_generic: PAGE,
  image_alt_missing: PAGE,
  structured_data_invalid: PAGE,
  orphan_page: LINK_GRAPH,
  single_inlink_pages: LINK_GRAPH,
  deep_page: LINK_GRAPH,
  url_hygiene: PAGE,
  doctype_missing: PAGE,
  doctype_quirks: PAGE,
  doctype_limited_quirks: PAGE,
  charset_missing: PAGE,
  picture_without_img: PAGE,
  dead_end_page: PAGE,
  // Structured data.
  rich_result_invalid: PAGE,
  schema_type_unknown: PAGE,
  // Security.
  not_https: PAGE,
  http_not_redirected: SITE_VERDICT,
  tls_invalid: SITE_VERDICT,
  mixed_content_active: PAGE,
  mixed_content_passive: PAGE,
  http_subresources: PAGE,
  protocol_relative_resources: PAGE,
  http_links: PAGE,
  insecure_form: PAGE,
  hsts_missing: PAGE,
  csp_missing: PAGE,
  clickjacking_unprotected: PAGE,
  mime_sniffing_unprotected: PAGE,
  hardening_headers: PAGE,
  cookie_flags: PAGE,
  version_disclosure: PAGE,
  vulnerable_js_library: PAGE,
  // Performance.
  slow_ttfb: SITE_STATS,
  very_slow_ttfb: SITE_STATS,
  html_too_large: PAGE,
  html_large: PAGE,
  no_text_compression: PAGE,
  render_blocking_scripts: PAGE,
  unsized_images: PAGE,
  dom_size: PAGE,
  // Mobile.
  viewport_missing: PAGE,
  viewport_not_responsive: PAGE,
  zoom_disabled: PAGE,
  legacy_plugins: PAGE,
  // Agent-readiness.
  structured_data_missing: PAGE,
  llms_txt_missing: AGENT,
  llms_txt_malformed: AGENT,
  ai_crawler_rules: AGENT,
  structured_data_coverage: AGENT,
  ai_bot_blocked_by_server: AGENT,
  ai_bot_access: AGENT,
  content_signals: AGENT,
  content_signal_conflict: AGENT,
  markdown_on_request_missing: AGENT,
  agent_link_headers_missing: AGENT,
  agent_discovery_missing: AGENT,
  api_catalog_invalid: AGENT,
  oauth_metadata_invalid: AGENT,
  mcp_server_card_invalid: AGENT,
  web_bot_auth_directory_invalid: AGENT,
  pay_per_crawl: AGENT,
  // Rendered audits.
  noindex_only_in_raw_html: RENDERED,
  noindex_only_after_js: RENDERED,
  canonical_changed_by_js: RENDERED,
  title_changed_by_js: RENDERED,
  h1_changed_by_js: RENDERED,
  content_requires_js: RENDERED,
  links_only_after_js: RENDERED,
  lcp_slow: RENDERED,
  cls_high: RENDERED,
  tbt_high: RENDERED,
  transfer_size_large: RENDERED,
  console_errors: RENDERED,
  tap_targets_small: RENDERED,
  text_too_small: RENDERED,
  content_wider_than_viewport: RENDERED,
  webmcp_tools: RENDERED,
  webmcp_tool_invalid: RENDERED,
  agent_accessibility: RENDERED,
  requests_refused: RENDERED,
};

/** How `checkId` is re-checked; an id the table does not list is refused (never guessed). */
export function recheckRule(checkId: string): RecheckRule {
  return RECHECK_RULES[checkId] ??
    refused("this check has no re-check rule yet; run a new audit");
}
