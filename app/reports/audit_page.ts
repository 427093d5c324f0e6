/**
 * The audit report as one HTML page (`GET /v1/audits/{id}/report` and a share link's
 * `/reports/{token}`): the score as a gauge and the categories as bars, the facts of the
 * crawl and any cap it hit, the project's score history as a line chart, the changes since the
 * previous audit, the issues by severity with their first affected items, the page inventory
 * (filters and pages are plain links: no script, no form), and a rendered audit's lab metrics.
 * With `?issue=<check>` the page lists every affected item of that check instead, a page at a
 * time.
 *
 * Everything that came from the crawled site (titles, URLs, evidence) is text escaped by
 * app/html.ts; a URL becomes a link only when it is absolute http(s) (`safeHref`), with
 * `rel="nofollow noopener noreferrer"`.
 *
 * @module
 */
import {
  type AuditReportData,
  type HistoryPoint,
  ITEMS_PER_ISSUE,
  type PageView,
  type ReportIssue,
  type ReportQuery,
} from "../../domain/audits/mod.ts";
import type { Category, Evidence, LabRecord } from "../../domain/audit_engine/types.ts";
import { THRESHOLDS } from "../../domain/render/mod.ts";
import { clip, type Html, html, safeHref } from "../html.ts";
import { auditView } from "../views.ts";
import { reportDocument } from "./document.ts";
import { bars, gauge, lineChart, scoreBand, type Series, swatch } from "./svg.ts";

export interface AuditPageOptions {
  baseUrl: string;
  /** The path this page answers on (`/reports/{token}` or `/v1/audits/{id}/report`). */
  selfPath: string;
  /** Opened through a share link (no key). */
  shared: boolean;
}

const CATEGORY_NAMES: Record<Category, string> = {
  indexability: "Indexability",
  structure: "Structure",
  security: "Security",
  performance: "Performance",
  mobile: "Mobile",
  agents: "Agents",
};
/** The order the report lists categories: their weight in the overall score. */
const CATEGORY_ORDER: Category[] = [
  "indexability",
  "structure",
  "security",
  "performance",
  "mobile",
];
/**
 * The current audit's categories: the five, then `agents` when the audit has it (audits
 * completed before it existed do not). The history chart keeps the five every audit has.
 */
const categoriesOf = (cats: Partial<Record<Category, number>>): Category[] =>
  typeof cats.agents === "number" ? [...CATEGORY_ORDER, "agents"] : CATEGORY_ORDER;
const SEVERITIES = ["critical", "warning", "info"] as const;
const SEVERITY_NAMES = { critical: "Critical", warning: "Warnings", info: "Notices" };
const STATUS_FILTERS = ["2xx", "3xx", "4xx", "5xx", "failed", "blocked", "not_fetched"] as const;

/** Lines of the history chart: the overall score bold, each category with its own dashes. */
const LINE_STYLES: Record<"overall" | Category, { color: string; dash: string | null }> = {
  overall: { color: "#1b1f24", dash: null },
  indexability: { color: "#0b57d0", dash: "6 3" },
  structure: { color: "#7a3eb1", dash: "2 3" },
  security: { color: "#0a7a32", dash: "10 3 2 3" },
  performance: { color: "#a04f00", dash: "4 4" },
  mobile: { color: "#b42318", dash: "1 2" },
  agents: { color: "#4a5561", dash: "8 2 1 2" },
};

const num = (n: number) => n.toLocaleString("en-US");
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dateTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;

function signed(delta: number): Html {
  if (delta === 0) return html`<span>±0</span>`;
  return delta > 0
    ? html`<span class="up">+${delta}</span>`
    : html`<span class="down">−${Math.abs(delta)}</span>`;
}

/** A link to a crawled URL when it is http(s), else the URL as text. */
function urlLink(url: unknown, max = 120): Html {
  const text = clip(String(url ?? ""), max);
  const href = safeHref(url);
  return href
    ? html`<a href="${href}" rel="nofollow noopener noreferrer">${text}</a>`
    : html`<span>${text}</span>`;
}

/** A query string of the report's own parameters, on this page's path. */
function linkTo(o: AuditPageOptions, q: ReportQuery, anchor = ""): string {
  const p = new URLSearchParams();
  if (q.issue) p.set("issue", q.issue);
  if (q.status) p.set("status", q.status);
  if (q.indexable !== undefined) p.set("indexable", String(q.indexable));
  if (q.check) p.set("check", q.check);
  if (q.cursor) p.set("cursor", q.cursor);
  const s = p.toString();
  return `${o.selfPath}${s ? `?${s}` : ""}${anchor}`;
}

/** One evidence value as short text (nested values clipped, long lists cut). */
function valueText(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return "none";
  if (typeof v === "string") return clip(v, 200);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) {
    if (depth > 1) return `[${v.length} items]`;
    const head = v.slice(0, 5).map((x) => valueText(x, depth + 1)).join(", ");
    return v.length > 5 ? `${head} (+${v.length - 5} more)` : head;
  }
  return clip(JSON.stringify(v), 200);
}

/** The facts of an evidence item besides its URL. */
function evidenceDetails(e: Evidence): Html {
  const parts = Object.entries(e).filter(([k]) => k !== "url").slice(0, 8);
  if (parts.length === 0) return html`<span class="muted">no detail</span>`;
  return html`${
    parts.map(([k, v], i) => html`${i ? "; " : ""}<strong>${k}</strong>: ${valueText(v)}`)
  }`;
}

function itemsTable(items: Evidence[], caption: string): Html {
  return html`
    <div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
      <table>
        <caption>${caption}</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Evidence</th>
          </tr>
        </thead>
        <tbody>${items.map((e) =>
          html`
            <tr>
              <td class="url">${e.url === undefined
                ? html`<span class="muted">the site</span>`
                : urlLink(e.url)}</td>
              <td>${evidenceDetails(e)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    </div>
  `;
}

function scoreSection(d: AuditReportData): Html {
  const a = d.audit;
  const cats = a.summary!.categories;
  const prev = d.previous;
  const shown = categoriesOf(cats);
  const desc = shown.map((c) => `${CATEGORY_NAMES[c]} ${cats[c]}`).join(", ");
  return html`
    <section aria-labelledby="score-h">
      <h2 id="score-h">Score</h2>
      <div class="charts">
        <figure>${gauge(
          "score-gauge",
          a.score!,
          `Overall score ${a.score} out of 100`,
          `The overall score is ${a.score} out of 100 (${scoreBand(a.score!)})` +
            (prev ? `, ${a.score! - prev.score >= 0 ? "up" : "down"} from ${prev.score}.` : "."),
        )}<figcaption>Overall score (${scoreBand(a.score!)})</figcaption></figure>
        <figure>${bars(
          "score-bars",
          shown.map((c) => ({ label: CATEGORY_NAMES[c], value: cats[c] })),
          "Category scores out of 100",
          `Category scores: ${desc}.`,
        )}<figcaption>The categories, out of 100</figcaption></figure>
      </div>
      <div class="table-wrap" role="region" aria-label="Category scores" tabindex="0">
        <table>
          <caption>Category scores</caption>
          <thead>
            <tr>
              <th scope="col">Category</th>
              <th scope="col" class="num">Score</th>
              <th scope="col">Band</th>
              <th scope="col" class="num">Since previous audit</th>
            </tr>
          </thead>
          <tbody>
            <tr><th scope="row">Overall</th><td class="num">${a.score}</td><td>${scoreBand(
              a.score!,
            )}</td><td class="num">${prev ? signed(a.score! - prev.score) : "first audit"}</td></tr>
            ${shown.map((c) =>
              html`
                <tr>
                  <th scope="row">${CATEGORY_NAMES[c]}</th>
                  <td class="num">${cats[c]}</td>
                  <td>${scoreBand(cats[c])}</td>
                  <td class="num">${prev
                    ? typeof prev.categories[c] === "number"
                      ? signed(cats[c] - prev.categories[c])
                      : "new"
                    : "first audit"}</td>
                </tr>
              `
            )}
          </tbody>
        </table>
      </div>
    </section>
  `;
}

function factsSection(d: AuditReportData): Html {
  const a = d.audit;
  const caps = auditView(a).limits_hit ?? [];
  const s = a.summary!;
  return html`<ul class="facts">
      <li>Completed <time datetime="${new Date(a.completedAt!).toISOString()}">${
    dateTime(a.completedAt!)
  }</time></li>
      <li>${num(a.jobsCompleted + a.jobsFailed)} URLs crawled${
    a.jobsFailed
      ? html`
        (${num(a.jobsFailed)} failed)
      `
      : ""
  }</li>
      <li>${num(s.issues_critical)} critical, ${num(s.issues_warning)} warnings, ${
    num(s.issues_info)
  } notices (affected items)</li>
      ${a.render ? html`<li>Rendered in a browser</li>` : ""}
    </ul>
    ${
    caps.length
      ? html`
        <p><strong>Crawl caps hit:</strong> the crawl stopped short of the whole site.</p>
        <ul>${caps.map((c) =>
          html`<li><code>${c.limit}</code> (cap ${num(c.value)}): ${num(c.left_out)} ${c.unit}</li>`
        )}</ul>
      `
      : html`<p class="muted">No crawl cap was hit.</p>`
  }`;
}

function historySection(history: HistoryPoint[]): Html {
  const labels = history.map((h) => date(h.completed_at));
  const series: Series[] = [
    {
      name: "Overall",
      values: history.map((h) => h.score),
      ...LINE_STYLES.overall,
      width: 3,
    },
    ...CATEGORY_ORDER.map((c) => ({
      name: CATEGORY_NAMES[c],
      values: history.map((h) => h.categories[c]),
      ...LINE_STYLES[c],
      width: 1.5,
    })),
  ];
  const first = history[0];
  const last = history[history.length - 1];
  const desc = history.length === 1
    ? `One completed audit so far, scored ${last.score} on ${labels[0]}.`
    : `${history.length} completed audits from ${labels[0]} to ${labels[labels.length - 1]}; ` +
      `the overall score went from ${first.score} to ${last.score}.`;
  return html`
    <section aria-labelledby="history-h">
      <h2 id="history-h">Score history</h2>
      <p>${desc}</p>
      <figure>${lineChart(
        "history-chart",
        labels,
        series,
        "Score history, overall and per category",
        desc,
      )}
          <figcaption><ul class="legend">${series.map((s) =>
            html`<li>${swatch(s)}${s.name}</li>`
          )}</ul></figcaption></figure>
      <details>
        <summary>Score history as a table</summary>
        <div class="table-wrap" role="region" aria-label="Score history" tabindex="0">
          <table>
            <caption>Scores of the project's completed audits, oldest first</caption>
            <thead>
              <tr><th scope="col">Completed</th><th scope="col" class="num">Overall</th>${CATEGORY_ORDER
                .map((c) => html`<th scope="col" class="num">${CATEGORY_NAMES[c]}</th>`)}</tr>
            </thead>
            <tbody>${history.map((h) =>
              html`<tr><th scope="row">${date(h.completed_at)}</th><td class="num">${h.score}</td>${
                CATEGORY_ORDER.map((c) => html`<td class="num">${h.categories[c]}</td>`)
              }</tr>`
            )}</tbody>
          </table>
        </div>
      </details>
    </section>
  `;
}

function changesSection(d: AuditReportData): Html {
  const ch = d.audit.changes;
  const prev = d.previous;
  if (!ch || !prev) {
    return html`
      <section aria-labelledby="changes-h">
        <h2 id="changes-h">Changes since the previous
            audit</h2>
        <p>This is the project's first completed audit: nothing to compare with yet.</p>
      </section>
    `;
  }
  const listed = (change: "new" | "fixed") =>
    d.issues.filter((i) => i.change === change).map((i) =>
      html`<li><a href="#issue-${i.check}">${i.title}</a> <span class="sev-${i.severity}">(${i.severity})</span></li>`
    );
  const fresh = listed("new");
  const fixed = listed("fixed");
  return html`<section aria-labelledby="changes-h">
    <h2 id="changes-h">Changes since the previous audit</h2>
    <p>Compared with the audit of ${
    date(prev.completed_at)
  }: score ${prev.score} → ${d.audit.score} (${
    signed(d.audit.score! - prev.score)
  }); <span class="chg-new">${ch.new} new</span>,
      <span class="chg-fixed">${ch.fixed} fixed</span>, ${ch.persisting} persisting issues.</p>
    ${
    fresh.length
      ? html`
        <h3>New issues</h3>
        <ul>${fresh}</ul>
      `
      : ""
  }
    ${
    fixed.length
      ? html`
        <h3>Fixed issues</h3>
        <ul>${fixed}</ul>
      `
      : ""
  }
  </section>`;
}

function issueCard(o: AuditPageOptions, i: ReportIssue): Html {
  const fixed = i.change === "fixed";
  return html`<article class="issue" id="issue-${i.check}" aria-labelledby="issue-${i.check}-h">
    <h4 id="issue-${i.check}-h">${i.title}</h4>
    <p><span class="badge sev-${i.severity}">${i.severity}</span>
      <span class="badge chg-${i.change}">${i.change}</span>
      <code>${i.check}</code> · ${CATEGORY_NAMES[i.category]} ·
      ${
    fixed ? "no longer found" : html`${num(i.affected_count)} of ${num(i.eligible_count)} affected`
  }</p>
    <dl><dt>What it means</dt><dd>${i.meaning}</dd><dt>How to fix it</dt><dd>${i.fix}</dd></dl>
    <p><a href="${i.doc_url}">About this check</a>${
    fixed ? "" : html`
      · <a href="${linkTo(o, { issue: i.check })}">All ${num(
        i.items_stored,
      )} stored items of this issue</a> · <a
        href="${linkTo(o, { check: i.check }, "#pages")}">Pages with this issue</a>
    `
  }</p>
    ${
    i.sample.length
      ? itemsTable(
        i.sample,
        `First ${Math.min(ITEMS_PER_ISSUE, i.sample.length)} affected items: ${i.title}`,
      )
      : ""
  }
  </article>`;
}

function issuesSection(o: AuditPageOptions, d: AuditReportData): Html {
  const open = d.issues.filter((i) => i.change !== "fixed");
  const fixed = d.issues.filter((i) => i.change === "fixed");
  return html`<section aria-labelledby="issues-h">
    <h2 id="issues-h">Issues</h2>
    ${open.length === 0 ? html`<p>No issue found.</p>` : ""}
    ${
    SEVERITIES.map((sev) => {
      const group = open.filter((i) => i.severity === sev);
      if (group.length === 0) return "";
      return html`<h3 class="sev-${sev}">${SEVERITY_NAMES[sev]} (${group.length})</h3>${
        group.map((i) => issueCard(o, i))
      }`;
    })
  }
    ${
    fixed.length
      ? html`<h3>Fixed since the previous audit (${fixed.length})</h3>${
        fixed.map((i) => issueCard(o, i))
      }`
      : ""
  }
  </section>`;
}

function filterLinks(o: AuditPageOptions, d: AuditReportData, q: ReportQuery): Html {
  const base = { status: q.status, indexable: q.indexable, check: q.check };
  const link = (label: string, next: ReportQuery, current: boolean) =>
    html`
      <a href="${linkTo(o, next, "#pages")}" ${current
        ? html`
          aria-current="true"
        `
        : ""}>${label}</a>
    `;
  const checks = d.issues.filter((i) => i.change !== "fixed");
  return html`
    <nav class="filters" aria-label="Inventory filters">
      <p><strong>Status:</strong> ${link(
        "any",
        { ...base, status: undefined },
        !q.status,
      )}${STATUS_FILTERS.map((s) =>
        link(s.replace("_", " "), { ...base, status: s }, q.status === s)
      )}</p>
      <p><strong>Indexable:</strong> ${link(
        "any",
        { ...base, indexable: undefined },
        q.indexable === undefined,
      )}${link("yes", { ...base, indexable: true }, q.indexable === true)}${link("no", {
        ...base,
        indexable: false,
      }, q.indexable === false)}</p>
      <details${q.check
        ? html`
          open
        `
        : ""}>
        <summary>Issue filter${q.check ? html`: ${q.check}` : ""}</summary>
        <p>${link("any issue", { ...base, check: undefined }, !q.check)}${checks.map((i) =>
          link(i.check, { ...base, check: i.check }, q.check === i.check)
        )}</p>
        </details>
        </nav>
  `;
}

function pageRow(p: PageView): Html {
  const status = p.status !== null
    ? String(p.status)
    : p.fetch_state === "failed"
    ? `failed${p.failure ? ` (${p.failure})` : ""}`
    : p.fetch_state.replace("_", " ");
  const cell = (v: number | null) => html`<td class="num">${v === null ? "–" : num(v)}</td>`;
  return html`<tr>
    <td class="url">${urlLink(p.url)}</td>
    <td>${status}</td>
    <td>${
    p.indexable ? "yes" : html`no <span class="muted">(${p.not_indexable_reason})</span>`
  }</td>
    <td>${p.title === null ? html`<span class="muted">none</span>` : clip(p.title, 120)}</td>
    ${cell(p.depth)}${cell(p.inlinks)}${cell(p.link_score)}${cell(p.word_count)}${
    cell(p.response_time_ms)
  }
    <td>${
    p.checks.length ? clip(p.checks.join(", "), 160) : html`<span class="muted">none</span>`
  }</td>
  </tr>`;
}

function pager(o: AuditPageOptions, q: ReportQuery, next: string | null, anchor: string): Html {
  if (!q.cursor && !next) return html``;
  return html`<nav class="pager" aria-label="Pages of this list">
    ${
    q.cursor ? html`<a href="${linkTo(o, { ...q, cursor: undefined }, anchor)}">First page</a>` : ""
  }
    ${next ? html`<a href="${linkTo(o, { ...q, cursor: next }, anchor)}">Next page</a>` : ""}
  </nav>`;
}

function inventorySection(
  o: AuditPageOptions,
  d: AuditReportData,
  view: Extract<AuditReportData["view"], { kind: "report" }>,
): Html {
  const q = view.query;
  const rows = view.pages.data;
  const filtered = q.status !== undefined || q.indexable !== undefined || q.check !== undefined;
  return html`<section aria-labelledby="pages-h" id="pages">
    <h2 id="pages-h">Pages</h2>
    <p>Every URL the crawl met, by URL. Link score: internal link equity, 0–100 (100 for the
      best-linked page).</p>
    ${filterLinks(o, d, q)}
    ${
    rows.length === 0
      ? html`<p>No URL ${
        filtered ? "matches these filters on this page of the list" : "found"
      }.</p>`
      : html`
        <div class="table-wrap" role="region" aria-label="Page inventory" tabindex="0">
          <table>
            <caption>Page inventory${filtered ? " (filtered)" : ""}</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Status</th>
                <th scope="col">Indexable</th>
                <th scope="col">Title</th>
                <th scope="col" class="num">Depth</th>
                <th scope="col" class="num">Inlinks</th>
                <th scope="col" class="num">Link score</th>
                <th scope="col" class="num">Words</th>
                <th scope="col" class="num">TTFB ms</th>
                <th scope="col">Issues</th>
              </tr>
            </thead>
            <tbody>${rows.map(pageRow)}</tbody>
          </table>
        </div>
      `
  }
    ${pager(o, q, view.pages.next_cursor, "#pages")}
  </section>`;
}

function rating(v: number | null, good: number, poor: number): string {
  if (v === null) return "";
  return v <= good ? " (good)" : v <= poor ? " (needs work)" : " (poor)";
}

function labSection(d: AuditReportData): Html {
  const a = d.audit;
  if (!a.render) return html``;
  const stats = a.renderStats;
  const rows = d.lab;
  const ms = (v: number | null) => (v === null ? "–" : num(v));
  return html`<section aria-labelledby="lab-h">
    <h2 id="lab-h">Lab metrics (rendered pages)</h2>
    <p>${
    stats
      ? `${num(stats.pages_rendered)} pages rendered in a browser, ${
        num(stats.lab_pages)
      } of them under mobile throttling (lab); ${num(stats.pages_failed)} renders failed.`
      : "Rendered in a browser."
  }</p>
    ${
    rows.length === 0 ? html`<p>No lab figures were kept for this audit.</p>` : html`
      <div class="table-wrap" role="region" aria-label="Lab metrics" tabindex="0">
        <table>
          <caption>Lab metrics per sampled page</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col" class="num">LCP ms</th>
              <th scope="col" class="num">CLS</th>
              <th scope="col" class="num">TBT ms</th>
              <th scope="col" class="num">FCP ms</th>
              <th scope="col" class="num">Transfer KiB</th>
              <th scope="col" class="num">Requests</th>
            </tr>
          </thead>
          <tbody>${rows.map((r: LabRecord) =>
            html`
              <tr>
                <td class="url">${urlLink(r.url)}</td>
                <td class="num">${ms(r.lcp_ms)}${rating(
                  r.lcp_ms,
                  THRESHOLDS.lcpGoodMs,
                  THRESHOLDS.lcpPoorMs,
                )}</td>
                <td class="num">${r.cls}${rating(
                  r.cls,
                  THRESHOLDS.clsGood,
                  THRESHOLDS.clsPoor,
                )}</td>
                <td class="num">${num(r.tbt_ms)}${rating(
                  r.tbt_ms,
                  THRESHOLDS.tbtGoodMs,
                  THRESHOLDS.tbtPoorMs,
                )}</td>
                <td class="num">${ms(r.fcp_ms)}</td>
                <td class="num">${num(Math.round(r.transfer_bytes / 1024))}</td>
                <td class="num">${num(r.requests)}</td>
              </tr>
            `
          )}</tbody>
        </table>
      </div>
    `
  }
  </section>`;
}

function siteName(d: AuditReportData): string {
  const url = d.project?.url;
  if (!url) return d.audit.projectId;
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function watermark(d: AuditReportData): Html {
  return d.sandbox
    ? html`<p class="watermark" role="note">Sandbox report: made with a free trial key, within
      the trial's crawl budget. Upgrade for full audits.</p>`
    : html``;
}

function footer(d: AuditReportData, o: AuditPageOptions): Html {
  return html`<p>Serpwright audit <code>${d.audit.id}</code>, completed ${
    dateTime(d.audit.completedAt!)
  }. ${
    o.shared
      ? "Shared through a private link that expires; not indexed by search engines."
      : "Private to the API key's account."
  } How each check works: <a href="${o.baseUrl}/docs/checks">the checks</a>.</p>`;
}

/** The issue's every affected item, a page at a time (`?issue=<check>`). */
function issuePage(
  o: AuditPageOptions,
  d: AuditReportData,
  view: Extract<AuditReportData["view"], { kind: "issue" }>,
): Html {
  const i = view.issue;
  return html`
    ${watermark(d)}
        <p><a href="${linkTo(o, {})}">Back to the report</a></p>
        <h1>${i.title}: affected items on ${siteName(d)}</h1>
        <p><span class="badge sev-${i.severity}">${i.severity}</span> <code>${i.check}</code> ·
          ${num(i.affected_count)} of ${num(i.eligible_count)} affected; ${num(
            i.items_stored,
          )} items stored.</p>
        <section aria-labelledby="meaning-h">
      <h2 id="meaning-h">What it means and how to fix it</h2>
      <p>${i.meaning}</p>
      <p><strong>Fix:</strong> ${i.fix}</p>
      <p><a href="${i.doc_url}">About this check</a></p>
    </section>
        <section aria-labelledby="items-h"><h2 id="items-h">Affected items</h2>
          ${view.items.data.length
            ? itemsTable(view.items.data, `Affected items: ${i.title}`)
            : html`<p>No stored item.</p>`}
          ${pager(o, view.query, view.items.next_cursor, "")}
        </section>
  `;
}

/** The whole report page. */
export function auditReportHtml(d: AuditReportData, o: AuditPageOptions): string {
  const site = siteName(d);
  const kind = o.shared ? "Shared audit report" : "Audit report";
  if (d.view.kind === "issue") {
    return reportDocument({
      title: `${d.view.issue.title}: ${site} audit report`,
      lang: "en",
      kind,
      baseUrl: o.baseUrl,
      body: issuePage(o, d, d.view),
      footer: footer(d, o),
    });
  }
  const body = html`
    ${watermark(d)}
        <h1>SEO audit of ${site}</h1>
        ${d.project ? html`<p>Project ${d.project.name}: ${urlLink(d.project.url)}</p>` : ""}
        ${factsSection(d)}
        <nav aria-label="Contents">
      <ul class="toc">
          <li><a href="#score-h">Score</a></li>
          <li><a href="#history-h">History</a></li>
          <li><a href="#changes-h">Changes</a></li>
          <li><a href="#issues-h">Issues</a></li>
          <li><a href="#pages">Pages</a></li>
          ${d.audit.render ? html`<li><a href="#lab-h">Lab metrics</a></li>` : ""}
        </ul>
    </nav>
        ${scoreSection(d)}
        ${historySection(d.history)}
        ${changesSection(d)}
        ${issuesSection(o, d)}
        ${inventorySection(o, d, d.view)}
        ${labSection(d)}
  `;
  return reportDocument({
    title: `SEO audit report: ${site}, score ${d.audit.score}`,
    lang: "en",
    kind,
    baseUrl: o.baseUrl,
    body,
    footer: footer(d, o),
  });
}
