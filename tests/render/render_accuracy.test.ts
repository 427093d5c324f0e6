/**
 * The accuracy table of the render checks: a rendered audit (the raw crawl, then the render steps
 * in the real packaged Chromium, through the same `runCrawlStep` path the service's audit jobs
 * take) of the seeded-defect fixture in render_accuracy_fixture.ts, whose defects appear only
 * after rendering. Precision and recall per render check are computed from the audit's STORED
 * findings (read back from KV), with the scoring and table of the raw accuracy table
 * (tests/audit_engine/accuracy_table.ts); each must be 1.0, and every render check has a page where
 * it must fire and a rendered page where it must stay quiet. The markdown table it prints is the one
 * docs/audit.md publishes.
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { RENDER_CHECKS } from "../../domain/render/checks.ts";
import { BrowserPool } from "../../domain/render/pool.ts";
import { renderPage, type RenderResult } from "../../domain/render/renderer.ts";
import {
  type Audited,
  dirty,
  namedLabels,
  score,
  table,
  unlabelled,
  wrong,
} from "../audit_engine/accuracy_table.ts";
import { serveSite } from "../helpers/sites.ts";
import { FIXTURE_NETWORK, UNHURRIED_MS } from "./fixture_site.ts";
import { LAB_PAGES, RENDER_SITE, type RenderLabelledSite } from "./render_accuracy_fixture.ts";

const OPTS = { sanitizeResources: false, sanitizeOps: false };

/** Lab figures of every lab page, printed next to the table (diagnostics, not scored). */
type LabFigures = Map<string, NonNullable<RenderResult["lab"]>>;

async function renderedAudit(
  s: RenderLabelledSite,
): Promise<{ audited: Audited<RenderLabelledSite>; lab: LabFigures }> {
  let routes: ReturnType<RenderLabelledSite["routes"]> | null = null;
  const site = serveSite((p) => {
    routes ??= s.routes(site.origin);
    return routes[p];
  });
  // One page at a time (the service with RENDER_PAGES_IN_FLIGHT=1; it renders 2 * that per
  // step): two throttled lab pages at once on a loaded 2-core machine took a quiet page's LCP
  // to 3 s and TBT to 183 ms (measured), one at a time kept them under 1.5 s and 10 ms.
  const pool = new BrowserPool({ maxPagesInFlight: 1 });
  const lab: LabFigures = new Map();
  try {
    const { findings, tallies, report } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 100,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: 5_000,
      render: {
        renderer: {
          render: async (url, isLab) => {
            const r = await renderPage(url, {
              pool,
              network: FIXTURE_NETWORK,
              lab: isLab,
              timeoutMs: UNHURRIED_MS,
            });
            if (r.lab) lab.set(url.slice(site.origin.length), r.lab);
            return r;
          },
        },
        maxPages: 50,
        labPages: LAB_PAGES,
        pagesPerStep: 2,
      },
    });
    return {
      audited: {
        site: s,
        named: namedLabels(findings, site.origin),
        tallies,
        pages: report.pages_crawled,
      },
      lab,
    };
  } finally {
    await pool.close();
    await site.close();
  }
}

const CHECKS = RENDER_CHECKS.map((c) => ({ id: c.id, scope: `render, ${c.sample}` }));

Deno.test("the render accuracy manifest labels every render check, on pages the site has", () => {
  assert.deepEqual(Object.keys(RENDER_SITE.expect).sort(), CHECKS.map((c) => c.id).sort());
  const pages = new Set(RENDER_SITE.htmlPages);
  for (const [id, urls] of Object.entries(RENDER_SITE.expect)) {
    for (const u of urls) assert.ok(pages.has(u), `${id}: ${u} is not a page of the fixture`);
  }
  for (const p of [...RENDER_SITE.clean, ...RENDER_SITE.labPages]) assert.ok(pages.has(p), p);
  assert.equal(RENDER_SITE.labPages.length, LAB_PAGES);
});

Deno.test({
  name: "render accuracy table: precision and recall of every render check on a rendered audit",
  ...OPTS,
  fn: async () => {
    const { audited, lab } = await renderedAudit(RENDER_SITE);
    const s = audited.site;

    // The sample is the one the labels assume: every HTML page rendered (none failed), and the
    // lab pages exactly the fixture's (console_errors applies to every rendered page, cls_high
    // to every lab page).
    assert.equal(audited.tallies.get("console_errors")?.eligible, s.htmlPages.length);
    assert.deepEqual([...lab.keys()].sort(), [...s.labPages].sort());
    assert.equal(audited.tallies.get("cls_high")?.eligible, s.labPages.length);

    const rows = score(CHECKS, [audited]);
    const figures = [...lab].sort(([a], [b]) => a < b ? -1 : 1).map(([p, m]) =>
      `\`${p}\` LCP ${m.lcpMs} ms, CLS ${m.cls}, TBT ${m.tbtMs} ms, ` +
      `${Math.round(m.transferBytes / 1024)} KiB`
    );
    const caption = `Rendered seeded-defect fixture, ${new Date().toISOString().slice(0, 10)}: ` +
      `${audited.pages} URLs fetched, ${s.htmlPages.length} pages rendered in Chromium, ` +
      `${lab.size} of them in lab conditions; ${rows.length} render checks.`;
    console.log(`\n${table(caption, rows)}\n\nLab pages: ${figures.join("; ")}.\n`);

    assert.deepEqual(unlabelled(rows), []);
    assert.deepEqual(dirty([audited], CHECKS), []);
    assert.deepEqual(wrong(rows), []);
  },
});
