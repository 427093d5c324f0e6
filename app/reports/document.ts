/**
 * The HTML document around a report or a preview: language, title, viewport, `noindex` and
 * `no-referrer` in the page itself (beside the headers), the one hashed stylesheet, a skip link
 * and the landmarks (banner, main, contentinfo). No script, no external resource.
 *
 * @module
 */
import { type Html, html, raw } from "../html.ts";
import { REPORT_STYLE } from "./page_style.ts";

export interface DocumentOptions {
  title: string;
  /** The page language (`en` for reports; an article's own language for its preview). */
  lang: string;
  /** What the banner says beside the brand (e.g. "Audit report"). */
  kind: string;
  baseUrl: string;
  body: Html;
  footer: Html;
}

/** A whole page. */
export function reportDocument(o: DocumentOptions): string {
  return "<!DOCTYPE html>\n" + html`
    <html lang="${o.lang}">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex, nofollow">
        <meta name="referrer" content="no-referrer">
        <title>${o.title}</title>
        <link rel="icon" href="data:,">
        <style>${raw(REPORT_STYLE)}</style>
      </head>
      <body>
        <a class="skip" href="#main">Skip to the report</a>
        <header class="top">
          <div class="wrap"><a class="brand" href="${o.baseUrl}/">Serpwright</a>
    <span class="muted">${o.kind}</span></div>
        </header>
        <main id="main" class="wrap">
    ${o.body}
        </main>
        <footer class="bottom">
          <div class="wrap">${o.footer}</div>
        </footer>
      </body>
    </html>
  `.value;
}

/** A short page for a link that opens nothing (404) or a caller past its rate limit (429). */
export function messagePage(baseUrl: string, title: string, message: string): string {
  return reportDocument({
    title,
    lang: "en",
    kind: "Shared page",
    baseUrl,
    body: html`
      <h1>${title}</h1>
      <p>${message}</p>
    `,
    footer: html`<p>Serpwright shares audit reports and article drafts through private links
      that expire.</p>`,
  });
}
