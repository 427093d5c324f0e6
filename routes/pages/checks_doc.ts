/**
 * `GET /docs/checks`: every audit check from the catalogue (domain/audit_engine/checks), with its
 * category, severity, what it detects, what it means and how to fix it. Each check's section has
 * `id="<check id>"`, the anchor every issue's `doc_url` points at.
 */
import { ALL_CHECKS, CHECK_DOCS, checkDoc, FINDINGS_CAP } from "../../domain/audit_engine/mod.ts";
import { CATEGORIES } from "../../domain/audit_engine/types.ts";
import { html, layout, table } from "./layout.ts";

export function checksPage(baseUrl: string): string {
  const b = baseUrl;
  const sections = CATEGORIES.map((cat) => {
    const checks = ALL_CHECKS.filter((c) => c.category === cat);
    return html`
      <h2 id="category-${cat}">${cat}</h2>
      ${table(
        ["Check", "Severity", "Scope"],
        checks.map((c) => [html`<a href="#${c.id}"><code>${c.id}</code></a>`, c.severity, c.scope]),
      )}
      ${checks.map((c) => {
        const doc = checkDoc(c);
        return html`
          <section class="code-entry" id="${c.id}">
            <h3><code>${c.id}</code>: ${c.title}</h3>
            <p><strong>${c.severity}</strong>, ${c.category}, ${c.scope === "page"
              ? "checked on each page"
              : "checked on the site as a whole"}</p>
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
    <code>info</code> checks are listed and never scored. See the
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
