/**
 * Every check, old and new, shown to fire on a site made for it and to stay quiet on one where it
 * must not (the manifest is tests/audit_engine/check_cases.ts). Sites are small loopback servers;
 * the cases run a few at a time so the whole table takes seconds.
 */
import assert from "node:assert/strict";
import { runAuditDetailed } from "../../domain/audit_engine/run_audit.ts";
import { ALL_CHECKS } from "../../domain/audit_engine/checks/index.ts";
import { evidenceColumns } from "../../domain/audit_engine/evidence_columns.ts";
import type { CheckTally } from "../../domain/audit_engine/types.ts";
import { CASES, type CheckCase, clean, type SiteCase } from "./check_cases.ts";
import { type FakeSite, serveSite, TEST_CA } from "../helpers/sites.ts";

/** Evidence fields seen that a check's CSV columns (evidence_columns.ts) do not name. */
const unnamedFields = new Set<string>();

async function auditCase(c: SiteCase): Promise<Map<string, CheckTally>> {
  let routes: ReturnType<SiteCase["routes"]> | null = null;
  let site: FakeSite | null = null;
  site = serveSite((p) => {
    routes ??= c.routes(site!.origin);
    return routes[p];
  }, { tls: c.tls ?? true });
  try {
    const { tallies, findings } = await runAuditDetailed({
      startUrl: site.url("/"),
      maxPages: 30,
      concurrency: 4,
      allowPrivate: true,
      timeoutMs: c.timeoutMs ?? 3_000,
      ca: (c.tls ?? true) && !c.untrusted ? TEST_CA : undefined,
    });
    for (const [check, items] of findings) {
      const columns = new Set(evidenceColumns(check));
      for (const item of items) {
        for (const k of Object.keys(item)) if (!columns.has(k)) unnamedFields.add(`${check}.${k}`);
      }
    }
    return tallies;
  } finally {
    await site.close();
  }
}

/**
 * One audit per site case: most checks share the manifest's clean site as their quiet case, and it
 * is the same site each time, so it is audited once and every one of them is judged on its tallies.
 */
const audits = new Map<SiteCase, Promise<Map<string, CheckTally>>>();
function auditOnce(c: SiteCase): Promise<Map<string, CheckTally>> {
  let audit = audits.get(c);
  if (!audit) audits.set(c, audit = auditCase(c));
  return audit;
}

/** Runs `jobs` with at most `n` in flight. */
async function pool<T>(jobs: (() => Promise<T>)[], n: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]();
      }
    }),
  );
  return out;
}

const fired = (t: Map<string, CheckTally>) =>
  [...t].filter(([, v]) => v.affected > 0).map(([k]) => k).sort();

/**
 * Render checks need a browser and a rendered audit: tests/render/render.test.ts makes each fire
 * on its defect page and stay quiet on the clean ones; this manifest covers the rest.
 */
const RAW_CHECKS = ALL_CHECKS.filter((c) => c.scope !== "render");

Deno.test("the manifest covers every check of a raw audit, and nothing else", () => {
  const ids = RAW_CHECKS.map((c) => c.id).sort();
  assert.deepEqual(Object.keys(CASES).sort(), ids);
});

Deno.test("the clean base site of the manifest fires nothing", async () => {
  // The quiet case most checks share: its audit is kept for them (`auditOnce`).
  const t = await auditOnce(clean);
  assert.deepEqual(fired(t), []);
});

/** The longest a case's site makes a response wait: such sites go first, their waits overlapped. */
function slowest(c: CheckCase): number {
  const routes = [c.fire, c.quiet].flatMap((s) => Object.values(s.routes("https://127.0.0.1")));
  return Math.max(0, ...routes.map((r) => r?.delayMs ?? 0));
}

Deno.test("every check fires on its fixture site and stays quiet on its counterpart", async () => {
  const jobs: (() => Promise<string | null>)[] = [];
  const cases = Object.entries(CASES).sort(([, a], [, b]) => slowest(b) - slowest(a));
  for (const [id, c] of cases) {
    jobs.push(async () => {
      const t = (await auditCase(c.fire)).get(id);
      return t && t.affected > 0 ? null : `${id}: did not fire (${JSON.stringify(t)})`;
    });
    jobs.push(async () => {
      const tallies = await auditOnce(c.quiet);
      const t = tallies.get(id);
      if (t && t.affected > 0) return `${id}: fired on its quiet site`;
      if (!c.quietNotApplicable && !(t && t.eligible > 0)) {
        return `${id}: not applicable on its quiet site, so the case shows nothing`;
      }
      return null;
    });
  }
  const problems = (await pool(jobs, 6)).filter((p) => p !== null);
  assert.deepEqual(problems, []);
  // Every fact a check records has its CSV column (domain/audit_engine/evidence_columns.ts).
  assert.deepEqual([...unnamedFields].sort(), []);
});

Deno.test("docs list every check with its severity (and scope), render checks in docs/render.md", async () => {
  const read = (f: string) => Deno.readTextFile(new URL(`../../docs/${f}`, import.meta.url));
  const [audit, render] = [await read("audit.md"), await read("render.md")];
  for (const c of ALL_CHECKS) {
    // Rows are `| id | severity | scope |`, some tables with a category column first.
    const cell = c.scope === "render" ? "" : "\\s*\\| " + c.scope + " ";
    const row = new RegExp("\\| `" + c.id + "`\\s*\\|( [a-z_]+\\s*\\|)? " + c.severity + cell);
    const doc = c.scope === "render" ? render : audit;
    assert.match(doc, row, `${c.id} (${c.severity}, ${c.scope}) missing from the docs`);
  }
});
