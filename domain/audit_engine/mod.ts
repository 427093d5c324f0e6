/**
 * The crawl and checks engine: a resumable crawl in small steps (`crawl/`), the checks that read
 * its pages (`checks/`), scope and site-auth rules, robots.txt, rechecks of one URL, and the check
 * docs. The public face of the capability; the persisted shapes are in `types.ts`.
 *
 * @example
 * ```ts
 * import { canonicalUrl, checkDoc, CHECKS_BY_ID } from "./mod.ts";
 * const url = canonicalUrl(new URL("https://example.com/a/?b=1#c"));
 * const docs = [...CHECKS_BY_ID.values()].map(checkDoc);
 * ```
 *
 * @module
 */
export { CHECK_DOCS, checkDoc, checkDocUrl } from "./check_docs.ts";
export { ALL_CHECKS, CHECKS_BY_ID } from "./checks/index.ts";
export {
  FIX_FIRST_SIZE,
  fixFirst,
  type FixFirstInput,
  type FixFirstItem,
  IMPACT_NAMES,
  IMPACT_WEIGHT,
} from "./fix_first.ts";
export { MAX_BANNER_FETCHES } from "./crawl/banners.ts";
export { ByteBudget } from "./crawl/byte_budget.ts";
export {
  CAP_UNITS,
  type CapHit,
  type CapName,
  type CrawlCaps,
  DEFAULT_CRAWL_CAPS,
} from "./crawl/caps.ts";
export { readCrawlState, runCrawlStep, runHelperStep } from "./crawl/engine.ts";
export { MAX_STEP_GROWTH } from "./crawl/step_size.ts";
export {
  callHelper,
  handBackSlicesOf,
  holdHelperSlot,
  type SliceOutcome,
} from "./crawl/partition.ts";
export { DEFAULT_ERROR_STOP, type ErrorStopSettings } from "./crawl/health.ts";
export { fetchBanner, type FetchSettings } from "./crawl/fetcher.ts";
export {
  effectiveMaxRps,
  MAX_CRAWL_DELAY_S,
  newPace,
  Politeness,
  type PolitenessReport,
} from "./crawl/politeness.ts";
export { type RenderPlan, resourcesPending } from "./crawl/post_steps.ts";
export { renderTotals } from "./crawl/render_steps.ts";
export { fetchRobots } from "./crawl/robots_source.ts";
export type { CrawlInput, CrawlOutcome, CrawlState, StepLimits } from "./crawl/state.ts";
export {
  clipUtf8,
  FINDINGS_CAP,
  getMany,
  getPages,
  listInPages,
  type PageRecord,
  WriteBatch,
} from "./crawl/store.ts";
export { rangeSplits } from "./crawl/url_sample.ts";
export { evidenceColumns, OTHER_COLUMN } from "./evidence_columns.ts";
export { ADVISORY_TABLE, namesLibrary, scriptLibrary } from "./js_libraries.ts";
export { labPagesOf, type LabRecord } from "./lab.ts";
export { siteKeyOf } from "./page_facts.ts";
export {
  backfillPruneMarkers,
  beginPruneBackfill,
  markForPruning,
  pruneFinishedAudits,
} from "./prune.ts";
export {
  MAX_EVIDENCE,
  type RecheckEnv,
  type RecheckOutcome,
  type RecheckPace,
  type RecheckPart,
  recheckUrl,
  type TargetVerdict,
} from "./recheck_eval.ts";
export { recheckRule } from "./recheck_rules.ts";
export { DEFAULT_ROBOTS_CAPS, makeRobots, type Robots } from "./robots.ts";
export { type AuditReport, readSitePages, reportOf } from "./run_audit.ts";
export {
  compileGlob,
  type CrawlScope,
  type Glob,
  globMatches,
  MAX_PATTERN_LENGTH,
  MAX_PATTERN_WILDCARDS,
  MAX_PATTERNS,
  patternProblem,
  SCOPE_RULES,
  type ScopeRule,
} from "./scope.ts";
export {
  type MaskedSiteAuth,
  maskSiteAuth,
  MAX_AUTH_HEADERS,
  MAX_HEADER_NAME,
  MAX_SECRET_LENGTH,
  MAX_USER_LENGTH,
  type SiteAuth,
  siteAuthProblem,
} from "./site_auth.ts";
export { canonicalUrl } from "./urls.ts";
export { crawlerIdentity, USER_AGENT_PRESETS } from "./user_agents.ts";
