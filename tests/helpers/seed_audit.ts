/**
 * A completed audit written straight into KV with the crawl's own writers (page records through
 * `WriteBatch`, evidence through `FindingsWriter`, issues through `compareIssues`), so exports and
 * summaries can be tested on inventories of any size without crawling them. Titles and evidence
 * carry what a CSV must survive: commas, quotes, line breaks, formula-looking text, tabs and
 * non-ASCII.
 */
import { compareIssues, type StoredIssues } from "../../domain/audits/compare.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";
import {
  FindingsWriter,
  newRecord,
  type PageRecord,
  WriteBatch,
} from "../../domain/audit_engine/crawl/store.ts";
import type { Category, Evidence } from "../../domain/audit_engine/types.ts";
import { keys } from "../../domain/platform/store.ts";

/** Page titles a CSV must carry intact (formula-looking ones are prefixed with '). */
export const AWKWARD_TITLES = [
  "A plain title",
  "Commas, in, a title",
  'He said "hello" twice',
  "A title\nover two lines",
  '=HYPERLINK("http://evil.example","click")',
  "+SUM(A1:A9)",
  "-2+3",
  "@import",
  "\tTabbed title",
  "Ünïcödé title — with an em dash",
  "Carriage\r\nreturn",
];

export interface SeedOptions {
  accountId: string;
  projectId: string;
  auditId: string;
  /** URLs in the inventory. */
  pages: number;
  origin?: string;
  completedAt?: number;
  score?: number;
  categories?: Record<Category, number>;
  /** A previous completed audit of the project (its issues make `change`). */
  previousAuditId?: string | null;
  /** Extra evidence items per check, on the first page. */
  extraFindings?: Record<string, Evidence[]>;
}

export const SEED_CATEGORIES: Record<Category, number> = {
  performance: 90,
  security: 80,
  indexability: 70,
  mobile: 100,
  structure: 60,
  agents: 50,
};

/** The URL of seeded page `i` (sorted the way KV lists them). */
export function seededUrl(origin: string, i: number): string {
  return `${origin}/p/${String(i).padStart(6, "0")}`;
}

/**
 * Writes the inventory, findings, issues and the completed audit record; returns the stored
 * issues. Page `i`: every 10th has no title (title_missing), every 50th (from 7) is a 404, every
 * 97th (from 3) a redirect; the others take AWKWARD_TITLES in turn (title_length on most).
 */
export async function seedCompletedAudit(kv: Deno.Kv, o: SeedOptions): Promise<StoredIssues> {
  const origin = o.origin ?? "https://big.example";
  const batch = new WriteBatch(kv);
  const stored: Record<string, number> = {};
  const findings = new FindingsWriter(batch, o.auditId, stored);
  const affected: Record<string, number> = {};
  const fire = (check: string, url: string, items: Evidence[]) => {
    affected[check] = (affected[check] ?? 0) + 1;
    findings.add(check, url, items);
  };
  for (let i = 0; i < o.pages; i++) {
    const url = seededUrl(origin, i);
    const rec: PageRecord = newRecord(url, i, Math.min(i, 5), i % 3 === 0);
    rec.state = "fetched";
    rec.ttfbMs = 100 + (i % 400);
    if (i % 50 === 7) {
      rec.status = 404;
      rec.checks = ["http_4xx"];
      fire("http_4xx", url, [{ status: 404 }]);
    } else if (i % 97 === 3) {
      rec.status = 301;
      rec.location = seededUrl(origin, i + 1);
    } else {
      rec.status = 200;
      rec.html = true;
      rec.words = 300 + i;
      rec.bytes = 20_000 + i;
      rec.outlinks = 12;
      rec.inlinks = i % 7;
      rec.linkScore = i % 101;
      rec.title = i % 10 === 0 ? null : AWKWARD_TITLES[i % AWKWARD_TITLES.length];
      if (rec.title === null) {
        rec.checks.push("title_missing");
        fire("title_missing", url, [{}]);
      } else if (rec.title.length < 20 || rec.title.length > 60) {
        rec.checks.push("title_length");
        fire("title_length", url, [{ title: rec.title, length: rec.title.length }]);
      }
      if (i % 25 === 1) {
        rec.checks.push("broken_internal_links");
        fire("broken_internal_links", url, [
          {
            target: `${origin}/gone`,
            anchor: 'Read "this", then\nthat',
            status: 404,
            failure: null,
          },
          {
            target: `${origin}/down`,
            anchor: "=cmd|' /C calc'!A0",
            status: null,
            failure: "timeout",
          },
        ]);
      }
    }
    batch.set(keys.auditPage(o.auditId, url), rec);
  }
  const first = seededUrl(origin, 1);
  fire("redirect_chain", first, [{
    hops: [`${origin}/a`, `${origin}/b`, `${origin}/c`],
    hop_count: 2,
    final_status: 200,
  }]);
  for (const [check, items] of Object.entries(o.extraFindings ?? {})) fire(check, first, items);
  await batch.flush();

  const tallies: Record<string, [number, number]> = {};
  for (const [check, n] of Object.entries(affected)) tallies[check] = [o.pages, n];
  const previousId = o.previousAuditId ?? null;
  const previous = previousId
    ? (await kv.get<StoredIssues>(keys.auditIssues(previousId))).value
    : null;
  const { issues, changes } = compareIssues(tallies, stored, previous, previousId);
  await kv.set(keys.auditIssues(o.auditId), issues);

  const fired = issues.issues.filter((i) => i.change !== "fixed");
  const now = o.completedAt ?? Date.parse("2026-11-20T10:00:00Z");
  const audit: AuditRecord = {
    id: o.auditId,
    accountId: o.accountId,
    projectId: o.projectId,
    status: "completed",
    funding: { kind: "sandbox" },
    createdAt: now - 60_000,
    runningAt: now - 50_000,
    completedAt: now,
    score: o.score ?? 72,
    summary: {
      issues_critical: fired.length,
      issues_warning: 0,
      issues_info: 0,
      top_issues: [],
      categories: o.categories ?? SEED_CATEGORIES,
    },
    error: null,
    attempts: 1,
    leaseUntil: 0,
    jobsCompleted: o.pages,
    jobsFailed: 0,
    changes,
    trigger: "api",
    limitsHit: {},
  };
  await kv.set(keys.audit(o.accountId, o.auditId), audit);
  await kv.set(keys.auditOwner(o.auditId), o.accountId);
  return issues;
}
