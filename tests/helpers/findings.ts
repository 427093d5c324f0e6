/**
 * Everything the API serves about an audit's findings and pages, timings left out: what two
 * audits of one site compare equal on when only the way they ran differs (a KV far away, a memo
 * switched off).
 *
 * @module
 */
import assert from "node:assert/strict";
import type { TestApp } from "./app.ts";

/** `v` without its timings (`*_ms` fields), which differ from one fetch to the next. */
export function untimed(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(untimed);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v).filter(([k]) => !k.endsWith("_ms")).map(([k, x]) => [k, untimed(x)]),
  );
}

/** The audit's score, summary, issues, every issue's items and its pages (up to 100 each). */
export async function auditFindings(app: TestApp, key: string, auditId: string) {
  const base = `/v1/audits/${auditId}`;
  const issues = await app.req("GET", `${base}/issues?limit=100`, { key });
  assert.equal(issues.status, 200, issues.text);
  const items: Record<string, unknown> = {};
  for (const i of issues.body.data as { check: string }[]) {
    const r = await app.req("GET", `${base}/issues/${i.check}?limit=100`, { key });
    items[i.check] = r.body.data;
  }
  const pages = await app.req("GET", `${base}/pages?limit=100`, { key });
  const audit = (await app.req("GET", base, { key })).body;
  return untimed({
    score: audit.score,
    summary: audit.summary,
    issues: (issues.body.data as Record<string, unknown>[]).map(({ check, affected_count }) => ({
      check,
      affected_count,
    })),
    items,
    pages: pages.body.data,
  });
}
