/**
 * The shared HTML shell of the public pages: one small inline stylesheet, no scripts, no external
 * resources, readable on a phone. Every interpolated value goes through `esc` (or `raw` for
 * markup this module built itself); the escaping template lives in app/html.ts.
 */

import { Html, html, raw } from "../../app/html.ts";

export { esc, Html, html, raw } from "../../app/html.ts";

/** A `<pre><code>` block; the code is escaped. */
export function codeBlock(code: string, label?: string): Html {
  return html`<pre${
    label
      ? html`
        aria-label="${label}"
      `
      : ""
  }><code>${code.trim()}</code></pre>`;
}

const STYLE = `
:root{color-scheme:light dark;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b5fff;--code:#f3f4f6}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#9aa4ae;--line:#30363d;--accent:#58a6ff;--code:#161b22}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
header,main,footer{max-width:54rem;margin:0 auto;padding:0 1rem}
header{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;padding-top:1rem;padding-bottom:.5rem;border-bottom:1px solid var(--line)}
header .brand{font-weight:700;font-size:1.15rem;color:var(--fg);text-decoration:none}
nav ul{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;margin:0;padding:0}
a{color:var(--accent)}
h1{font-size:1.75rem;line-height:1.2;margin:1.25rem 0 .75rem}
h2{font-size:1.35rem;margin:2rem 0 .5rem;padding-top:.5rem;border-top:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.25rem 0 .4rem}
p,li{max-width:70ch}
code{font:.9em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--code);padding:.05em .3em;border-radius:4px}
pre{background:var(--code);padding:.75rem;border-radius:6px;overflow-x:auto;max-width:100%}
pre code{padding:0;background:none;white-space:pre}
.table-wrap{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;width:100%;margin:.5rem 0;overflow-wrap:anywhere}
th,td{text-align:left;vertical-align:top;padding:.4rem .5rem;border-bottom:1px solid var(--line)}
td code{overflow-wrap:anywhere}
@media (max-width:40rem){
 table.cards,table.cards>tbody,table.cards>tbody>tr,table.cards>tbody>tr>th,table.cards>tbody>tr>td{display:block;width:auto}
 table.cards>caption{display:block}
 table.cards>thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%);white-space:nowrap}
 table.cards>tbody>tr{border:1px solid var(--line);border-radius:8px;padding:.4rem .75rem;margin:.5rem 0}
 table.cards>tbody>tr>th,table.cards>tbody>tr>td{border:0;padding:.1rem 0;text-align:left;min-width:0;max-width:none;white-space:normal;background:none}
 table.cards>tbody>tr>td.num{display:inline-block;margin-right:1rem}
 table.cards td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}
 table.cards code{white-space:normal}
}
.muted{color:var(--muted)}
td .muted{display:block;font-size:.9rem}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem;margin:1rem 0}
.card{border:1px solid var(--line);border-radius:8px;padding:1rem}
.card.featured{border:2px solid var(--accent)}
.price{font-size:2rem;font-weight:700;margin:.25rem 0}
.price .muted{font-size:1rem;font-weight:400}
.badge{display:inline-block;font-size:.8rem;border:1px solid var(--accent);color:var(--accent);border-radius:999px;padding:0 .5rem;margin-left:.25rem}
.cta{display:block;text-align:center;font-weight:600;text-decoration:none;background:var(--accent);color:#fff;border-radius:6px;padding:.6rem 1rem;margin:.75rem 0}
.callout{border:2px solid var(--accent);border-radius:8px;padding:.25rem 1rem;margin:1rem 0}
section.code-entry{border-top:1px solid var(--line);padding:.5rem 0}
section.code-entry h3{margin-top:.5rem}
:target{scroll-margin-top:1rem;outline:2px solid var(--accent);outline-offset:4px}
footer{margin-top:3rem;padding-top:1rem;padding-bottom:2rem;border-top:1px solid var(--line);font-size:.9rem;color:var(--muted)}
`.trim();

export interface PageOptions {
  baseUrl: string;
  title: string;
  description: string;
  /** Path of this page, for the canonical link. */
  path: string;
  body: Html;
}

/** A complete HTML document around `body`, with the site navigation. */
export function layout(o: PageOptions): string {
  const b = o.baseUrl;
  return "<!DOCTYPE html>\n" + html`
    <html lang="en">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>${o.title}</title>
        <meta name="description" content="${o.description}">
        <link rel="icon" href="data:,">
        <link rel="canonical" href="${b}${o.path}">
        <link rel="alternate" type="application/json" href="${b}/v1/openapi.json"
          title="OpenAPI 3.1 document">
        <style>${raw(STYLE)}</style>
      </head>
      <body>
        <header>
          <a class="brand" href="${b}/">Serpwright</a>
          <nav aria-label="Main">
            <ul>
              <li><a href="${b}/docs/agents">Agent quickstart</a></li>
              <li><a href="${b}/pricing">Pricing</a></li>
              <li><a href="${b}/docs/errors">Errors</a></li>
              <li><a href="${b}/docs/checks">Checks</a></li>
              <li><a href="${b}/v1/openapi.json">OpenAPI</a></li>
              <li><a href="${b}/llms.txt">llms.txt</a></li>
            </ul>
          </nav>
        </header>
        <main>
    ${o.body}
        </main>
        <footer>
          <p>Serpwright: SEO automation for AI agents. API base <code>${b}/v1</code>.</p>
        </footer>
      </body>
    </html>
  `.value;
}

/**
 * A table inside a horizontally scrollable wrapper, so it never widens the page; on a phone each
 * row is a card whose cells carry their column's name (`data-label`).
 */
export function table(head: string[], rows: (string | Html)[][]): Html {
  return html`
    <div class="table-wrap">
      <table class="cards">
        <thead>
          <tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr>
        </thead>
        <tbody>${rows.map((r) =>
          html`<tr>${r.map((c, i) => html`<td data-label="${head[i] ?? ""}">${c}</td>`)}</tr>`
        )}</tbody>
      </table>
    </div>
  `;
}
