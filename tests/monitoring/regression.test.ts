import assert from "node:assert/strict";
import {
  type ComparedIssue,
  MAX_LISTED,
  regressionFields,
} from "../../domain/audits/regression.ts";

const cats = (n: number) => ({
  performance: n,
  security: n,
  indexability: n,
  mobile: n,
  structure: n,
});
const issue = (
  check: string,
  severity: ComparedIssue["severity"],
  change: ComparedIssue["change"],
  affected = 3,
): ComparedIssue => ({ check, severity, title: `Title of ${check}`, affected, change });

Deno.test("regression report: new critical and warning issues, fixed issues, score and category deltas", () => {
  const r = regressionFields(
    { auditId: "aud_1", score: 90, categories: { ...cats(90), security: 80 } },
    { auditId: "aud_2", score: 72, categories: { ...cats(90), indexability: 40 } },
    [
      issue("noindex_home", "critical", "new", 1),
      issue("title_missing", "warning", "new", 4),
      issue("alt_missing", "info", "new"),
      issue("meta_description_missing", "warning", "persisting"),
      issue("mixed_content", "critical", "fixed", 0),
    ],
  );
  assert.deepEqual(r.score, { before: 90, after: 72, delta: -18 });
  assert.deepEqual(r.categories.indexability, { before: 90, after: 40, delta: -50 });
  assert.deepEqual(r.categories.security, { before: 80, after: 90, delta: 10 });
  assert.deepEqual(r.new_critical, [
    { check: "noindex_home", title: "Title of noindex_home", affected_count: 1 },
  ]);
  assert.deepEqual(r.new_warning.map((i) => i.check), ["title_missing"]);
  assert.deepEqual(r.fixed_issues, [
    { check: "mixed_content", severity: "critical", title: "Title of mixed_content" },
  ]);
  assert.deepEqual(r.counts, { new_critical: 1, new_warning: 1 });
  assert.equal(r.regressed, true);
  assert.deepEqual(r.reasons, ["score_dropped", "new_critical_issues"]);
});

Deno.test("regression report: only a score drop or a new critical issue regresses", () => {
  const prev = { auditId: "a", score: 80, categories: cats(80) };
  const same = regressionFields(prev, { auditId: "b", score: 80, categories: cats(80) }, [
    issue("title_missing", "warning", "new"),
  ]);
  assert.equal(same.regressed, false, "a new warning alone does not regress");
  const better = regressionFields(prev, { auditId: "b", score: 85, categories: cats(85) }, [
    issue("noindex_home", "critical", "new"),
  ]);
  assert.deepEqual(better.reasons, ["new_critical_issues"]);
  const lower = regressionFields(prev, { auditId: "b", score: 79, categories: cats(79) }, []);
  assert.deepEqual(lower.reasons, ["score_dropped"]);
  const first = regressionFields(null, prev, [issue("noindex_home", "critical", "new", 1)]);
  assert.equal(first.score, null, "no previous audit, no score delta");
  assert.deepEqual(first.categories, {});
  assert.deepEqual(first.new_critical.map((i) => i.check), ["noindex_home"]);
  assert.equal(first.regressed, false, "a first audit never regresses");
  assert.deepEqual(first.reasons, []);
});

Deno.test("regression fields: lists stop at MAX_LISTED, counts stay true", () => {
  const many = Array.from(
    { length: MAX_LISTED + 5 },
    (_, n) => issue(`check_${n}`, "warning", "new"),
  );
  const r = regressionFields(
    { auditId: "a", score: 80, categories: cats(80) },
    { auditId: "b", score: 80, categories: cats(80) },
    many,
  );
  assert.equal(r.new_warning.length, MAX_LISTED);
  assert.equal(r.counts.new_warning, MAX_LISTED + 5);
});
