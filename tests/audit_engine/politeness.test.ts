/**
 * Politeness against fixture sites that record when each request arrived: a 429 (or a 503 with
 * Retry-After) slows the host and the URL is fetched again after the Retry-After, across steps,
 * and recorded with its status once its retries are spent; robots.txt Crawl-delay is honoured up
 * to its cap; `maxRps` spaces request starts. Every timing assertion is a lower bound measured by
 * the server (a request can only come later than politeness allows, never earlier): a page linked
 * from the home page cannot start before the home page was answered, and each further one at
 * least one interval after the slot before it, so the k-th such request to arrive came at least
 * (k-1) intervals after the home page's answer, whatever the latencies.
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import type { PageRecord } from "../../domain/audit_engine/crawl/store.ts";
import {
  MAX_CRAWL_DELAY_S,
  newPace,
  Politeness,
  retryAfterMs,
  throttleOf,
} from "../../domain/audit_engine/crawl/politeness.ts";
import { htmlAnswer, type LoggedSite, serveLogged } from "../helpers/logged_site.ts";
import { page } from "../helpers/sites.ts";

/** A URL's fetch state and status (null when not fetched), from the audit's kept records. */
function recordOf(out: { records: PageRecord[] }, url: string) {
  const r = out.records.find((p) => p.url === url);
  return r ? { state: r.state, status: r.state === "fetched" ? r.status : null } : undefined;
}

/** Clock granularity between the crawler's Date.now() and the server's performance.now(). */
const TOLERANCE_MS = 10;

/** The crawled pages' requests (not robots.txt, sitemaps, llms.txt), in arrival order. */
function pageRequests(site: LoggedSite) {
  return site.log.filter((r) => !/^\/(robots\.txt|sitemap.*\.xml|llms\.txt)$/.test(r.path))
    .sort((a, b) => a.at - b.at);
}

/**
 * Asserts the pages linked from "/" were paced `intervalMs` apart: the k-th of them to arrive came
 * at least (k-1) intervals after "/" was answered (see the module comment).
 */
function assertPaced(site: LoggedSite, intervalMs: number) {
  const home = site.to("/")[0];
  const rest = pageRequests(site).filter((r) => r.path !== "/");
  rest.forEach((r, k) => {
    const after = r.at - home.answeredAt;
    assert.ok(
      after >= k * intervalMs - TOLERANCE_MS,
      `request ${k + 1} (${r.path}) came ${after} ms after the home page, before ${k} intervals`,
    );
  });
  return rest.length;
}

function audit(
  site: LoggedSite,
  extra: Parameters<typeof runAuditDetailed>[0] extends infer I ? Partial<I>
    : never = {},
) {
  return runAuditDetailed({
    startUrl: site.url("/"),
    maxPages: 20,
    concurrency: 4,
    allowPrivate: true,
    timeoutMs: 3_000,
    keepRecords: true,
    ...extra,
  });
}

Deno.test("Retry-After: seconds and HTTP-dates; 429 always throttles, 503 only with one", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(retryAfterMs("3", now), 3_000);
  assert.equal(retryAfterMs(" 0 ", now), 0);
  assert.equal(retryAfterMs("Thu, 01 Jan 2026 00:00:07 GMT", now), 7_000);
  assert.equal(retryAfterMs("Wed, 31 Dec 2025 23:00:00 GMT", now), 0, "a past date: now");
  assert.equal(retryAfterMs("soon", now), null);
  assert.equal(retryAfterMs("1.5", now), null);
  assert.equal(retryAfterMs(null, now), null);
  const h = (v?: string) => new Headers(v === undefined ? {} : { "retry-after": v });
  assert.equal(throttleOf(429, h(), now), 5_000, "a 429 without Retry-After waits 5 s");
  assert.equal(throttleOf(429, h("99999"), now), 60_000, "capped at 60 s");
  assert.equal(throttleOf(503, h(), now), null, "a 503 without Retry-After is an error page");
  assert.equal(throttleOf(503, h("2"), now), 2_000);
  assert.equal(throttleOf(500, h("2"), now), null);
});

Deno.test("Politeness: Crawl-delay clamped to its cap, a slot past the step's budget not taken", async () => {
  const pace = newPace();
  const p = new Politeness(pace, null);
  const before = Date.now();
  assert.equal(await p.wait("h", 3_600, before + 60_000), true);
  const gap = pace.hosts.h.next - before;
  assert.ok(gap >= MAX_CRAWL_DELAY_S * 1000 && gap <= MAX_CRAWL_DELAY_S * 1000 + 50, `${gap}`);
  assert.equal(pace.crawlDelayAsked, 3_600);
  // The next slot is 10 s away; a step with 30 ms left does not take it (and waits its 30 ms).
  const next = pace.hosts.h.next;
  assert.equal(await p.wait("h", 3_600, Date.now() + 30), false);
  assert.equal(pace.hosts.h.next, next, "no slot taken");
  // A throttle halves the rate once per wave: answers to requests started before it echo it.
  const q = new Politeness(newPace(), 8);
  const t = Date.now();
  q.throttle("h", 0, t);
  q.throttle("h", 0, t - 1);
  assert.equal(q["pace"].hosts.h.rps, 4);
  assert.equal(q["pace"].throttled, 2);
});

Deno.test("429 with Retry-After: the URL is fetched again after it, then recorded 200", async () => {
  const site = serveLogged(() => ({
    "/": () => htmlAnswer(page({ links: ["/a", "/b"] })),
    "/a": (_req, n) =>
      n <= 2
        ? new Response("slow down", { status: 429, headers: { "retry-after": "1" } })
        : htmlAnswer(page({ key: "a" })),
    "/b": () => htmlAnswer(page({ key: "b" })),
  }));
  try {
    // One request at a time, so none is in flight when a 429 comes back; short steps, so the
    // agents probes after the crawl (paced at the halved rate) end with the step.
    const out = await audit(site, { concurrency: 1, stepMs: 4_000 });
    const a = site.to("/a");
    assert.deepEqual(a.map((r) => r.status), [429, 429, 200], "asked three times");
    for (let i = 1; i < a.length; i++) {
      const waited = a[i].at - a[i - 1].answeredAt;
      assert.ok(waited >= 1_000 - TOLERANCE_MS, `retry ${i} came ${waited} ms after the 429`);
    }
    // The whole host waited: no request to it started during a Retry-After.
    const reqs = pageRequests(site);
    for (const r429 of a.filter((r) => r.status === 429)) {
      const during = reqs.filter((r) =>
        r.at > r429.answeredAt && r.at < r429.answeredAt + 1_000 - TOLERANCE_MS
      );
      assert.deepEqual(during.map((r) => r.path), [], "nothing started during the pause");
    }
    assert.ok(site.to("/b")[0].at > a[0].answeredAt, "/b came after the first 429");
    assert.deepEqual(recordOf(out, site.url("/a")), { state: "fetched", status: 200 });
    assert.deepEqual(recordOf(out, site.url("/b")), { state: "fetched", status: 200 });
    assert.equal(out.report.pages_crawled, 3, "the retries are not pages of their own");
    const p = out.politeness!;
    assert.equal(p.throttled, 2);
    assert.equal(p.retries, 2);
    assert.equal(p.gaveUp, 0);
    assert.equal(p.slowed, true);
    assert.ok(p.finalRps !== null && p.finalRps <= 2, `rate halved: ${p.finalRps}`);
  } finally {
    await site.close();
  }
});

Deno.test("a Retry-After longer than a step is waited out over several steps, state in KV", async () => {
  const site = serveLogged(() => ({
    "/": () => htmlAnswer(page({ links: ["/a"] })),
    "/a": (_req, n) =>
      n === 1
        ? new Response("busy", { status: 503, headers: { "retry-after": "1" } })
        : htmlAnswer(page({ key: "a" })),
  }));
  try {
    // Steps of 150 ms: no step may sleep through the 1 s pause, so it spans several steps.
    const out = await audit(site, { stepMs: 150 });
    const a = site.to("/a");
    assert.deepEqual(a.map((r) => r.status), [503, 200]);
    assert.ok(a[1].at - a[0].answeredAt >= 1_000 - TOLERANCE_MS);
    assert.ok(out.steps >= 6, `the pause spanned ${out.steps} steps`);
    assert.deepEqual(recordOf(out, site.url("/a")), { state: "fetched", status: 200 });
    assert.equal(out.politeness!.retries, 1);
  } finally {
    await site.close();
  }
});

Deno.test("retries are bounded: after 3 the 429 is recorded; a 503 without Retry-After is not retried", async () => {
  const site = serveLogged(() => ({
    "/": () => htmlAnswer(page({ links: ["/x", "/y", "/z"] })),
    "/x": () => new Response("no", { status: 429, headers: { "retry-after": "0" } }),
    // An HTTP-date already past: retry at once.
    "/y": (_req, n) =>
      n === 1
        ? new Response("busy", {
          status: 503,
          headers: { "retry-after": new Date(Date.now() - 5_000).toUTCString() },
        })
        : htmlAnswer(page({ key: "y" })),
    "/z": () => new Response("down", { status: 503 }),
  }));
  try {
    const out = await audit(site, { maxRps: 1_000 });
    assert.equal(site.to("/x").length, 4, "first try and 3 retries");
    assert.deepEqual(recordOf(out, site.url("/x")), { state: "fetched", status: 429 });
    assert.deepEqual(site.to("/y").map((r) => r.status), [503, 200]);
    assert.equal(site.to("/z").length, 1);
    assert.deepEqual(recordOf(out, site.url("/z")), { state: "fetched", status: 503 });
    const p = out.politeness!;
    assert.equal(p.gaveUp, 1);
    assert.equal(p.retries, 4);
    assert.equal(p.throttled, 5);
    assert.equal(p.maxRps, 1_000);
  } finally {
    await site.close();
  }
});

Deno.test("robots.txt Crawl-delay spaces page requests; a larger one is clamped and reported", async () => {
  const pages = ["/a", "/b", "/c"];
  const site = serveLogged(() => ({
    "/robots.txt": () =>
      new Response("User-agent: *\nCrawl-delay: 0.4\nAllow: /\n", {
        headers: { "content-type": "text/plain" },
      }),
    "/": () => htmlAnswer(page({ links: pages })),
    ...Object.fromEntries(pages.map((p) => [p, () => htmlAnswer(page({ key: p }))])),
  }));
  try {
    // Short steps: the agents probes after the crawl are paced too, and stop at the step's end
    // (what they find is tests/audit_engine/agents*.test.ts's, not this test's).
    const out = await audit(site, { stepMs: 3_000 });
    assert.equal(assertPaced(site, 400), 3);
    assert.equal(out.politeness!.crawlDelay, 0.4);
    assert.equal(out.politeness!.crawlDelayClamped, null);
    assert.equal(out.politeness!.slowed, true);
  } finally {
    await site.close();
  }

  const slow = serveLogged(() => ({
    "/robots.txt": () =>
      new Response("User-agent: *\nCrawl-delay: 3600\n", {
        headers: { "content-type": "text/plain" },
      }),
    "/": () => htmlAnswer(page({})),
  }));
  try {
    const out = await audit(slow, { stepMs: 3_000 });
    assert.equal(out.politeness!.crawlDelay, MAX_CRAWL_DELAY_S);
    assert.equal(out.politeness!.crawlDelayClamped, 3_600);
  } finally {
    await slow.close();
  }
});

Deno.test("maxRps spaces request starts per host, whatever the concurrency", async () => {
  const pages = ["/a", "/b", "/c", "/d", "/e"];
  const site = serveLogged(() => ({
    "/": () => htmlAnswer(page({ links: pages })),
    ...Object.fromEntries(pages.map((p) => [p, () => htmlAnswer(page({ key: p }))])),
  }));
  try {
    const out = await audit(site, { maxRps: 5, concurrency: 8 });
    assert.equal(assertPaced(site, 200), 5);
    assert.equal(out.politeness!.maxRps, 5);
    assert.equal(out.politeness!.finalRps, 5);
    assert.equal(out.politeness!.slowed, false, "a rate cap asked for is not the site slowing us");
  } finally {
    await site.close();
  }
});
