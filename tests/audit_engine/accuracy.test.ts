/**
 * The accuracy table: audits the seeded-defect fixture (accuracy_fixture.ts: one site with a
 * defect on most pages, plus small variants for site-wide verdicts that exclude each other), reads
 * every check's stored findings, and compares the URLs their evidence items name with the
 * ground-truth manifest. Precision and recall per check must be 1.0; the markdown table it prints
 * is the one docs/audit.md publishes. The render checks have their own table, measured on a rendered
 * audit (tests/render/render_accuracy.test.ts); scoring and table are shared (accuracy_table.ts).
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { ALL_CHECKS } from "../../domain/audit_engine/checks/index.ts";
import { type LabelledSite, MAIN, QUIET_NOT_APPLICABLE, VARIANTS } from "./accuracy_fixture.ts";
import {
  type Audited,
  dirty,
  namedLabels,
  score,
  table,
  unlabelled,
  wrong,
} from "./accuracy_table.ts";
import { type FakeSite, serveSite, TEST_CA } from "../helpers/sites.ts";

const RAW_CHECKS = ALL_CHECKS.filter((c) => c.scope !== "render");
const SITES = [MAIN, ...VARIANTS];

async function audit(s: LabelledSite): Promise<Audited<LabelledSite>> {
  let routes: ReturnType<LabelledSite["routes"]> | null = null;
  let site: FakeSite | null = null;
  site = serveSite((p) => {
    routes ??= s.routes(site!.origin);
    return routes[p];
  }, { tls: s.tls });
  try {
    const { findings, tallies, report } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 200,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: s.timeoutMs,
      ca: s.tls && !s.untrusted ? TEST_CA : undefined,
    });
    return {
      site: s,
      named: namedLabels(findings, site.origin),
      tallies,
      pages: report.pages_crawled,
    };
  } finally {
    await site.close();
  }
}

function caption(audits: Audited[], checks: number): string {
  const variants = audits.slice(1);
  const vPages = variants.reduce((n, a) => n + a.pages, 0);
  return `Seeded-defect fixture, ${new Date().toISOString().slice(0, 10)}: the main site ` +
    `(${audits[0].pages} URLs fetched) and ${variants.length} variants (${vPages} URLs), ` +
    `${checks} raw checks.`;
}

Deno.test("the accuracy manifest names only checks of a raw audit", () => {
  const ids = new Set(RAW_CHECKS.map((c) => c.id));
  for (const s of SITES) {
    for (const id of Object.keys(s.expect)) assert.ok(ids.has(id), `${s.name}: unknown ${id}`);
  }
});

Deno.test("accuracy table: precision and recall of every raw check on the seeded-defect fixture", async () => {
  const audits = await Promise.all(SITES.map(audit));
  const rows = score(RAW_CHECKS, audits);
  console.log("\n" + table(caption(audits, rows.length), rows) + "\n");

  // Every check has a page where it must fire and one it looked at where it must not.
  assert.deepEqual(unlabelled(rows, QUIET_NOT_APPLICABLE), []);
  // Pages labelled clean fire nothing at all.
  assert.deepEqual(dirty(audits), []);
  assert.deepEqual(wrong(rows), []);
});
