/**
 * The audit report as one HTML page (`GET /v1/audits/{id}/report` and a share link's
 * `/reports/{token}`): an executive summary in plain words (score, trend, three things to do this
 * week), "Fix first" (the findings with the largest impact × √reach, as the JSON summary and the
 * Markdown list them), the score as a gauge and the categories as bars, the facts of the
 * crawl and any cap it hit, the project's score history as a line chart, the changes since the
 * previous audit, the issues by category (a chart of where they are) with their first affected
 * items, the page inventory
 * (filters and pages are plain links: no script, no form), and a rendered audit's lab metrics.
 * With `?issue=<check>` the page lists every affected item of that check instead, a page at a
 * time.
 *
 * People read check titles; check ids stay in links and anchors, where code reads them.
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
import type {
  Category,
  Evidence,
  FixFirstItem,
  LabRecord,
} from "../../domain/audit_engine/types.ts";
import { ADVISORY_TABLE, CHECKS_BY_ID, IMPACT_NAMES } from "../../domain/audit_engine/mod.ts";
import { THRESHOLDS } from "../../domain/render/mod.ts";
import { clip, type Html, html, safeHref } from "../html.ts";
import { auditView } from "../views.ts";
import { reportDocument } from "./document.ts";
import { bars, gauge, lineChart, scoreBand, type Series, stackedBars, swatch } from "./svg.ts";

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
      <table class="cards">
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
              <td class="wrap" data-label="Evidence">${evidenceDetails(e)}</td>
            </tr>
          `
        )}</tbody>
      </table>
    </div>
  `;
}

/** A check's title, for people (the id when the catalogue no longer has it). */
function titleOf(check: string): string {
  return CHECKS_BY_ID.get(check)?.title ?? check;
}

const EFFORT_WORDS = { low: "a quick fix", medium: "some work", high: "a project" };

/** The score and where it is heading, in plain words. */
function trendWords(d: AuditReportData): string {
  const a = d.audit;
  const prev = d.previous;
  const now = `${a.score} out of 100 (${scoreBand(a.score!)})`;
  if (!prev) return `The site scores ${now}. This is its first audit, so there is no trend yet.`;
  const delta = a.score! - prev.score;
  const move = delta === 0
    ? "unchanged since"
    : `${delta > 0 ? "up" : "down"} ${Math.abs(delta)} point${
      Math.abs(delta) === 1 ? "" : "s"
    } since`;
  const ch = a.changes;
  const issues = ch
    ? ` Since then ${ch.fixed} ${ch.fixed === 1 ? "issue was" : "issues were"} fixed and ` +
      `${ch.new} ${ch.new === 1 ? "is" : "are"} new.`
    : "";
  return `The site scores ${now}, ${move} the previous audit on ${
    date(prev.completed_at)
  } (${prev.score}).${issues}`;
}

/** The executive summary: score, trend and the three things to do this week, in plain words. */
function executiveSection(d: AuditReportData): Html {
  const three = d.fixFirst.slice(0, 3);
  return html`<section class="exec" aria-labelledby="exec-h">
    <h2 id="exec-h">In short</h2>
    <p>${trendWords(d)}</p>
    ${
    three.length
      ? html`
        <p><strong>This week:</strong></p>
        <ol class="exec-actions">${three.map((f) =>
          html`<li><a href="#fix-${f.check}">${f.title}</a> (${num(f.affected_count)} of ${
            num(f.eligible_count)
          } affected; ${EFFORT_WORDS[f.effort]}). ${f.fix}</li>`
        )}</ol>
      `
      : html`<p><strong>This week:</strong> nothing costly to fix; keep an eye on the notices
        below.</p>`
  }
  </section>`;
}

/** "Fix first": what each costs, how far it reaches, how to fix it and what it takes. */
function fixFirstSection(d: AuditReportData): Html {
  if (d.fixFirst.length === 0) return html``;
  return html`
    <section aria-labelledby="fix-h">
      <h2 id="fix-h">Fix first</h2>
      <p>The issues that cost the most in search across the most pages: impact × √reach (reach is the
          share of the pages or items checked that are affected). <a href="#issues-h">Every issue</a> is
          listed below, by category.</p>
      <ol class="fix-first">${d.fixFirst.map((f: FixFirstItem) =>
        html`
          <li id="fix-${f.check}">
            <h3>${f.title}</h3>
            <p><span class="badge sev-${f.severity}">${f
              .severity}</span> ${CATEGORY_NAMES[f.category]} · ${num(f.affected_count)} of ${num(
                f.eligible_count,
              )} affected (${Math.round(
                f.reach * 100,
              )} %) · impact: ${IMPACT_NAMES[f.impact]} · effort: ${f.effort}</p>
            <dl>
              <dt>What it costs</dt>
              <dd>${f.cost}</dd>
              <dt>How to fix it</dt>
              <dd>${f.fix}</dd>
            </dl>
            <p><a href="#issue-${f.check}">The affected items</a></p>
          </li>
        `
      )}</ol>
    </section>
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
        <table class="cards">
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
            <tr><th scope="row">Overall</th><td class="num" data-label="Score">${a
              .score}</td><td data-label="Band">${scoreBand(
                a.score!,
              )}</td><td class="num" data-label="Since previous audit">${prev
              ? signed(a.score! - prev.score)
              : "first audit"}</td></tr>
            ${shown.map((c) =>
              html`
                <tr>
                  <th scope="row">${CATEGORY_NAMES[c]}</th>
                  <td class="num" data-label="Score">${cats[c]}</td>
                  <td data-label="Band">${scoreBand(cats[c])}</td>
                  <td class="num" data-label="Since previous audit">${prev
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

function factsSection(d: AuditReportData, o: AuditPageOptions): Html {
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
        ${capsLead(a)}
        <ul>${caps.map((c) => capItem(c, o))}</ul>
      `
      : html`<p class="muted">No crawl cap was hit.</p>`
  }`;
}

/** Above the caps: a crawl a budget (or the error-rate stop) cut short says so first. */
function capsLead(a: AuditReportData["audit"]): Html {
  if (a.crawl?.complete !== false) {
    return html`<p><strong>Crawl caps hit:</strong> the crawl stopped short of the whole site.</p>`;
  }
  const left = num(a.crawl.unfetched);
  return html`<p><strong>Partial crawl: it stopped before the whole site.</strong> ${left} URLs found were not fetched; the findings are those of the pages crawled.</p>`;
}

/** One cap hit: its name, whose budget it is, what it left out, the trial's way out. */
function capItem(
  c: NonNullable<ReturnType<typeof auditView>["limits_hit"]>[number],
  o: AuditPageOptions,
): Html {
  const name = CAP_WORDS[c.limit] ?? html`<code>${c.limit}</code>`;
  const whose = c.budget === "trial" ? "the trial's, " : "";
  const left = `${num(c.left_out)} ${c.unit}`;
  if (!c.upgrade_path) return html`<li>${name} (${whose}cap ${num(c.value)}): ${left}</li>`;
  const link = html`<a href="${o.baseUrl}/pricing">Upgrade</a>`;
  const path = html`<code>POST ${c.upgrade_path}</code>`;
  return html`<li>${name} (${whose}cap ${
    num(c.value)
  }): ${left}. ${link} for the plan's budget (agents: ${path})</li>`;
}

/** The budgets that stop a crawl, in words; other caps show their id. */
const CAP_WORDS: Record<string, string> = {
  pages: "Page budget",
  bytes: "Byte budget",
  duration: "Time budget (seconds)",
  error_rate: "Error-rate stop (the site kept failing)",
  politeness_retries: "Retries after 429/503",
};

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
          <table class="cards">
            <caption>Scores of the project's completed audits, oldest first</caption>
            <thead>
              <tr><th scope="col">Completed</th><th scope="col" class="num">Overall</th>${CATEGORY_ORDER
                .map((c) => html`<th scope="col" class="num">${CATEGORY_NAMES[c]}</th>`)}</tr>
            </thead>
            <tbody>${history.map((h) =>
              html`<tr><th scope="row">${
                date(h.completed_at)
              }</th><td class="num" data-label="Overall">${h.score}</td>${
                CATEGORY_ORDER.map((c) =>
                  html`<td class="num" data-label="${CATEGORY_NAMES[c]}">${h.categories[c]}</td>`
                )
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

/**
 * Where a check's verdicts come from when that is a dated table rather than the page itself:
 * the vulnerable-library advisories (issue 32), so a reader knows how old the table is.
 */
function checkSource(check: string): Html | "" {
  if (check !== "vulnerable_js_library") return "";
  return html`<p class="source">Advisories from the bundled table compiled ${ADVISORY_TABLE.compiled};
    source: ${ADVISORY_TABLE.source}. A version the table does not list is not reported.</p>`;
}

function issueCard(o: AuditPageOptions, i: ReportIssue): Html {
  const fixed = i.change === "fixed";
  return html`<article class="issue" id="issue-${i.check}" aria-labelledby="issue-${i.check}-h">
    <h4 id="issue-${i.check}-h">${i.title}</h4>
    <p><span class="badge sev-${i.severity}">${i.severity}</span>
      <span class="badge chg-${i.change}">${i.change}</span>
      ${CATEGORY_NAMES[i.category]} ·
      ${
    fixed ? "no longer found" : html`${num(i.affected_count)} of ${num(i.eligible_count)} affected`
  }</p>
    <dl><dt>What it means</dt><dd>${i.meaning}</dd><dt>How to fix it</dt><dd>${i.fix}</dd></dl>
    ${checkSource(i.check)}
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

const SEVERITY_COLORS = { critical: "#b42318", warning: "#a04f00", info: "#0b57d0" };
const SEVERITY_WORDS = { critical: "critical", warning: "warning", info: "notice" };

/** `1 warning`, `2 warnings` (`critical` stays as it is). */
function plural(n: number, word: string): string {
  return `${n} ${n === 1 || word === "critical" ? word : `${word}s`}`;
}

/** Every category an issue can sit in: the five, then `agents`. */
const ISSUE_CATEGORIES: Category[] = [...CATEGORY_ORDER, "agents"];

/** Where the open issues are: one bar per category, split by severity. */
function whereChart(open: ReportIssue[]): Html {
  const rows = ISSUE_CATEGORIES.map((c) => ({
    label: CATEGORY_NAMES[c],
    parts: SEVERITIES.map((sev) => {
      const value = open.filter((i) => i.category === c && i.severity === sev).length;
      return {
        name: plural(value, SEVERITY_WORDS[sev]).replace(/^\d+ /, ""),
        value,
        color: SEVERITY_COLORS[sev],
      };
    }),
  }));
  const desc = rows.map((r) => `${r.label}: ${r.parts.reduce((n, p) => n + p.value, 0)} issues`)
    .join(", ");
  return html`<figure>${
    stackedBars("where-chart", rows, "Issues by category and severity", `${desc}.`)
  }<figcaption>Where the issues are: checks that fired, by category</figcaption></figure>`;
}

function issuesSection(o: AuditPageOptions, d: AuditReportData): Html {
  const open = d.issues.filter((i) => i.change !== "fixed");
  const fixed = d.issues.filter((i) => i.change === "fixed");
  return html`<section aria-labelledby="issues-h">
    <h2 id="issues-h">Issues by category</h2>
    ${open.length === 0 ? html`<p>No issue found.</p>` : whereChart(open)}
    ${
    ISSUE_CATEGORIES.map((cat) => {
      const group = open.filter((i) => i.category === cat);
      if (group.length === 0) return "";
      const counts = SEVERITIES.map((sev) => ({
        word: SEVERITY_WORDS[sev],
        n: group.filter((i) => i.severity === sev).length,
      })).filter((c) => c.n > 0).map((c) => plural(c.n, c.word));
      return html`<h3 id="cat-${cat}">${CATEGORY_NAMES[cat]} (${counts.join(", ")})</h3>${
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

/** Page groups (URL templates): pages, pages with issues and the worst issue of each. */
function groupsSection(d: AuditReportData): Html {
  if (d.groups.length === 0) return html``;
  return html`
    <section aria-labelledby="groups-h">
      <h2 id="groups-h">Page groups</h2>
      <p>Pages by URL template${d.groups[0].source === "custom"
        ? " (the groups this audit was started with)"
        : ""}; every page is in one group.</p>
      <div class="table-wrap" role="region" aria-label="Page groups" tabindex="0">
        <table>
          <thead>
            <tr>
              <th scope="col">Group</th>
              <th scope="col">Pages</th>
              <th scope="col">With issues</th>
              <th scope="col">Worst issue</th>
            </tr>
          </thead>
          <tbody>${d.groups.map((g) => {
            const worst = g.top_issues[0];
            return html`
              <tr>
                <th scope="row">${g.name}${g.pattern
                  ? html`
                    <code>${g.pattern}</code>
                  `
                  : html`
                    (the rest)
                  `}</th>
                <td>${g.pages}</td>
                <td>${g.pages_with_issues}</td>
                <td>${worst ? `${worst.title} (${worst.affected_count})` : "None"}</td>
              </tr>
            `;
          })}</tbody>
        </table>
      </div>
    </section>
  `;
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
        <summary>Issue filter${q.check ? html`: ${titleOf(q.check)}` : ""}</summary>
        <p>${link("any issue", { ...base, check: undefined }, !q.check)}${checks.map((i) =>
          link(i.title, { ...base, check: i.check }, q.check === i.check)
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
  // data-label: the column's name, shown before the value where the row is a card (phones).
  const cell = (label: string, v: number | null) =>
    html`<td class="num" data-label="${label}">${v === null ? "–" : num(v)}</td>`;
  return html`<tr>
    <td class="url">${urlLink(p.url)}</td>
    <td data-label="Status">${status}</td>
    <td class="wrap" data-label="Indexable">${
    p.indexable ? "yes" : html`no <span class="muted">(${p.not_indexable_reason})</span>`
  }</td>
    <td class="wrap" data-label="Title">${
    p.title === null ? html`<span class="muted">none</span>` : clip(p.title, 120)
  }</td>
    ${cell("Depth", p.depth)}${cell("Inlinks", p.inlinks)}${cell("Link score", p.link_score)}${
    cell("Words", p.word_count)
  }${cell("TTFB ms", p.response_time_ms)}
    <td class="wrap" data-label="Issues">${
    p.checks.length
      ? clip(p.checks.map(titleOf).join("; "), 240)
      : html`<span class="muted">none</span>`
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
          <table class="cards">
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
        <table class="cards">
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
                <td class="num" data-label="LCP ms">${ms(r.lcp_ms)}${rating(
                  r.lcp_ms,
                  THRESHOLDS.lcpGoodMs,
                  THRESHOLDS.lcpPoorMs,
                )}</td>
                <td class="num" data-label="CLS">${r.cls}${rating(
                  r.cls,
                  THRESHOLDS.clsGood,
                  THRESHOLDS.clsPoor,
                )}</td>
                <td class="num" data-label="TBT ms">${num(r.tbt_ms)}${rating(
                  r.tbt_ms,
                  THRESHOLDS.tbtGoodMs,
                  THRESHOLDS.tbtPoorMs,
                )}</td>
                <td class="num" data-label="FCP ms">${ms(r.fcp_ms)}</td>
                <td class="num" data-label="Transfer KiB">${num(
                  Math.round(r.transfer_bytes / 1024),
                )}</td>
                <td class="num" data-label="Requests">${num(r.requests)}</td>
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
        <p><span class="badge sev-${i.severity}">${i.severity}</span> ·
          ${num(i.affected_count)} of ${num(i.eligible_count)} affected; ${num(
            i.items_stored,
          )} items stored.</p>
        <section aria-labelledby="meaning-h">
      <h2 id="meaning-h">What it means and how to fix it</h2>
      <p>${i.meaning}</p>
      <p><strong>Fix:</strong> ${i.fix}</p>
      ${checkSource(i.check)}
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
        ${executiveSection(d)}
        ${factsSection(d, o)}
        <nav aria-label="Contents">
      <ul class="toc">
          ${d.fixFirst.length ? html`<li><a href="#fix-h">Fix first</a></li>` : ""}
          <li><a href="#score-h">Score</a></li>
          <li><a href="#history-h">History</a></li>
          <li><a href="#changes-h">Changes</a></li>
          <li><a href="#issues-h">Issues</a></li>
          ${d.groups.length ? html`<li><a href="#groups-h">Groups</a></li>` : ""}
          <li><a href="#pages">Pages</a></li>
          ${d.audit.render ? html`<li><a href="#lab-h">Lab metrics</a></li>` : ""}
        </ul>
    </nav>
        ${fixFirstSection(d)}
        ${scoreSection(d)}
        ${historySection(d.history)}
        ${changesSection(d)}
        ${issuesSection(o, d)}
        ${groupsSection(d)}
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
