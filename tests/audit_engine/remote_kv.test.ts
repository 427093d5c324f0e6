/**
 * The crawl on a KV that answers a round trip later, as KV Connect or a self-hosted denokv across
 * a network does (issue 34 item 4): the same site audited through the API on a local KV and on one
 * with 5 ms before every read, commit and list batch gives the same issues, evidence and pages.
 * How fast it goes at 0, 10 and 30 ms is the benchmark's (tests/bench/remote_kv_bench.ts).
 */
import assert from "node:assert/strict";
import { startTestApp } from "../helpers/app.ts";
import { completedLiveAudit } from "../helpers/credits.ts";
import { auditFindings } from "../helpers/findings.ts";
import { openTestKv } from "../helpers/kv.ts";
import { type RoundTrips, withLatency } from "../helpers/latency_kv.ts";
import { html, page, robotsRoute, type Route, serveSite, sitemapRoute } from "../helpers/sites.ts";

/** Twelve pages (two untitled, a duplicate pair), a 404, a redirect chain, robots.txt, a sitemap. */
function routes(origin: () => string): (path: string) => Route | undefined {
  return (path) => {
    const links = [...Array.from({ length: 10 }, (_, i) => `/p${i}`), "/missing", "/old"];
    if (path === "/") return html(page({ title: "Home of the remote KV site", links }));
    if (path === "/old") return { status: 301, headers: { location: "/older" } };
    if (path === "/older") return { status: 301, headers: { location: "/p0" } };
    if (path === "/robots.txt") {
      return robotsRoute(`User-agent: *\nAllow: /\nSitemap: ${origin()}/sitemap.xml\n`);
    }
    if (path === "/sitemap.xml") {
      return sitemapRoute(["/", "/p0", "/p1", "/orphan"].map((p) => origin() + p));
    }
    if (path === "/orphan") return html(page({ title: "An orphan page of the site", key: "o" }));
    const m = /^\/p([0-9])$/.exec(path);
    if (!m) return undefined;
    const i = Number(m[1]);
    return html(page({
      title: i < 2 ? null : `Article number ${i} of the remote KV site`,
      key: i >= 8 ? "twin" : `p${i}`,
      links: [`/p${(i + 1) % 10}`],
    }));
  };
}

async function auditOn(kv: Deno.Kv, origin: string) {
  const app = await startTestApp({ kv });
  try {
    const { key, id, done } = await completedLiveAudit(app, origin, 120_000);
    assert.equal(done.body.status, "completed", done.text);
    return await auditFindings(app, key, id);
  } finally {
    await app.close();
  }
}

Deno.test("an audit on a KV 5 ms away finds exactly what it finds on a local KV", async () => {
  let origin = "";
  const site = serveSite(routes(() => origin));
  origin = site.origin;
  try {
    const local = await auditOn(await openTestKv(), origin);
    const trips: RoundTrips = { reads: 0, writes: 0, commits: 0, listBatches: 0 };
    const remote = await auditOn(withLatency(await openTestKv(), 5, trips), origin);
    // The wrapper was in the path: the crawl's reads and commits all went through it.
    assert.ok(trips.commits > 10 && trips.reads > 10, JSON.stringify(trips));
    // deno-lint-ignore no-explicit-any
    const fired = (local as any).issues as unknown[];
    assert.ok(fired.length >= 4, JSON.stringify(fired));
    assert.deepEqual(remote, local);
  } finally {
    await site.close();
  }
});
