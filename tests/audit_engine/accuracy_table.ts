/**
 * The scoring and the table of the accuracy tests, shared by the raw table
 * (tests/audit_engine/accuracy.test.ts) and the rendered one
 * (tests/render/render_accuracy.test.ts): an audited labelled site's stored findings are reduced to
 * the labels their evidence items name, compared per check with the ground-truth manifest, and
 * printed as the markdown table docs/audit.md publishes. One definition of a true positive, false positive, false negative and "labelled
 * quiet" for both tables.
 */
import type { CheckTally, Evidence } from "../../domain/audit_engine/types.ts";
import { SITE } from "./accuracy_fixture.ts";

export { SITE };

/** What the scoring needs from one labelled site of a fixture. */
export interface Labelled {
  name: string;
  /**
   * check id → labels (paths, or absolute URLs off the site's origin) its findings must name on
   * this site. A check absent here must name nothing on this site.
   */
  expect: Record<string, string[]>;
  /** Pages (paths) on which no check of the table may fire. */
  clean: string[];
}

/** One audited site: the labels each check's stored findings named, and the checks' tallies. */
export interface Audited<S extends Labelled = Labelled> {
  site: S;
  /** check id → labels its evidence items name. */
  named: Map<string, Set<string>>;
  tallies: Map<string, CheckTally>;
  pages: number;
}

/** The label of one evidence item: its URL relative to the site, or SITE when it names none. */
export function label(item: Evidence, origin: string): string {
  const u = item.url;
  if (typeof u !== "string") return SITE;
  return u.startsWith(origin + "/") ? u.slice(origin.length) : u;
}

/** Stored findings (check id → evidence items) as the labels each check named. */
export function namedLabels(
  findings: Map<string, Evidence[]>,
  origin: string,
): Map<string, Set<string>> {
  const named = new Map<string, Set<string>>();
  for (const [check, items] of findings) {
    named.set(check, new Set(items.map((i) => label(i, origin))));
  }
  return named;
}

export interface Row {
  check: string;
  scope: string;
  labelled: number;
  quiet: number;
  tp: number;
  fp: string[];
  fn: string[];
}

const ratio = (n: number, d: number) => d === 0 ? "n/a" : (n / d).toFixed(2);

/** One row per check: its labels against what its stored findings named, over every site. */
export function score(checks: { id: string; scope: string }[], audits: Audited[]): Row[] {
  return checks.map((c) => {
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

/** The markdown table (a caption line, then one row per check and a total). */
export function table(caption: string, rows: Row[]): string {
  const out = [
    caption,
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

/** Checks without a page to fire on, or without one they looked at and must stay quiet on. */
export function unlabelled(rows: Row[], noQuietLabel: Record<string, string> = {}): string[] {
  return rows.filter((r) => r.labelled === 0 || (r.quiet === 0 && !(r.check in noQuietLabel)))
    .map((r) => `${r.check}: ${r.labelled} to fire, ${r.quiet} quiet`);
}

/** Findings on pages labelled clean: of any check, or of `checks` only when given. */
export function dirty(audits: Audited[], checks?: { id: string }[]): string[] {
  const ids = checks ? new Set(checks.map((c) => c.id)) : null;
  const out: string[] = [];
  for (const a of audits) {
    for (const p of a.site.clean) {
      for (const [check, got] of a.named) {
        if ((ids === null || ids.has(check)) && got.has(p)) out.push(`${check} on ${p}`);
      }
    }
  }
  return out;
}

/** Rows below 1.0, with the labels they got wrong. */
export function wrong(rows: Row[]): string[] {
  return rows.filter((r) => r.fp.length > 0 || r.fn.length > 0)
    .map((r) =>
      `${r.check}: false pos. ${r.fp.join(", ") || "-"}; false neg. ${r.fn.join(", ") || "-"}`
    );
}
