import assert from "node:assert/strict";
import { checkScore, scoreAudit, SCORING } from "../../domain/audit_engine/scoring.ts";
import { ALL_CHECKS } from "../../domain/audit_engine/checks/index.ts";
import { CATEGORIES, type Category, type CheckTally } from "../../domain/audit_engine/types.ts";
import { extractPageFacts } from "../../domain/audit_engine/facts/extract.ts";

function allClean(eligible = 10): Map<string, CheckTally> {
  return new Map(ALL_CHECKS.map((c) => [c.id, { eligible, affected: 0 }]));
}

Deno.test("catalogue: at least 40 checks, unique snake_case ids, all six categories", () => {
  assert.ok(ALL_CHECKS.length >= 40);
  const ids = ALL_CHECKS.map((c) => c.id);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids) assert.match(id, /^[a-z0-9]+(_[a-z0-9]+)*$/);
  const cats = new Set(ALL_CHECKS.map((c) => c.category));
  assert.deepEqual([...cats].sort(), [...CATEGORIES].sort());
});

Deno.test("scoring is monotone: more affected pages never raise any score", () => {
  for (const check of ALL_CHECKS) {
    let prev = scoreAudit(ALL_CHECKS, allClean());
    assert.equal(prev.score, 100);
    for (let a = 1; a <= 10; a++) {
      const t = allClean();
      t.set(check.id, { eligible: 10, affected: a });
      const cur = scoreAudit(ALL_CHECKS, t);
      assert.ok(cur.score <= prev.score, `${check.id} a=${a}`);
      for (const [cat, v] of Object.entries(cur.summary.categories)) {
        assert.ok(v <= prev.summary.categories[cat as Category], `${check.id} ${cat}`);
      }
      prev = cur;
    }
  }
});

Deno.test("severity order and info weighs nothing", () => {
  assert.equal(checkScore({ eligible: 4, affected: 0 }), 1);
  assert.equal(checkScore({ eligible: 4, affected: 4 }), 0);
  const info = allClean();
  info.set("thin_content", { eligible: 10, affected: 10 });
  const r = scoreAudit(ALL_CHECKS, info);
  assert.equal(r.score, 100);
  assert.equal(r.summary.issues_info, 10);
  const warn = allClean();
  warn.set("h1_missing", { eligible: 10, affected: 5 });
  const crit = allClean();
  crit.set("title_missing", { eligible: 10, affected: 5 });
  assert.ok(scoreAudit(ALL_CHECKS, crit).score < scoreAudit(ALL_CHECKS, warn).score);
});

Deno.test("top issues: grouped per check, worst first, at most 10; caps apply", () => {
  const t = allClean();
  const ids = ALL_CHECKS.map((c) => c.id);
  ids.forEach((id, i) => t.set(id, { eligible: 100, affected: (i % 7) + 1 }));
  const r = scoreAudit(ALL_CHECKS, t);
  assert.equal(r.summary.top_issues.length, SCORING.topIssues);
  const rank = { critical: 0, warning: 1, info: 2 };
  for (let i = 1; i < r.summary.top_issues.length; i++) {
    const a = r.summary.top_issues[i - 1];
    const b = r.summary.top_issues[i];
    assert.ok(
      rank[a.severity] < rank[b.severity] ||
        (rank[a.severity] === rank[b.severity] && a.affected_count >= b.affected_count),
    );
  }
  const capped = allClean();
  capped.set("home_page_error", { eligible: 1, affected: 1 });
  assert.ok(scoreAudit(ALL_CHECKS, capped).score <= 30);
  const robots = allClean();
  robots.set("robots_txt_unreachable", { eligible: 1, affected: 1 });
  assert.ok(scoreAudit(ALL_CHECKS, robots).score <= 79);
});

Deno.test("page facts: one pass extracts what the checks need", () => {
  const f = extractPageFacts(
    `<!doctype html><html lang="de"><head><meta charset="utf-8"><title> Hi  there </title>
    <meta name="description" content="d"><link rel="canonical" href="https://s.test/c">
    <meta name="robots" content="NOINDEX"><script src="/a.js"></script></head>
    <body><svg><title>icon</title></svg><h1>One</h1><h3>skip</h3>
    <a href="/x#frag">read more</a><a href="//s.test//y/">y</a><a href="https://other.test/">o</a>
    <a href="javascript:void(0)">j</a><a>no href</a><img src="a.png"><img alt="" src="b.png" width="1" height="2">
    <picture><source srcset="x.webp"></picture><object data="x.swf"></object>
    <script type="application/ld+json">{"@context":"https://schema.org","@type":"Thing"}</script>
    <meta name="description" content="late"></body></html>`,
    new URL("https://s.test/page"),
    "s.test",
  );
  assert.equal(f.hasDoctype, true);
  assert.equal(f.htmlLang, "de");
  assert.equal(f.title, "Hi there");
  assert.equal(f.titleCount, 1);
  assert.equal(f.descriptionCount, 2);
  assert.equal(f.headTagsInBody, 1);
  assert.equal(f.robotsMeta, "noindex");
  assert.deepEqual(f.canonicals, ["https://s.test/c"]);
  assert.equal(f.h1, "One");
  assert.equal(f.headingSkip, true);
  assert.deepEqual(f.links, ["https://s.test/x", "https://s.test/y/"]);
  assert.equal(f.externalLinks, 1);
  assert.equal(f.uncrawlableLinks, 2);
  assert.equal(f.genericLinkTexts, 1);
  assert.equal(f.imgNoAlt, 1);
  assert.equal(f.imgUnsized, 1);
  assert.equal(f.pictureWithoutImg, 1);
  assert.equal(f.plugins, 1);
  assert.equal(f.jsonLdCount, 1);
  assert.equal(f.jsonLdInvalid, 0);
  assert.equal(f.renderBlockingScripts, 1);
  assert.equal(f.charsetEarly, true);
});

Deno.test("no floor: a second and a third defect still lower a category that has one", () => {
  for (const cat of ["indexability", "structure", "security", "performance", "mobile"] as const) {
    // The scored checks of the category, worst first; fire them one by one, each on every page.
    const scored = ALL_CHECKS.filter((c) =>
      c.category === cat && SCORING.severityPenalty[c.severity] > 0 &&
      SCORING.caps[c.id] === undefined
    ).sort((a, b) => SCORING.severityPenalty[b.severity] - SCORING.severityPenalty[a.severity]);
    assert.ok(scored.length >= 3, `${cat} has ${scored.length} scored checks`);
    const t = allClean();
    let prevCat = scoreAudit(ALL_CHECKS, t).summary.categories[cat];
    let prevAll = scoreAudit(ALL_CHECKS, t).score;
    for (const check of scored.slice(0, 3)) {
      t.set(check.id, { eligible: 10, affected: 10 });
      const r = scoreAudit(ALL_CHECKS, t);
      assert.ok(r.summary.categories[cat] < prevCat, `${cat}: ${check.id} did not lower it`);
      assert.ok(r.summary.categories[cat] > 0, `${cat} floored at 0 by ${check.id}`);
      assert.ok(r.score < prevAll, `overall: ${check.id} did not lower it`);
      prevCat = r.summary.categories[cat];
      prevAll = r.score;
    }
  }
});

Deno.test("caps stay ceilings and still tell capped sites apart", () => {
  const a = allClean();
  a.set("home_page_error", { eligible: 1, affected: 1 });
  const b = new Map(a);
  b.set("viewport_missing", { eligible: 10, affected: 10 });
  b.set("title_missing", { eligible: 10, affected: 10 });
  const sa = scoreAudit(ALL_CHECKS, a).score;
  const sb = scoreAudit(ALL_CHECKS, b).score;
  assert.ok(sa <= 30 && sb <= 30, `${sa} ${sb}`);
  assert.ok(sb < sa, `a capped site with more defects scores lower: ${sa} vs ${sb}`);
});

Deno.test("passing checks change nothing; one critical on every page takes half a category", () => {
  const t = new Map<string, CheckTally>([["not_https", { eligible: 4, affected: 4 }]]);
  assert.equal(scoreAudit(ALL_CHECKS, t).summary.categories.security, 50);
  const more = allClean();
  more.set("not_https", { eligible: 4, affected: 4 });
  assert.equal(scoreAudit(ALL_CHECKS, more).summary.categories.security, 50);
  const warn = allClean();
  warn.set("csp_missing", { eligible: 4, affected: 4 });
  assert.equal(scoreAudit(ALL_CHECKS, warn).summary.categories.security, 80);
});
