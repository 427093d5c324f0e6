/**
 * "Fix first" through the real app (issue 31): a fixture site audited twice over HTTP; the audit's
 * `summary.fix_first` is ordered by each check's declared impact weight × √reach (recomputed here
 * from the issues listing), and the Markdown summary, the HTML report and the MCP answer lead
 * with the same items in the same order. The report opens with an executive summary (score,
 * trend, three things to do this week), groups the issues by category under a chart, and shows
 * check titles where people read, ids only in links and anchors.
 */
import assert from "node:assert/strict";
import { CHECK_DOCS } from "../../domain/audit_engine/check_docs.ts";
import { CHECKS_BY_ID } from "../../domain/audit_engine/checks/index.ts";
import { IMPACT_WEIGHT } from "../../domain/audit_engine/fix_first.ts";
import { withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { serveSite } from "../helpers/sites.ts";
import { connectMcp } from "../mcp/helpers.ts";
import { assertInert, auditOnce, hostileSite, parsePage } from "./fixture.ts";

const DAY = 86_400_000;

interface Issue {
  check: string;
  title: string;
  affected_count: number;
  eligible_count: number;
  change: string;
}
interface FixItem extends Issue {
  impact: number;
  effort: string;
  reach: number;
  priority: number;
  cost: string;
  fix: string;
}

/** The part of `markup` from the element with this id to the end of its section. */
function section(markup: string, id: string): string {
  const start = markup.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `section ${id}`);
  return markup.slice(start, markup.indexOf("</section>", start));
}

Deno.test("fix first: ordered by impact × √reach, the same in the JSON, the Markdown, the report and MCP", () =>
  withApp(async (app) => {
    const state = { fixed: false };
    const site = serveSite(hostileSite(24, state));
    try {
      const { live } = await liveWithCredits(app, 200);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const previous = await auditOnce(app, live, proj.body.project_id);
      state.fixed = true;
      app.clock.advance(DAY);
      const auditId = await auditOnce(app, live, proj.body.project_id);
      const before = (await app.req("GET", `/v1/audits/${previous}`, { key: live })).body;
      const audit = (await app.req("GET", `/v1/audits/${auditId}`, { key: live })).body;

      // The JSON: the weights decide the order, recomputed here from the issues listing.
      const issues: Issue[] = (await app.req("GET", `/v1/audits/${auditId}/issues?limit=100`, {
        key: live,
      })).body.data.filter((i: Issue) => i.change !== "fixed");
      const priority = (i: Issue) =>
        IMPACT_WEIGHT[CHECKS_BY_ID.get(i.check)!.impact] *
        Math.sqrt(i.affected_count / i.eligible_count);
      const expected = issues.filter((i) => CHECKS_BY_ID.get(i.check)!.impact > 0)
        .map(priority).sort((a, b) => b - a).slice(0, 5);
      const first: FixItem[] = audit.summary.fix_first;
      assert.equal(first.length, expected.length);
      assert.ok(first.length >= 3, JSON.stringify(first));
      first.forEach((f, n) => {
        const issue = issues.find((i) => i.check === f.check)!;
        const check = CHECKS_BY_ID.get(f.check)!;
        assert.equal(f.affected_count, issue.affected_count);
        assert.equal(f.eligible_count, issue.eligible_count);
        assert.ok(Math.abs(priority(issue) - expected[n]) < 1e-9, `${n}: ${f.check}`);
        assert.equal(f.priority, Math.round(expected[n] * 1000) / 1000);
        assert.deepEqual([f.title, f.impact, f.effort], [check.title, check.impact, check.effort]);
        assert.deepEqual([f.cost, f.fix], [CHECK_DOCS[f.check].meaning, CHECK_DOCS[f.check].fix]);
      });
      // A broken link on one page of 28 is among them; hygiene (impact 1) on every page is not.
      assert.ok(first.some((f) => f.check === "broken_internal_links"), JSON.stringify(first));
      assert.ok(first.every((f) => f.impact > 1), JSON.stringify(first));
      const order = first.map((f) => f.check);

      // The Markdown summary lists the same items, by title, in the same order.
      const md = await (await fetch(`${app.url}/v1/audits/${auditId}/summary.md`, {
        headers: { authorization: `Bearer ${live}` },
      })).text();
      const mdTitles = md.split("\n").filter((l) => /^\d\. \*\*/.test(l))
        .map((l) => /^\d\. \*\*(.+?)\*\*/.exec(l)![1]);
      assert.deepEqual(mdTitles, first.slice(0, mdTitles.length).map((f) => f.title));
      assert.ok(mdTitles.length >= 3, md);
      assert.ok(md.indexOf("**Fix first**") > 0, md);

      // The report: the executive summary first (score, trend, three actions), then Fix first.
      const res = await app.req("GET", `/v1/audits/${auditId}/report`, { key: live });
      assert.equal(res.status, 200);
      const markup = res.text;
      const parsed = assertInert(markup, "report");
      const exec = section(markup, "exec-h");
      assert.ok(markup.indexOf('id="exec-h"') < markup.indexOf('id="fix-h"'));
      assert.ok(markup.indexOf('id="fix-h"') < markup.indexOf('id="score-h"'));
      const execText = parsePage(exec).text.replace(/\s+/g, " ");
      assert.ok(execText.includes(`scores ${audit.score} out of 100`), execText);
      const delta = audit.score - before.score;
      assert.ok(
        execText.includes(
          delta === 0
            ? "unchanged since the previous audit"
            : `${delta > 0 ? "up" : "down"} ${Math.abs(delta)} point`,
        ),
        execText,
      );
      assert.ok(execText.includes(`(${before.score})`), execText);
      const actions = [...exec.matchAll(/<li><a href="#fix-([a-z0-9_]+)">/g)].map((m) => m[1]);
      assert.deepEqual(actions, order.slice(0, 3));
      const fixIds = [...section(markup, "fix-h").matchAll(/<li id="fix-([a-z0-9_]+)">/g)]
        .map((m) => m[1]);
      assert.deepEqual(fixIds, order);
      for (const f of first) assert.ok(parsed.text.includes(f.title), f.title);

      // Issues grouped by category, under a chart of where they are.
      const issuesPart = section(markup, "issues-h");
      assert.match(issuesPart, /<svg class="chart stacked"/);
      const cats = [...issuesPart.matchAll(/<h3 id="cat-([a-z]+)">/g)].map((m) => m[1]);
      const fired = new Set(issues.map((i) => CHECKS_BY_ID.get(i.check)!.category));
      assert.deepEqual(
        cats,
        ["indexability", "structure", "security", "performance", "mobile", "agents"].filter((c) =>
          fired.has(c as never)
        ),
      );

      // Titles where people read: no fired check's id in the report's text (doc texts, which
      // name related checks, aside), only in links and anchors.
      let text = parsed.text;
      for (const doc of Object.values(CHECK_DOCS)) {
        text = text.replaceAll(doc.meaning, "").replaceAll(doc.fix, "");
      }
      for (const i of issues) {
        assert.ok(!text.includes(i.check), `${i.check} shown as an id`);
        assert.ok(markup.includes(`id="issue-${i.check}"`));
      }

      // The MCP answer: the same items first, by title.
      const client = await connectMcp(app, { key: live });
      try {
        const got = await client.callTool({
          name: "audits",
          arguments: { action: "get", audit_id: auditId },
        });
        // deno-lint-ignore no-explicit-any
        const said = (got.content as any[])[0].text as string;
        const line = said.split("\n")[0];
        let at = line.indexOf("Fix first: ");
        assert.ok(at > 0, said);
        for (const f of first.slice(0, 3)) {
          const next = line.indexOf(f.title, at);
          assert.ok(next > at, `${f.title} in order: ${line}`);
          at = next;
        }
        for (const i of issues) assert.ok(!line.includes(i.check), `${i.check} in ${line}`);
      } finally {
        await client.close();
      }
    } finally {
      await site.close();
    }
  }));
