/**
 * "Fix first" (domain/audit_engine/fix_first.ts): every check declares an impact and an effort,
 * and the list ranks findings by impact weight × √reach, so a broken link or a missing title on a
 * few pages leads hygiene headers missing on nearly all of them (the shop of issue 31).
 */
import assert from "node:assert/strict";
import { ALL_CHECKS, CHECKS_BY_ID } from "../../domain/audit_engine/checks/index.ts";
import { FIX_FIRST_SIZE, fixFirst, IMPACT_WEIGHT } from "../../domain/audit_engine/fix_first.ts";

Deno.test("every check declares an impact 0–5 and an effort", () => {
  for (const c of ALL_CHECKS) {
    assert.ok(Number.isInteger(c.impact) && c.impact >= 0 && c.impact <= 5, c.id);
    assert.ok(["low", "medium", "high"].includes(c.effort), c.id);
  }
  // Indexability blockers and broken paths weigh more than hygiene headers.
  const impact = (id: string) => CHECKS_BY_ID.get(id)!.impact;
  for (const heavy of ["noindex_sitewide", "broken_internal_links", "title_missing", "http_4xx"]) {
    for (const light of ["csp_missing", "clickjacking_unprotected", "hsts_missing"]) {
      assert.ok(impact(heavy) > impact(light), `${heavy} above ${light}`);
    }
  }
});

Deno.test("fix first: impact × √reach, broken paths above headers on every page", () => {
  // A 27-page shop: headers missing on 23 pages, three pages without a title, two pages with
  // broken links, the ai crawler rules (a fact, impact 0).
  const counts = [
    { check: "clickjacking_unprotected", eligible: 27, affected: 23 },
    { check: "csp_missing", eligible: 27, affected: 23 },
    { check: "mime_sniffing_unprotected", eligible: 27, affected: 23 },
    { check: "title_missing", eligible: 27, affected: 3 },
    { check: "broken_internal_links", eligible: 27, affected: 2 },
    { check: "meta_description_missing", eligible: 27, affected: 20 },
    { check: "ai_crawler_rules", eligible: 1, affected: 1 },
    { check: "no_such_check", eligible: 1, affected: 1 },
  ];
  const list = fixFirst(counts);
  assert.equal(list.length, FIX_FIRST_SIZE);
  assert.deepEqual(list.slice(0, 3).map((i) => i.check), [
    "title_missing",
    "broken_internal_links",
    "meta_description_missing",
  ]);
  assert.ok(!list.some((i) => i.check === "ai_crawler_rules" || i.check === "no_such_check"));
  // The order is the priority, and the priority the declared weight times the reach.
  for (const item of list) {
    const c = counts.find((x) => x.check === item.check)!;
    const reach = c.affected / c.eligible;
    assert.equal(item.reach, Math.round(reach * 1000) / 1000);
    assert.equal(
      item.priority,
      Math.round(IMPACT_WEIGHT[CHECKS_BY_ID.get(c.check)!.impact] * Math.sqrt(reach) * 1000) / 1000,
    );
    assert.equal(item.title, CHECKS_BY_ID.get(c.check)!.title);
    assert.ok(item.cost.length > 20 && item.fix.length > 10);
  }
  for (let i = 1; i < list.length; i++) assert.ok(list[i - 1].priority >= list[i].priority);
  // Nothing fired, or only facts: nothing to fix first.
  assert.deepEqual(fixFirst([{ check: "noindex", eligible: 27, affected: 4 }]), []);
  assert.deepEqual(fixFirst([{ check: "title_missing", eligible: 27, affected: 0 }]), []);
});

Deno.test("docs/audit.md lists every check's impact and effort", async () => {
  const doc = await Deno.readTextFile(new URL("../../docs/audit.md", import.meta.url));
  for (const c of ALL_CHECKS) {
    const row = new RegExp(
      "\\| `" + c.id + "`\\s*\\| " + c.category + "\\s*\\| " + c.impact + "\\s*\\| " + c.effort +
        "\\s*\\|",
    );
    assert.match(doc, row, `${c.id}: impact ${c.impact}, effort ${c.effort} missing from the docs`);
  }
});
