/**
 * The partitioned crawl (crawl/partition.ts) in one process: the audit's chain of steps and two
 * helpers claim ranges of the same frontier at once, as three workers would. On the seeded-defect
 * fixture it finds exactly what one chain finds (every check's counts and evidence, the pages
 * crawled) and fetches each page once; a page budget stops it at the same count with the same
 * cap noted; and a rate cap holds per host across all of them (every timing bound a lower
 * bound measured by the server, as in politeness.test.ts).
 */
import assert from "node:assert/strict";
import { type AuditInput, runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { MAIN } from "./accuracy_fixture.ts";
import { namedLabels } from "./accuracy_table.ts";
import {
  type FakeSite,
  html,
  isAgentProbe,
  page,
  type Route,
  serveSite,
  TEST_CA,
} from "../helpers/sites.ts";
import { htmlAnswer, serveLogged } from "../helpers/logged_site.ts";

async function auditMain(extra: Partial<AuditInput>) {
  let routes: ReturnType<typeof MAIN.routes> | null = null;
  let site: FakeSite | null = null;
  site = serveSite((p) => {
    routes ??= MAIN.routes(site!.origin);
    return routes[p];
  }, { tls: MAIN.tls });
  try {
    const out = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 200,
      concurrency: 2,
      allowPrivate: true,
      timeoutMs: MAIN.timeoutMs,
      ca: MAIN.tls && !MAIN.untrusted ? TEST_CA : undefined,
      stepPages: 3,
      ...extra,
    });
    const twice = new Set(site.hits.filter((h, i) => site!.hits.indexOf(h) !== i));
    return {
      named: namedLabels(out.findings, site.origin),
      tallies: Object.fromEntries(out.tallies),
      pages: out.report.pages_crawled,
      summary: out.report.summary,
      score: out.report.score,
      capsHit: out.state.capsHit,
      twice: [...twice],
    };
  } finally {
    await site.close();
  }
}

Deno.test("three partitions find what one chain finds on the seeded-defect fixture, each page fetched once", async () => {
  const one = await auditMain({});
  const three = await auditMain({ partitions: 3 });
  assert.ok(one.pages > 20, `${one.pages}`);
  // Scripts and images are read twice by design (library banners, then the resource checks):
  // the same ones in both; no page is.
  assert.deepEqual(three.twice.sort(), one.twice.sort(), "nothing more fetched twice");
  assert.ok(three.twice.every((h) => /\.(js|png)$/.test(h)), `${three.twice}`);
  assert.equal(three.pages, one.pages);
  assert.deepEqual(three.tallies, one.tallies);
  assert.deepEqual(three.named, one.named);
  assert.deepEqual(three.summary, one.summary);
  assert.equal(three.score, one.score);
});

Deno.test("a page budget stops a partitioned crawl at the same count, with the cap noted", async () => {
  const links = Array.from({ length: 40 }, (_, i) => `/p${i}`);
  const run = async (partitions: number) => {
    // One fetch at a time per step: two requests in flight at once come from two partitions.
    let inFlight = 0;
    let most = 0;
    const paged = (r: Route): Route => ({
      handler: async (req) => {
        // The agents probes ask for pages beside the crawl: only the crawl's requests count.
        const counted = isAgentProbe(req.headers.get("user-agent")) ? 0 : 1;
        most = Math.max(most, inFlight += counted);
        await new Promise((res) => setTimeout(res, 20));
        inFlight -= counted;
        return new Response(r.body, { headers: r.headers });
      },
    });
    const site = serveSite(Object.fromEntries([
      ["/", paged(html(page({ title: "Budget home page of the site", links })))],
      ...links.map((
        l,
      ) => [l, paged(html(page({ title: `Budget page ${l} of the site`, key: l })))]),
    ]));
    try {
      const out = await runAuditDetailed({
        startUrl: site.url("/"),
        maxPages: 12,
        concurrency: 1,
        allowPrivate: true,
        stepPages: 3,
        partitions,
      });
      const pages = site.hits.filter((h) => h === "/" || /^\/p\d+$/.test(h));
      return {
        crawled: out.report.pages_crawled,
        fetched: pages.length,
        caps: out.state.capsHit,
        most,
        partitions: out.state.partitions,
      };
    } finally {
      await site.close();
    }
  };
  const one = await run(1);
  const three = await run(3);
  assert.equal(one.crawled, 12);
  assert.equal(three.crawled, 12);
  assert.equal(three.fetched, 12, "no fetch past the budget");
  assert.deepEqual(three.caps, one.caps);
  assert.equal(one.most, 1);
  assert.ok(three.most >= 2, `requests in flight at once: ${three.most}`);
  assert.equal(three.partitions, 3);
});

Deno.test("maxRps spaces request starts per host across every partition", async () => {
  const pages = ["/a", "/b", "/c", "/d", "/e", "/f", "/g"];
  const site = serveLogged(() => ({
    "/": () => htmlAnswer(page({ links: pages })),
    ...Object.fromEntries(pages.map((p) => [p, () => htmlAnswer(page({ key: p }))])),
  }));
  try {
    const out = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 20,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: 3_000,
      maxRps: 5,
      stepPages: 2,
      partitions: 3,
    });
    assert.equal(out.report.pages_crawled, 8);
    const home = site.to("/")[0];
    const rest = site.log.filter((r) => pages.includes(r.path)).sort((a, b) => a.at - b.at);
    assert.equal(rest.length, pages.length);
    rest.forEach((r, k) => {
      const after = r.at - home.answeredAt;
      assert.ok(
        after >= k * 200 - 10,
        `request ${k + 1} (${r.path}) came ${after} ms after the home page, before ${k} intervals`,
      );
    });
    assert.equal(out.politeness!.maxRps, 5);
  } finally {
    await site.close();
  }
});
