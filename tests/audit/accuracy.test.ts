/**
 * The accuracy table: audits the seeded-defect fixture (accuracy_fixture.ts: one site with a
 * defect on most pages, plus small variants for site-wide verdicts that exclude each other), reads
 * every check's stored findings, and compares the URLs their evidence items name with the
 * ground-truth manifest. Precision and recall per check must be 1.0; the markdown table it prints
 * is the one README.md publishes. Render-only checks are not in it (tests/render covers them).
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit/run_audit.ts";
import { ALL_CHECKS } from "../../domain/audit/checks/index.ts";
import type { CheckTally, Evidence } from "../../domain/audit/types.ts";
import {
  type LabelledSite,
  MAIN,
  QUIET_NOT_APPLICABLE,
  SITE,
  VARIANTS,
} from "./accuracy_fixture.ts";
import { type FakeSite, serveSite, TEST_CA } from "./sites.ts";

const RAW_CHECKS = ALL_CHECKS.filter((c) => c.scope !== "render");
const SITES = [MAIN, ...VARIANTS];

interface Audited {
  site: LabelledSite;
  /** check id → labels its evidence items name ("variant path"). */
  named: Map<string, Set<string>>;
  tallies: Map<string, CheckTally>;
  pages: number;
}

/** The label of one evidence item: its URL relative to the site, or SITE when it names none. */
function label(item: Evidence, origin: string): string {
  const u = item.url;
  if (typeof u !== "string") return SITE;
  return u.startsWith(origin + "/") ? u.slice(origin.length) : u;
}

async function audit(s: LabelledSite): Promise<Audited> {
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
    const named = new Map<string, Set<string>>();
    for (const [check, items] of findings) {
      named.set(check, new Set(items.map((i) => label(i, site!.origin))));
    }
    return { site: s, named, tallies, pages: report.pages_crawled };
  } finally {
    await site.close();
  }
}

interface Row {
  check: string;
  scope: string;
  labelled: number;
  quiet: number;
  tp: number;
  fp: string[];
  fn: string[];
}

const ratio = (n: number, d: number) => d === 0 ? "n/a" : (n / d).toFixed(2);

function score(audits: Audited[]): Row[] {
  return RAW_CHECKS.map((c) => {
    const row: Row = { check: c.id, scope: c.scope, labelled: 0, quiet: 0, tp: 0, fp: [], fn: [] };
    for (const a of audits) {
      const want = new Set(a.site.expect[c.id] ?? []);
      const got = a.named.get(c.id) ?? new Set<string>();
      const eligible = a.tallies.get(c.id)?.eligible ?? 0;
      row.labelled += want.size;
      // Units the check evaluated (pages, links, redirects, sitemap entries; the site for a
      // verdict) beyond those labelled to fire: each must stay quiet.
      row.quiet += Math.max(0, eligible - want.size);
      for (const w of want) {
        if (got.has(w)) row.tp++;
        else row.fn.push(`${a.site.name} ${w}`);
      }
      for (const g of got) if (!want.has(g)) row.fp.push(`${a.site.name} ${g}`);
    }
    return row;
  });
}

function table(rows: Row[], audits: Audited[]): string {
  const variants = audits.slice(1);
  const vPages = variants.reduce((n, a) => n + a.pages, 0);
  const out = [
    `Seeded-defect fixture, ${new Date().toISOString().slice(0, 10)}: the main site ` +
    `(${audits[0].pages} URLs fetched) and ${variants.length} variants (${vPages} URLs), ` +
    `${rows.length} raw checks.`,
    "",
    "| check | scope | labelled to fire | labelled quiet | true pos. | false pos. | false neg. | precision | recall |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const r of rows) {
    out.push(
      `| \`${r.check}\` | ${r.scope} | ${r.labelled} | ${r.quiet} | ${r.tp} | ${r.fp.length} | ${r.fn.length} | ${
        ratio(r.tp, r.tp + r.fp.length)
      } | ${ratio(r.tp, r.tp + r.fn.length)} |`,
    );
  }
  const sum = (f: (r: Row) => number) => rows.reduce((n, r) => n + f(r), 0);
  const [tp, fp, fn] = [sum((r) => r.tp), sum((r) => r.fp.length), sum((r) => r.fn.length)];
  out.push(
    `| **all** | | ${sum((r) => r.labelled)} | ${sum((r) => r.quiet)} | ${tp} | ${fp} | ${fn} | ${
      ratio(tp, tp + fp)
    } | ${ratio(tp, tp + fn)} |`,
  );
  return out.join("\n");
}

Deno.test("the accuracy manifest names only checks of a raw audit", () => {
  const ids = new Set(RAW_CHECKS.map((c) => c.id));
  for (const s of SITES) {
    for (const id of Object.keys(s.expect)) assert.ok(ids.has(id), `${s.name}: unknown ${id}`);
  }
});

Deno.test("accuracy table: precision and recall of every raw check on the seeded-defect fixture", async () => {
  const audits = await Promise.all(SITES.map(audit));
  const rows = score(audits);
  console.log("\n" + table(rows, audits) + "\n");

  // Every check has a page where it must fire and one it looked at where it must not.
  const unlabelled = rows.filter((r) =>
    r.labelled === 0 || (r.quiet === 0 && !(r.check in QUIET_NOT_APPLICABLE))
  )
    .map((r) => `${r.check}: ${r.labelled} to fire, ${r.quiet} quiet`);
  assert.deepEqual(unlabelled, []);

  // Pages labelled clean fire nothing at all.
  const dirty: string[] = [];
  for (const a of audits) {
    for (const p of a.site.clean) {
      for (const [check, got] of a.named) if (got.has(p)) dirty.push(`${check} on ${p}`);
    }
  }
  assert.deepEqual(dirty, []);

  const wrong = rows.filter((r) => r.fp.length > 0 || r.fn.length > 0)
    .map((r) =>
      `${r.check}: false pos. ${r.fp.join(", ") || "-"}; false neg. ${r.fn.join(", ") || "-"}`
    );
  assert.deepEqual(wrong, []);
});
