/**
 * Share links beyond the report itself: the per-IP limit of the public pages, a sandbox key's
 * share (watermarked, never outliving the sandbox key), and an article's preview: a draft whose
 * markdown carries `<script>`, `javascript:` links and raw HTML renders inert, with its snippet,
 * QA assessments, internal links and the sandbox watermark; revoked and foreign links. Finding 2
 * of the security review (issue 28): the cap of 20 live links counted only the oldest 200
 * records, so revoked ones opened the way past it and the extra links were missing from the
 * listing; the cap is now exact (revocations and expiry included), listings run newest first and
 * page, and the account's links are listed and ended at once (`GET`, `DELETE /v1/shares`).
 */
import assert from "node:assert/strict";
import type { ArticleRecord } from "../../domain/articles/articles.ts";
import { newId } from "../../domain/platform/ids.ts";
import { sha256Hex } from "../../domain/platform/replay_seal.ts";
import { keys } from "../../kv/keys.ts";
import { type TestApp, withApp } from "../helpers/app.ts";
import { waitForArticle } from "../helpers/jobs.ts";
import { seedCompletedAudit } from "../helpers/seed_audit.ts";
import { html, page, serveSite } from "../helpers/sites.ts";
import { call, connectMcp } from "../mcp/helpers.ts";
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

/** A project of `key` with a completed audit written straight into the store (no crawl). */
async function seededAudit(app: TestApp, key: string, accountId: string, url?: string) {
  const project = await app.req("POST", "/v1/projects", {
    key,
    body: { url: url ?? `https://${crypto.randomUUID().slice(0, 8)}.example.com` },
  });
  assert.equal(project.status, 201, project.text);
  const auditId = newId("aud", app.clock.now());
  await seedCompletedAudit(app.kv, {
    accountId,
    projectId: project.body.project_id,
    auditId,
    pages: 3,
    completedAt: app.clock.now(),
  });
  return { auditId, projectId: project.body.project_id as string };
}

/** Every page of a listing, `limit` at a time; checks each page's size. */
async function allPages(app: TestApp, key: string, path: string, limit: number) {
  // deno-lint-ignore no-explicit-any
  const items: any[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req(
      "GET",
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
      { key },
    );
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.data.length <= limit, `a page holds at most ${limit}`);
    items.push(...res.body.data);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor !== null && pages < 100);
  return { items, pages };
}

/** A share link made a millisecond after the last, so "newest first" and id order agree. */
function shareLater(app: TestApp, key: string, path: string) {
  app.clock.advance(1);
  return app.req("POST", path, { key, body: {} });
}

Deno.test("share cap: 20 live links per audit, exactly, however many were revoked; listed newest first, paged", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const { auditId } = await seededAudit(app, key, accountId);
    const path = `/v1/audits/${auditId}/shares`;
    const create = () => shareLater(app, key, path);
    // Ten cycles: create until 409, revoke them all; 200 revoked records stay listed a week.
    for (let round = 0; round < 10; round++) {
      const made: string[] = [];
      for (let i = 0; i < 25; i++) {
        const res = await create();
        if (res.status === 409) {
          assert.equal(res.body.error.code, "limit_reached");
          break;
        }
        assert.equal(res.status, 201, res.text);
        made.push(res.body.share_id);
      }
      assert.equal(made.length, 20, `round ${round}: 20 live links, then 409`);
      for (const id of made) {
        assert.equal((await app.req("DELETE", `${path}/${id}`, { key })).status, 200);
      }
    }
    // Thirty more: exactly 20 succeed, the 21st and after are refused.
    const statuses: number[] = [];
    const live: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await create();
      statuses.push(res.status);
      if (res.status === 201) live.push(res.body.share_id);
    }
    assert.deepEqual(statuses, [...Array(20).fill(201), ...Array(10).fill(409)]);

    // The audit's listing: all 220 links, newest first, 50 a page; the 20 live ones first.
    const listed = await allPages(app, key, path, 50);
    assert.equal(listed.pages, 5);
    assert.equal(listed.items.length, 220);
    const ids = listed.items.map((s) => s.share_id);
    assert.deepEqual(ids, [...ids].sort().reverse(), "newest first");
    assert.deepEqual(ids.slice(0, 20), [...live].reverse());
    assert.deepEqual(
      listed.items.filter((s) => s.status === "active").map((s) => s.share_id),
      [...live].reverse(),
      "exactly the live ones are active",
    );
    assert.ok(listed.items.slice(20).every((s) => s.status === "revoked"));

    // The account's live links: exactly those 20, newest first, 7 a page.
    const account = await allPages(app, key, "/v1/shares", 7);
    assert.equal(account.pages, 3);
    assert.deepEqual(account.items.map((s) => s.share_id), [...live].reverse());
    assert.ok(account.items.every((s) => s.kind === "audit" && s.audit_id === auditId));
    const bad = await app.req("GET", `${path}?cursor=not*a*cursor`, { key });
    assert.equal(bad.status, 400);
  }, { env: { RATE_LIMIT_PER_MINUTE: "100000" } }));

Deno.test("share cap: links count until the moment they expire, and not a moment after", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const { auditId } = await seededAudit(app, key, accountId);
    const path = `/v1/audits/${auditId}/shares`;
    const create = (days: number) =>
      app.req("POST", path, { key, body: { expires_in_days: days } });
    for (let i = 0; i < 10; i++) assert.equal((await create(1)).status, 201);
    for (let i = 0; i < 10; i++) assert.equal((await create(2)).status, 201);
    assert.equal((await create(1)).status, 409);
    app.clock.advance(86_400_000 - 1);
    assert.equal((await create(1)).status, 409, "a millisecond before the first ten expire");
    app.clock.advance(1);
    const again = [];
    for (let i = 0; i < 11; i++) again.push((await create(1)).status);
    assert.deepEqual(again, [...Array(10).fill(201), 409], "exactly ten places freed");
    assert.equal((await app.req("GET", "/v1/shares", { key })).body.data.length, 20);
  }));

Deno.test("every share link of the account, listed and ended at once, over REST and MCP", () =>
  withApp(async (app) => {
    const open = opener(app.url);
    const site = serveSite({
      "/": html(page({ title: "Home of the account-wide fixture", links: ["/about"] })),
      "/about": html(page({ title: "About the account-wide fixture", key: "about" })),
    });
    const sandboxMcp = { client: null as Awaited<ReturnType<typeof connectMcp>> | null };
    try {
      const { key: sandbox, accountId } = await app.signup();
      const live = await app.liveKey(accountId);
      const { auditId: sandboxAudit, projectId } = await seededAudit(
        app,
        sandbox,
        accountId,
        site.origin,
      );
      const started = await app.req("POST", `/v1/projects/${projectId}/articles`, {
        key: sandbox,
        body: { topic: "How to choose trail shoes" },
      });
      assert.equal(started.status, 202, started.text);
      const articleId = started.body.article_id;
      const ready = await waitForArticle(app, sandbox, articleId, { timeoutMs: 60_000 });
      assert.equal(ready.body.status, "ready", ready.text);
      const { auditId: liveAudit } = await seededAudit(app, live, accountId);

      const made = [];
      for (
        const [key, path] of [
          [sandbox, `/v1/articles/${articleId}/shares`],
          [sandbox, `/v1/audits/${sandboxAudit}/shares`],
          [live, `/v1/audits/${liveAudit}/shares`],
          [live, `/v1/audits/${liveAudit}/shares`],
        ]
      ) {
        app.clock.advance(1);
        const res = await app.req("POST", path, { key, body: {} });
        assert.equal(res.status, 201, res.text);
        made.push(res.body);
      }
      const [article, sandboxShare, live1, live2] = made;
      const keyIds = (await app.req("GET", "/v1/api-keys", { key: live })).body.keys;
      const idOf = (mode: string) => keyIds.find((k: { mode: string }) => k.mode === mode).id;

      // A live key sees both sides, newest first, with target and creator; 2 a page.
      const all = await allPages(app, live, "/v1/shares", 2);
      assert.equal(all.pages, 2);
      assert.deepEqual(all.items.map((s) => s.share_id), [
        live2.share_id,
        live1.share_id,
        sandboxShare.share_id,
        article.share_id,
      ]);
      assert.deepEqual(all.items[3], {
        share_id: article.share_id,
        kind: "article",
        article_id: articleId,
        status: "active",
        hint: article.hint,
        created_at: article.created_at,
        expires_at: article.expires_at,
        revoked_at: null,
        revoked_reason: null,
        created_by: { key_id: idOf("sandbox"), connected_app_id: null },
      });
      assert.equal(all.items[0].kind, "audit");
      assert.equal(all.items[0].audit_id, liveAudit);
      assert.equal(all.items[0].created_by.key_id, idOf("live"));
      assert.ok(!JSON.stringify(all.items).includes(live2.url.split("/reports/")[1]), "no token");

      // A sandbox key sees the sandbox side only, the same over MCP.
      const sandboxList = await app.req("GET", "/v1/shares", { key: sandbox });
      assert.equal(sandboxList.status, 200);
      assert.ok(sandboxList.headers.get("x-ratelimit-limit"), "the /v1 rate-limit headers");
      assert.deepEqual(sandboxList.body.data.map((s: { share_id: string }) => s.share_id), [
        sandboxShare.share_id,
        article.share_id,
      ]);
      sandboxMcp.client = await connectMcp(app, { key: sandbox });
      const viaMcp = await call(sandboxMcp.client, "api_keys", { action: "list_shares" });
      assert.deepEqual(viaMcp, sandboxList.body);
      const articleShares = await call(sandboxMcp.client, "articles", {
        action: "shares",
        article_id: articleId,
        limit: 1,
      });
      assert.equal(articleShares.data[0].share_id, article.share_id);
      assert.equal(articleShares.next_cursor, null);

      // The sandbox key ends its side over MCP: the live links stay.
      const endedSandbox = await call(sandboxMcp.client, "api_keys", { action: "end_shares" });
      assert.deepEqual(endedSandbox, { ended: 2 });
      assert.equal((await open(article.url)).status, 404);
      assert.equal((await open(sandboxShare.url)).status, 404);
      assert.equal((await open(live1.url)).status, 200);

      // The live key ends the rest over REST; again answers 0.
      const endedLive = await app.req("DELETE", "/v1/shares", { key: live });
      assert.equal(endedLive.status, 200, endedLive.text);
      assert.deepEqual(endedLive.body, { ended: 2 });
      for (const s of made) assert.equal((await open(s.url)).status, 404, s.share_id);
      assert.deepEqual((await app.req("GET", "/v1/shares", { key: live })).body.data, []);
      assert.deepEqual((await app.req("DELETE", "/v1/shares", { key: live })).body, { ended: 0 });
      const revoked = (await app.req("GET", `/v1/audits/${liveAudit}/shares`, { key: live })).body;
      assert.deepEqual(
        revoked.data.map((s: { status: string; revoked_reason: string }) => [
          s.status,
          s.revoked_reason,
        ]),
        [["revoked", "user"], ["revoked", "user"]],
      );
      // A new link after ending them all works.
      const after = await app.req("POST", `/v1/audits/${liveAudit}/shares`, {
        key: live,
        body: {},
      });
      assert.equal(after.status, 201);
      assert.equal((await open(after.body.url)).status, 200);
    } finally {
      await sandboxMcp.client?.close();
      await site.close();
    }
  }));

Deno.test("links made before the live indexes are counted, listed and ended", () =>
  withApp(async (app) => {
    const open = opener(app.url);
    const { key, accountId } = await app.signup();
    const { auditId } = await seededAudit(app, key, accountId);
    const keyId = (await app.req("GET", "/v1/api-keys", { key })).body.keys[0].id;
    // 105 live links as the earlier code stored them (a record and a token index, no more): its
    // bypass of the cap could make that many.
    const urls: string[] = [];
    for (let i = 0; i < 105; i++) {
      const now = app.clock.now() + i;
      const id = newId("shr", now);
      const token = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
        .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
      const tokenHash = await sha256Hex(token);
      await app.kv.atomic()
        .set(keys.share(accountId, auditId, id), {
          id,
          kind: "audit",
          accountId,
          targetId: auditId,
          mode: "sandbox",
          tokenHash,
          last4: token.slice(-4),
          sealed: null,
          createdAt: now,
          expiresAt: now + 86_400_000,
          revokedAt: null,
          createdBy: keyId,
        })
        .set(keys.shareByToken(tokenHash), { accountId, targetId: auditId, shareId: id })
        .commit();
      urls.push(`${BASE}/reports/${token}`);
    }
    assert.equal((await open(urls[0])).status, 200);
    const over = await app.req("POST", `/v1/audits/${auditId}/shares`, { key, body: {} });
    assert.equal(over.status, 409, "the older links count");
    // Indexed once: the newest 100 stay live, the 5 oldest are revoked.
    assert.equal((await open(urls[0])).status, 404, "beyond the newest 100");
    assert.equal((await open(urls[104])).status, 200);
    assert.equal((await allPages(app, key, "/v1/shares", 100)).items.length, 100);
    const listed = await allPages(app, key, `/v1/audits/${auditId}/shares`, 100);
    assert.equal(listed.items.filter((s) => s.status === "revoked").length, 5);
    assert.deepEqual((await app.req("DELETE", "/v1/shares", { key })).body, { ended: 100 });
    assert.equal((await open(urls[104])).status, 404);
    assert.equal((await app.req("POST", `/v1/audits/${auditId}/shares`, { key })).status, 201);
  }));

Deno.test("a completed audit's share_url on an account not indexed yet: the newest live link, past the first listed", () =>
  withApp(async (app) => {
    const { key, accountId } = await app.signup();
    const { auditId } = await seededAudit(app, key, accountId);
    const path = `/v1/audits/${auditId}/shares`;
    const create = async () => {
      const res = await shareLater(app, key, path);
      assert.equal(res.status, 201, res.text);
      return res.body as { share_id: string; url: string };
    };
    // 20 links revoked, then 5 live: the live ones come last in key order.
    for (let i = 0; i < 20; i++) {
      const { share_id } = await create();
      assert.equal((await app.req("DELETE", `${path}/${share_id}`, { key })).status, 200);
    }
    let newest = { share_id: "", url: "" };
    for (let i = 0; i < 5; i++) newest = await create();
    // As before the live indexes: the account's records are listed, all of them.
    await app.kv.delete(keys.shareIndexed(accountId));
    const got = await app.req("GET", `/v1/audits/${auditId}`, { key });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.share_url, newest.url);
  }, { env: { RATE_LIMIT_PER_MINUTE: "100000" } }));
