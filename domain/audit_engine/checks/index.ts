/**
 * The check catalogue: every check once, in one list. Ids are stable API (they appear in
 * `top_issues`), so rename nothing; add new ids instead.
 *
 * @module
 */
import type { Check, PageCheck, SiteCheck } from "../types.ts";
import { indexabilityChecks } from "./indexability.ts";
import { structureChecks } from "./structure.ts";
import { structuredDataChecks } from "./structured_data.ts";
import { securityChecks } from "./security.ts";
import { performanceChecks } from "./performance.ts";
import { mobileChecks } from "./mobile.ts";
import { AGENT_STEP_CHECKS, structuredDataMissing } from "./agent.ts";
import { AGENTS_CHECKS, payPerCrawl } from "./agents.ts";
import { RENDER_CHECKS } from "../../render/mod.ts";

export const ALL_CHECKS: readonly Check[] = [
  ...indexabilityChecks,
  ...structureChecks,
  ...structuredDataChecks,
  ...securityChecks,
  ...performanceChecks,
  ...mobileChecks,
  // Agent-readiness (checks/agent.ts) and rendered audits (render/checks.ts): run by the steps
  // after the crawl (crawl/post_steps.ts), except the page check.
  structuredDataMissing,
  ...AGENT_STEP_CHECKS,
  ...AGENTS_CHECKS,
  payPerCrawl,
  ...RENDER_CHECKS,
];

export const PAGE_CHECKS: readonly PageCheck[] = ALL_CHECKS.filter((c): c is PageCheck =>
  c.scope === "page"
);
export const SITE_CHECKS: readonly SiteCheck[] = ALL_CHECKS.filter((c): c is SiteCheck =>
  c.scope === "site"
);

export const CHECKS_BY_ID: ReadonlyMap<string, Check> = new Map(ALL_CHECKS.map((c) => [c.id, c]));
