/**
 * Every check is either re-checkable with a working evaluator or refused with a reason
 * (domain/audit_engine/recheck_rules.ts). A re-checkable check is shown to work on the fixture site the
 * check manifest makes it fire on (check_cases.ts): the crawl reports an affected URL, and a
 * re-check of that URL on the unchanged site says still_failing (a page check with the very
 * evidence the crawl stored); once the site serves the check's quiet counterpart instead, the same
 * URL is no longer still_failing.
 */
import assert from "node:assert/strict";
import { ALL_CHECKS, CHECKS_BY_ID } from "../../domain/audit_engine/checks/index.ts";
import { DEFAULT_CRAWL_CAPS } from "../../domain/audit_engine/crawl/caps.ts";
import { MAX_EVIDENCE, recheckUrl } from "../../domain/audit_engine/recheck_eval.ts";
import { RECHECK_RULES, recheckRule } from "../../domain/audit_engine/recheck_rules.ts";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import type { Evidence } from "../../domain/audit_engine/types.ts";
import { recheckEnv } from "../../domain/rechecks/job.ts";
import { type FakeSite, serveSite, TEST_CA } from "../helpers/sites.ts";
import { CASES, type Routes, type SiteCase } from "./check_cases.ts";

Deno.test("every check has one re-check rule: page checks judged on their page, or refused with why", () => {
  assert.deepEqual(Object.keys(RECHECK_RULES).sort(), ALL_CHECKS.map((c) => c.id).sort());
  for (const c of ALL_CHECKS) {
    const rule = recheckRule(c.id);
    if (rule.mode === "refused") {
      assert.ok(rule.why.length > 20, `${c.id}: a refusal says why`);
    } else if (rule.mode === "page") {
      assert.equal(c.scope, "page", `${c.id}: only page checks are judged on their page`);
    } else {
      assert.equal(c.scope, "site", `${c.id}: ${rule.mode} rules stand in for site checks`);
    }
  }
  // Rendered and agent-readiness checks need their steps; deep_page needs the link graph.
  for (const c of ALL_CHECKS.filter((c) => c.scope === "render" || c.scope === "agent")) {
    assert.equal(recheckRule(c.id).mode, "refused", c.id);
  }
  assert.equal(recheckRule("deep_page").mode, "refused");
  assert.equal(recheckRule("no_such_check").mode, "refused");
});

/**
 * Quiet sites that fix the check somewhere else than at the affected URL, so re-checking that URL
 * must still find it failing.
 */
const FIXED_ELSEWHERE: Record<string, string> = {
  http_4xx: "the quiet site stops pointing at the URL; the URL itself still answers 404",
  not_https: "the quiet site is served over https, at another origin",
};

const fixedOnQuiet: string[] = [];
const notCheckedOnQuiet: string[] = [];

/** Runs `jobs` with at most `n` in flight. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

/**
 * Audits the check's fire site, re-checks its first affected URL, then serves the quiet site at
 * the same origin and re-checks that URL again. Returns a problem, or null.
 */
async function recheckCase(id: string, fire: SiteCase, quiet: SiteCase): Promise<string | null> {
  let routes: Routes | null = null;
  let serving: SiteCase = fire;
  let site: FakeSite | null = null;
  site = serveSite((p) => {
    routes ??= serving.routes(site!.origin);
    return routes[p];
  }, { tls: fire.tls ?? true });
  try {
    const ca = (fire.tls ?? true) && !fire.untrusted ? TEST_CA : undefined;
    const timeoutMs = fire.timeoutMs ?? 3_000;
    const { findings } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 30,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs,
      ca,
    });
    const items = findings.get(id) ?? [];
    if (items.length === 0) return `${id}: the crawl found nothing to re-check`;
    const url = String(items[0].url);
    const stored = items.filter((e) => e.url === url);
    const check = CHECKS_BY_ID.get(id)!;
    const rule = recheckRule(id);
    const judge = async () => {
      const env = await recheckEnv(
        { allowPrivate: true, timeoutMs, maxBytes: 5 * 1024 * 1024, ca },
        DEFAULT_CRAWL_CAPS,
        site!.url("/"),
        Date.now(),
      );
      return await recheckUrl(env, check, rule, { url, depth: -1, stored });
    };
    const before = await judge();
    if (before.result !== "still_failing") {
      return `${id}: ${url} unchanged is ${before.result} (${JSON.stringify(before)})`;
    }
    if (rule.mode === "page") {
      const crawl: Evidence[] = stored.slice(0, MAX_EVIDENCE);
      try {
        assert.deepEqual(before.evidence, crawl);
      } catch {
        return `${id}: fresh evidence ${JSON.stringify(before.evidence)} is not the crawl's ` +
          JSON.stringify(crawl);
      }
    }
    if (FIXED_ELSEWHERE[id]) return null;
    serving = quiet;
    routes = null;
    const after = await judge();
    if (after.result === "still_failing") {
      return `${id}: ${url} still failing on the quiet site (${JSON.stringify(after.evidence)})`;
    }
    if (after.result === "fixed") fixedOnQuiet.push(id);
    else notCheckedOnQuiet.push(`${id}: ${after.reason}`);
    return null;
  } finally {
    await site.close();
  }
}

Deno.test("every re-checkable check: still_failing on its fixture with the crawl's evidence, not once the site is fixed", async () => {
  const jobs: (() => Promise<string | null>)[] = [];
  for (const c of ALL_CHECKS) {
    if (recheckRule(c.id).mode === "refused") continue;
    const cases = CASES[c.id];
    assert.ok(cases, `${c.id}: no fixture in check_cases.ts`);
    jobs.push(() => recheckCase(c.id, cases.fire, cases.quiet));
  }
  assert.ok(jobs.length >= 60, `${jobs.length} re-checkable checks`);
  const problems = (await pool(jobs, 6)).filter((p) => p !== null);
  assert.deepEqual(problems, []);
  // Every quiet site fixes the very URL, except where its fix is to serve no such page.
  assert.deepEqual(notCheckedOnQuiet, ["url_hygiene: error_status"]);
  assert.equal(fixedOnQuiet.length, jobs.length - Object.keys(FIXED_ELSEWHERE).length - 1);
});
