/**
 * Re-checking one check on one URL of a completed audit: the URL is fetched again through the
 * crawl's fetcher (the address guard, its timeouts and body caps, the byte budget, robots.txt and
 * Crawl-delay), parsed by the crawl's fact extractor, and judged by the check's own code under
 * the crawl's eligibility rule (page_checks.ts `pageEligibility`), so a re-check and an audit
 * cannot disagree about the same response. How each check is re-checked is recheck_rules.ts.
 *
 * The outcome of one URL: `fixed` (it answers, and the check does not fire on it),
 * `still_failing` (it fires, with fresh evidence in the shape of the audit's findings), or
 * `not_checked` (no verdict: blocked by robots.txt, no answer, an error status or a redirect
 * where a page was expected, not HTML, noindex for a check of indexable pages, or the byte
 * budget spent), with the reason.
 *
 * @module
 */
import type { ScriptLibrary } from "./types.ts";
import type {
  Check,
  Evidence,
  NotCheckedReason,
  PageCheck,
  PageContext,
  RecheckResult,
} from "./types.ts";
import { pageEligibility, verdictItems } from "./page_checks.ts";
import { MAX_RESOURCES_PER_PAGE } from "./page_facts.ts";
import { extractPageFacts } from "./facts/extract.ts";
import { isNoindex } from "./checks/helpers.ts";
import type { Robots } from "./robots.ts";
import type { RecheckRule } from "./recheck_rules.ts";
import { canonicalize } from "./urls.ts";
import { BudgetSpentError } from "./crawl/byte_budget.ts";
import {
  failureKind,
  fetchPage,
  fetchResourceStatus,
  type FetchSettings,
  isHtmlType,
} from "./crawl/fetcher.ts";
import { clipEvidence } from "./crawl/store.ts";
import type { SafeResponse } from "../net/mod.ts";

export type { NotCheckedReason, RecheckResult };

/** What a re-check found on one URL. */
export interface RecheckOutcome {
  result: RecheckResult;
  /** The URL's HTTP status now; null when it got no answer or was not fetched. */
  status: number | null;
  /** The failure kind when it got no answer (timeout, network, tls, dns, ...). */
  failure: string | null;
  /** Why there is no verdict (`not_checked` only). */
  reason: NotCheckedReason | null;
  /** Fresh evidence items (`still_failing` only), at most MAX_EVIDENCE, clipped as stored. */
  evidence: Evidence[];
  /** Evidence items found, also past MAX_EVIDENCE. */
  evidenceCount: number;
  /**
   * `links` mode: one verdict per link target the stored evidence names (the items of the
   * check on this page), so fixing one of two links reads as one fixed and one still failing.
   * Absent in the other modes, where the URL itself is the one item.
   */
  parts?: RecheckPart[];
}

/** The verdict on one item of a page: a link target of `broken_internal_links`, say. */
export interface RecheckPart {
  target: string;
  result: RecheckResult;
  /** The target's HTTP status now (after redirects for broken links); null when not fetched. */
  status: number | null;
  failure: string | null;
  /** The page no longer links to the target (fixed without fetching it). */
  linkRemoved: boolean;
}

/** Evidence items kept per re-checked URL (one KV value holds them with the URL). */
export const MAX_EVIDENCE = 10;
/** Link targets of one page a `links` re-check fetches again, at most. */
export const MAX_TARGETS_PER_PAGE = 20;

/** Checks that read the heads of scripts for libraries (`PageContext.scriptLibraries`). */
const READS_SCRIPT_HEADS = new Set(["vulnerable_js_library"]);

/** The pace of a re-check's requests to its one site; `next` is carried to the next step. */
export interface RecheckPace {
  wait(): Promise<void>;
  readonly next: number;
}

/** What re-checking needs from its step: the fetcher's settings and the site's rules. */
export interface RecheckEnv {
  /** The address guard, timeouts, body cap and the re-check's byte budget. */
  settings: FetchSettings;
  /** robots.txt of an origin (our token's rules). */
  robots(origin: string): Promise<Robots>;
  /** Spacing of request starts (Crawl-delay and the rate cap, as in the crawl). */
  politeness: RecheckPace;
  /** The crawled site (page_facts.ts `siteKeyOf` of the project URL): which links are internal. */
  siteKey: string;
  /** Distinct internal links kept per page (the crawl's cap). */
  linksPerPage: number;
  /** Same-site resources are collected as in the crawl (false: broken_resources is off). */
  resources: boolean;
  /** Epoch ms the re-check runs at (for `unavailable_after`). */
  now: number;
  /** Libraries scripts' content shows (script URL → library), read once per script and step. */
  scriptLibraries(scripts: readonly string[]): Promise<Map<string, ScriptLibrary> | undefined>;
  /** Link targets already probed in this step (several pages link to one target). */
  targets: Map<string, Promise<TargetVerdict>>;
}

/**
 * A link target fetched again: what is still wrong with it (`bad`, null when nothing) and what
 * it answered; "budget" when it was not fetched.
 */
export type TargetVerdict =
  | { bad: Evidence | null; status: number | null; failure: string | null }
  | "budget";

/** One URL to re-check: the page or URL of the stored evidence, and those stored items. */
export interface RecheckItemInput {
  url: string;
  /** Click depth the audit found (-1 when unknown). */
  depth: number;
  /** The audit's evidence items for this URL (the `links` mode reads their targets). */
  stored: readonly Evidence[];
}

const outcome = (
  result: RecheckResult,
  status: number | null,
  extra: Partial<RecheckOutcome> = {},
): RecheckOutcome => ({
  result,
  status,
  failure: null,
  reason: null,
  evidence: [],
  evidenceCount: 0,
  ...extra,
});

const notChecked = (reason: NotCheckedReason, status: number | null, failure: string | null) =>
  outcome("not_checked", status, { reason, failure });

function failing(status: number | null, items: Evidence[]): RecheckOutcome {
  return outcome("still_failing", status, {
    evidence: items.slice(0, MAX_EVIDENCE).map(clipEvidence),
    evidenceCount: items.length,
  });
}

/** Re-checks `check` on one URL by `rule` (which must not be `refused`). */
export async function recheckUrl(
  env: RecheckEnv,
  check: Check,
  rule: RecheckRule,
  item: RecheckItemInput,
): Promise<RecheckOutcome> {
  if (rule.mode === "refused") throw new Error(`${check.id} cannot be re-checked`);
  const url = new URL(item.url);
  if (!(await env.robots(url.origin)).isAllowed(item.url)) {
    return notChecked("blocked_by_robots", null, null);
  }
  const got = await fetchOnce(env, item.url);
  if ("skipped" in got) return notChecked("budget", null, null);
  if (rule.mode === "status") return judgeStatus(rule.fails, item.url, got);
  if ("failure" in got) return notChecked("fetch_failed", null, got.failure);
  const res = got.res;
  if (res.status >= 300 && res.status < 400) return notChecked("redirect", res.status, null);
  if (res.status < 200 || res.status >= 300) return notChecked("error_status", res.status, null);
  if (!isHtmlType(res.headers.get("content-type"))) {
    return notChecked("not_html", res.status, null);
  }
  if (rule.mode === "page") return await judgePage(env, check as PageCheck, item, url, res);
  return await judgeLinks(env, rule.fails, item, url, res);
}

type Fetched = { res: SafeResponse } | { failure: string } | { skipped: true };

/** One fetch in its politeness slot, as the crawl fetches a frontier entry. */
async function fetchOnce(env: RecheckEnv, url: string): Promise<Fetched> {
  await env.politeness.wait();
  try {
    return { res: await fetchPage(env.settings, url) };
  } catch (err) {
    if (err instanceof BudgetSpentError) return { skipped: true };
    return { failure: failureKind(err) };
  }
}

/** http_4xx, http_5xx, fetch_failed: the URL's own answer, redirects not followed. */
function judgeStatus(
  fails: "4xx" | "5xx" | "failed",
  url: string,
  got: { res: SafeResponse } | { failure: string },
): RecheckOutcome {
  if ("failure" in got) {
    // TLS failures are tls_invalid's, as in the crawl (finalize/failing.ts).
    if (fails === "failed" && got.failure !== "tls") {
      return failing(null, [{ url, failure: got.failure }]);
    }
    return notChecked("fetch_failed", null, got.failure);
  }
  const status = got.res.status;
  const bad = fails === "4xx" ? status >= 400 && status < 500 : fails === "5xx" && status >= 500;
  return bad ? failing(status, [{ url, status }]) : outcome("fixed", status);
}

/** The page context the crawl's fetch pool builds for an HTML 2xx page (crawl/fetch_pool.ts). */
async function pageContext(
  env: RecheckEnv,
  item: RecheckItemInput,
  url: URL,
  res: SafeResponse,
  headsWanted: boolean,
): Promise<PageContext> {
  const facts = extractPageFacts(
    res.body,
    url,
    env.siteKey,
    env.linksPerPage,
    env.resources ? MAX_RESOURCES_PER_PAGE : 0,
  );
  return {
    url,
    status: res.status,
    headers: res.headers,
    facts,
    depth: item.depth,
    isHome: item.depth === 0,
    indexable: !isNoindex(facts, res.headers, env.now),
    now: env.now,
    scriptLibraries: headsWanted && facts.libraryScripts.length > 0
      ? await env.scriptLibraries(facts.libraryScripts)
      : undefined,
  };
}

/** A page check: its own verdict on the fresh page, under the crawl's eligibility rule. */
async function judgePage(
  env: RecheckEnv,
  check: PageCheck,
  item: RecheckItemInput,
  url: URL,
  res: SafeResponse,
): Promise<RecheckOutcome> {
  const ctx = await pageContext(env, item, url, res, READS_SCRIPT_HEADS.has(check.id));
  const eligible = pageEligibility(check, ctx);
  // A check of indexable pages says nothing about a noindex page: no verdict, not "fixed".
  if (eligible === "noindex") return notChecked("noindex", res.status, null);
  // The check's own narrowing leaves the page out (no JSON-LD block left, say): it cannot fire.
  if (eligible === "narrowed") return outcome("fixed", res.status);
  const items = verdictItems(check.evaluate(ctx), url.href);
  return items ? failing(res.status, items) : outcome("fixed", res.status);
}

/**
 * broken_internal_links, internal_redirect_links: the targets the stored evidence names. A target
 * the page no longer links to is fixed; one it still links to is fetched again (robots.txt
 * honoured: a blocked target is not reported, as in the crawl).
 */
async function judgeLinks(
  env: RecheckEnv,
  fails: "broken" | "redirect",
  item: RecheckItemInput,
  url: URL,
  res: SafeResponse,
): Promise<RecheckOutcome> {
  const ctx = await pageContext(env, item, url, res, false);
  const anchors = new Map<string, string>();
  ctx.facts.links.forEach((l, i) => anchors.set(l, ctx.facts.linkAnchors[i] ?? ""));
  ctx.facts.nofollowLinks.forEach((l, i) => {
    if (!anchors.has(l)) anchors.set(l, ctx.facts.nofollowAnchors[i] ?? "");
  });
  const targets = [
    ...new Set(
      item.stored.map((e) => e.target).filter((t): t is string => typeof t === "string"),
    ),
  ].slice(0, MAX_TARGETS_PER_PAGE);
  const items: Evidence[] = [];
  const parts: RecheckPart[] = [];
  let unfetched = false;
  for (const target of targets) {
    if (!anchors.has(target)) {
      parts.push({ target, result: "fixed", status: null, failure: null, linkRemoved: true });
      continue;
    }
    let probe = env.targets.get(target);
    if (!probe) {
      probe = probeTarget(env, fails, target);
      env.targets.set(target, probe);
    }
    const got = await probe;
    if (got === "budget") {
      unfetched = true;
      parts.push({
        target,
        result: "not_checked",
        status: null,
        failure: null,
        linkRemoved: false,
      });
      continue;
    }
    const { bad, status, failure } = got;
    if (bad) items.push({ url: url.href, target, anchor: anchors.get(target) ?? "", ...bad });
    parts.push({
      target,
      result: bad ? "still_failing" : "fixed",
      status,
      failure,
      linkRemoved: false,
    });
  }
  if (items.length > 0) return { ...failing(res.status, items), parts };
  // A target the budget left unfetched leaves the page without a verdict.
  return unfetched
    ? { ...notChecked("budget", res.status, null), parts }
    : { ...outcome("fixed", res.status), parts };
}

/** What is still wrong with a link target (`bad`, null when nothing is) and its answer. */
async function probeTarget(
  env: RecheckEnv,
  fails: "broken" | "redirect",
  target: string,
): Promise<TargetVerdict> {
  const none = { bad: null, status: null, failure: null };
  try {
    if (!(await env.robots(new URL(target).origin)).isAllowed(target)) return none;
  } catch {
    return none;
  }
  await env.politeness.wait();
  if (fails === "broken") {
    // Broken after redirects (4xx/5xx or no answer), headers only, as broken_resources asks.
    try {
      const a = await fetchResourceStatus(env.settings, target);
      const bad = a.status >= 400 ? { status: a.status, failure: null } : null;
      return { bad, status: a.status, failure: null };
    } catch (err) {
      if (err instanceof BudgetSpentError) return "budget";
      const failure = failureKind(err);
      return { bad: { status: null, failure }, status: null, failure };
    }
  }
  try {
    const r = await fetchPage(env.settings, target);
    const loc = r.headers.get("location");
    if (r.status < 300 || r.status >= 400 || !loc) return { ...none, status: r.status };
    return {
      bad: { redirects_to: canonicalize(loc, target) ?? loc },
      status: r.status,
      failure: null,
    };
  } catch (err) {
    if (err instanceof BudgetSpentError) return "budget";
    // No answer: broken_internal_links' to report, not this check's.
    return { ...none, failure: failureKind(err) };
  }
}
