/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, issue 33 item 3): the audit report and the
 * article preview as UI resources (`ui://serpwright/…`, `text/html;profile=mcp-app`), linked from
 * the `audits` and `articles` tools (`_meta.ui.resourceUri`). A host that supports the extension
 * renders the resource in a sandboxed iframe and hands it the tool's result
 * (`ui/notifications/tool-result`); hosts that do not get the short text and the links.
 *
 * The app is one self-contained page: no external script, style, font or request (its declared
 * CSP allows no domain), no `eval`, and it builds the DOM with `textContent` only, so nothing of
 * a result is ever parsed as HTML. It speaks only the extension's JSON-RPC over `postMessage`
 * (`ui/initialize`, then `ui/notifications/initialized`; `ui/open-link` for the report's links)
 * and calls no tool.
 *
 * @module
 */

export const UI_MIME_TYPE = "text/html;profile=mcp-app";
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
export const AUDIT_APP_URI = "ui://serpwright/audit-report";
export const ARTICLE_APP_URI = "ui://serpwright/article-preview";
/** The MCP Apps revision the app's `ui/initialize` names. */
const APPS_PROTOCOL = "2026-01-26";

/** A tool's `_meta` linking it to its app. */
export function appMeta(uri: string) {
  return { ui: { resourceUri: uri } };
}

/** The resource's `_meta`: no outside domain at all, a bordered frame. */
export const APP_RESOURCE_META = { ui: { csp: { connectDomains: [], resourceDomains: [] } } };

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;padding:12px;color:#1b1f24;background:#fff}
h1{font-size:16px;margin:0 0 8px}.muted{color:#57606a}.row{display:flex;gap:16px;align-items:center;flex-wrap:wrap}
.bar{height:8px;background:#eaeef2;border-radius:4px;width:160px}.bar>i{display:block;height:8px;border-radius:4px;background:#1a7f37}
ul{padding-left:18px;margin:6px 0}li{margin:2px 0}a{color:#0969da;cursor:pointer}pre{white-space:pre-wrap;font:13px/1.4 ui-monospace,monospace;background:#f6f8fa;padding:8px;border-radius:6px;max-height:420px;overflow:auto}
.crit{color:#cf222e}.warn{color:#9a6700}.info{color:#57606a}`;

/** The app's script: the handshake, then a rendering of each tool result it is handed. */
const SCRIPT = `(() => {
  "use strict";
  const KIND = document.documentElement.dataset.kind;
  const root = document.getElementById("app");
  let seq = 0;
  const pending = new Map();
  const send = (msg) => window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, msg), "*");
  const request = (method, params) => new Promise((resolve, reject) => {
    const id = ++seq;
    pending.set(id, { resolve, reject });
    send({ id, method, params });
  });
  const el = (tag, text, cls) => {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  };
  const link = (label, url) => {
    const a = el("a", label);
    a.addEventListener("click", () => request("ui/open-link", { url }).catch(() => {}));
    return a;
  };
  const NS = "http://www.w3.org/2000/svg";
  function gauge(score) {
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("id", "score-chart");
    svg.setAttribute("viewBox", "0 0 80 80");
    svg.setAttribute("width", "80");
    svg.setAttribute("height", "80");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "Score " + score + " out of 100");
    const ring = (color, dash) => {
      const c = document.createElementNS(NS, "circle");
      c.setAttribute("cx", "40"); c.setAttribute("cy", "40"); c.setAttribute("r", "32");
      c.setAttribute("fill", "none"); c.setAttribute("stroke", color);
      c.setAttribute("stroke-width", "8");
      if (dash) {
        c.setAttribute("stroke-dasharray", dash);
        c.setAttribute("transform", "rotate(-90 40 40)");
      }
      return c;
    };
    const full = 2 * Math.PI * 32;
    svg.append(ring("#eaeef2"), ring(score >= 90 ? "#1a7f37" : score >= 50 ? "#9a6700" : "#cf222e",
      (full * score / 100).toFixed(1) + " " + full.toFixed(1)));
    const t = document.createElementNS(NS, "text");
    t.setAttribute("x", "40"); t.setAttribute("y", "46"); t.setAttribute("text-anchor", "middle");
    t.setAttribute("font-size", "20"); t.textContent = String(score);
    svg.append(t);
    return svg;
  }
  function renderAudit(a) {
    root.replaceChildren(el("h1", "SEO audit " + (a.audit_id || "")));
    if (typeof a.score !== "number" || !a.summary) {
      root.append(el("p", "Audit " + (a.status || "") + ": the report shows once it completes.",
        "muted"));
      return;
    }
    const s = a.summary;
    const head = el("div", undefined, "row");
    const facts = el("div");
    facts.append(el("div", s.issues_critical + " critical, " + s.issues_warning + " warning, " +
      s.issues_info + " info"));
    for (const [name, value] of Object.entries(s.categories || {})) {
      const line = el("div", undefined, "row");
      const bar = el("div", undefined, "bar");
      const fill = el("i");
      fill.style.width = Math.max(0, Math.min(100, Number(value))) + "%";
      bar.append(fill);
      line.append(el("span", name + " " + value), bar);
      facts.append(line);
    }
    head.append(gauge(a.score), facts);
    const list = el("ul");
    const first = s.fix_first && s.fix_first.length ? s.fix_first : null;
    for (const t of first || s.top_issues || []) {
      const sev = t.severity === "critical" ? "crit" : t.severity === "warning" ? "warn" : "info";
      list.append(el("li", t.title + " (" + t.affected_count +
        (first ? ", effort " + t.effort : "") + ")", sev));
    }
    root.append(head, el("h1", first ? "Fix first" : "Worst issues"), list);
    const links = el("div", undefined, "row");
    if (a.report_url) links.append(link("Full report (with the API key)", a.report_url));
    if (a.share_url) links.append(link("Share link", a.share_url));
    root.append(links);
  }
  function renderArticle(a) {
    root.replaceChildren(el("h1", a.title || ("Article " + (a.article_id || ""))));
    if (!a.content_markdown) {
      root.append(el("p", "Article " + (a.status || "") + ": the draft shows once it is ready.",
        "muted"));
      return;
    }
    root.append(el("p", "QA " + a.qa_score + "/100, " + a.word_count + " words. A draft: " +
      "nothing is published.", "muted"), el("pre", a.content_markdown));
  }
  function render(result) {
    const data = (result && result.structuredContent) || {};
    if (KIND === "article") renderArticle(data); else renderAudit(data);
  }
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const msg = event.data;
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined && pending.has(msg.id)) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p.reject(msg.error); else p.resolve(msg.result);
      return;
    }
    if (msg.method === "ui/notifications/tool-result") render(msg.params);
  });
  request("ui/initialize", {
    appInfo: { name: "serpwright-" + KIND, version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "${APPS_PROTOCOL}",
  }).then(() => send({ method: "ui/notifications/initialized", params: {} }))
    .catch(() => {});
})();`;

/** The app page for `kind`. */
export function appHtml(kind: "audit" | "article"): string {
  const title = kind === "audit" ? "Serpwright audit report" : "Serpwright article preview";
  return `<!DOCTYPE html>
<html lang="en" data-kind="${kind}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title><style>${STYLE}</style></head>
<body><div id="app"><p class="muted">Loading…</p></div><script>${SCRIPT}</script></body>
</html>`;
}
