/**
 * A crawl step's size on a slow KV (crawl/step_size.ts, issue 34 item 4): with
 * `CRAWL_STEP_PAGES` unset, a crawl whose KV is 20 ms away takes its pages in fewer, larger
 * steps and records every page once; with `CRAWL_STEP_PAGES` set, the operator's size holds on
 * the same KV. The rule itself is checked on its own: the smallest sample counts, the cap holds.
 */
import assert from "node:assert/strict";
import { startTestApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
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
  assert.equal(stepPagesFor(limits, [30, 31, 80]), 100 * MAX_STEP_GROWTH);
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

/** A home page linking every page, so the frontier holds them all after the first page. */
function routes(path: string): Route | undefined {
  const links = Array.from({ length: PAGES }, (_, i) => `/p${i}`);
  if (path === "/") return html(page({ title: "Home of the step size site", links }));
  const m = /^\/p([0-9]+)$/.exec(path);
  if (!m || Number(m[1]) >= PAGES) return undefined;
  return html(page({ title: `Step size page number ${m[1]}`, key: `p${m[1]}` }));
}

async function crawlSteps(origin: string, env: Record<string, string>) {
  const raw = await openTestKv();
  const app = await startTestApp({ kv: withLatency(raw, 20), env });
  try {
    const { live: key } = await liveWithCredits(app, 100);
    const proj = await app.req("POST", "/v1/projects", { key, body: { url: origin } });
    assert.equal(proj.status, 201, proj.text);
    const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const id = started.body.audit_id;
    const done = await waitForAudit(app, key, id, { timeoutMs: 120_000 });
    assert.equal(done.body.status, "completed", done.text);
    const state = (await raw.get<CrawlState>(["audit_crawl", id])).value;
    assert.ok(state, "the finished crawl's state");
    return { steps: state.steps, fetches: state.fetches, rtt: state.kvRttMs ?? [] };
  } finally {
    await app.close();
  }
}

Deno.test("on a KV 20 ms away the crawl takes larger steps unless CRAWL_STEP_PAGES is set", async () => {
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
    // 240 pages after the home page: three steps of 100, or one of up to 500.
    assert.ok(fixed.steps - grown.steps >= 2, `fixed ${fixed.steps}, grown ${grown.steps}`);
    // Each page asked once by the larger steps' crawl (its own requests, not the probes').
    const asked = site.hits.slice(before).filter((p) => p.startsWith("/p"));
    assert.equal(asked.length, PAGES);
    assert.equal(new Set(asked).size, PAGES);
  } finally {
    await site.close();
  }
});
