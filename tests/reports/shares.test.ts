/**
 * Share links beyond the report itself: the per-IP limit of the public pages, a sandbox key's
 * share (watermarked, never outliving the sandbox key), and an article's preview: a draft whose
 * markdown carries `<script>`, `javascript:` links and raw HTML renders inert, with its snippet,
 * QA assessments, internal links and the sandbox watermark; revoked and foreign links.
 */
import assert from "node:assert/strict";
import type { ArticleRecord } from "../../domain/articles.ts";
import { keys } from "../../kv/keys.ts";
import { withApp } from "../helpers/app.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { assertInert, auditOnce } from "./fixture.ts";

const BASE = "http://localhost:8000";

function opener(appUrl: string) {
  return async (url: string, ip = "203.0.113.20") => {
    const local = url.startsWith(BASE) ? appUrl + url.slice(BASE.length) : url;
    const res = await fetch(local, { headers: { "x-forwarded-for": ip } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
}

Deno.test("shared pages: rate-limited per client IP, unknown tokens included", () =>
  withApp(async (app) => {
    const open = opener(app.url);
    const url = `${BASE}/reports/${"A".repeat(43)}`;
    for (let i = 0; i < 5; i++) {
      const res = await open(url, "203.0.113.7");
      assert.equal(res.status, 404);
      assert.equal(res.headers.get("x-ratelimit-remaining"), String(4 - i));
      assert.match(res.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.match(res.headers.get("x-robots-tag") ?? "", /noindex/);
    }
    const refused = await open(url, "203.0.113.7");
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get("retry-after")) > 0);
    assert.equal(refused.headers.get("referrer-policy"), "no-referrer");
    assert.match(refused.text, /Too many requests/);
    assert.equal((await open(`${BASE}/previews/x`, "203.0.113.7")).status, 429, "both pages");
    assert.equal((await open(url, "203.0.113.8")).status, 404, "another address has its own");
    app.clock.advance(61_000);
    assert.equal((await open(url, "203.0.113.7")).status, 404, "a new window");
  }, { env: { SHARED_PAGE_RATE_PER_MINUTE: "5" } }));

/** A draft written by a model we do not trust. */
function hostileMarkdown(origin: string): string {
  return [
    "# The draft's own heading",
    "",
    'Intro with <script>alert("md")</script> and <img src=x onerror=alert(1)> raw html.',
    "",
    "[bad link](javascript:alert(2)) and [entity trick](javascript&#58;alert(3)) and " +
    "[case trick](JaVaScRiPt:alert(4)) and [data link](data:text/html;base64,PHNjcmlwdD4=)",
    "",
    `[our pricing](/pricing) and [about us](${origin}/about) and ` +
    '[elsewhere](https://example.org/x "a title") and <https://example.org/auto>',
    "",
    "![an image](https://example.org/i.png) ![data image](data:image/png;base64,AAAA)",
    "",
    '<iframe src="https://evil.example"></iframe>',
    "",
    "| a | b |",
    "|:--|--:|",
    "| 1 | 2 |",
    "",
    '<a href="javascript:alert(6)">raw anchor</a>',
    "",
    "#### A heading four levels down",
    "",
    "Closing words.",
  ].join("\n");
}

Deno.test("a sandbox key shares its audit (watermarked) and an article preview renders inert", () =>
  withApp(async (app) => {
    const open = opener(app.url);
    const site = serveSite({
      "/": html(page({ title: "Home of the preview fixture", links: ["/pricing", "/about"] })),
      "/pricing": html(page({ title: "Pricing of the preview fixture", key: "pricing" })),
      "/about": html(page({ title: "About the preview fixture", key: "about" })),
    });
    try {
      const { key, accountId } = await app.signup();
      const proj = await app.req("POST", "/v1/projects", { key, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const projectId = proj.body.project_id;

      // A sandbox audit, shared: the link carries the watermark and ends with the sandbox key.
      const auditId = await auditOnce(app, key, projectId);
      const share = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
      assert.equal(share.status, 201, share.text);
      const keyExpiry = (await app.req("GET", "/v1/api-keys", { key })).body.keys[0].expires_at;
      assert.equal(share.body.expires_at, keyExpiry, "capped at the sandbox key's expiry");
      const report = await open(share.body.url);
      assert.equal(report.status, 200);
      assert.match(report.text, /class="watermark" role="note">Sandbox report/);
      assertInert(report.text, "sandbox report");

      // At most 20 live links per audit; revoking one makes room.
      const more = [];
      for (let i = 0; i < 19; i++) {
        more.push(await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} }));
      }
      assert.deepEqual(more.map((r) => r.status), Array(19).fill(201));
      const over = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
      assert.equal(over.status, 409);
      assert.equal(over.body.error.code, "limit_reached");
      const made = more[0].body.share_id;
      await app.req("DELETE", `/v1/audits/${auditId}/shares/${made}`, { key });
      const room = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
      assert.equal(room.status, 201);

      // An article, its draft replaced by hostile model output.
      const started = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key,
        body: { topic: "How to choose running shoes" },
      });
      assert.equal(started.status, 202, started.text);
      const articleId = started.body.article_id;
      const ready = await waitForArticle(app, key, articleId, { timeoutMs: 60_000 });
      assert.equal(ready.body.status, "ready", ready.text);
      const entry = await app.kv.get<ArticleRecord>(keys.article(accountId, articleId));
      const title = 'Draft <script>alert("title")</script> shoes';
      const description = '"><img src=x onerror=alert(9)> how to pick shoes that fit';
      await app.kv.set(entry.key, {
        ...entry.value!,
        title,
        metaDescription: description,
        contentMarkdown: hostileMarkdown(site.origin),
      });

      const created = await app.req("POST", `/v1/articles/${articleId}/shares`, {
        key,
        body: { expires_in_days: 7 },
      });
      assert.equal(created.status, 201, created.text);
      assert.match(created.body.url, /\/previews\/[A-Za-z0-9_-]{43}$/);
      assert.equal(created.body.article_id, articleId);
      const preview = await open(created.body.url);
      assert.equal(preview.status, 200);
      assert.match(preview.headers.get("content-security-policy") ?? "", /form-action 'none'/);
      assert.match(preview.headers.get("x-robots-tag") ?? "", /noindex/);
      assert.equal(preview.headers.get("referrer-policy"), "no-referrer");
      assert.equal(preview.headers.get("x-content-type-options"), "nosniff");
      const p = assertInert(preview.text, "preview");
      const markup = preview.text;
      for (const bad of ["<script", "<iframe", "<img", 'href="javascript']) {
        assert.ok(!markup.toLowerCase().includes(bad), `no ${bad}`);
      }
      assert.doesNotMatch(markup, /href="data:(?!,")/i, "no data: link but the empty favicon");
      // What was raw HTML is there as text; what was a hostile link is its text alone.
      assert.ok(p.text.includes('<script>alert("md")</script>'));
      assert.ok(p.text.includes('<iframe src="https://evil.example"></iframe>'));
      assert.ok(p.text.includes('<a href="javascript:alert(6)">raw anchor</a>'));
      for (const text of ["bad link", "entity trick", "case trick", "data link"]) {
        assert.ok(p.text.includes(text), text);
      }
      // Links: absolute http(s), relative ones resolved on the project's site.
      assert.ok(p.hrefs.includes(`${site.origin}/pricing`));
      assert.ok(p.hrefs.includes(`${site.origin}/about`));
      assert.ok(p.hrefs.includes("https://example.org/x"));
      assert.ok(p.hrefs.includes("https://example.org/auto"));
      assert.ok(p.hrefs.includes("https://example.org/i.png"), "an image becomes a link");
      assert.match(markup, /rel="nofollow noopener noreferrer ugc"/);
      // The internal links it uses, the snippet, QA and the watermark.
      const links = markup.slice(markup.indexOf('id="links-h"'));
      assert.match(links, /Internal links \(2\)/);
      assert.ok(p.text.includes("our pricing") && p.text.includes("about us"));
      assert.ok(p.text.includes(title), "the hostile title, as text");
      assert.ok(p.text.includes(description), "the description, as text");
      assert.match(markup, /class="s-title"/);
      assert.match(markup, new RegExp(`Quality check: ${ready.body.qa_score} / 100`));
      for (const a of ready.body.qa.assessments) {
        assert.ok(markup.includes(`<code>${a.id}</code>`), a.id);
      }
      assert.match(markup, /class="watermark" role="note">Sandbox draft/);
      // Headings: the page's h1, its h2 sections, the draft below them, never skipping a level.
      const levels = [...markup.matchAll(/<h([1-6])[ >]/g)].map((m) => Number(m[1]));
      assert.equal(levels[0], 1);
      for (let i = 1; i < levels.length; i++) {
        assert.ok(levels[i] <= levels[i - 1] + 1, `heading order ${levels.join(",")}`);
      }

      // Listed without the token, revoked, then 404; foreign callers get 404.
      const listed = await app.req("GET", `/v1/articles/${articleId}/shares`, { key });
      assert.equal(listed.body.data.length, 1);
      assert.ok(!listed.text.includes(created.body.url.split("/previews/")[1]));
      const stranger = await app.signup();
      for (
        const [method, path] of [
          ["POST", `/v1/articles/${articleId}/shares`],
          ["GET", `/v1/articles/${articleId}/shares`],
          ["DELETE", `/v1/articles/${articleId}/shares/${created.body.share_id}`],
        ]
      ) {
        const r = await app.req(method, path, {
          key: stranger.key,
          ...(method === "POST" ? { body: {} } : {}),
        });
        assert.equal(r.status, 404, `${method} ${path}`);
      }
      const revoked = await app.req(
        "DELETE",
        `/v1/articles/${articleId}/shares/${created.body.share_id}`,
        { key },
      );
      assert.equal(revoked.status, 200);
      assert.equal(revoked.body.status, "revoked");
      assert.equal((await open(created.body.url)).status, 404);
      assert.equal((await open(share.body.url)).status, 200, "the report's link still works");
      assert.equal((await open(`${share.body.url}?issue=no_such_check`)).status, 400);
      // A link whose account is gone opens nothing.
      await app.kv.delete(keys.account(accountId));
      assert.equal((await open(share.body.url)).status, 404, "account gone");
    } finally {
      await site.close();
    }
  }));
