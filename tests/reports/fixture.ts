/**
 * What the report tests share: a hostile site (titles, descriptions, anchors and URLs that try to
 * become markup or script), running an audit of it, and a strict reading of a report's HTML: the
 * elements and attributes it holds, its links and its text.
 */
import assert from "node:assert/strict";
import { Parser } from "htmlparser2";
import type { TestApp } from "../helpers/app.ts";
import { waitForAudit } from "../helpers/jobs.ts";
import { html, page, type Route } from "../helpers/sites.ts";

/** Text a crawled site controls, each trying another way out of its context. */
export const HOSTILE_TITLE = `Evil <script>alert("t")</script>"><img src=x onerror=alert(1)> page`;
export const HOSTILE_DESCRIPTION = `'><svg onload=alert(2)> description long enough to be fine`;
export const HOSTILE_ANCHOR = `<b onmouseover=alert(3)>click</b>`;

/**
 * A site of `articles` + 3 pages: a home page with hostile links (`javascript:`, a query that
 * closes an attribute), a hostile-titled page, articles (the first two without a title), a 404
 * and a redirect to `javascript:`. `fixed`: the second version, where the untitled articles got
 * their titles (the next audit sees a fixed issue).
 */
export function hostileSite(articles: number, state: { fixed: boolean }) {
  const links = [
    ...Array.from({ length: articles }, (_, i) => `/a${i}`),
    "/evil",
    "/missing",
    "/jsredirect",
    `/q?x="><script>alert(6)</script>`,
    "javascript:alert(document.cookie)",
  ];
  return (path: string): Route | undefined => {
    if (path === "/") {
      return html(page({
        title: "Home of the hostile fixture",
        links,
        body: `<p><a href="javascript:alert(5)">${HOSTILE_ANCHOR}</a></p>`,
      }));
    }
    if (path === "/evil") {
      return html(page({ title: HOSTILE_TITLE, description: HOSTILE_DESCRIPTION, key: "evil" }));
    }
    if (path === "/jsredirect") {
      return { status: 302, headers: { location: "javascript:alert(7)" } };
    }
    const m = /^\/a(\d+)$/.exec(path);
    if (m && Number(m[1]) < articles) {
      const untitled = Number(m[1]) < 2 && !state.fixed;
      return html(page({
        title: untitled ? null : `Article ${m[1]} of the hostile fixture site`,
        key: `a${m[1]}`,
      }));
    }
    return undefined;
  };
}

/** Starts an audit of the project and waits for it to complete; returns its id. */
export async function auditOnce(app: TestApp, key: string, projectId: string): Promise<string> {
  const started = await app.req("POST", `/v1/projects/${projectId}/audits`, { key, body: {} });
  assert.equal(started.status, 202, started.text);
  const done = await waitForAudit(app, key, started.body.audit_id, { timeoutMs: 120_000 });
  assert.equal(done.body.status, "completed", done.text);
  return started.body.audit_id;
}

/** What a page holds, as a browser's parser reads it. */
export interface ParsedPage {
  tags: Set<string>;
  /** Every attribute as `tag attr=value`. */
  attributes: { tag: string; name: string; value: string }[];
  hrefs: string[];
  text: string;
}

export function parsePage(markup: string): ParsedPage {
  const out: ParsedPage = { tags: new Set(), attributes: [], hrefs: [], text: "" };
  let inStyle = false;
  const parser = new Parser({
    onopentag(name, attrs) {
      out.tags.add(name);
      if (name === "style") inStyle = true;
      for (const [k, v] of Object.entries(attrs)) {
        out.attributes.push({ tag: name, name: k, value: v });
      }
      if (attrs.href !== undefined) out.hrefs.push(attrs.href);
    },
    onclosetag(name) {
      if (name === "style") inStyle = false;
    },
    ontext(t) {
      if (!inStyle) out.text += t;
    },
  }, { decodeEntities: true, lowerCaseAttributeNames: true });
  parser.write(markup);
  parser.end();
  return out;
}

/** The elements a report or preview may hold: its own markup and its charts, nothing else. */
export const ALLOWED_TAGS = new Set([
  "html",
  "head",
  "meta",
  "title",
  "link",
  "style",
  "body",
  "header",
  "main",
  "footer",
  "nav",
  "section",
  "article",
  "figure",
  "figcaption",
  "div",
  "span",
  "p",
  "a",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "table",
  "caption",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
  "code",
  "pre",
  "strong",
  "em",
  "blockquote",
  "hr",
  "br",
  "details",
  "summary",
  "time",
  "svg",
  "desc",
  "g",
  "circle",
  "rect",
  "line",
  "polyline",
  "text",
]);

/**
 * Asserts that a page carries no live markup: only allowed elements, no event handler or style
 * attribute, and links only to http(s) URLs or to the service's own paths.
 */
export function assertInert(markup: string, label: string): ParsedPage {
  const p = parsePage(markup);
  const extra = [...p.tags].filter((t) => !ALLOWED_TAGS.has(t));
  assert.deepEqual(extra, [], `${label}: unexpected elements`);
  for (const a of p.attributes) {
    assert.ok(!a.name.startsWith("on"), `${label}: event handler ${a.tag} ${a.name}=${a.value}`);
    assert.notEqual(a.name, "style", `${label}: style attribute on ${a.tag}`);
    assert.ok(
      !/^\s*(javascript|vbscript|data:text)/i.test(a.value),
      `${label}: ${a.tag} ${a.name}=${a.value}`,
    );
  }
  for (const href of p.hrefs) {
    const ok = /^https?:\/\//i.test(href) || /^(\/(?!\/)|[?#])/.test(href) || href === "data:,";
    assert.ok(ok, `${label}: a link to ${href}`);
  }
  return p;
}
