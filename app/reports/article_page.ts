/**
 * An article's preview for a human to read and approve (`/previews/{token}`): the title, the meta
 * description as a search-result snippet, the QA score with every assessment, the draft rendered
 * from its markdown (app/reports/markdown.ts: no raw HTML, http(s) links only), the internal links
 * it makes to the project's site, and the sandbox watermark where it applies.
 *
 * @module
 */
import { type ArticlePreviewData, SANDBOX_WATERMARK_NOTE } from "../../domain/articles/mod.ts";
import { clip, type Html, html, raw, safeHref } from "../html.ts";
import { reportDocument } from "./document.ts";
import { renderDraft } from "./markdown.ts";

export interface ArticlePageOptions {
  baseUrl: string;
  shared: boolean;
}

/** Where search engines cut a title and a description in a result (characters, roughly). */
const SNIPPET_TITLE = 60;
const SNIPPET_DESCRIPTION = 160;
const LANG = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/** The path a published draft would likely get: its title as a slug. */
function slugOf(title: string): string {
  return title.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "")
    .replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "article";
}

function snippet(d: ArticlePreviewData, title: string, description: string): Html {
  const base = d.project?.url ?? "https://example.com/";
  let host = "example.com";
  try {
    host = new URL(base).host;
  } catch { /* keep the placeholder */ }
  const path = d.article.url ? safeHref(d.article.url) ?? "" : `${host} › ${slugOf(title)}`;
  return html`
    <div class="snippet" role="group" aria-label="Search result preview">
      <p class="s-url">${path}</p>
      <p class="s-title">${clip(title, SNIPPET_TITLE)}</p>
      <p class="s-desc">${clip(description, SNIPPET_DESCRIPTION)}</p>
    </div>
    <p
      class="muted">Title ${title.length} characters${title.length > SNIPPET_TITLE
        ? " (cut in results)"
        : ""}; description ${description
        .length} characters${description.length > SNIPPET_DESCRIPTION
        ? " (cut in results)"
        : ""}.</p>
  `;
}

function qaSection(d: ArticlePreviewData): Html {
  const a = d.article;
  const qa = a.qa;
  return html`<section aria-labelledby="qa-h">
    <h2 id="qa-h">Quality check: ${a.qaScore ?? "–"} / 100</h2>
    ${
    qa?.capped_at !== null && qa?.capped_at !== undefined
      ? html`<p>The score is capped at ${qa.capped_at}: see the failed assessments.</p>`
      : ""
  }
    ${
    qa && qa.assessments.length
      ? html`
        <div class="table-wrap" role="region" aria-label="QA assessments" tabindex="0">
          <table class="cards">
            <caption>Assessments behind the score (0–9 each)</caption>
            <thead>
              <tr>
                <th scope="col">Assessment</th>
                <th scope="col">Group</th>
                <th scope="col" class="num">Score</th>
                <th scope="col">Result</th>
                <th scope="col">Why</th>
              </tr>
            </thead>
            <tbody>${qa.assessments.map((x) =>
              html`
                <tr>
                  <th scope="row"><code>${x.id}</code></th>
                  <td data-label="Group">${x.category}</td>
                  <td class="num" data-label="Score">${x.score ?? "–"}</td>
                  <td data-label="Result">${x.pass === null
                    ? "not applied"
                    : x.pass
                    ? "pass"
                    : html`<strong>fail</strong>`}</td>
                  <td class="wrap" data-label="Why">${x.message}</td>
                </tr>
              `
            )}</tbody>
          </table>
        </div>
      `
      : html`<p class="muted">No assessment was recorded for this draft.</p>`
  }
  </section>`;
}

/** The whole preview page. */
export function articlePreviewHtml(d: ArticlePreviewData, o: ArticlePageOptions): string {
  const a = d.article;
  const title = a.title ?? a.topic;
  const description = a.metaDescription ?? "";
  const base = d.project?.url ?? "https://draft.invalid/";
  const draft = renderDraft(a.contentMarkdown ?? "", base, 3);
  const lang = LANG.test(a.language) ? a.language : "en";
  const body = html`
    ${a.sandbox ? html`<p class="watermark" role="note">${SANDBOX_WATERMARK_NOTE}</p>` : ""}
        <h1>${title}</h1>
        <ul class="facts">
      <li>Draft for ${d.project ? d.project.name : a.projectId}</li>
      <li>${a.wordCount ?? 0} words</li>
      <li>Keyword: ${a.primaryKeyword}</li>
      <li>Status: ${a.status === "published" ? "published" : "draft, not published"}</li>
    </ul>
        <section aria-labelledby="snippet-h">
          <h2 id="snippet-h">How it could look in search results</h2>
          ${snippet(d, title, description)}
        </section>
        ${qaSection(d)}
        <section aria-labelledby="links-h">
          <h2 id="links-h">Internal links (${draft.internalLinks.length})</h2>
          ${draft.internalLinks.length
            ? html`<ul>${
              draft.internalLinks.map((l) =>
                html`<li><a href="${l.href}" rel="nofollow noopener noreferrer">${
                  l.text || l.href
                }</a> <span class="muted">${l.href}</span></li>`
              )
            }</ul>`
            : html`<p>The draft links to no page of the site.</p>`}
        </section>
        <section aria-labelledby="draft-h" class="draft">
      <h2 id="draft-h">The draft</h2>
      <div lang="${lang}">${raw(draft.html)}</div>
    </section>
  `;
  return reportDocument({
    title: `Draft preview: ${clip(title, 80)}`,
    lang: "en",
    kind: o.shared ? "Shared draft preview" : "Draft preview",
    baseUrl: o.baseUrl,
    body,
    footer: html`<p>Serpwright draft <code>${a.id}</code>. Nothing is published by the service:
      this draft is for a human to read and approve. ${
      o.shared ? "Shared through a private link that expires; not indexed." : ""
    }</p>`,
  });
}
