/**
 * The one stylesheet of the reports and previews, and the headers every such page carries. The
 * Content-Security-Policy allows nothing but this exact stylesheet (by its SHA-256, so no nonce
 * changes the page from one request to the next) and `data:` images: no script of any origin, no
 * frame, no form, no base URL, no other style. Whatever a crawled site or a model's draft slipped
 * past the escaping would still have nothing to run or load.
 *
 * @module
 */
import { privatePageHeaders } from "../private_page.ts";

const STYLE = `
:root{color-scheme:light;--fg:#1b1f24;--bg:#fff;--muted:#57606a;--line:#d0d7de;--accent:#0b57d0;--soft:#f6f8fa;--good:#0a7a32;--mid:#a04f00;--bad:#b42318}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg);overflow-wrap:anywhere}
.wrap{max-width:64rem;margin:0 auto;padding:0 1rem}
header.top{border-bottom:1px solid var(--line);padding:.75rem 0}
header.top .wrap{display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:baseline;justify-content:space-between}
.brand{font-weight:700;color:var(--fg)}
a{color:var(--accent)}
h1{font-size:1.6rem;line-height:1.25;margin:1.25rem 0 .5rem}
h2{font-size:1.3rem;margin:2rem 0 .75rem;padding-top:.75rem;border-top:1px solid var(--line)}
h3{font-size:1.1rem;margin:1.5rem 0 .5rem}
h4{font-size:1rem;margin:0 0 .25rem}
p,li,dd{max-width:75ch}
code{font:.9em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:var(--soft);padding:.05em .3em;border-radius:4px}
.muted{color:var(--muted)}
.watermark{border:2px dashed var(--bad);color:var(--bad);background:#fff5f4;padding:.5rem .75rem;border-radius:6px;font-weight:600}
.facts{display:flex;flex-wrap:wrap;gap:.25rem 1.5rem;padding:0;margin:.5rem 0;list-style:none}
.facts li{margin:0}
.toc{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;padding:.5rem 0;margin:0}
.charts{display:flex;flex-wrap:wrap;gap:1rem 2rem;align-items:center}
.chart{max-width:100%;height:auto}
figure{margin:0}
figcaption{font-size:.9rem;color:var(--muted)}
.gauge{width:10rem}
.bars{width:26rem}
.line{width:100%;max-width:44rem}
.legend{display:flex;flex-wrap:wrap;gap:.25rem 1rem;list-style:none;padding:0;margin:.25rem 0;font-size:.9rem}
.legend svg{vertical-align:middle;margin-right:.25rem}
.table-wrap{overflow-x:auto;max-width:100%;margin:.5rem 0}
table{border-collapse:collapse;width:100%;overflow-wrap:break-word;font-size:.95rem}
td.wrap{overflow-wrap:anywhere;min-width:7rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line)}
th{background:var(--soft)}
td.num,th.num{text-align:right}
td.num{white-space:nowrap}
td.url{min-width:10rem;max-width:28rem;overflow-wrap:anywhere}
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
.issue{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;margin:.75rem 0}
.issue dl{margin:.25rem 0}
.issue dt{font-weight:600;margin-top:.25rem}
.issue dd{margin:0 0 .25rem}
.badge{display:inline-block;font-size:.8rem;font-weight:600;border-radius:999px;padding:0 .5rem;border:1px solid currentColor}
.sev-critical{color:var(--bad)}
.sev-warning{color:var(--mid)}
.sev-info{color:var(--accent)}
.chg-new{color:var(--bad)}
.chg-fixed{color:var(--good)}
.chg-persisting{color:var(--muted)}
.up{color:var(--good)}
.down{color:var(--bad)}
.filters p{margin:.25rem 0}
.filters a{display:inline-block;margin:.1rem .35rem .1rem 0}
.filters a[aria-current]{font-weight:700;color:var(--fg)}
.pager{display:flex;flex-wrap:wrap;gap:1rem;margin:.75rem 0}
details{margin:.5rem 0}
summary{cursor:pointer;color:var(--accent)}
.snippet{border:1px solid var(--line);border-radius:8px;padding:.75rem 1rem;max-width:40rem}
.snippet .s-url{color:#1e6b34;font-size:.9rem;margin:0}
.snippet .s-title{color:#1a0dab;font-size:1.2rem;margin:.1rem 0}
.snippet .s-desc{color:#474747;margin:0}
.draft{border-top:1px solid var(--line);margin-top:1rem}
.draft img{max-width:100%}
.draft pre{background:var(--soft);padding:.75rem;border-radius:6px;overflow-x:auto}
.draft blockquote{border-left:4px solid var(--line);margin:0;padding:0 1rem;color:var(--muted)}
footer.bottom{margin-top:3rem;border-top:1px solid var(--line);padding:1rem 0 2rem;font-size:.9rem;color:var(--muted)}
@media print{
 body{font-size:11pt;font-variant-ligatures:none}
 header.top,.pager,.filters,.skip,.toc{display:none}
 a{color:inherit;text-decoration:none}
 .table-wrap{overflow:visible}
 h2{break-after:avoid}
 .issue,figure,tr{break-inside:avoid}
 details>summary{display:none}
 details{display:block}
}
.skip{position:absolute;left:-999px}
.skip:focus{left:1rem;top:.5rem;background:var(--bg);padding:.25rem .5rem}
`.trim();

/**
 * The audit report's executive summary, "Fix first" and issues-by-category chart (issue 31),
 * kept apart from the rules above.
 */
const FIX_FIRST_STYLE = `
.exec{border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:8px;padding:0 1rem .5rem;margin:1rem 0;background:var(--soft)}
.exec h2{border-top:0;margin-top:.75rem;padding-top:0}
.exec-actions li{margin:.35rem 0}
.fix-first{padding-left:1.5rem}
.fix-first>li{border:1px solid var(--line);border-radius:8px;padding:.5rem 1rem;margin:.75rem 0;max-width:none}
.fix-first h3{margin:.25rem 0}
.fix-first dl{margin:.25rem 0}
.fix-first dt{font-weight:600;margin-top:.25rem}
.fix-first dd{margin:0 0 .25rem}
.stacked{width:28rem}
@media print{.exec,.fix-first>li{break-inside:avoid}}
`.trim();

const ALL_STYLE = `${STYLE}\n${FIX_FIRST_STYLE}`;

/** The stylesheet's text, placed verbatim in a `<style>` element. */
export const REPORT_STYLE = ALL_STYLE;

export const HTML_TYPE = "text/html; charset=utf-8";

/** The headers of a report or preview page: its stylesheet only, and no form may post. */
export const REPORT_HEADERS = privatePageHeaders(ALL_STYLE, { formAction: "'none'" });
