/**
 * Rendered crawls that see what JavaScript builds: a single-page app whose links exist only after
 * its script ran (spa_site.ts). Over HTTP, a rendered audit fetches and audits the pages those
 * links lead to, in rounds (crawl, render, crawl what rendering found...), marks them
 * `discovered_by: "render"` in the page inventory, never fetches the other host the app links
 * to, and shows every lab-sampled page's lab figures. Through the step engine with the same
 * packaged Chromium: the page budget holds across rounds, and the rounds cap leaves what the
 * last round found queued, noted in the caps hit.
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { BrowserPool } from "../../domain/render/pool.ts";
import { renderPage } from "../../domain/render/renderer.ts";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { serveSite } from "../helpers/sites.ts";
import { FIXTURE_NETWORK } from "./fixture_site.ts";
import { SPA_BROKEN, SPA_ROUNDS, spaRoutes } from "./spa_site.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };

/** Rendering takes a while on a busy machine. */
const RENDERED = { timeoutMs: 120_000 };

const ALL = [...SPA_ROUNDS[0], ...SPA_ROUNDS[1], ...SPA_ROUNDS[2]];

interface InventoryPage {
  url: string;
  fetch_state: string;
  status: number | null;
  depth: number | null;
  checks: string[];
  discovered_by?: string;
  lab?: { lcp_ms: number | null; cls: number; tbt_ms: number; bytes: number; requests: number };
}

Deno.test({
  name: "rendered audit of a single-page app: pages linked only by JavaScript fetched, " +
    "rendered and audited; other hosts untouched; lab figures on every lab page",
  ...OPTS,
  fn: async () => {
    const other = serveSite({});
    const s = serveSite((p) => routes[p]);
    const routes = spaRoutes(other.origin);
    try {
      await withApp(async (app) => {
        const { live } = await liveWithCredits(app, 100);
        const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: s.origin } });
        const started = await app.req("POST", `/v1/projects/${proj.body.project_id}/audits`, {
          key: live,
          body: { render: true },
        });
        assert.equal(started.status, 202, started.text);
        const audit = (await waitForAudit(app, live, started.body.audit_id, RENDERED)).body;
        assert.equal(audit.status, "completed", JSON.stringify(audit));
        // Round 1 renders the home page and finds the nav; round 2 renders the nav pages and
        // finds /team and the posts; round 3 renders those and finds nothing new.
        assert.deepEqual(audit.render, {
          requested: true,
          pages_rendered: 7,
          lab_pages: 2,
          pages_failed: 0,
          pages_discovered: 7,
          rounds: 3,
        });
        assert.deepEqual(audit.limits_hit, []);

        const res = await app.req("GET", `/v1/audits/${audit.audit_id}/pages?limit=100`, {
          key: live,
        });
        assert.equal(res.status, 200, res.text);
        const pages = res.body.data as InventoryPage[];
        const byPath = new Map(pages.map((p) => [p.url.slice(s.origin.length), p]));
        assert.deepEqual([...byPath.keys()].sort(), [...ALL, SPA_BROKEN].sort(), "no other host");
        for (const path of ALL) {
          const p = byPath.get(path)!;
          assert.equal(p.fetch_state, "fetched", path);
          assert.equal(p.status, 200, path);
          assert.equal(p.discovered_by, path === "/" ? undefined : "render", path);
        }
        assert.equal(byPath.get("/about")!.depth, 1);
        assert.equal(byPath.get("/team")!.depth, 2);
        // A broken link built by script: the URL is fetched and charged by the status check.
        const gone = byPath.get(SPA_BROKEN)!;
        assert.equal(gone.status, 404);
        assert.equal(gone.discovered_by, "render");
        assert.ok(gone.checks.includes("http_4xx"), JSON.stringify(gone));
        // Raw checks on a page found by rendering, and render checks on it.
        assert.ok(byPath.get("/pricing")!.checks.includes("title_missing"));
        assert.ok(byPath.get("/about")!.checks.includes("content_requires_js"));
        // The home page's links exist only after JavaScript.
        assert.ok(byPath.get("/")!.checks.includes("links_only_after_js"));
        // Round 1's render findings and the agent-readiness ones survive the later rounds' crawls.
        const issues = await app.req("GET", `/v1/audits/${audit.audit_id}/issues?limit=100`, {
          key: live,
        });
        const ids = issues.body.data.map((i: { check: string }) => i.check);
        for (const id of ["links_only_after_js", "content_requires_js", "llms_txt_missing"]) {
          assert.ok(ids.includes(id), `${id} in ${ids}`);
        }
        const missing = await app.req("GET", `/v1/audits/${audit.audit_id}/issues/title_missing`, {
          key: live,
        });
        assert.deepEqual(missing.body.data.map((d: { url: string }) => d.url), [
          `${s.origin}/pricing`,
        ]);

        // Lab sample: the home page, then the first `/*` page (round 2); round 3's `/blog/*`
        // found the lab cap (RENDER_LAB_PAGES=2) spent. Every lab page has its figures.
        const withLab = pages.filter((p) => p.lab !== undefined);
        assert.deepEqual(withLab.map((p) => p.url.slice(s.origin.length)).sort(), [
          "/",
          "/about",
        ]);
        for (const p of withLab) {
          const lab = p.lab!;
          assert.deepEqual(Object.keys(lab).sort(), [
            "bytes",
            "cls",
            "lcp_ms",
            "requests",
            "tbt_ms",
          ]);
          assert.ok(typeof lab.lcp_ms === "number" && lab.lcp_ms > 0, JSON.stringify(lab));
          assert.ok(lab.cls >= 0 && lab.tbt_ms >= 0, JSON.stringify(lab));
          // The document and /app.js at least.
          assert.ok(lab.requests >= 2 && lab.bytes > 1000, JSON.stringify(lab));
        }

        // The other host the app links to got no request at all.
        assert.deepEqual(other.hits, []);
      }, {
        env: {
          RENDER_LAB_PAGES: "2",
          RENDER_MAX_PAGES: "20",
          CRAWL_STEP_PAGES: "2",
        },
      });
    } finally {
      await s.close();
      await other.close();
    }
  },
});

Deno.test({
  name: "rendered crawl: the page budget holds across rounds; the rounds cap leaves the last " +
    "round's finds queued and says so",
  ...OPTS,
  fn: async (t) => {
    const other = serveSite({});
    const s = serveSite((p) => routes[p]);
    const routes = spaRoutes(other.origin);
    const pool = new BrowserPool({ maxPagesInFlight: 2 });
    const audit = (maxPages: number, maxRounds: number) =>
      runAuditDetailed({
        startUrl: s.url("/"),
        maxPages,
        concurrency: 2,
        allowPrivate: true,
        timeoutMs: 5_000,
        keepRecords: true,
        render: {
          renderer: {
            render: (url, lab) => renderPage(url, { pool, network: FIXTURE_NETWORK, lab }),
          },
          maxPages: 20,
          labPages: 0,
          pagesPerStep: 2,
          maxRounds,
        },
      });
    const path = (u: string) => u.slice(s.origin.length);
    try {
      await t.step("page budget of 3: the home page and two nav pages", async () => {
        const { report, records, state } = await audit(3, 5);
        assert.equal(report.pages_crawled, 3);
        const fetched = records.filter((r) => r.state === "fetched").map((r) => path(r.url));
        assert.deepEqual(fetched.sort(), ["/", "/about", "/pricing"]);
        // /blog was queued by round 1 and never fetched; /team (found rendering /about) too.
        const queued = records.filter((r) => r.state === "queued").map((r) => path(r.url));
        assert.deepEqual(queued.sort(), ["/blog", "/team"]);
        assert.ok(records.filter((r) => r.url !== s.url("/")).every((r) => r.discoveredBy));
        assert.equal(state.truncated, true);
        assert.equal(state.capsHit?.render_rounds, undefined, "the budget, not the rounds");
      });
      await t.step("two rounds: what round 2 found stays queued, noted", async () => {
        const { report, records, state } = await audit(50, 2);
        assert.equal(report.pages_crawled, 4);
        const queued = records.filter((r) => r.state === "queued").map((r) => path(r.url));
        assert.deepEqual(queued.sort(), [...SPA_ROUNDS[2], SPA_BROKEN].sort());
        assert.deepEqual(state.capsHit?.render_rounds, { limit: 2, leftOut: 4 });
        assert.equal(state.truncated, true);
        assert.equal(state.post?.render?.round, 2);
      });
      assert.deepEqual(other.hits, []);
    } finally {
      await pool.close();
      await s.close();
      await other.close();
    }
  },
});
