/**
 * `GET /docs/checks`: every audit check from the catalogue (domain/audit_engine/checks), with its
 * category, severity, impact and effort (the "Fix first" scale), what it detects, what it means
 * and how to fix it. Each check's section has
 * `id="<check id>"`, the anchor every issue's `doc_url` points at.
 */
import {
  ALL_CHECKS,
  CHECK_DOCS,
  checkDoc,
  FINDINGS_CAP,
  IMPACT_NAMES,
  IMPACT_WEIGHT,
} from "../../domain/audit_engine/mod.ts";
import type { Impact } from "../../domain/audit_engine/types.ts";
import { CATEGORIES } from "../../domain/audit_engine/types.ts";
import { html, layout, table } from "./layout.ts";

const IMPACT_MEANINGS: Record<Impact, string> = {
  5: `${IMPACT_NAMES[5]}: keeps the site or its pages out of search`,
  4: `${IMPACT_NAMES[4]}: loses pages or the paths to them (broken links, errors, no title)`,
  3: `${IMPACT_NAMES[3]}: weakens how pages rank or show (canonicals, duplicates, speed)`,
  2: `${IMPACT_NAMES[2]}: costs a little in ranking, snippets or experience`,
  1: `${IMPACT_NAMES[1]}: little or no direct search cost (security headers, markup details)`,
  0: `${IMPACT_NAMES[0]}: a fact to know, often intended; never in Fix first`,
};

export function checksPage(baseUrl: string): string {
  const b = baseUrl;
  const sections = CATEGORIES.map((cat) => {
    const checks = ALL_CHECKS.filter((c) => c.category === cat);
    return html`
      <h2 id="category-${cat}">${cat}</h2>
      ${table(
        ["Check", "Severity", "Impact", "Effort", "Scope"],
        checks.map((c) => [
          html`<a href="#${c.id}"><code>${c.id}</code></a>`,
          c.severity,
          `${c.impact} (${IMPACT_NAMES[c.impact]})`,
          c.effort,
          c.scope,
        ]),
      )}
      ${checks.map((c) => {
        const doc = checkDoc(c);
        return html`
          <section class="code-entry" id="${c.id}">
            <h3><code>${c.id}</code>: ${c.title}</h3>
            <p><strong>${c.severity}</strong>, ${c.category}, ${c.scope === "page"
              ? "checked on each page"
              : "checked on the site as a whole"}; impact ${c.impact} (${IMPACT_NAMES[
                c.impact
              ]}), effort ${c.effort}</p>
            <p><strong>Detects:</strong> ${c.detects}</p>
            <p><strong>What it means:</strong> ${doc.meaning}</p>
            <p><strong>How to fix:</strong> ${doc.fix}</p>
          </section>
        `;
      })}
    `;
  });
  const body = html`
    <h1>Audit checks</h1>
    <p>Every check a technical audit runs, by category. A completed audit lists the checks that
    fired at <code>GET /v1/audits/{auditId}/issues</code> (each with its <code>doc_url</code>, an
    anchor on this page) and the affected items with their evidence at
    <code>GET /v1/audits/{auditId}/issues/{check}</code>. At most ${FINDINGS_CAP.toLocaleString(
      "en",
    )}
    items are stored per check; <code>affected_count</code> is always the true count.
    ${ALL_CHECKS.length} checks, ${Object.keys(CHECK_DOCS).length} with written guidance.</p>
    <p>Scoring: <code>critical</code> and <code>warning</code> checks lower the score,
    <code>info</code> checks are listed and never scored.</p>
    <h2 id="impact">Impact, effort and "Fix first"</h2>
    <p>Each check also says what its finding costs in search (impact) and what fixing it usually
    takes (effort: low, a setting, a header or a tag; medium, template work or an edit per page;
    high, a project). An audit's <code>summary.fix_first</code>, the report and the Markdown summary
    lead with the at most 5 findings of the largest weight × reach, reach being the share of the
    pages (or items) the check examined that it found affected (1 for a site-wide finding).</p>
    ${table(
      ["Impact", "Meaning", "Weight"],
      ([5, 4, 3, 2, 1, 0] as Impact[]).map((i) => [
        String(i),
        IMPACT_MEANINGS[i],
        String(IMPACT_WEIGHT[i]),
      ]),
    )}
    <p>See the
    <a href="${b}/docs/agents#audit">quickstart</a> for the calls.</p>
    ${sections}
  `;
  return layout({
    baseUrl: b,
    path: "/docs/checks",
    title: "Audit checks: Serpwright API",
    description: "Every Serpwright audit check: what it detects, what it means and how to fix it.",
    body,
  });
}
