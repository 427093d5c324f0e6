/**
 * The HTML audit report and its share links over HTTP, through the real app: a live key audits a
 * hostile site twice (a day apart, an issue fixed in between), then reads the report with its key
 * (score, categories, charts, history, changes, issues, inventory with filters and pages, one
 * issue's items), shares it, opens the link without a key, revokes, lets the clock expire a link,
 * and checks the store never holds a raw token. The same through MCP's audits tool.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../domain/platform/replay_seal.ts";
import { activeShareUrl } from "../../domain/shares/links.ts";
import { errorCode, type TestApp, withApp } from "../helpers/app.ts";
import { liveWithCredits } from "../helpers/credits.ts";
import { serveSite } from "../helpers/sites.ts";
import { call, connectMcp } from "../mcp/helpers.ts";
import {
  assertInert,
  auditOnce,
  HOSTILE_ANCHOR,
  HOSTILE_TITLE,
  hostileSite,
  parsePage,
} from "./fixture.ts";

const DAY = 86_400_000;
const CATEGORY_NAMES = ["Indexability", "Structure", "Security", "Performance", "Mobile"];

/** The section of a report page with this id, up to its end. */
function section(markup: string, id: string): string {
  const start = markup.indexOf(`id="${id}"`);
  assert.ok(start >= 0, `section ${id}`);
  return markup.slice(start, markup.indexOf("</section>", start));
}

const unescape = (s: string) => s.replaceAll("&amp;", "&");

/** The crawled URLs the inventory table lists, and its Next page link. */
function inventory(markup: string, origin: string) {
  const part = section(markup, "pages");
  const urls = parsePage(part).hrefs.filter((h) => h.startsWith(origin));
  const next = /<a href="([^"]+)">Next page<\/a>/.exec(part)?.[1];
  return { urls, next: next ? unescape(next) : null };
}

/** Every URL of a JSON listing, following next_cursor. */
async function allPages(app: TestApp, key: string, path: string): Promise<string[]> {
  const urls: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await app.req("GET", `${path}${sep}limit=100${cursor ? `&cursor=${cursor}` : ""}`, {
      key,
    });
    assert.equal(res.status, 200, res.text);
    urls.push(...res.body.data.map((p: { url: string }) => p.url));
    cursor = res.body.next_cursor;
  } while (cursor);
  return urls;
}

/** The test server's address of a link on the configured public base (`localhost:8000`). */
let served = "";
const BASE = "http://localhost:8000";

/** A page fetched without a key. */
async function open(url: string, ip = "203.0.113.10") {
  const local = url.startsWith(BASE) ? served + url.slice(BASE.length) : url;
  const res = await fetch(local, { headers: { "x-forwarded-for": ip } });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

function assertPageHeaders(headers: Headers, label: string) {
  assert.equal(headers.get("content-type"), "text/html; charset=utf-8", label);
  const csp = headers.get("content-security-policy") ?? "";
  for (
    const part of [
      "default-src 'none'",
      "img-src data:",
      "frame-ancestors 'none'",
      "base-uri 'none'",
      "form-action 'none'",
    ]
  ) assert.ok(csp.includes(part), `${label}: CSP ${part} in ${csp}`);
  assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/, `${label}: style by hash only`);
  assert.ok(!csp.includes("script-src") && !csp.includes("unsafe"), `${label}: no script at all`);
  assert.match(headers.get("x-robots-tag") ?? "", /noindex/, label);
  assert.equal(headers.get("referrer-policy"), "no-referrer", label);
  assert.equal(headers.get("x-content-type-options"), "nosniff", label);
  assert.match(headers.get("cache-control") ?? "", /no-store/, label);
}

Deno.test("the audit report over HTTP: charts, history, changes, issues, inventory, escaping, shares", () =>
  withApp(async (app) => {
    served = app.url;
    const state = { fixed: false };
    const site = serveSite(hostileSite(52, state));
    const mcp: { close(): Promise<void> }[] = [];
    try {
      const { accountId, live } = await liveWithCredits(app, 200);
      const proj = await app.req("POST", "/v1/projects", { key: live, body: { url: site.origin } });
      assert.equal(proj.status, 201, proj.text);
      const projectId = proj.body.project_id;
      const first = await auditOnce(app, live, projectId);
      state.fixed = true;
      app.clock.advance(DAY);
      const auditId = await auditOnce(app, live, projectId);
      const audit = (await app.req("GET", `/v1/audits/${auditId}`, { key: live })).body;

      // The keyed report.
      const res = await app.req("GET", `/v1/audits/${auditId}/report`, { key: live });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assertPageHeaders(res.headers, "keyed report");
      assert.ok(res.headers.get("x-ratelimit-limit"), "the /v1 rate-limit headers");
      const markup = res.text;
      const parsed = assertInert(markup, "keyed report");
      assert.match(markup, /^<!DOCTYPE html>\s*<html lang="en">/);
      assert.match(markup, /<meta name="robots" content="noindex/);
      assert.ok(parsed.text.includes(`Overall score ${audit.score} out of 100`));
      for (const name of CATEGORY_NAMES) assert.ok(parsed.text.includes(name), name);
      for (const [cat, score] of Object.entries(audit.summary.categories)) {
        const name = cat[0].toUpperCase() + cat.slice(1);
        assert.match(
          markup,
          new RegExp(`<th scope="row">${name}</th>\\s*<td class="num"[^>]*>${score}<`),
        );
      }
      // Three charts, each an image with a name and a description, and a table beside it.
      const charts = markup.match(/<svg class="chart[^>]*>/g) ?? [];
      assert.equal(charts.length, 4, "gauge, bars, history, issues by category");
      for (const svg of charts) {
        assert.match(svg, /role="img"/);
        const [t, d] = /aria-labelledby="([^" ]+) ([^"]+)"/.exec(svg)!.slice(1);
        assert.match(markup, new RegExp(`<title id="${t}">[^<]+</title>`));
        assert.match(markup, new RegExp(`<desc id="${d}">[^<]+</desc>`));
      }
      // History: both audits, oldest first; changes: the titles fixed in between.
      const history = section(markup, "history-h");
      assert.ok(history.includes("2 completed audits from 2026-11-23 to 2026-11-24"), history);
      assert.equal((history.match(/<polyline /g) ?? []).length, 6, "overall and five categories");
      const changes = section(markup, "changes-h");
      assert.ok(changes.includes("Fixed issues"), changes);
      assert.ok(changes.includes('href="#issue-title_missing"'), "title_missing is fixed");
      assert.ok(markup.includes('id="issue-title_missing"'));
      // Issues with their texts, first items and the way to the rest.
      const issues = (await app.req("GET", `/v1/audits/${auditId}/issues?limit=100`, { key: live }))
        .body.data;
      for (const i of issues) {
        assert.ok(markup.includes(`id="issue-${i.check}"`), i.check);
        assert.ok(parsed.text.includes(i.meaning), `${i.check} meaning`);
        assert.ok(markup.includes(`href="${i.doc_url}"`), `${i.check} doc link`);
      }
      const broken = issues.find((i: { check: string }) => i.check === "broken_internal_links");
      assert.ok(broken, "the fixture has broken links");
      assert.ok(markup.includes(`?issue=broken_internal_links"`));

      // Hostile text is shown as text, never as markup.
      assert.ok(parsed.text.includes(HOSTILE_TITLE), "the hostile title, as text");
      assert.ok(!markup.includes(HOSTILE_TITLE), "never raw");
      assert.ok(!markup.includes("<script") && !markup.includes("<img"));
      assert.ok(!markup.includes(HOSTILE_ANCHOR));
      for (const bad of ["javascript:alert(5)", "javascript:alert(document.cookie)"]) {
        assert.ok(!parsed.hrefs.some((h) => h.includes(bad)), bad);
      }
      // The hostile link reached the report (in its issue's evidence), as text only.
      const uncrawlable = await app.req(
        "GET",
        `/v1/audits/${auditId}/report?issue=uncrawlable_links`,
        {
          key: live,
        },
      );
      const uncrawlableText = assertInert(uncrawlable.text, "uncrawlable_links page").text;
      assert.ok(uncrawlableText.includes("javascript:alert(5)"), "shown as text");
      assert.ok(!uncrawlable.text.includes('href="javascript'));

      // The inventory: 50 rows a page, the next page a plain link, together the whole list.
      const every = await allPages(app, live, `/v1/audits/${auditId}/pages`);
      assert.ok(every.length > 50, `${every.length} URLs`);
      const p1 = inventory(markup, site.origin);
      assert.equal(p1.urls.length, 50);
      assert.ok(p1.next, "a next page");
      const p2res = await app.req("GET", p1.next!, { key: live });
      assert.equal(p2res.status, 200);
      const p2 = inventory(p2res.text, site.origin);
      assert.equal(p2.next, null);
      assert.deepEqual([...p1.urls, ...p2.urls], every.map((u) => new URL(u).href));
      // Filters, server-side, equal to the JSON listing's.
      for (const q of ["status=4xx", "indexable=false", "check=broken_internal_links"]) {
        const page = await app.req("GET", `/v1/audits/${auditId}/report?${q}`, { key: live });
        assert.equal(page.status, 200, q);
        const want = await allPages(app, live, `/v1/audits/${auditId}/pages?${q}`);
        assert.ok(want.length > 0, q);
        assert.deepEqual(
          inventory(page.text, site.origin).urls,
          want.map((u) => new URL(u).href),
          q,
        );
        assert.match(page.text, /aria-current="true"/, `${q} marked as the current filter`);
      }
      // One issue's every item.
      const items = await app.req(
        "GET",
        `/v1/audits/${auditId}/report?issue=broken_internal_links`,
        {
          key: live,
        },
      );
      assert.equal(items.status, 200);
      assertInert(items.text, "issue page");
      const json = await app.req("GET", `/v1/audits/${auditId}/issues/broken_internal_links`, {
        key: live,
      });
      const rows = (items.text.match(/<td class="url">/g) ?? []).length;
      assert.equal(rows, json.body.data.length);
      assert.ok(rows >= 2);
      // Errors keep the /v1 shape.
      const bad = await app.req("GET", `/v1/audits/${auditId}/report?status=9xx`, { key: live });
      assert.equal(bad.status, 400);
      assert.equal(errorCode(bad), "invalid_request");
      const unknown = await app.req("GET", `/v1/audits/${auditId}/report?issue=nope`, {
        key: live,
      });
      assert.equal(errorCode(unknown), "not_found");
      const stranger = await liveWithCredits(app, 0);
      const foreign = await app.req("GET", `/v1/audits/${auditId}/report`, { key: stranger.live });
      assert.equal(foreign.status, 404);
      assert.equal(errorCode(foreign), "not_found");

      // Share links.
      const idem = { "idempotency-key": crypto.randomUUID() };
      const created = await app.req("POST", `/v1/audits/${auditId}/shares`, {
        key: live,
        body: {},
        headers: idem,
      });
      assert.equal(created.status, 201, created.text);
      const { share_id: shareId, url, expires_at: expiresAt } = created.body;
      assert.match(shareId, /^shr_/);
      assert.equal(Date.parse(expiresAt), app.clock.now() + 30 * DAY);
      const token = url.split("/reports/")[1];
      assert.equal(url, `${BASE}/reports/${token}`);
      assert.match(token, /^[A-Za-z0-9_-]{43}$/, "256 random bits");
      const replay = await app.req("POST", `/v1/audits/${auditId}/shares`, {
        key: live,
        body: {},
        headers: idem,
      });
      assert.equal(replay.body.share_id, shareId);
      assert.equal(replay.headers.get("idempotent-replayed"), "true");
      const listed = await app.req("GET", `/v1/audits/${auditId}/shares`, { key: live });
      assert.equal(listed.status, 200);
      assert.equal(listed.body.data.length, 1);
      assert.equal(listed.body.data[0].status, "active");
      assert.equal(listed.body.data[0].hint, `…${token.slice(-4)}`);
      assert.ok(!listed.text.includes(token), "never the token in a list");

      // The link, without a key: the same report.
      const shared = await open(url);
      assert.equal(shared.status, 200);
      assertPageHeaders(shared.headers, "shared report");
      const sharedParsed = assertInert(shared.text, "shared report");
      assert.ok(sharedParsed.text.includes(`Overall score ${audit.score} out of 100`));
      assert.ok(sharedParsed.text.includes("Shared through a private link"));
      assert.ok(!shared.text.includes('class="watermark"'), "a live audit carries no watermark");
      const sharedFiltered = await open(`${url}?status=4xx`);
      assert.deepEqual(
        inventory(sharedFiltered.text, site.origin).urls,
        (await allPages(app, live, `/v1/audits/${auditId}/pages?status=4xx`)).map((u) =>
          new URL(u).href
        ),
      );
      const sharedNext = inventory(shared.text, site.origin).next!;
      assert.ok(sharedNext.startsWith(`/reports/${token}?cursor=`), sharedNext);
      assert.equal((await open(app.url + sharedNext)).status, 200);
      assert.equal((await open(`${url}?issue=broken_internal_links`)).status, 200);
      assert.equal((await open(`${url}?status=9xx`)).status, 400);
      // A token that is not one, or a near miss, opens nothing.
      // (a last character other than the token's own: a token ending in "A" is 1 in 64)
      const nearMiss = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
      assert.equal((await open(`${app.url}/reports/${nearMiss}`)).status, 404);
      assert.equal((await open(`${app.url}/reports/nope`)).status, 404);
      assert.equal((await open(`${app.url}/previews/${token}`)).status, 404, "not an article");

      // The store holds the token's hash, never the token.
      const hash = await sha256Hex(token);
      let hashed = false;
      for await (const e of app.kv.list({ prefix: [] })) {
        const text = JSON.stringify([e.key, e.value]);
        assert.ok(!text.includes(token), `raw token under ${JSON.stringify(e.key)}`);
        if (e.key[0] === "share_tokens" && e.key[1] === hash) hashed = true;
      }
      assert.ok(hashed, "found by the hash of the token");

      // Foreign ids: 404 for share, list and revoke.
      for (
        const [method, path] of [
          ["POST", `/v1/audits/${auditId}/shares`],
          ["GET", `/v1/audits/${auditId}/shares`],
          ["DELETE", `/v1/audits/${auditId}/shares/${shareId}`],
        ]
      ) {
        const r = await app.req(method, path, {
          key: stranger.live,
          ...(method === "POST" ? { body: {} } : {}),
        });
        assert.equal(r.status, 404, `${method} ${path}`);
      }
      const tooLong = await app.req("POST", `/v1/audits/${auditId}/shares`, {
        key: live,
        body: { expires_in_days: 91 },
      });
      assert.equal(tooLong.status, 400);
      assert.match(tooLong.body.error.message, /expires_in_days/);

      // Revoked: 404 at once; revoking again answers the same.
      const second = await app.req("POST", `/v1/audits/${auditId}/shares`, {
        key: live,
        body: { expires_in_days: 90 },
      });
      assert.equal(Date.parse(second.body.expires_at), app.clock.now() + 90 * DAY);
      assert.equal((await open(second.body.url)).status, 200);
      const revoked = await app.req(
        "DELETE",
        `/v1/audits/${auditId}/shares/${second.body.share_id}`,
        { key: live },
      );
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal(revoked.body.status, "revoked");
      assert.equal((await open(second.body.url)).status, 404);
      const again = await app.req(
        "DELETE",
        `/v1/audits/${auditId}/shares/${second.body.share_id}`,
        { key: live },
      );
      assert.deepEqual(again.body, revoked.body);
      const unknownShare = await app.req("DELETE", `/v1/audits/${auditId}/shares/shr_nope`, {
        key: live,
      });
      assert.equal(unknownShare.status, 404);

      // Through MCP: the report's address (never the page inlined), and a link that opens.
      const client = await connectMcp(app, { key: live });
      mcp.push(client);
      const viaMcp = await call(client, "audits", { action: "report", audit_id: auditId });
      assert.equal(viaMcp.audit_id, auditId);
      assert.equal(viaMcp.report_url, `${BASE}/v1/audits/${auditId}/report`);
      assert.ok(viaMcp.bytes > 1000);
      assert.equal(viaMcp.html, undefined);
      app.clock.advance(1000);
      const mcpShare = await call(client, "audits", {
        action: "share",
        audit_id: auditId,
        expires_in_days: 2,
      });
      assert.equal((await open(mcpShare.url)).status, 200);
      const mcpList = await call(client, "audits", { action: "shares", audit_id: auditId });
      assert.equal(mcpList.data.length, 3);
      // The audit resource links the report and the newest live link (sealed, so repeatable).
      const resource = await client.readResource({ uri: `serpwright://audits/${auditId}` });
      // deno-lint-ignore no-explicit-any
      const linked = JSON.parse((resource.contents[0] as any).text);
      assert.equal(linked.report_url, `${BASE}/v1/audits/${auditId}/report`);
      assert.equal(linked.share_url, mcpShare.url);
      assert.equal(
        await activeShareUrl(app.service.services.deps, accountId, auditId),
        mcpShare.url,
      );

      // Expired: 404 once the clock passes expires_at; listed as expired.
      app.clock.advance(30 * DAY);
      assert.equal((await open(url)).status, 404);
      assert.equal((await open(mcpShare.url)).status, 404);
      const after = await app.req("GET", `/v1/audits/${auditId}/shares`, { key: live });
      const statuses = after.body.data.map((s: { status: string }) => s.status).sort();
      assert.deepEqual(statuses, ["expired", "expired", "revoked"]);
      assert.equal(await activeShareUrl(app.service.services.deps, accountId, auditId), null);
      // The first audit's report still opens with the key, with its own one-point history.
      const older = await app.req("GET", `/v1/audits/${first}/report`, { key: live });
      assert.equal(older.status, 200);
      assert.ok(older.text.includes("One completed audit so far"));
    } finally {
      for (const c of mcp) await c.close();
      await site.close();
    }
  }));
