/**
 * The Markdown summary of a completed audit: at most 2 KB whatever the audit holds, with the
 * score and category deltas against the previous audit, new / fixed / persisting, "Fix first"
 * (by impact × √reach) with counts, effort and fix, the share link when given, the JSON link; the same text at
 * `/summary.md`, `?format=markdown`, `Accept: text/markdown` and the MCP audits tool's `summary`;
 * and the rules of every `/v1` read (401, 404 for another account's audit, 409 before completion).
 */
import assert from "node:assert/strict";
import { checkDoc } from "../../domain/audit_engine/check_docs.ts";
import { ALL_CHECKS, CHECKS_BY_ID } from "../../domain/audit_engine/checks/index.ts";
import { IMPACT_WEIGHT } from "../../domain/audit_engine/fix_first.ts";
import type { StoredIssue } from "../../domain/audits/compare.ts";
import type { AuditRecord } from "../../domain/audits/record.ts";
import { renderSummary, SUMMARY_MAX_BYTES } from "../../domain/audits/summary_markdown.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { SEED_CATEGORIES, seedCompletedAudit } from "../helpers/seed_audit.ts";
import { connectMcp } from "../mcp/helpers.ts";

const bytes = (s: string) => new TextEncoder().encode(s).length;

async function markdown(app: TestApp, key: string, path: string, headers = {}) {
  const res = await fetch(app.url + path, {
    headers: { authorization: `Bearer ${key}`, ...headers },
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** An account with a project, and two completed audits of it (the second compared with the first). */
async function twoAudits(app: TestApp, name?: string) {
  const { key, accountId } = await app.signup();
  const proj = await app.req("POST", "/v1/projects", {
    key,
    body: { url: "https://big.example", ...(name ? { name } : {}) },
  });
  assert.equal(proj.status, 201, proj.text);
  const projectId = proj.body.project_id as string;
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId,
    auditId: "aud_previous00000000001",
    pages: 40,
    score: 65,
    completedAt: Date.parse("2026-11-10T00:00:00Z"),
    extraFindings: { hsts_missing: [{ strict_transport_security: null }] },
  });
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId,
    auditId: "aud_current000000000001",
    pages: 120,
    score: 72,
    previousAuditId: "aud_previous00000000001",
    categories: { ...SEED_CATEGORIES, performance: 95, indexability: 60 },
    extraFindings: { viewport_missing: [{ viewport: null }] },
  });
  return { key, accountId, projectId, auditId: "aud_current000000000001" };
}

Deno.test("summary: score, deltas, Fix first with effort and fix, the links; one text everywhere", () =>
  withApp(async (app) => {
    const { key, auditId } = await twoAudits(app);
    const res = await markdown(app, key, `/v1/audits/${auditId}/summary.md`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get("content-type"), "text/markdown; charset=utf-8");
    assert.ok(res.headers.get("x-ratelimit-limit"));
    const text = res.text;
    assert.ok(bytes(text) <= SUMMARY_MAX_BYTES, `${bytes(text)} bytes`);

    assert.match(text, /\*\*Score 72\/100\*\* \(\+7\)/);
    assert.match(text, /2026-11-20 · 120 URLs fetched/);
    assert.match(text, /Performance 95 \(\+5\) · Security 80 \(=\) · Indexability 60 \(−10\)/);
    assert.match(
      text,
      /Since the previous audit \(aud_previous00000000001\): 1 new, 1 fixed, 5 persisting issues\./,
    );
    assert.ok(text.includes(`\nFixed: ${CHECKS_BY_ID.get("hsts_missing")!.title}\n`));

    // "Fix first": the open issues by impact weight × √reach (reach = affected ÷ eligible), computed here
    // from the JSON listing and each check's declared impact, each with its count and fix.
    const all = (await app.req("GET", `/v1/audits/${auditId}/issues`, { key })).body.data
      .filter((i: { change: string }) => i.change !== "fixed");
    assert.equal(all.length, 6);
    const priority = (i: { check: string; affected_count: number; eligible_count: number }) =>
      IMPACT_WEIGHT[CHECKS_BY_ID.get(i.check)!.impact] *
      Math.sqrt(i.affected_count / i.eligible_count);
    const expected = [...all].filter((i) => CHECKS_BY_ID.get(i.check)!.impact > 0)
      .sort((a, b) => priority(b) - priority(a));
    const lines = text.split("\n").filter((l) => /^\d\. /.test(l));
    assert.equal(lines.length, Math.min(5, expected.length));
    assert.match(text, new RegExp(`\\*\\*Fix first\\*\\* \\(${lines.length} of 6 issues`));
    lines.forEach((line, n) => {
      const issue = expected[n];
      const check = CHECKS_BY_ID.get(issue.check)!;
      assert.ok(line.startsWith(`${n + 1}. **${check.title}**: `), `${n}: ${line}`);
      assert.ok(
        line.includes(`${issue.affected_count} of ${issue.eligible_count} affected`),
        line,
      );
      assert.ok(line.includes(`effort ${check.effort}`), line);
      assert.ok(!line.includes(check.id), "titles, not ids, for people");
      const fix = checkDoc(check).fix.replace(/[\\`*[\]<>]/g, (c) => `\\${c}`);
      assert.ok(line.endsWith(fix) || line.endsWith("…"), line);
    });
    assert.match(
      text,
      new RegExp(`\nFull audit \\(JSON\\): https?://\\S+/v1/audits/${auditId}\n$`),
    );
    assert.ok(!text.includes("Report:"), "no share link until the audit has one");

    // The same text from the audit itself and through Accept; JSON stays the default.
    const viaFormat = await markdown(app, key, `/v1/audits/${auditId}?format=markdown`);
    assert.equal(viaFormat.headers.get("content-type"), "text/markdown; charset=utf-8");
    assert.equal(viaFormat.text, text);
    const viaAccept = await markdown(app, key, `/v1/audits/${auditId}`, {
      accept: "text/markdown",
    });
    assert.equal(viaAccept.text, text);
    const json = await app.req("GET", `/v1/audits/${auditId}`, { key });
    assert.equal(json.body.score, 72);

    // The MCP audits tool answers the same text.
    const client = await connectMcp(app, { key });
    try {
      const answer = await client.callTool({
        name: "audits",
        arguments: { action: "summary", audit_id: auditId },
      });
      assert.equal(answer.isError, undefined);
      // deno-lint-ignore no-explicit-any
      const structured = answer.structuredContent as any;
      // The Markdown is the text; the structured result names it, not a second copy.
      assert.equal(
        structured.markdown_url,
        `${app.service.services.deps.config.publicBaseUrl}/v1/audits/${auditId}/summary.md`,
      );
      assert.equal(structured.audit_id, auditId);
      // deno-lint-ignore no-explicit-any
      assert.ok(((answer.content as any[])[0].text as string).startsWith(text));
    } finally {
      await client.close();
    }

    // Once the audit has a live share link, the summary carries it; revoked, it is gone again.
    const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
    assert.equal(share.status, 201, share.text);
    const shared = await markdown(app, key, `/v1/audits/${auditId}/summary.md`);
    assert.ok(shared.text.includes(`Report: ${share.body.url}\n`), shared.text);
    assert.ok(bytes(shared.text) <= SUMMARY_MAX_BYTES);
    const revoked = await app.req("DELETE", `/v1/audits/${auditId}/shares/${share.body.share_id}`, {
      key,
    });
    assert.equal(revoked.status, 200, revoked.text);
    const after = await markdown(app, key, `/v1/audits/${auditId}/summary.md`);
    assert.ok(!after.text.includes("Report:"), after.text);
  }));

Deno.test("summary: 401 without a key, 404 for another account's audit, 409 before completion", () =>
  withApp(async (app) => {
    const { key, projectId, auditId } = await twoAudits(app);
    const other = await app.signup();
    for (
      const path of [`/v1/audits/${auditId}/summary.md`, `/v1/audits/${auditId}?format=markdown`]
    ) {
      const foreign = await app.req("GET", path, { key: other.key });
      assert.equal(errorCode(foreign), "not_found");
      assert.equal(foreign.status, 404);
      const anonymous = await app.req("GET", path);
      assert.equal(errorCode(anonymous), "unauthorized");
    }
    const started = await app.req("POST", `/v1/projects/${projectId}/audits`, { key });
    assert.equal(started.status, 202, started.text);
    const queued = await app.req("GET", `/v1/audits/${started.body.audit_id}/summary.md`, { key });
    assert.equal(queued.status, 409);
    assert.equal(errorCode(queued), "invalid_state");
    // The audit's JSON is unchanged.
    const json = await app.req("GET", `/v1/audits/${started.body.audit_id}`, { key });
    assert.equal(json.status, 200);
    assert.equal(json.body.audit_id, started.body.audit_id);
  }));

Deno.test("summary: a pathological audit stays within 2 KB over HTTP (long name, many issues)", () =>
  withApp(async (app) => {
    // 120 four-byte characters: the longest name a project takes, in bytes.
    const name = "😀".repeat(120);
    const many = Object.fromEntries(
      ALL_CHECKS.filter((c) => c.severity === "critical").map((c) => [c.id, [{ filler: "x" }]]),
    );
    const { key, accountId, projectId } = await twoAudits(app, name);
    await seedCompletedAudit(app.kv, {
      accountId,
      projectId,
      auditId: "aud_many00000000000001",
      pages: 50,
      previousAuditId: "aud_current000000000001",
      extraFindings: many,
    });
    const res = await markdown(app, key, "/v1/audits/aud_many00000000000001/summary.md");
    assert.equal(res.status, 200);
    assert.ok(bytes(res.text) <= SUMMARY_MAX_BYTES, `${bytes(res.text)} bytes`);
    assert.ok(res.text.endsWith("/v1/audits/aud_many00000000000001\n"));
    assert.match(res.text, /\*\*Fix first\*\* \(\d of \d+ issues/);
  }));

Deno.test("summary: the cap holds for any input, keeps the links, and carries a share link", () => {
  const huge = "Ω".repeat(10_000);
  const audit: AuditRecord = {
    id: "aud_x",
    accountId: "acc",
    projectId: "proj",
    status: "completed",
    funding: { kind: "sandbox" },
    createdAt: 0,
    runningAt: 0,
    completedAt: 0,
    score: 3,
    summary: {
      issues_critical: 10 ** 9,
      issues_warning: 10 ** 9,
      issues_info: 10 ** 9,
      top_issues: [],
      categories: SEED_CATEGORIES,
    },
    error: null,
    attempts: 1,
    leaseUntil: 0,
    jobsCompleted: 10 ** 9,
    jobsFailed: 10 ** 9,
    changes: { previous_audit_id: huge, new: 1, persisting: 2, fixed: 3 },
    limitsHit: Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`cap_${i}_${huge.slice(0, 50)}`, {}]),
    ),
  };
  const issues: StoredIssue[] = ALL_CHECKS.map((c, i) => ({
    check: c.id,
    affected: 10 ** 9 - i,
    eligible: 10 ** 9,
    stored: 2000,
    change: i % 4 === 0 ? "fixed" : "new",
  }));
  for (
    const shareUrl of [null, "https://serpwright.example/r/tok_abc", `https://x.example/${huge}`]
  ) {
    const text = renderSummary({
      audit,
      project: { name: huge, url: `https://${huge}.example` },
      previous: { ...audit, score: 90 },
      issues,
      baseUrl: "https://api.example",
      links: { shareUrl },
    });
    assert.ok(bytes(text) <= SUMMARY_MAX_BYTES, `${bytes(text)} bytes`);
    assert.ok(text.endsWith("Full audit (JSON): https://api.example/v1/audits/aud_x\n"), text);
    if (shareUrl) assert.match(text, /^Report: https:\/\/(serpwright|x)\.example\//m);
    if (shareUrl?.includes("tok_abc")) assert.ok(text.includes(`Report: ${shareUrl}\n`));
    assert.match(text, /\*\*Score 3\/100\*\* \(−87\)/);
    assert.ok(text.includes("\n1. **"), `at least the worst issue:\n${text}`);
  }
});
