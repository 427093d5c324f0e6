/**
 * A crawl step's size on a slow KV (crawl/step_size.ts, issue 34 item 4): with
 * `CRAWL_STEP_PAGES` unset, a crawl whose KV is 20 ms away takes its pages in fewer, larger
 * steps (a young crawl's small frontier in rounds within a step), records every page once and
 * finds the same; with `CRAWL_STEP_PAGES` set, the operator's size holds on
 * the same KV. Either way a round or step takes the entries its last allocation queued without
 * reading them back. The rule itself is checked on its own: the smallest sample counts, the cap holds.
 */
import assert from "node:assert/strict";
import { startTestApp } from "../helpers/app.ts";
import { completedLiveAudit } from "../helpers/credits.ts";
import { openTestKv } from "../helpers/kv.ts";
import { withLatency } from "../helpers/latency_kv.ts";
import { html, page, type Route, serveSite } from "../helpers/sites.ts";
import {
  GROWN_STEP_BYTES,
  grownStepFull,
  MAX_STEP_GROWTH,
  noteRtt,
  STEP_RTT_UNIT_MS,
  stepPagesFor,
} from "../../domain/audit_engine/crawl/step_size.ts";
import type { CrawlState } from "../../domain/audit_engine/crawl/state.ts";

Deno.test("a step grows with the smallest round trip sampled, up to its cap", () => {
  const limits = { pages: 100, ms: 20_000, maxPages: 100 * MAX_STEP_GROWTH };
  assert.equal(stepPagesFor(limits, [0.2, 0.4, 0.1]), 100);
  // One slow sample (a busy event loop) among fast ones does not grow the step.
  assert.equal(stepPagesFor(limits, [45, 0.3, 0.2]), 100);
  assert.equal(stepPagesFor(limits, [12, 10, 11]), Math.ceil(100 * 10 / STEP_RTT_UNIT_MS));
  assert.equal(stepPagesFor(limits, [30, 31, 80]), Math.ceil(100 * 30 / STEP_RTT_UNIT_MS));
  assert.equal(stepPagesFor(limits, [60, 61, 80]), 100 * MAX_STEP_GROWTH);
  // A fixed step (the operator set CRAWL_STEP_PAGES, or a test): never grown.
  assert.equal(stepPagesFor({ pages: 7, ms: 20_000 }, [30, 30, 30]), 7);
  assert.equal(stepPagesFor(limits, undefined), 100);
  assert.deepEqual(noteRtt([1, 2, 3], 4.06), [2, 3, 4.1]);
});

Deno.test("a grown step of heavy pages takes no entry past the usual size", () => {
  const limits = { pages: 100, ms: 20_000, maxPages: 600 };
  assert.equal(grownStepFull(limits, 600, 99, GROWN_STEP_BYTES * 2), false);
  assert.equal(grownStepFull(limits, 600, 100, GROWN_STEP_BYTES - 1), false);
  assert.equal(grownStepFull(limits, 600, 100, GROWN_STEP_BYTES), true);
  // A step of the usual size is cut by the time limit and the budgets only.
  assert.equal(grownStepFull(limits, 100, 100, GROWN_STEP_BYTES * 2), false);
});

const PAGES = 240;

/**
 * A tree: the home page links /p1../p3, and /pN links /p(3N+1)../p(3N+3), so the frontier holds
 * 3, 9, 27, 81 pages as the crawl goes deeper (a young crawl's frontier is small).
 */
function routes(path: string): Route | undefined {
  const children = (n: number) => [1, 2, 3].map((k) => 3 * n + k).filter((c) => c <= PAGES);
  if (path === "/") {
    return html(
      page({ title: "Home of the step size site", links: children(0).map((c) => `/p${c}`) }),
    );
  }
  const m = /^\/p([0-9]+)$/.exec(path);
  const n = Number(m?.[1] ?? 0);
  if (!m || n < 1 || n > PAGES) return undefined;
  const links = children(n).map((c) => `/p${c}`);
  return html(page({ title: `Step size page number ${n}`, key: `p${n}`, links }));
}

/** `kv`, counting its reads of frontier ranges (not the pruning's prefix) in `lists.frontier`. */
function countingFrontierLists(kv: Deno.Kv, lists: { frontier: number }): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "list") return typeof value === "function" ? value.bind(target) : value;
      return (selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
        if ("start" in selector && selector.start[0] === "audit_frontier") lists.frontier++;
        return target.list(selector, options);
      };
    },
  });
}

async function crawlSteps(origin: string, env: Record<string, string>) {
  const raw = await openTestKv();
  const lists = { frontier: 0 };
  const app = await startTestApp({
    kv: withLatency(countingFrontierLists(raw, lists), 20),
    env,
  });
  try {
    const { key, id, done } = await completedLiveAudit(app, origin, 120_000);
    assert.equal(done.body.status, "completed", done.text);
    const state = (await raw.get<CrawlState>(["audit_crawl", id])).value;
    assert.ok(state, "the finished crawl's state");
    const issues = await app.req("GET", `/v1/audits/${id}/issues?limit=100`, { key });
    assert.equal(issues.status, 200, issues.text);
    return {
      steps: state.steps,
      fetches: state.fetches,
      rtt: state.kvRttMs ?? [],
      frontierLists: lists.frontier,
      // What each check found, without the audit's own id in its links.
      issues: (issues.body.data as Record<string, unknown>[]).map(({ items_url: _, ...i }) => i),
    };
  } finally {
    await app.close();
  }
}

Deno.test("on a KV 20 ms away the crawl takes larger steps, in rounds, unless CRAWL_STEP_PAGES is set", async () => {
  const site = serveSite(routes);
  try {
    const env = { CRAWL_MAX_PAGES: "1000" };
    const fixed = await crawlSteps(site.origin, { ...env, CRAWL_STEP_PAGES: "100" });
    const before = site.hits.length;
    const grown = await crawlSteps(site.origin, env);
    // Every page fetched in both; a 20 ms round trip measured (never less than the delay).
    assert.equal(fixed.fetches, PAGES + 1);
    assert.equal(grown.fetches, PAGES + 1);
    assert.ok(grown.rtt.length > 0 && Math.min(...grown.rtt) >= 19, `${grown.rtt}`);
    // Fixed: a step per level (1, 3, 9, 27, 81 pages) and two for the last 120. Grown (up to
    // 500 a step): the first four levels in one step's rounds, the rest in the next.
    assert.ok(fixed.steps - grown.steps >= 4, `fixed ${fixed.steps}, grown ${grown.steps}`);
    // Each page asked once by the larger steps' crawl (its own requests, not the probes').
    const asked = site.hits.slice(before).filter((p) => p.startsWith("/p"));
    assert.equal(asked.length, PAGES);
    assert.equal(new Set(asked).size, PAGES);
    assert.deepEqual(grown.issues, fixed.issues);
    // Each crawl read its frontier from KV once: the agent-readiness probes' sample of it. The
    // first crawl step took the start URL the first step held, and every later round and step
    // the entries its own last allocation held (frontier.ts `next`, `resume`), however many
    // steps there were.
    assert.ok(grown.steps >= 3 && fixed.steps >= 7, `grown ${grown.steps}, fixed ${fixed.steps}`);
    assert.equal(grown.frontierLists, 1);
    assert.equal(fixed.frontierLists, 1);
  } finally {
    await site.close();
  }
});
